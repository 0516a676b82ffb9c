"""`referee tournament rate FILE`: an Elo table of game results from elsewhere (JSON lines)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..league_report import ratings_report
from ..pages.report_page import render_report_page
from ..ratings.elo import DEFAULT_BOOTSTRAP, Anchor, RatingInputError, rate
from ..ratings.results_file import ResultsFileError, decode_lines, parse_results, read_results
from ..ratings.tables import crosstable, ratings_json, ratings_table
from .options import (
    anchor_option,
    echo_json,
    json_option,
    prior_draws_option,
    settle_rule,
    settle_rule_options,
    tablefmt_option,
)
from .output import echo
from .report import write_report


@click.command(name="rate")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("--crosstable", "with_crosstable", is_flag=True, help="Also print the pairwise points of every pair.")
@click.option(
    "--bootstrap",
    type=click.IntRange(min=0),
    default=DEFAULT_BOOTSTRAP,
    show_default=True,
    help="Resamples of whole games for the 95% intervals and LOS (0: none).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
@click.option(
    "--html",
    "html_output",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also write the ratings as a report page (Elo intervals as bars, the crosstable as a heatmap) here.",
)
@prior_draws_option
@settle_rule_options
@anchor_option
@json_option
@tablefmt_option
def rate_command(
    file: str,
    with_crosstable: bool,
    bootstrap: int,
    seed: int,
    prior_draws: float,
    settle_los: float | None,
    resolution: float | None,
    min_games: int | None,
    anchor: Anchor | None,
    html_output: str | None,
    as_json: bool,
    tablefmt: str,
) -> None:
    """Rate game results from FILE (JSON lines; - reads standard input), as Ordo or BayesElo rate a PGN.

    One game a line: {"ranks": {"bot": 1, "other": 2, ...}} (rank 1 best, equal ranks tie) or
    {"scores": {"bot": 31, "other": 12, ...}} (higher is better). Games of more than two seats are split into
    pairwise results by rank. Elo is the Bradley-Terry fit with BayesElo's prior (--prior-draws), mean 0: the
    same games give the same table as `tournament table`.
    """
    try:
        games = parse_results(decode_lines(sys.stdin.buffer.read())) if file == "-" else read_results(file)
    except ResultsFileError as error:
        raise click.ClickException(f"{file}: {error}") from error
    except OSError as error:
        raise click.ClickException(f"cannot read {file}: {error.strerror}") from error
    try:
        ratings = rate(games, bootstrap=bootstrap, seed=seed, prior_draws=prior_draws, anchor=anchor)
    except RatingInputError as error:
        raise click.ClickException(f"{file}: {error}") from error
    rule = settle_rule(settle_los, resolution, min_games)
    if html_output is not None:
        name = "standard input" if file == "-" else Path(file).stem
        write_report(render_report_page, ratings_report(name, ratings, rule), html_output)
    if as_json:
        echo_json(ratings_json(ratings, with_crosstable=with_crosstable, rule=rule))
        return
    echo(ratings_table(ratings, tablefmt=tablefmt, rule=rule))
    if with_crosstable and ratings.bots:
        echo()
        echo(crosstable(ratings, tablefmt=tablefmt))

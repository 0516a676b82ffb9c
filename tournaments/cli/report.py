"""`referee tournament report [LEAGUE.toml] [--db FILE] [--format html|csv|json] [-o FILE]`: a league's report
from its store.

html is one self-contained page built from a LeagueReport (tournaments/league_report.py; links to replay pages
are relative to the folder the page goes to); csv and json grade the bots, one row each, from a GradeReport
(tournaments/classroom/grading.py). Each format is a function registered in PAGE_FORMATS or ROW_FORMATS.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import click

from ..classroom.grade_formats import grades_csv, grades_json
from ..classroom.grading import GradeReport, grade_league
from ..league.league_file import League, LeagueFileError, load_league
from ..league.store import LeagueStore, StoreError
from ..league_report import LeagueReport, league_report
from ..pages.html import AssetError
from ..pages.report_page import render_report_page
from ..ratings.elo import Anchor, RatingInputError
from .options import anchor_option, bootstrap_option, league_anchor, settle_rule, settle_rule_options

ReportFormat = Callable[[LeagueReport, Path], str]
PAGE_FORMATS: dict[str, ReportFormat] = {"html": render_report_page}
ROW_FORMATS: dict[str, Callable[[GradeReport], str]] = {"csv": grades_csv, "json": grades_json}


@click.command(name="report")
@click.argument("league", metavar="[LEAGUE.toml]", required=False, type=click.Path(dir_okay=False))
@click.option(
    "--db", type=click.Path(dir_okay=False), help="The result store  [default: LEAGUE.sqlite beside the file]"
)
@click.option(
    "--format",
    "report_format",
    type=click.Choice([*PAGE_FORMATS, *ROW_FORMATS]),
    default="html",
    show_default=True,
    help="html: one self-contained page (no server, no network) to open in any browser; csv: one row per bot, "
    "for a spreadsheet or a grader; json: the same rows with every fault detail whole.",
)
@click.option(
    "--output", "-o", metavar="FILE", default="-", show_default=True, help="The file to write (-: standard output)."
)
@bootstrap_option
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
@settle_rule_options
@anchor_option
def report_command(
    league: str | None,
    db: str | None,
    report_format: str,
    output: str,
    bootstrap: int,
    seed: int,
    settle_los: float | None,
    resolution: float | None,
    min_games: int | None,
    anchor: Anchor | None,
) -> None:
    """Write the report of a league's store (give LEAGUE.toml, --db FILE, or both).

    html: the Elo table with each bot's 95% interval drawn as a bar, the crosstable as a heatmap, games, faults
    and decision times per bot, every fault, and every game with a link to its replay page where one exists
    (written by `tournament run --replay-format html`); links are relative to the folder of --output.

    csv and json, to grade a class: one row per bot, in the order of the Elo table: place, Elo and its 95%
    interval, games, mean rank, mean score, faults by kind and the first one's detail, decisions with their mean
    and longest time in ms, and the paths of the bot's logs (only with LEAGUE.toml, whose log folder they are
    in). Bots of a baselines schedule's ladder are marked.

    The page's Elo table has a group column (bots the games cannot tell apart, as in `tournament table`);
    --anchor fixes one bot's Elo in every format.
    """
    if league is None and db is None:
        raise click.UsageError("give either LEAGUE.toml or --db FILE (give LEAGUE.toml, --db FILE, or both)")
    loaded = None if league is None else _load(league)
    store_path = Path(db) if db is not None else loaded.default_db  # type: ignore[union-attr]
    anchor = league_anchor(anchor, loaded)
    try:
        with LeagueStore(store_path, create=False) as store:
            if report_format in PAGE_FORMATS:
                rule = settle_rule(settle_los, resolution, min_games, loaded)
                page = league_report(store, bootstrap=bootstrap, seed=seed, anchor=anchor, rule=rule)
            else:
                rows = grade_league(store, loaded, bootstrap=bootstrap, seed=seed, anchor=anchor)
    except (StoreError, RatingInputError) as error:
        raise click.ClickException(str(error)) from error
    if report_format in PAGE_FORMATS:
        write_report(PAGE_FORMATS[report_format], page, output)
    else:
        _write(lambda: ROW_FORMATS[report_format](rows), output)


def write_report(render: ReportFormat, report: LeagueReport, output: str) -> None:
    """Render `report` into the file `output` (- for standard output); errors become ClickExceptions."""
    base = Path.cwd() if output == "-" else Path(output).parent
    _write(lambda: render(report, base), output)


def _write(render: Callable[[], str], output: str) -> None:
    try:
        text = render()
        if output == "-":
            sys.stdout.write(text)
            sys.stdout.flush()
        else:
            Path(output).write_text(text, encoding="utf-8")
    except AssetError as error:
        raise click.ClickException(str(error)) from error
    except OSError as error:
        raise click.ClickException(f"cannot write {output}: {error.strerror or error}") from error


def _load(path: str) -> League:
    try:
        return load_league(path)
    except LeagueFileError as error:
        raise click.ClickException(str(error)) from error

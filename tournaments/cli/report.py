"""`referee tournament report LEAGUE [--format html] [-o FILE]`: a league's report from its store.

The formats share one LeagueReport (tournaments/league_report.py); each is a function of it and of the folder
the report goes to (links to replay pages are relative to it), registered in REPORT_FORMATS.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import click

from ..league import LeagueFileError, load_league
from ..league_report import LeagueReport, league_report
from ..pages.html import AssetError
from ..pages.report_page import render_report_page
from ..store import LeagueStore, StoreError
from .options import bootstrap_option

ReportFormat = Callable[[LeagueReport, Path], str]
REPORT_FORMATS: dict[str, ReportFormat] = {"html": render_report_page}


@click.command(name="report")
@click.argument("league", metavar="[LEAGUE.toml]", required=False, type=click.Path(dir_okay=False))
@click.option(
    "--db", type=click.Path(dir_okay=False), help="The result store  [default: LEAGUE.sqlite beside the file]"
)
@click.option(
    "--format",
    "report_format",
    type=click.Choice(sorted(REPORT_FORMATS)),
    default="html",
    show_default=True,
    help="html: one self-contained page (no server, no network) to open in any browser.",
)
@click.option(
    "--output", "-o", metavar="FILE", default="-", show_default=True, help="The file to write (-: standard output)."
)
@bootstrap_option
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
def report_command(
    league: str | None, db: str | None, report_format: str, output: str, bootstrap: int, seed: int
) -> None:
    """Write the report of a league's store (give LEAGUE.toml, or --db FILE).

    The html page holds the Elo table with each bot's 95% interval drawn as a bar, the crosstable as a heatmap,
    games, faults and decision times per bot, every fault, and every game with a link to its replay page where
    one exists (written by `tournament run --replay-format html`). Links are relative to the folder of
    --output (to the current folder for standard output).
    """
    if (league is None) == (db is None):
        raise click.UsageError("give either LEAGUE.toml or --db FILE")
    store_path = Path(db) if db else _default_db(league)  # type: ignore[arg-type]
    try:
        with LeagueStore(store_path, create=False) as store:
            report = league_report(store, bootstrap=bootstrap, seed=seed)
    except StoreError as error:
        raise click.ClickException(str(error)) from error
    write_report(REPORT_FORMATS[report_format], report, output)


def write_report(render: ReportFormat, report: LeagueReport, output: str) -> None:
    """Render `report` into the file `output` (- for standard output); errors become ClickExceptions."""
    base = Path.cwd() if output == "-" else Path(output).parent
    try:
        text = render(report, base)
        if output == "-":
            sys.stdout.write(text)
            sys.stdout.flush()
        else:
            Path(output).write_text(text, encoding="utf-8")
    except AssetError as error:
        raise click.ClickException(str(error)) from error
    except OSError as error:
        raise click.ClickException(f"cannot write {output}: {error.strerror or error}") from error


def _default_db(path: str) -> Path:
    try:
        return load_league(path).default_db
    except LeagueFileError as error:
        raise click.ClickException(str(error)) from error

"""`referee tournament report LEAGUE --format csv|json [-o FILE]`: a league's bots graded from its store.

The rows come from tournaments/grading.py; each format is a function of them, registered in REPORT_FORMATS.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import click

from ..grade_formats import grades_csv, grades_json
from ..grading import GradeReport, grade_league
from ..league import League, LeagueFileError, load_league
from ..store import LeagueStore, StoreError
from .league import bootstrap_option

ReportFormat = Callable[[GradeReport], str]
REPORT_FORMATS: dict[str, ReportFormat] = {"csv": grades_csv, "json": grades_json}


@click.command(name="report")
@click.argument("league", metavar="[LEAGUE.toml]", required=False, type=click.Path(dir_okay=False))
@click.option(
    "--db", type=click.Path(dir_okay=False), help="The result store  [default: LEAGUE.sqlite beside the file]"
)
@click.option(
    "--format",
    "report_format",
    type=click.Choice(sorted(REPORT_FORMATS)),
    default="csv",
    show_default=True,
    help="csv: one row per bot, for a spreadsheet; json: the same with every fault detail whole.",
)
@click.option(
    "--output", "-o", metavar="FILE", default="-", show_default=True, help="The file to write (-: standard output)."
)
@bootstrap_option
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
def report_command(
    league: str | None, db: str | None, report_format: str, output: str, bootstrap: int, seed: int
) -> None:
    """Write a per-bot report of a league's store (LEAGUE.toml's, or --db FILE): to grade a class.

    One row per bot, in the order of the Elo table: place, Elo and its 95% interval, games, mean rank, mean
    score, faults by kind (timeout, crash, illegal_action, protocol_error) and the first one's detail,
    decisions with their mean and longest time in ms, and the paths of the bot's logs (one per match; only
    with LEAGUE.toml, whose log folder they are in). Bots of a baselines schedule's ladder are marked.
    """
    if league is None and db is None:
        raise click.UsageError("give LEAGUE.toml, --db FILE, or both")
    loaded = None if league is None else _load(league)
    store_path = loaded.default_db if db is None and loaded is not None else Path(str(db))
    try:
        with LeagueStore(store_path, create=False) as store:
            report = grade_league(store, loaded, bootstrap=bootstrap, seed=seed)
    except StoreError as error:
        raise click.ClickException(str(error)) from error
    _write(REPORT_FORMATS[report_format](report), output)


def _write(text: str, output: str) -> None:
    try:
        if output == "-":
            sys.stdout.write(text)
            sys.stdout.flush()
        else:
            Path(output).write_text(text, encoding="utf-8")
    except OSError as error:
        raise click.ClickException(f"cannot write {output}: {error.strerror or error}") from error


def _load(path: str) -> League:
    try:
        return load_league(path)
    except LeagueFileError as error:
        raise click.ClickException(str(error)) from error

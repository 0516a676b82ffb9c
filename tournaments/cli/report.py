"""`referee tournament report [LEAGUE.toml] [--db FILE] [--format html|csv|json] [-o FILE]`: a league's report
from its store.

html is one self-contained page built from a LeagueReport (tournaments/league_report.py; links to replay pages
are relative to the folder the page goes to); csv and json grade the bots, one row each, from a GradeReport
(tournaments/classroom/grading.py). Each format is a function registered in PAGE_FORMATS or ROW_FORMATS.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from ..classroom.grade_formats import grades_csv, grades_json
from ..classroom.grading import GradeReport, grade_league
from ..league.league_file import load_league
from ..league.store import LeagueStore
from ..league_report import LeagueReport, league_report
from ..pages.class_pages import ClassPages, write_class_pages
from ..pages.report_page import render_report_page
from ..ratings.elo import Anchor
from .options import (
    anchor_option,
    bootstrap_option,
    league_anchor,
    prior_draws_option,
    settle_rule,
    settle_rule_options,
)
from .output import echo, write

ReportFormat = Callable[[LeagueReport, Path], str]
PAGE_FORMATS: dict[str, ReportFormat] = {"html": render_report_page}
ROW_FORMATS: dict[str, Callable[[GradeReport], str]] = {"csv": grades_csv, "json": grades_json}
PAGES = "pages"


@click.command(name="report")
@click.argument("league", metavar="[LEAGUE.toml]", required=False, type=click.Path(dir_okay=False))
@click.option(
    "--db", type=click.Path(dir_okay=False), help="The result store  [default: LEAGUE.sqlite beside the file]"
)
@click.option(
    "--format",
    "report_format",
    type=click.Choice([*PAGE_FORMATS, *ROW_FORMATS, PAGES]),
    default="html",
    show_default=True,
    help="html: one self-contained page (no server, no network) to open in any browser; csv: one row per bot, "
    "for a spreadsheet or a grader; json: the same rows with every fault detail whole; pages: a class's pages in "
    "the folder -o DIR (a leaderboard to publish under pseudonyms, a page per student, a page for the teacher; "
    "needs LEAGUE.toml).",
)
@click.option(
    "--output",
    "-o",
    metavar="FILE",
    default="-",
    show_default=True,
    help="The file to write (-: standard output); for --format pages, the folder.",
)
@bootstrap_option
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
@prior_draws_option
@settle_rule_options
@anchor_option
def report_command(
    league: str | None,
    db: str | None,
    report_format: str,
    output: str,
    bootstrap: int,
    seed: int,
    prior_draws: float,
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
    in). With LEAGUE.toml, baselines (baseline = true, or a baselines schedule's) are listed after the students
    without a place, each student has its games, score share and mean rank against each baseline, and, with
    the file's [marks], its mark.

    pages (with LEAGUE.toml and -o DIR): DIR/leaderboard.html to publish (students under the file's
    [pseudonyms], else a pseudonym hashed from the name under the league's secret; ordered by the score share
    against the baselines, shown with its 95% interval), a folder DIR/students/NAME/ to hand to each student
    alone (its page, its replays and its logs; classmates under pseudonyms) and DIR/teacher.html (names, marks
    and uncertain ones, possible copies, skipped folders).

    The page's Elo table has a group column (bots the games cannot tell apart, as in `tournament table`);
    --anchor fixes one bot's Elo in every format.
    """
    if league is None and db is None:
        raise click.UsageError("give either LEAGUE.toml or --db FILE (give LEAGUE.toml, --db FILE, or both)")
    if report_format == PAGES and (league is None or output == "-"):
        raise click.UsageError("--format pages needs LEAGUE.toml and -o DIR, the folder to write the pages to")
    loaded = None if league is None else load_league(league)
    store_path = Path(db) if db is not None else loaded.default_db  # type: ignore[union-attr]
    anchor = league_anchor(anchor, loaded)
    with LeagueStore(store_path, create=False) as store:
        if report_format == PAGES:
            assert loaded is not None
            grades = grade_league(store, loaded, bootstrap, seed, anchor, prior_draws)
            written = _write_pages(grades, store, Path(output))
            echo(f"wrote {written.leaderboard}, {written.teacher} and {len(written.students)} student pages")
            return
        if report_format in PAGE_FORMATS:
            rule = settle_rule(settle_los, resolution, min_games, loaded)
            page = league_report(
                store, bootstrap=bootstrap, seed=seed, anchor=anchor, rule=rule, prior_draws=prior_draws
            )
        else:
            rows = grade_league(store, loaded, bootstrap, seed, anchor, prior_draws)
    if report_format in PAGE_FORMATS:
        write_report(PAGE_FORMATS[report_format], page, output)
    else:
        _write(lambda: ROW_FORMATS[report_format](rows), output)


def _write_pages(grades: GradeReport, store: LeagueStore, out: Path) -> ClassPages:
    try:
        return write_class_pages(grades, store, grades.pseudonyms, out)
    except OSError as error:
        raise click.ClickException(f"cannot write the pages into {out}: {error.strerror or error}") from error


def write_report(render: ReportFormat, report: LeagueReport, output: str) -> None:
    """Render `report` into the file `output` (- for standard output); an OSError becomes a ClickException."""
    base = Path.cwd() if output == "-" else Path(output).parent
    _write(lambda: render(report, base), output)


def _write(render: Callable[[], str], output: str) -> None:
    try:
        text = render()
        if output == "-":
            write(text)
        else:
            Path(output).write_text(text, encoding="utf-8")
    except OSError as error:
        raise click.ClickException(f"cannot write {output}: {error.strerror or error}") from error

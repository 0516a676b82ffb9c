"""`referee tournament copies LEAGUE.toml`: the copies check of a class, its leads and what was compared."""

from __future__ import annotations

from dataclasses import asdict

import click

from ..classroom.copies import ask_class, copy_report
from ..league.league_file import load_league
from .options import echo_json, json_option, sandbox_option
from .output import echo


@click.command(name="copies")
@click.argument("league", metavar="LEAGUE.toml", type=click.Path(dir_okay=False))
@click.option(
    "--ask/--no-ask",
    default=True,
    show_default=True,
    help="Ask every student not asked yet (new, or changed since) the position bank; --no-ask uses the answers kept.",
)
@sandbox_option
@json_option
def copies_command(league: str, ask: bool, sandbox: bool, as_json: bool) -> None:
    """Leads to look into, never verdicts: pairs of students whose code, once the base code every student was
    given is removed, is much the same, or who chose alike in a bank of positions far more often than the
    class's answers make likely.

    Every student answers the same positions (`[copies] bank`, default 200, one decision each) in its sandbox,
    once per program: the answers are kept in LEAGUE.copies/ beside the league file. The base code: every
    `referee new-bot` scaffold, the tutorial's code and the folders `[copies] base` names. Dependencies
    (node_modules, virtual environments), binaries and byte code are never compared; every other text file is.
    """
    loaded = load_league(league)
    if ask:
        ask_class(
            loaded, sandbox=sandbox, on_asked=lambda bot, answered: echo(f"asked {bot}: {answered} answers", err=True)
        )
    report = copy_report(loaded)
    if as_json:
        echo_json({"compared": list(report.compared), "leads": [asdict(flag) for flag in report.flags]})
        return
    for line in report.compared:
        echo(line)
    echo(f"\n{len(report.flags)} lead(s), to look into (not verdicts):" if report.flags else "\nNo lead.")
    for flag in report.flags:
        echo(f"- {flag.bots[0]} and {flag.bots[1]}: {flag.kind.value}: {flag.detail}")

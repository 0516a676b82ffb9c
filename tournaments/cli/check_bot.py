"""`referee check-bot GAME BOT`: does a bot conform? Seeded games at every player count against the random bot,
reported as text, the project's JSON or Gradescope's results.json; exit 0 only when it conforms."""

from __future__ import annotations

import enum
import json
import time
from pathlib import Path

import click

from referee.botspec import UnknownBot, resolve_bot
from referee.games import GameError, list_games
from referee.match import MatchSpecError
from referee.records import Limits
from referee.wire.connection import Transport

from ..classroom.checkbot import DEFAULT_SEED, CheckError, CheckPlan, CheckReport, check_bot, isolation_refusal
from ..classroom.checkbot_report import gradescope_results, report_json, report_text
from ..rundir import new_run_dir
from .options import UNSANDBOXED_WARNING, isolation_warning, limits_options, transport_option
from .output import echo


class ReportFormat(enum.StrEnum):
    TEXT = "text"
    JSON = "json"
    GRADESCOPE = "gradescope"


def _render(report: CheckReport, report_format: ReportFormat, elapsed_s: float) -> str:
    if report_format is ReportFormat.JSON:
        return json.dumps(report_json(report), indent=2)
    if report_format is ReportFormat.GRADESCOPE:
        return json.dumps(gradescope_results(report, elapsed_s), indent=2)
    return "\n".join(report_text(report))


@click.command("check-bot")
@click.argument("game", type=click.Choice(list_games()))
@click.argument("bot")
@click.option(
    "--players",
    "-p",
    "players",
    type=click.IntRange(min=1),
    multiple=True,
    help="A player count to check (repeatable) [default: every count of the game].",
)
@click.option(
    "--games",
    "-n",
    "game_count",
    type=click.IntRange(min=1),
    default=None,
    help="Games per player count [default: one per seat, so the bot plays the deal from every seat].",
)
@click.option("--seed", type=click.IntRange(min=0), default=DEFAULT_SEED, show_default=True, help="Seed of the deals.")
@limits_options
@click.option(
    "--run-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Keep the logs and replays here (PLAYERSp/ each) [default: a new run folder in the temporary folder].",
)
@click.option("--json", "as_json", is_flag=True, help="Short for --format json.")
@click.option(
    "--format",
    "report_format",
    type=click.Choice([f.value for f in ReportFormat]),
    default=ReportFormat.TEXT.value,
    show_default=True,
    help="text; json (the project's schema, docs/check-bot.md); gradescope (an autograder's results.json).",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the report to this file instead of stdout (e.g. /autograder/results/results.json).",
)
@click.option(
    "--no-sandbox",
    "no_sandbox",
    is_flag=True,
    help="Run the bot unsandboxed, as this user, able to read and change its files (only in a throwaway "
    "container). Without it check-bot refuses to run where the full sandbox cannot (see `referee doctor`).",
)
@click.option(
    "--allow-partial",
    is_flag=True,
    help="Accept a partial sandbox (bubblewrap without a uid, cgroups or seccomp filter of the bot's own, as "
    "without root) instead of refusing to run; the report says what was missing.",
)
@transport_option
def check_bot_command(
    game: str,
    bot: str,
    players: tuple[int, ...],
    game_count: int | None,
    seed: int,
    limits: Limits,
    run_dir: Path | None,
    as_json: bool,
    report_format: str,
    output: Path | None,
    transport: Transport,
    no_sandbox: bool,
    allow_partial: bool,
) -> None:
    """Check that BOT plays GAME by the protocol: handshake, legal actions, decision times, no crash.

    BOT is given as to `referee play` (a built-in name, a path, a command line in quotes, stdio:BOT). It plays
    seeded games at every player count of GAME, against the random bot, at every seat in turn. The report gives
    its hello (name, version, protocol), every fault with its kind and detail, how many of its actions were
    legal, its decision times (median, 95th percentile, max) against --move-time, and, when it faulted, the
    last lines of its output. Logs and replays stay in the run folder, whose path is printed.

    It runs only in the full sandbox unless told otherwise (--allow-partial, --no-sandbox): where the machine
    gives less it exits with status 1 and says what is missing. Every report states the isolation the bot had.

    Exit status 0 only when the bot conforms: it completed its handshake and played every game without a
    fault. 1 when it does not (with the reasons on stderr), or when the check could not run.
    """
    chosen = ReportFormat.JSON if as_json else ReportFormat(report_format)
    refusal = isolation_refusal(not no_sandbox, allow_partial)
    if refusal is not None:
        raise click.ClickException(refusal)
    warning = isolation_warning(not no_sandbox)
    if warning is not None:
        echo(UNSANDBOXED_WARNING if no_sandbox else warning, err=True)
    try:
        spec = resolve_bot(bot, game, named_by_hello=True)
        plan = CheckPlan(
            game=game,
            bot=spec,
            run_dir=run_dir if run_dir is not None else new_run_dir("check", game),
            players=players,
            games=game_count,
            seed=seed,
            limits=limits,
            transport=transport,
            sandbox=not no_sandbox,
        )
        started = time.monotonic()
        report = check_bot(plan)
    except (UnknownBot, CheckError, GameError, MatchSpecError) as error:
        raise click.ClickException(str(error)) from error
    rendered = _render(report, chosen, time.monotonic() - started)
    if output is None:
        echo(rendered)
    else:
        try:
            output.parent.mkdir(parents=True, exist_ok=True)
            output.write_text(rendered + "\n")
        except OSError as error:
            raise click.ClickException(f"cannot write the report to {str(output)!r}: {error.strerror}") from error
        echo(f"report written to {output}", err=True)
    if not report.verdict.conforms:
        reasons = "; ".join(reason.headline() for reason in report.verdict.reasons)
        raise click.ClickException(
            f"{report.name} does not conform: {reasons} (the report says why; logs and replays in {report.run_dir})"
        )

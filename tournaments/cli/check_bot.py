"""`referee check-bot GAME BOT`: does a bot conform? Seeded games at every player count against the random bot,
reported as text, the project's JSON or Gradescope's results.json; exit 0 only when it conforms."""

from __future__ import annotations

import enum
import json
from pathlib import Path

import click

from referee.botspec import UnknownBot
from referee.games import list_games
from referee.records import Limits
from referee.wire.connection import Transport

from ..classroom.checkbot import DEFAULT_SEED, CheckError
from ..classroom.checkbot_report import report_json, report_text
from ..classroom.checkbot_run import CheckOptions, CheckOutcome, CheckRequest, check_options, check_submission
from ..classroom.checkbot_strength import (
    DEFAULT_STRENGTH_GAMES,
    StrengthSpecError,
    StrengthTest,
    parse_strength_test,
)
from .options import UNSANDBOXED_WARNING, isolation_warning, kernel_option, limits_options, transport_option
from .output import echo
from .policy_check import check_bot_policy


class ReportFormat(enum.StrEnum):
    TEXT = "text"
    JSON = "json"
    GRADESCOPE = "gradescope"


def _render(outcome: CheckOutcome, report_format: ReportFormat) -> str:
    if report_format is ReportFormat.GRADESCOPE:
        return json.dumps(outcome.gradescope(), indent=2)
    assert outcome.report is not None
    if report_format is ReportFormat.JSON:
        return json.dumps(report_json(outcome.report), indent=2)
    return "\n".join(report_text(outcome.report))


def _strength_tests(context: click.Context, parameter: click.Parameter, values: tuple[str, ...]) -> tuple:
    try:
        return tuple(parse_strength_test(value) for value in values)
    except StrengthSpecError as error:
        raise click.BadParameter(str(error)) from error


def _emit(rendered: str, output: Path | None) -> None:
    if output is None:
        echo(rendered)
        return
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(rendered + "\n")
    except OSError as error:
        raise click.ClickException(f"cannot write the report to {str(output)!r}: {error.strerror}") from error
    echo(f"report written to {output}", err=True)


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
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=DEFAULT_SEED,
    show_default=True,
    help="Seed of the deals and of the random opponents' choices.",
)
@limits_options
@click.option(
    "--against",
    "against",
    multiple=True,
    callback=_strength_tests,
    metavar="BASELINE:SHARE[:weight=W][:visibility=V]",
    help="A strength test (repeatable): games against BASELINE at the game's smallest table, passed with a score "
    "share of at least SHARE (0..1); W its points in Gradescope (default 1), V its Gradescope visibility "
    "(hidden, after_due_date, after_published, visible). E.g. heuristic:0.5.",
)
@click.option(
    "--strength-games",
    type=click.IntRange(min=1),
    default=DEFAULT_STRENGTH_GAMES,
    show_default=True,
    help="Games per strength test.",
)
@click.option(
    "--build",
    default=None,
    metavar="COMMAND",
    help="Build the submission first, unless its bot.toml has a build: COMMAND (e.g. make) runs with sh -c in "
    "a copy of its folder in the run folder, in the bot sandbox, as a league builds (the bot then runs from the "
    "copy); a failed build is reported as the reason the bot cannot run. Only for a folder with something to "
    "build (a Makefile, CMakeLists.txt, build.sh or package.json): any other runs as handed in.",
)
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
    help="text; json (the project's schema, docs/how-to/check-a-bot.md); gradescope (an autograder's results.json, "
    "written even when the bot cannot run; no path of this machine in it).",
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
@kernel_option
def check_bot_command(
    game: str,
    bot: str,
    players: tuple[int, ...],
    game_count: int | None,
    seed: int,
    limits: Limits,
    against: tuple[StrengthTest, ...],
    strength_games: int,
    build: str | None,
    run_dir: Path | None,
    as_json: bool,
    report_format: str,
    output: Path | None,
    transport: Transport,
    no_sandbox: bool,
    allow_partial: bool,
    kernel: bool,
) -> None:
    """Check that BOT plays GAME by the protocol: handshake, legal actions, decision times, no crash.

    BOT is given as to `referee play` (a built-in name, a path, a command line in quotes, stdio:BOT), or is a
    submission folder, read as a league's `each` reads one (its bot.toml's command, transport and build, else
    its bot.py, an executable bot or bot.js). It plays seeded games at every player count of GAME, against
    seeded random bots, at every seat in turn. The report gives its hello (name, version, protocol), every
    fault with its kind and detail, how many of its actions were legal, its decision times (median, 95th
    percentile, max) against --move-time, and, when it faulted, the last lines of its output. Logs and replays
    stay in the run folder, whose path is printed.

    It runs only in the full sandbox unless told otherwise (--allow-partial, --no-sandbox): where the machine
    gives less it exits with status 1 and says what is missing. Every report states the isolation the bot had.

    Exit status 0 only when the bot conforms (it completed its handshake and played every game without a
    fault) and passed every --against. 1 when it does not, or cannot be run (a missing program, a failed build,
    a bot.toml that is not valid, a sandbox below what was allowed): the reasons on stderr, and with --format
    gradescope the results file is written in every such case. 2 when the options are wrong (a player count the
    game does not have, an unknown baseline): nothing is written.
    """
    request = CheckRequest(
        game=game,
        bot=bot,
        players=players,
        games=game_count,
        seed=seed,
        limits=limits,
        transport=transport,
        sandbox=not no_sandbox,
        allow_partial=allow_partial,
        kernel=kernel,
        against=against,
        strength_games=strength_games,
        build=build,
        run_dir=run_dir,
    )
    checked = _checked_options(request)
    check_bot_policy(game, bot, checked.players)
    outcome = check_submission(request, checked, on_cleared=lambda: _warn(no_sandbox))
    _write_report(outcome, ReportFormat.JSON if as_json else ReportFormat(report_format), output)
    if (failure := _failure(outcome)) is not None:
        raise click.ClickException(failure)


def _write_report(outcome: CheckOutcome, report_format: ReportFormat, output: Path | None) -> None:
    """The report, if the bot ran; with --format gradescope, a results file whether it ran or not."""
    if outcome.report is not None or report_format is ReportFormat.GRADESCOPE:
        _emit(_render(outcome, report_format), output)


def _checked_options(request: CheckRequest) -> CheckOptions:
    try:
        return check_options(request)
    except CheckError as error:
        raise click.BadParameter(str(error), param_hint="--players") from error
    except UnknownBot as error:
        raise click.BadParameter(f"a baseline: {error}", param_hint="--against") from error


def _warn(no_sandbox: bool) -> None:
    warning = isolation_warning(not no_sandbox)
    if warning is not None:
        echo(UNSANDBOXED_WARNING if no_sandbox else warning, err=True)


def _failure(outcome: CheckOutcome) -> str | None:
    """Why check-bot exits 1 (None: it exits 0)."""
    report = outcome.report
    if report is None:
        return outcome.problem
    if not report.verdict.conforms:
        reasons = "; ".join(reason.headline() for reason in report.verdict.reasons)
        return f"{report.name} does not conform: {reasons} (the report says why; logs and replays in {report.run_dir})"
    failed = [result.baseline_name for result in report.strength if not result.passed]
    if failed:
        return f"{report.name} conforms but failed the strength test against {', '.join(failed)}"
    return None

"""Checking a submission as check-bot does, from the BOT argument to a verdict, with one rule for autograders:
every submission gets a results file, whether its bot ran or not.

    outcome = check_submission(CheckRequest("scout", "/autograder/submission", build="make"))
    outcome.report               # the CheckReport, or None when the bot could not be run
    outcome.problem              # why it could not be run (None when it ran)
    outcome.gradescope()         # Gradescope's results.json, in every case

In order: the machine's isolation is judged first (checkbot.isolation_refusal: a check refused below the
isolation it was allowed is a submission that cannot run); then the submission is resolved and built
(checkbot_submission.resolve_submission); then its games are played (checkbot.check_bot). Options a person
gives wrong (a player count the game does not have, an unknown baseline) are checked before any of it by
`check_options`, and raise.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from referee.botspec import resolve_bot
from referee.isolation.sandbox import Isolation
from referee.records import Limits
from referee.wire.connection import Transport

from ..rundir import new_run_dir
from . import gradescope
from .checkbot import (
    DEFAULT_SEED,
    CheckPlan,
    CheckReport,
    check_bot,
    isolation_refusal,
    machine_isolation,
    player_counts,
)
from .checkbot_report import gradescope_results, unrunnable_results
from .checkbot_strength import DEFAULT_STRENGTH_GAMES, StrengthTest, baseline_label
from .checkbot_submission import Redactor, resolve_submission


@dataclass(frozen=True)
class CheckRequest:
    game: str
    bot: str
    """The BOT argument: a built-in name, a path, a command line, stdio:BOT, or a submission folder."""
    players: tuple[int, ...] = ()
    """The player counts to check; empty: every count of the game."""
    games: int | None = None
    """Games per player count; None: one per seat."""
    seed: int = DEFAULT_SEED
    limits: Limits = Limits()
    transport: Transport = Transport.IPC
    sandbox: bool = True
    """False: run the bot unsandboxed (only where told to, as check-bot's --no-sandbox)."""
    allow_partial: bool = False
    """Accept a partial sandbox rather than refuse to run."""
    kernel: bool = False
    """Every bot under a gVisor kernel of its own, as a league or ladder with `kernel = true` plays it (a bot that
    cannot run there fails its check, saying why)."""
    against: tuple[StrengthTest, ...] = ()
    strength_games: int = DEFAULT_STRENGTH_GAMES
    build: str | None = None
    """The build command for a submission whose bot.toml has none."""
    run_dir: Path | None = None
    """Where the logs and replays go; None: a new run folder."""


@dataclass(frozen=True)
class CheckOptions:
    """A request's options, checked: its player counts and each strength test with its baseline's name."""

    players: tuple[int, ...]
    baselines: tuple[tuple[StrengthTest, str], ...]


def check_options(request: CheckRequest) -> CheckOptions:
    """The request's player counts and baselines; checkbot.CheckError for a count the game does not have,
    referee.botspec.UnknownBot for a baseline that is not a bot (both before anything runs)."""
    players = player_counts(request.game, request.players)
    baselines = tuple(
        (test, baseline_label(test, resolve_bot(test.baseline, request.game).name)) for test in request.against
    )
    return CheckOptions(players, baselines)


@dataclass(frozen=True)
class CheckOutcome:
    game: str
    options: CheckOptions
    redactor: Redactor
    """Hides the grading machine's paths from the student."""
    isolation: Isolation
    """What the machine gives a bot (the report's own level when the bot ran)."""
    elapsed_s: float
    report: CheckReport | None = None
    problem: str | None = None
    """Why the bot could not be run (refused below the allowed isolation, missing, not built); None: it ran."""

    def gradescope(self) -> gradescope.GradescopeResults:
        """Gradescope's results.json: the report's tests, or for a bot that could not run the same tests, each
        failed, with the problem as their output."""
        if self.report is not None:
            return gradescope_results(self.report, self.elapsed_s, self.redactor)
        assert self.problem is not None
        return unrunnable_results(
            self.game,
            self.options.players,
            self.options.baselines,
            self.problem,
            self.elapsed_s,
            self.redactor,
            self.isolation,
        )


def check_submission(
    request: CheckRequest, options: CheckOptions | None = None, on_cleared: Callable[[], None] | None = None
) -> CheckOutcome:
    """Check the request's bot as the module says. `options`: check_options(request), if the caller has them;
    `on_cleared` is called once the machine's isolation is accepted, before the submission is built (check-bot
    warns there what a partial or absent sandbox lacks)."""
    options = options or check_options(request)
    folder = request.run_dir if request.run_dir is not None else new_run_dir("check", request.game)
    started = time.monotonic()
    refusal = isolation_refusal(request.sandbox, request.allow_partial)
    if refusal is not None:
        redactor = Redactor.for_check(None, folder)
        return CheckOutcome(
            request.game, options, redactor, machine_isolation(True), time.monotonic() - started, problem=refusal
        )
    if on_cleared is not None:
        on_cleared()
    submission = resolve_submission(request.bot, request.game, build=request.build, run_dir=folder)
    redactor = Redactor.for_check(submission.root, folder, submission.built_in)
    if submission.spec is None:
        problem = submission.problem or "the bot cannot be run"
        isolation = machine_isolation(request.sandbox)
        return CheckOutcome(request.game, options, redactor, isolation, time.monotonic() - started, problem=problem)
    plan = CheckPlan(
        game=request.game,
        bot=submission.spec,
        run_dir=folder,
        players=options.players,
        games=request.games,
        seed=request.seed,
        limits=request.limits,
        transport=request.transport,
        sandbox=request.sandbox,
        kernel=request.kernel,
        against=request.against,
        strength_games=request.strength_games,
    )
    report = check_bot(plan)
    return CheckOutcome(request.game, options, redactor, report.isolation, time.monotonic() - started, report)

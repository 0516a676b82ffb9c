"""Running a league, as one call that the command line, a notebook, a server and the tests all make: plan,
build, play, settle, then the results.

    with LeagueStore(league.default_db) as store:
        run = run_league(league, store, LocalExecutor(2), RunOptions(bootstrap=1000))
    run.results.ratings                  # tournaments.league_report.LeagueResults

In order: with `replay_changed`, forget every bot whose program changed; drop the games of every fault kind in
`retry_faulted` (RETRY_FAULTS); plan what the store lacks (tournaments.league.runner: bots whose program
changed are held); build the submissions that have a build (tournaments.league.builds); play the schedule;
with `until_settled` (or the league file's), play settling rounds (tournaments/settle.py); rate every stored
game. Each step tells a RunProgress what it did: the caller shows it (the CLI prints it to stderr), none of it
is printed here.

A KeyboardInterrupt (Ctrl-C; the CLI raises SIGTERM as one too) stops the run where it is: every finished game
is kept, the progress hears `stopped` with the stage, and the interrupt goes on to the caller, whose rerun
resumes. An executor's or the store's error while playing is a RunFailed, saying that the games stored so far
are kept.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from protocol.errors import BadInput, EnvironmentProblem
from referee.isolation import gvisor
from referee.records import FaultCause, FaultKind, GameRecord

from .league.builds import BuildOutcome, build_plan
from .league.executors import Executor, ExecutorError
from .league.league_file import League
from .league.planning import Estimate, plan_estimate
from .league.runner import LeaguePlan, plan_league, play_league
from .league.store import Forgotten, LeagueStore, StoreError
from .league_report import LeagueResults, league_results
from .ratings.elo import DEFAULT_BOOTSTRAP, DEFAULT_PRIOR_DRAWS, Anchor
from .ratings.settling import DEFAULT_RULE, SettleRule
from .settle import SettleResult, SettleRound, SettleSettings, settle_league

RETRY_FAULTS: dict[str, tuple[FaultCause | FaultKind, ...]] = {
    "startup": (FaultCause.STARTUP_TIMEOUT,),
    **{kind.value: (kind,) for kind in FaultKind},
    **{cause.value: (cause,) for cause in FaultCause},
}
"""--retry-faulted FAULT -> the causes or kinds of fault it selects (in the store's cause and kind columns): a
cause, a kind (every cause of it, and faults stored before causes were), or `startup`, the old name of
startup-timeout: the handshake's timeout, the one fault a loaded machine causes more than a bot."""

T = TypeVar("T")


class RunFailed(EnvironmentProblem):
    """The run could not go on: the executor or the store failed while playing, or the league's folders or
    builds could not be made. Every game stored before is kept."""


class KernelWithoutSandbox(BadInput):
    """A league asks for a kernel per bot and the run for no sandbox."""


class RunRefused(BadInput):
    """The store would refuse this league (a dry run's verdict): its options or limits changed."""


class Stage(enum.StrEnum):
    PLAY = "play"
    """The league's schedule."""
    SETTLE = "settle"
    """Settling rounds."""


@dataclass(frozen=True)
class RunOptions:
    sandbox: bool = True
    replay_changed: bool = False
    """Forget the games of every bot whose program changed and play its matches again; else it is held."""
    retry_faulted: tuple[str, ...] = ()
    """Keys of RETRY_FAULTS: drop every stored game with such a fault, to play it again."""
    until_settled: bool = False
    """Play settling rounds after the schedule (also when the league file says until_settled)."""
    max_games: int | None = None
    """The settling budget; None: the league file's max_games, else settle.default_budget."""
    rule: SettleRule = DEFAULT_RULE
    bootstrap: int = DEFAULT_BOOTSTRAP
    prior_draws: float = DEFAULT_PRIOR_DRAWS
    anchor: Anchor | None = None

    def settles(self, league: League) -> bool:
        return self.until_settled or league.until_settled

    def settle_settings(self, league: League) -> SettleSettings:
        return SettleSettings(self.rule, self.max_games or league.max_games, self.bootstrap, self.prior_draws)


class RunProgress:
    """What a run tells as it goes; each method does nothing here, a caller overrides those it shows."""

    def replaying(self, bot: str, why: str, forgotten: Forgotten) -> None:
        """`bot` changed (`why`) and its games were forgotten (RunOptions.replay_changed)."""

    def retrying(self, kind: str, dropped: int) -> None:
        """`dropped` games with a fault of `kind` (a RETRY_FAULTS key) were dropped, to be played again."""

    def note(self, text: str) -> None:
        """Something worth telling the organiser: a skipped folder, a moved bot, bots no longer in the file."""

    def built(self, outcome: BuildOutcome) -> None:
        """A submission was built (or its earlier build reused), or its build failed."""

    def planned(self, plan: LeaguePlan, store: LeagueStore) -> None:
        """The schedule is planned: `plan.specs` are the matches still to play."""

    def stored(self, record: GameRecord) -> None:
        """A game was played and committed."""

    def play_ended(self) -> None:
        """Playing stopped, for whatever reason (called only when there was something to play)."""

    def played(self, added: int, seconds: float) -> None:
        """The schedule's missing games were all played."""

    def settling_round(self, settle_round: SettleRound) -> None:
        """A settling round was decided and is about to be played."""

    def settled(self, result: SettleResult) -> None:
        """Settling ended."""

    def stopped(self, stage: Stage, plan: LeaguePlan, store: LeagueStore) -> None:
        """A KeyboardInterrupt stopped the run in `stage`; it is raised again after this."""


@dataclass(frozen=True)
class LeagueRun:
    plan: LeaguePlan
    """The schedule as planned (with its builds)."""
    played: int
    """Games this run added to the schedule's."""
    settled: SettleResult | None
    """None without settling."""
    results: LeagueResults


def run_league(
    league: League,
    store: LeagueStore,
    executor: Executor,
    options: RunOptions = RunOptions(),
    progress: RunProgress | None = None,
) -> LeagueRun:
    """Play `league` into `store` on `executor` as the module says, and rate every stored game."""
    progress = progress or RunProgress()
    if league.kernel:
        require_kernel(options.sandbox)
    _forget_changed(league, store, options.replay_changed, progress)
    _drop_faulted(store, options.retry_faulted, progress)
    plan = _plan(league, store, options.sandbox, progress, options.settles(league))
    played = _play(plan, store, executor, progress)
    settled = _settle(plan, store, executor, options, progress) if options.settles(league) else None
    results = league_results(
        store,
        league,
        name=league.name,
        bootstrap=options.bootstrap,
        prior_draws=options.prior_draws,
        anchor=options.anchor,
        rule=options.rule,
    )
    return LeagueRun(plan, played, settled, results)


def require_kernel(sandbox: bool) -> None:
    """Refuse, before anything is played, a league whose file asks for a kernel per bot (`kernel = true`) where
    it cannot have one: run with --no-sandbox (BadInput), or on a machine where runsc cannot run
    (referee.isolation.gvisor.KernelUnavailable, saying what to install). Nothing falls back."""
    if not sandbox:
        raise KernelWithoutSandbox(
            "the league file asks for a kernel per bot (kernel = true): it cannot run with --no-sandbox"
        )
    gvisor.require()


def estimate_run(league: League, store_path: Path, concurrency: int, replay_changed: bool = False) -> Estimate:
    """What a run would play and about how long it would take at `concurrency`, playing and writing nothing
    (RunRefused if the store at `store_path` would refuse the league)."""
    if not store_path.is_file():
        return plan_estimate(league, None, concurrency, replay_changed)
    with LeagueStore(store_path, create=False) as store:
        try:
            store.check(league)
        except StoreError as error:
            raise RunRefused(f"the run would be refused: {error}") from error
        return plan_estimate(league, store, concurrency, replay_changed)


def _forget_changed(league: League, store: LeagueStore, replay_changed: bool, progress: RunProgress) -> None:
    if not replay_changed:
        return
    for name, why in store.changed_bots(league).items():
        progress.replaying(name, why, store.forget([name]))


def _drop_faulted(store: LeagueStore, kinds: tuple[str, ...], progress: RunProgress) -> None:
    for kind in kinds:
        progress.retrying(kind, store.drop_games(store.faulted_games(RETRY_FAULTS[kind])))


def _plan(league: League, store: LeagueStore, sandbox: bool, progress: RunProgress, settles: bool) -> LeaguePlan:
    """The schedule's missing matches, with the submissions they seat built; when the run settles, every
    submission built, as a settling round may seat any (its plan.league is the one the rounds play)."""
    try:
        plan = plan_league(league, store, sandbox=sandbox, hold_changed=True)
    except OSError as error:
        raise RunFailed(f"cannot make the league's log or replay folders: {error}") from error
    for note in (*league.skipped, *plan.notes):
        progress.note(note)
    try:
        return build_plan(plan, sandbox=sandbox, on_built=progress.built, every_bot=settles)
    except OSError as error:
        raise RunFailed(f"cannot build the submissions: {error}") from error


def _play(plan: LeaguePlan, store: LeagueStore, executor: Executor, progress: RunProgress) -> int:
    progress.planned(plan, store)
    if not plan.specs:
        return 0
    started = time.monotonic()

    def play() -> int:
        try:
            return play_league(plan, store, executor, progress.stored)
        finally:
            progress.play_ended()

    added = _stoppable(Stage.PLAY, plan, store, progress, play)
    progress.played(added, time.monotonic() - started)
    return added


def _settle(
    plan: LeaguePlan, store: LeagueStore, executor: Executor, options: RunOptions, progress: RunProgress
) -> SettleResult:
    settings = options.settle_settings(plan.league)

    def settle() -> SettleResult:
        return settle_league(
            plan.league,
            store,
            executor,
            settings,
            scheduled_games=plan.scheduled,
            sandbox=options.sandbox,
            on_round=progress.settling_round,
        )

    result = _stoppable(Stage.SETTLE, plan, store, progress, settle)
    progress.settled(result)
    return result


def _stoppable(
    stage: Stage,
    plan: LeaguePlan,
    store: LeagueStore,
    progress: RunProgress,
    play: Callable[[], T],
) -> T:
    """`play()`, telling `progress` when it stops on an interrupt, and turning the executor's and the store's
    errors into RunFailed."""
    try:
        return play()
    except KeyboardInterrupt:
        progress.stopped(stage, plan, store)
        raise
    except (ExecutorError, StoreError) as error:
        raise RunFailed(f"{error} (the games stored so far are kept; rerun to resume)") from error

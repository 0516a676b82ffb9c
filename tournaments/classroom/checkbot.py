"""Checking one bot: seeded games at every player count of its game against the random bot, and a verdict.

    report = check_bot(CheckPlan(game="scout", bot=resolve_bot("./mine.py", "scout", named_by_hello=True),
                                 run_dir=Path("run")))
    report.verdict.conforms   # True only if the bot said hello and played every game without a fault

Each player count is one match (referee.match.run_match): the bot at every seat in turn (games rotate the
seats), the other seats random bots, each seeded from the check's seed (their choices, like the deals, are the
same every time). Strength tests (tournaments/classroom/checkbot_strength.py) are one more match each, against
a baseline. The run folder keeps each match's logs and replays (PLAYERSp/), so that a
failure can be looked at; decision times come from the replays (every decision the bot made, in ms on the
referee's clock). The verdict's reasons are the faults charged to the bot, grouped by kind, a failed handshake
first; the CLI (tournaments/cli/check_bot.py) only formats the report.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from protocol.errors import BadInput
from referee import replay
from referee.botspec import resolve_bot
from referee.deals import DealKey
from referee.games import load_game
from referee.isolation import sandbox as sandboxing
from referee.isolation.process import last_output_lines
from referee.isolation.sandbox import Isolation
from referee.match import run_match
from referee.records import BotSpec, Fault, FaultKind, Handshake, Limits, MatchRecord, MatchSpec
from referee.seating import first_games
from referee.wire.connection import Transport

from .checkbot_strength import (
    DEFAULT_STRENGTH_GAMES,
    StrengthResult,
    StrengthTest,
    baseline_label,
    game_points,
)

OPPONENT = "random"
DEFAULT_SEED = 1
"""check-bot's games are seeded: the same bot gets the same deals each time (unless --seed says otherwise)."""

_REASON_ORDER = (FaultKind.CRASH, FaultKind.PROTOCOL_ERROR, FaultKind.ILLEGAL_ACTION, FaultKind.TIMEOUT)


class CheckError(BadInput, ValueError):
    """A check that cannot be run as asked (a player count the game does not have)."""


@dataclass(frozen=True)
class CheckPlan:
    game: str
    bot: BotSpec
    run_dir: Path
    """Where each player count's logs and replays go (PLAYERSp/)."""
    players: tuple[int, ...] = ()
    """The player counts to play; empty: every count of the game."""
    games: int | None = None
    """Games per player count; None: one per seat (each deal played from every seat)."""
    seed: int = DEFAULT_SEED
    limits: Limits = Limits()
    transport: Transport = Transport.IPC
    sandbox: bool = True
    """Run the bot in the sandbox (False: unsandboxed, as the user; see `isolation_refusal`)."""
    kernel: bool = False
    """Every bot under a kernel of its own (MatchSpec.kernel)."""
    against: tuple[StrengthTest, ...] = ()
    strength_games: int = DEFAULT_STRENGTH_GAMES


@dataclass(frozen=True)
class SeenFault:
    players: int
    game_index: int
    fault: Fault

    @property
    def kind(self) -> FaultKind:
        return self.fault.kind

    @property
    def detail(self) -> str:
        return self.fault.detail


@dataclass(frozen=True)
class TableCheck:
    """The bot's games at one player count."""

    players: int
    games: int
    decisions: int
    """Decisions the bot answered in time and legally."""
    fallback_decisions: int
    """Decisions played for it by the fallback (after a fault, or while it was down)."""
    faults: tuple[SeenFault, ...]
    opponent_faults: int
    """Faults of the random bots (a loaded machine; never the checked bot's doing)."""
    handshake: Handshake | None
    log_path: str | None
    replay_dir: str
    output_tail: tuple[str, ...]
    """The last lines of the bot's log when it faulted here (empty otherwise)."""


@dataclass(frozen=True)
class DecisionTimes:
    decisions: int
    median_ms: float
    p95_ms: float
    max_ms: float
    limit_ms: int
    over_half: int = 0
    """Decisions that took over half the limit: a busier machine (a grader's) may time them out."""

    @property
    def warning(self) -> str | None:
        """A warning for a bot close to its clock, None when no decision took over half of it."""
        if not self.over_half:
            return None
        return (
            f"warning: {self.over_half} of its {self.decisions} decision(s) took over half the limit (the slowest "
            f"{self.max_ms:,.0f} ms of {self.limit_ms:,} ms): a busier machine may time them out"
        )


@dataclass(frozen=True)
class Reason:
    """Why a bot does not conform: one kind of fault, where it first happened, and how often."""

    kind: FaultKind
    handshake: bool
    """True if the bot never completed its handshake (the fault is why)."""
    players: int
    detail: str
    count: int

    def headline(self) -> str:
        when = "during the handshake" if self.handshake else f"in {self.count} game(s)"
        return f"{self.kind.value} {when} (first at {self.players} players)"

    def summary(self) -> str:
        """The headline and the first line of the detail (the report shows the whole of it above)."""
        first = self.detail.splitlines()[0].removesuffix("; its last output:") if self.detail else ""
        return f"{self.headline()}: {first}"


@dataclass(frozen=True)
class Verdict:
    reasons: tuple[Reason, ...]

    @property
    def conforms(self) -> bool:
        return not self.reasons


@dataclass(frozen=True)
class CheckReport:
    game: str
    command: tuple[str, ...]
    name: str
    """The name the bot played under (its hello's, else its program's)."""
    handshake: Handshake | None
    seed: int
    limits: Limits
    tables: tuple[TableCheck, ...]
    times: DecisionTimes
    verdict: Verdict
    run_dir: str
    isolation: Isolation = Isolation.NONE
    """The weakest isolation the bot had in any of its games."""
    isolation_missing: tuple[str, ...] = ()
    """What isolation below full lacked, one line each (empty at full)."""
    strength: tuple[StrengthResult, ...] = ()

    @property
    def timeouts(self) -> int:
        return sum(fault.kind is FaultKind.TIMEOUT for table in self.tables for fault in table.faults)

    @property
    def fallback_decisions(self) -> int:
        return sum(table.fallback_decisions for table in self.tables)

    @property
    def illegal_actions(self) -> int:
        return sum(fault.kind is FaultKind.ILLEGAL_ACTION for table in self.tables for fault in table.faults)

    @property
    def decisions(self) -> int:
        return sum(table.decisions for table in self.tables)


def player_counts(game: str, asked: Sequence[int] = ()) -> tuple[int, ...]:
    """The counts to check: those asked (each one the game has), else every count of the game."""
    info = load_game(game).info
    every = tuple(range(info.min_players, info.max_players + 1))
    wrong = [count for count in asked if count not in every]
    if wrong:
        raise CheckError(f"{game} is for {info.min_players} to {info.max_players} players, not {wrong[0]}")
    return tuple(sorted(set(asked))) if asked else every


def isolation_refusal(sandbox: bool, allow_partial: bool) -> str | None:
    """Why check-bot must not run here (None when it may): it fails closed, since an autograder runs students'
    code, often as root in a container with the grader's files. Below full isolation it runs only when told:
    `allow_partial` accepts a partial sandbox, and no sandbox at all only when `sandbox` is False."""
    if not sandbox:
        return None
    found = sandboxing.probe()
    if found.isolation is Isolation.FULL or (found.isolation is Isolation.PARTIAL and allow_partial):
        return None
    missing = "; ".join(found.shortfalls) or str(found.problem)
    accept = "--allow-partial accepts this partial sandbox, " if found.isolation is Isolation.PARTIAL else ""
    return (
        f"check-bot needs the full sandbox and this machine gives {found.isolation.value} isolation (missing: "
        f"{missing}); {accept}--no-sandbox runs the bot unsandboxed, as this user, able to read and change its "
        "files (docs/how-to/autograde.md: running check-bot in an autograder's container)"
    )


def isolation_missing(level: Isolation, sandbox: bool) -> tuple[str, ...]:
    """What a check at `level` lacked, one line each."""
    if level in (Isolation.FULL, Isolation.KERNEL):
        return ()
    if not sandbox:
        return ("no sandbox: --no-sandbox was given",)
    found = sandboxing.probe()
    return found.shortfalls or (
        (str(found.problem),) if found.problem else ("a bot's uid or cgroup could not be set up",)
    )


def check_bot(plan: CheckPlan) -> CheckReport:
    """Play the plan's games and judge the bot; raises CheckError for a plan that cannot be played (and lets
    the referee's own errors, such as referee.games.GameError, through)."""
    counts = player_counts(plan.game, plan.players)
    opponent = resolve_bot(OPPONENT, plan.game)
    tables = []
    times: list[float] = []
    levels: list[Isolation] = []
    name = plan.bot.name
    for players in counts:
        record = run_match(_match_spec(plan, opponent, players), transport=plan.transport)
        levels += [game.isolation for game in record.games]
        name = record.bots[0].name if record.bots else name
        tables.append(_table_check(record, players, Path(plan.run_dir) / f"{players}p" / "replays", times))
    handshake = next((table.handshake for table in tables if table.handshake is not None), None)
    strength = tuple(_strength(plan, test, handshake is not None, levels) for test in plan.against)
    return CheckReport(
        game=plan.game,
        command=plan.bot.command,
        name=name,
        handshake=handshake,
        seed=plan.seed,
        limits=plan.limits,
        tables=tuple(tables),
        times=_decision_times(times, plan.limits.move_time_ms),
        verdict=Verdict(_reasons(tables)),
        run_dir=str(plan.run_dir),
        isolation=(level := _weakest(levels, plan.sandbox)),
        isolation_missing=isolation_missing(level, plan.sandbox),
        strength=strength,
    )


def _weakest(levels: Sequence[Isolation], sandbox: bool) -> Isolation:
    """The weakest of the games' levels (with no game played, what the machine would have given)."""
    if levels:
        return min(levels, key=sandboxing.STRENGTH.index)
    return machine_isolation(sandbox)


def machine_isolation(sandbox: bool) -> Isolation:
    """The isolation this machine gives a bot (NONE unsandboxed): what a check that played no game reports."""
    return sandboxing.probe().isolation if sandbox else Isolation.NONE


def seeded_opponent(command: tuple[str, ...], seed: int, players: int, seat: int) -> tuple[str, ...]:
    """The random bot's command, seeded for one seat of one player count of a check seeded `seed`."""
    return (*command, "--seed", f"{seed}-{players}-{seat}")


def _match_spec(plan: CheckPlan, opponent: BotSpec, players: int) -> MatchSpec:
    folder = Path(plan.run_dir) / f"{players}p"
    others = tuple(
        BotSpec(f"{OPPONENT}-{seat}", seeded_opponent(opponent.command, plan.seed, players, seat))
        for seat in range(1, players)
    )
    return MatchSpec(
        match_id=f"check-{plan.game}-{players}p",
        game=plan.game,
        bots=(plan.bot, *others),
        games=first_games(players, plan.games or players, DealKey.from_seed(plan.seed)),
        limits=plan.limits,
        replay_dir=str(folder / "replays"),
        log_dir=str(folder),
        sandbox=plan.sandbox,
        kernel=plan.kernel,
    )


def _strength(plan: CheckPlan, test: StrengthTest, said_hello: bool, levels: list[Isolation]) -> StrengthResult:
    """The bot's games against one baseline at the game's smallest table (nothing played for a bot that never
    completed a handshake); each game's isolation level is added to `levels`."""
    baseline = resolve_bot(test.baseline, plan.game)
    label = baseline_label(test, baseline.name)
    if not said_hello:
        return StrengthResult(test, label, 0, 0.0, 0, "the bot never completed a handshake")
    players = load_game(plan.game).info.min_players
    slug = "".join(char if char.isalnum() or char in "-_" else "_" for char in baseline.name)
    folder = Path(plan.run_dir) / f"against-{slug}"
    others = tuple(
        BotSpec(f"{baseline.name}-{seat}", _seeded_if_random(baseline, plan.seed, seat), baseline.cwd)
        for seat in range(1, players)
    )
    spec = MatchSpec(
        match_id=f"check-{plan.game}-against-{slug}",
        game=plan.game,
        bots=(plan.bot, *others),
        games=first_games(players, plan.strength_games, DealKey.from_seed(plan.seed)),
        limits=plan.limits,
        replay_dir=str(folder / "replays"),
        log_dir=str(folder),
        sandbox=plan.sandbox,
        kernel=plan.kernel,
    )
    record = run_match(spec, transport=plan.transport)
    levels += [game.isolation for game in record.games]
    points = 0.0
    faults = 0
    for game in record.games:
        seat = record.seat_of(game, 0)
        points += game_points(game.ranks, seat)
        faults += sum(fault.seat == seat for fault in game.faults)
    return StrengthResult(test, label, len(record.games), points, faults)


def _seeded_if_random(bot: BotSpec, seed: int, seat: int) -> tuple[str, ...]:
    random_command = resolve_bot(OPPONENT, "scout").command
    return seeded_opponent(bot.command, seed, 0, seat) if bot.command == random_command else bot.command


def _table_check(record: MatchRecord, players: int, replay_dir: Path, times: list[float]) -> TableCheck:
    faults = []
    decisions = fallback = opponent_faults = 0
    for game in record.games:
        seat = record.seat_of(game, 0)
        decisions += game.timings[seat].decisions
        faults += [SeenFault(players, game.index, f) for f in game.faults if f.seat == seat]
        opponent_faults += sum(f.seat != seat for f in game.faults)
        if game.replay_path is not None:
            moves = replay.load(game.replay_path)["actions"]
            times += [move["ms"] for move in moves if move["seat"] == seat and move["by"] == "bot"]
            fallback += sum(move["seat"] == seat and move["by"] == "fallback" for move in moves)
    bot = record.bots[0] if record.bots else None
    log_path = bot.log_path if bot else None
    tail = tuple(last_output_lines(Path(log_path))) if faults and log_path else ()
    return TableCheck(
        players=players,
        games=len(record.games),
        decisions=decisions,
        fallback_decisions=fallback,
        faults=tuple(faults),
        opponent_faults=opponent_faults,
        handshake=bot.handshake if bot else None,
        log_path=log_path,
        replay_dir=str(replay_dir),
        output_tail=tail,
    )


def _decision_times(times: list[float], limit_ms: int) -> DecisionTimes:
    if not times:
        return DecisionTimes(0, 0.0, 0.0, 0.0, limit_ms)
    ordered = sorted(times)
    p95 = ordered[math.ceil(0.95 * len(ordered)) - 1]
    over_half = sum(time > limit_ms / 2 for time in ordered)
    return DecisionTimes(len(ordered), statistics.median(ordered), p95, ordered[-1], limit_ms, over_half)


def _reasons(tables: Sequence[TableCheck]) -> tuple[Reason, ...]:
    """One reason per kind of fault (the first occurrence's detail, the games it happened in), a failed
    handshake first."""
    reasons = []
    for table in tables:
        if table.handshake is None and table.faults:
            first = table.faults[0]
            return (Reason(first.kind, True, table.players, first.detail, len(table.faults)),)
    for kind in _REASON_ORDER:
        seen = [fault for table in tables for fault in table.faults if fault.kind is kind]
        if seen:
            games = len({(fault.players, fault.game_index) for fault in seen})
            reasons.append(Reason(kind, False, seen[0].players, seen[0].detail, games))
    return tuple(reasons)

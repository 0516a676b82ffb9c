"""The values that cross the referee's boundary: what to play (MatchSpec) and what happened (records).

Tournaments build MatchSpecs and store the records; the referee turns one MatchSpec into one MatchRecord.
Faults are data here: a seat's misbehaviour never leaves the referee as an exception.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from protocol import limits
from referee.isolation.sandbox import Isolation


class FaultKind(enum.StrEnum):
    TIMEOUT = "timeout"
    CRASH = "crash"
    """The bot process exited or disconnected (including a crash before or during the handshake)."""
    ILLEGAL_ACTION = "illegal_action"
    PROTOCOL_ERROR = "protocol_error"
    """Undecodable bytes, a message over a limit, a schema error, a wrong token, a flood."""


class FaultPolicy(enum.StrEnum):
    FORFEIT = "forfeit"
    """The faulty seat ranks last in that game; a fallback policy plays its later decisions."""
    SUBSTITUTE = "substitute"
    """A random legal action is played for the fault; after `fault_budget` faults the seat forfeits."""


@dataclass(frozen=True)
class BotSpec:
    name: str
    command: tuple[str, ...]
    cwd: str | None = None
    named_by_hello: bool = False
    """`name` is a stand-in (the program's name, referee.botspec): the name the bot sends in its hello replaces
    it, made unique within the match. False for names someone chose (a league file's)."""
    env: tuple[tuple[str, str], ...] = ()
    """Environment variables declared for this bot (by the league file): a sandboxed bot's environment is these
    and the few the referee sets (see referee.isolation.sandbox.bot_environment); an unsandboxed bot gets the referee's
    environment with these added."""
    timed: bool = True
    """False for a person at a terminal (the human seat): no decision of this bot times out (its seat's time
    bank is limits.UNTIMED_BANK_MS in every game); the startup limit still holds."""
    sandbox: bool = True
    """False only for the referee's own programs that need what a sandbox hides (the human seat opens the
    user's terminal): they run unsandboxed, and their games record sandboxed=False."""
    stopped_on_timeouts: bool = True
    """False for a league's baselines (trusted programs, whose timeouts are the machine's load, not theirs):
    Limits.max_timeouts never stops them, so one slow moment does not hand a student a match of forfeits."""


@dataclass(frozen=True)
class Limits:
    move_time_ms: int = limits.DEFAULT_MOVE_TIME_MS
    startup_time_s: float = limits.DEFAULT_STARTUP_TIME_S
    time_bank_ms: int = limits.DEFAULT_TIME_BANK_MS
    memory_mb: int = limits.DEFAULT_MEMORY_MB
    log_cap_bytes: int = limits.DEFAULT_LOG_CAP_BYTES
    fault_policy: FaultPolicy = FaultPolicy.FORFEIT
    fault_budget: int = limits.DEFAULT_FAULT_BUDGET
    max_timeouts: int | None = None
    """After this many timeouts in one match a bot is stopped and forfeits the match's remaining games (its
    faults say so); None: never (a hanging bot then costs its move time in every decision it is asked)."""


@dataclass(frozen=True)
class GameSpec:
    """One game of a match: its deal seed and who sits where (seating[seat] = index into MatchSpec.bots)."""

    index: int
    seed: int
    seating: tuple[int, ...]


@dataclass(frozen=True)
class MatchSpec:
    match_id: str
    game: str
    bots: tuple[BotSpec, ...]
    games: tuple[GameSpec, ...]
    config: Mapping[str, Any] = field(default_factory=dict)
    limits: Limits = Limits()
    replay_dir: str | None = None
    log_dir: str | None = None
    """This match's own folder for the bots' logs, NAME.log each (matches must not share one); None: not kept."""
    sandbox: bool = True
    """Run this match's bots in the sandbox (referee.isolation.sandbox) where the machine allows it; where it does not,
    they run unsandboxed and the games record `sandboxed=False`."""
    ponder: bool = False
    """Let bots run while not on move. By default (False) a sandboxed bot is frozen (cgroup freezer) from its
    hello until its first request and whenever it is not on move, so no two bots run at once outside
    simultaneous decisions: none can take CPU from the bot on move, or time it, or think on another's time."""
    private_paths: tuple[str, ...] = ()
    """The organiser's files no bot may see (a league's file and store): hidden in the sandbox even where a
    folder it shows a bot holds them."""


@dataclass(frozen=True)
class Fault:
    seat: int
    bot: str
    kind: FaultKind
    detail: str
    sent: str | None = None
    """For an illegal action, the action as the bot sent it: its JSON text (referee.faults.sent_text), never
    interpreted again; None for other faults."""
    before_action: int | None = None
    """The index of the game's action the fault came before (the replay's `before_action`: its page shows the
    fault at step before_action + 1); None where it was not recorded (older stores)."""


@dataclass(frozen=True)
class SeatTiming:
    decisions: int
    mean_ms: float
    max_ms: float


@dataclass(frozen=True)
class GameRecord:
    match_id: str
    index: int
    game: str
    seed: int
    seats: tuple[str, ...]
    """The bot name at each seat."""
    ranks: tuple[int, ...]
    """Final ranks: the game's, with forfeited seats last (referee.faults.forfeit_ranks)."""
    scores: tuple[int, ...]
    """Final scores: the game's, with forfeited seats at the table's lowest (referee.faults.forfeit_scores)."""
    faults: tuple[Fault, ...]
    timings: tuple[SeatTiming, ...]
    replay_path: str | None = None
    forfeited: tuple[bool, ...] = ()
    """Whether each seat forfeited the game (empty: none did)."""
    isolation: Isolation = Isolation.FULL
    """The weakest isolation a bot of the game had (referee.isolation.sandbox.Isolation: none when the match asked
    for no sandbox or the machine has none; partial when a bot lacked its own uid, its cgroup or the seccomp
    filter)."""

    @property
    def sandboxed(self) -> bool:
        """Every bot of the game ran in the sandbox (at full or partial isolation)."""
        return self.isolation is not Isolation.NONE


@dataclass(frozen=True)
class Handshake:
    """What a bot said in its first accepted hello (the token left out)."""

    name: str
    version: str | None
    protocol: int


@dataclass(frozen=True)
class BotRun:
    """One bot of a played match, in the order of MatchSpec.bots."""

    name: str
    """The name it played under (in GameRecord.seats and Fault.bot)."""
    log_path: str | None
    """Its output (stdout and stderr, capped), kept when the match had a log_dir."""
    handshake: Handshake | None
    """None if it never completed a handshake."""
    starts: int
    """How often its program was started (a bot that crashed after its handshake is started again)."""


@dataclass(frozen=True)
class MatchRecord:
    spec: MatchSpec
    games: tuple[GameRecord, ...]
    """In the order they were played (rotation by rotation, see referee.match.generations)."""
    bots: tuple[BotRun, ...] = ()
    bot_starts: int = 0
    """Bot processes started: one per bot and rotation, plus the restarts of crashed bots."""

    def seat_of(self, game: GameRecord, bot: int) -> int:
        """The seat that `bot` (an index into spec.bots) had in `game`, one of this match's games. The games are
        kept in the order played, which is not the order of spec.games: the seating is found by the game's index."""
        seating = next(spec.seating for spec in self.spec.games if spec.index == game.index)
        return seating.index(bot)

"""The values that cross the referee's boundary: what to play (MatchSpec) and what happened (records).

Tournaments build MatchSpecs and store the records; the referee turns one MatchSpec into one MatchRecord.
Faults are data here: a seat's misbehaviour never leaves the referee as an exception.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from protocol import limits
from referee.isolation.process import Ending, describe_ending
from referee.isolation.sandbox import Isolation


class FaultKind(enum.StrEnum):
    TIMEOUT = "timeout"
    CRASH = "crash"
    """The bot process exited or disconnected (including a crash before or during the handshake)."""
    ILLEGAL_ACTION = "illegal_action"
    PROTOCOL_ERROR = "protocol_error"
    """Undecodable bytes, a message over a limit, a schema error, a wrong token, a flood."""


class FaultCause(enum.StrEnum):
    """Why a seat faulted: each cause belongs to one FaultKind (`kind`) and says in a phrase what happened
    (`meaning`). What a fault means is read from its cause (and FaultFacts), never from its words: those are
    derived from both (describe), so rewording one changes no decision. The values are what --retry-faulted and
    the store's `faults.cause` column say."""

    STARTUP_TIMEOUT = "startup-timeout"
    DECISION_TIMEOUT = "decision-timeout"
    LATE_ANSWER = "late-answer"
    TIMEOUT_LIMIT = "timeout-limit"
    START_FAILED = "start-failed"
    EXITED = "exited"
    KILLED_BY_SIGNAL = "signal"
    MEMORY_LIMIT = "memory-limit"
    HELLO_REFUSED = "hello-refused"
    STOLEN_TOKEN = "stolen-token"
    PROTOCOL_VIOLATION = "protocol-violation"
    MULTIPART_MESSAGE = "multipart-message"
    HELLO_AFTER_HANDSHAKE = "hello-after-handshake"
    STALE_FLOOD = "stale-flood"
    CONNECTION_FLOOD = "connection-flood"
    ILLEGAL_ACTION = "illegal-action"
    NO_ANSWER = "no-answer"
    CONNECTION_LOST = "connection-lost"

    @property
    def kind(self) -> FaultKind:
        return _CAUSES[self][0]

    @property
    def meaning(self) -> str:
        """What the cause is, in a short phrase (for people and the documentation; nothing reads it back)."""
        return _CAUSES[self][1]


_CAUSES: dict[FaultCause, tuple[FaultKind, str]] = {
    FaultCause.STARTUP_TIMEOUT: (FaultKind.TIMEOUT, "no hello within the startup limit"),
    FaultCause.DECISION_TIMEOUT: (FaultKind.TIMEOUT, "no answer within the decision's time (move time and bank)"),
    FaultCause.LATE_ANSWER: (FaultKind.TIMEOUT, "an answer that came after the decision's time was up"),
    FaultCause.TIMEOUT_LIMIT: (FaultKind.TIMEOUT, "stopped for reaching the match's max_timeouts"),
    FaultCause.START_FAILED: (FaultKind.CRASH, "the program could not be started"),
    FaultCause.EXITED: (FaultKind.CRASH, "the bot's process exited"),
    FaultCause.KILLED_BY_SIGNAL: (FaultKind.CRASH, "the bot's process was killed by a signal"),
    FaultCause.MEMORY_LIMIT: (FaultKind.CRASH, "the bot ran out of its memory limit"),
    FaultCause.HELLO_REFUSED: (FaultKind.PROTOCOL_ERROR, "its hello was refused and it never joined"),
    FaultCause.STOLEN_TOKEN: (FaultKind.PROTOCOL_ERROR, "a hello with another bot's token"),
    FaultCause.PROTOCOL_VIOLATION: (
        FaultKind.PROTOCOL_ERROR,
        "a message that breaks the protocol (undecodable, over a limit, against the schema)",
    ),
    FaultCause.MULTIPART_MESSAGE: (FaultKind.PROTOCOL_ERROR, "a message of more than one frame"),
    FaultCause.HELLO_AFTER_HANDSHAKE: (FaultKind.PROTOCOL_ERROR, "a hello after the handshake"),
    FaultCause.STALE_FLOOD: (FaultKind.PROTOCOL_ERROR, "a flood of stale or unsolicited messages"),
    FaultCause.CONNECTION_FLOOD: (FaultKind.PROTOCOL_ERROR, "too many connections to the referee at once"),
    FaultCause.ILLEGAL_ACTION: (FaultKind.ILLEGAL_ACTION, "an action that is not one of the legal ones"),
    FaultCause.NO_ANSWER: (
        FaultKind.TIMEOUT,
        "no answer at all, even a while after the decision's time was up: a bot that hangs (one that answers, "
        "however late, is a late-answer; decision-timeout: it was stopped or ended before it could be told)",
    ),
    FaultCause.CONNECTION_LOST: (
        FaultKind.CRASH,
        "a remote seat's connection closed and did not come back within the reconnect grace",
    ),
}


class Stage(enum.StrEnum):
    """When a bot's process ended."""

    HANDSHAKE = "handshake"
    GAME = "game"
    BETWEEN_GAMES = "between_games"


class MemoryHit(enum.StrEnum):
    """How a bot was found at its memory limit."""

    KILLED = "killed"
    """The kernel killed it (its cgroup counted an oom kill)."""
    ALLOCATION_FAILED = "allocation_failed"
    """An allocation failed and the bot said so (the runtime's own words in its last output)."""


@dataclass(frozen=True)
class FaultFacts:
    """What a fault's words are made of, beside its cause; a cause uses the facts it needs, the rest stay unset.

    `note` and `output` are words from elsewhere, kept to show and never read: `note` another part's reason (the
    engine's for an illegal action, the codec's for a protocol violation, the refusal of a hello, the system's
    for a program that could not start), `output` the bot's last lines of output."""

    request_id: int | None = None
    allowed_ms: int | None = None
    """The time the request allowed (move time and the bank left)."""
    answered_ms: float | None = None
    """When a late answer came, from the request."""
    other_replies: int | None = None
    """Replies that named another request while this one was open, and `other_id`, the last id they named."""
    other_id: int | None = None
    startup_s: float | None = None
    count: int | None = None
    """Timeouts (TIMEOUT_LIMIT), frames (MULTIPART_MESSAGE), messages (STALE_FLOOD), connections held
    (CONNECTION_FLOOD)."""
    most: int | None = None
    """The connections a bot may hold (CONNECTION_FLOOD)."""
    exit_status: int | None = None
    signal: int | None = None
    memory: MemoryHit | None = None
    memory_mb: int | None = None
    stage: Stage | None = None
    game: int | None = None
    """The game a process ended during (Stage.GAME)."""
    victim: str | None = None
    """The bot whose token was presented (STOLEN_TOKEN)."""
    not_running: bool = False
    """The bot was already down when the game began: the fault is the one that put it down."""
    note: str | None = None
    output: tuple[str, ...] = ()
    waited_ms: int | None = None
    """How much longer than its time a bot was waited for and stayed silent (NO_ANSWER)."""
    grace_s: float | None = None
    """How long a remote seat's lost connection was waited for (CONNECTION_LOST)."""

    def to_json(self) -> dict[str, Any]:
        """The facts that are set, as JSON-safe data (what the store's `faults.facts` and replays hold)."""
        return {
            item.name: list(value) if isinstance(value, tuple) else value
            for item in fields(self)
            if (value := getattr(self, item.name)) != item.default
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FaultFacts:
        """The facts `to_json` wrote (keys this version does not know are left out)."""
        known = {item.name for item in fields(cls)}
        values = {name: value for name, value in data.items() if name in known}
        if "output" in values:
            values["output"] = tuple(values["output"])
        if values.get("memory") is not None:
            values["memory"] = MemoryHit(values["memory"])
        if values.get("stage") is not None:
            values["stage"] = Stage(values["stage"])
        return cls(**values)

    @property
    def ending(self) -> Ending:
        return Ending(self.exit_status, self.signal)


def describe(cause: FaultCause, facts: FaultFacts) -> str:
    """A fault in words, made from its cause and facts alone: the one place a fault's words are written."""
    text = _WORDS[cause](facts)
    if facts.other_replies:
        text += _misanswered(facts)
    if facts.output:
        text += "; its last output:\n" + "\n".join(f"| {line}" for line in facts.output)
    return f"not running: {text}" if facts.not_running else text


def _misanswered(facts: FaultFacts) -> str:
    """What a timeout adds about the replies that named another request while it was open: a stale id is lower
    than the open request's (ids increase, so it names an older one), a wrong id is higher."""
    request_id, last_id, count = facts.request_id or 0, facts.other_id or 0, facts.other_replies
    which = "stale" if last_id < request_id else "wrong"
    times = "once" if count == 1 else f"{count} times, the last"
    return f"; it replied {times} with the {which} id {last_id} instead (ids name requests: answer with {request_id})"


def _ended(facts: FaultFacts) -> str:
    """How the bot's process ended and when (the kernel's memory kill named)."""
    said = describe_ending(facts.ending)
    if facts.memory is MemoryHit.KILLED:
        said += ": it hit the memory limit" + (f" of {facts.memory_mb} MiB" if facts.memory_mb else "")
    return f"the bot {said} {_when(facts)}".rstrip()


def _when(facts: FaultFacts) -> str:
    return {
        Stage.HANDSHAKE: "during the handshake",
        Stage.GAME: f"during game {facts.game}",
        Stage.BETWEEN_GAMES: "between games",
        None: "",
    }[facts.stage]


def _lost(facts: FaultFacts) -> str:
    when = f" {_when(facts)}" if facts.stage is not None else ""
    return f"its connection closed{when} and did not come back within the reconnect grace of {facts.grace_s:g} s"


def _crashed(facts: FaultFacts) -> str:
    said = _ended(facts)
    if facts.memory is MemoryHit.ALLOCATION_FAILED:
        said += f": it hit the memory limit of {facts.memory_mb} MiB (an allocation failed)"
    return said


def _refused(facts: FaultFacts) -> str:
    then = _startup(facts) if facts.startup_s is not None else _ended(facts)
    return f"hello refused ({facts.note}); {then}"


def _startup(facts: FaultFacts) -> str:
    return f"no hello within the startup limit of {facts.startup_s} s"


_WORDS: dict[FaultCause, Callable[[FaultFacts], str]] = {
    FaultCause.STARTUP_TIMEOUT: _startup,
    FaultCause.DECISION_TIMEOUT: lambda f: f"no answer to request {f.request_id} within {f.allowed_ms} ms",
    FaultCause.LATE_ANSWER: lambda f: (
        f"request {f.request_id} answered after {f.answered_ms or 0:,.0f} ms of a {f.allowed_ms or 0:,} ms limit"
    ),
    FaultCause.TIMEOUT_LIMIT: lambda f: f"stopped after {f.count} timeouts in this match (max_timeouts = {f.count})",
    FaultCause.START_FAILED: lambda f: f.note or "",
    FaultCause.EXITED: _crashed,
    FaultCause.KILLED_BY_SIGNAL: _crashed,
    FaultCause.MEMORY_LIMIT: _crashed,
    FaultCause.HELLO_REFUSED: _refused,
    FaultCause.STOLEN_TOKEN: lambda f: f"presented another bot's token (that of {f.victim}) in a hello",
    FaultCause.PROTOCOL_VIOLATION: lambda f: f.note or "",
    FaultCause.MULTIPART_MESSAGE: lambda f: f"a message is one frame, not {f.count}",
    FaultCause.HELLO_AFTER_HANDSHAKE: lambda f: "hello after the handshake",
    FaultCause.STALE_FLOOD: lambda f: f"a flood of {f.count} stale or unsolicited messages",
    FaultCause.CONNECTION_FLOOD: lambda f: (
        f"held {f.count} connections to the referee at once (at most {f.most}): a flood of connections"
    ),
    FaultCause.ILLEGAL_ACTION: lambda f: f"request {f.request_id}: {f.note}",
    FaultCause.NO_ANSWER: lambda f: (
        f"no answer to request {f.request_id} within {f.allowed_ms} ms, nor in {f.waited_ms} ms more: "
        "the bot hangs (or thinks far past its time)"
    ),
    FaultCause.CONNECTION_LOST: _lost,
}


def crash_cause(facts: FaultFacts) -> FaultCause:
    """The cause of a bot's process ending, from how it ended: its memory limit (found either way), a signal,
    or an exit."""
    if facts.grace_s is not None:
        return FaultCause.CONNECTION_LOST
    if facts.memory is not None:
        return FaultCause.MEMORY_LIMIT
    return FaultCause.KILLED_BY_SIGNAL if facts.signal is not None else FaultCause.EXITED


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
    folders: tuple[str, ...] | None = None
    """The folders of its own the bot's sandbox shows, decided on the organiser's side: for a submission its
    folder, or the copy its build ran in (tournaments.league.submissions). Its sandbox then shows those, the
    system, the runtime its program needs where that lies outside them, and nothing its command's other words
    name: they are arguments, never mounts. None: a bot the organiser named (a league file's, the command
    line's), whose sandbox shows the folders its command names (referee.isolation.sandbox.shown_folders)."""


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
    kernel: bool = False
    """Run each bot under an application kernel of its own (gVisor's runsc: referee.isolation.gvisor), the
    kernel isolation level; needs `sandbox`, and a machine where runsc runs (else the match is refused)."""
    ponder: bool = False
    """Let bots run while not on move. By default (False) a sandboxed bot is frozen (cgroup freezer) from its
    hello until its first request and whenever it is not on move, so no two bots run at once outside
    simultaneous decisions: none can take CPU from the bot on move, or time it, or think on another's time."""
    private_paths: tuple[str, ...] = ()
    """The organiser's files no bot may see (a league's file and store): hidden in the sandbox even where a
    folder it shows a bot holds them."""


@dataclass(frozen=True)
class Fault:
    """A seat's fault: its cause and the facts that go with it. Its words (`detail`) are derived from them
    (describe), so what a fault means is read from `cause`, never from its text."""

    seat: int
    bot: str
    cause: FaultCause
    facts: FaultFacts = FaultFacts()
    sent: str | None = None
    """For an illegal action, the action as the bot sent it: its JSON text (referee.faults.sent_text), never
    interpreted again; None for other faults."""
    before_action: int | None = None
    """The index of the game's action the fault came before (the replay's `before_action`: its page shows the
    fault at step before_action + 1); None where it was not recorded (older stores)."""

    @property
    def kind(self) -> FaultKind:
        return self.cause.kind

    @property
    def detail(self) -> str:
        return describe(self.cause, self.facts)


@dataclass(frozen=True)
class SeatTiming:
    decisions: int
    mean_ms: float
    max_ms: float


@dataclass(frozen=True)
class RemoteTiming:
    """A remote seat's network figures over one game (referee.wire.lag_quota): its decisions, the lag measured
    when they were answered, what the lag quota paid of them and what it had left at the end."""

    decisions: int
    median_lag_ms: float
    max_lag_ms: float
    credit_ms: float
    quota_left_ms: float


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
    remote: tuple[RemoteTiming | None, ...] = ()
    """Each seat's network figures where it was a remote seat (None for a local seat; empty: no remote seat)."""

    @property
    def sandboxed(self) -> bool:
        """Every bot of the game ran in the sandbox (at full or partial isolation)."""
        return self.isolation not in (Isolation.NONE, Isolation.REMOTE)


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

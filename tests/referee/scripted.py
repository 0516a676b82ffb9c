"""A scripted table: a referee.session.BotTransport whose bots are scripts, on a clock of the table's own, so a
whole match (handshakes, clocks, faults, fallbacks, freezing) runs in milliseconds with no socket and no process.

    table = ScriptedTable([ScriptedBot("slow", slow_first), ScriptedBot("quick")])
    record = run_match(table.spec("scout"), transport=table.transport(), sandbox_probe=table.probe)

Each bot says hello when started (after `hello_after_ms`), and answers each request as its script says: the
script sees the request (`Asked`) and returns the steps of its answer (`Answer`, `Send`, `Exit`), each after a
delay on the table's clock. The clock stands still while the referee works and moves only when the referee
waits (Wire.wait), to the next step that is due or to the referee's deadline: every duration is exact.

Every frame the referee sends is kept per process (`ScriptedProcess.received`), and every freeze and thaw
(`holds`); a request sent to a frozen bot is a referee error (AssertionError), as it would leave the bot unable
to answer. Each time a process starts or thaws while another one is awake (started, neither frozen nor killed),
the table notes the names of the bots awake together (`together`). A bot whose program has ended counts as awake
until it is frozen or killed: its program may have left children running in its sandbox, as a real one may.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections import deque
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack
from referee_helpers import TEST_LIMITS

from protocol import codec, limits
from referee.deals import DealKey
from referee.isolation import sandbox
from referee.isolation.cgroups import CgroupMode, CgroupSupport
from referee.isolation.process import Ending, ending_of
from referee.isolation.proctable import Namespace
from referee.records import BotSpec, Limits, MatchSpec
from referee.seating import first_games
from referee.session import BotTransport
from referee.wire.connection import Incoming, Transport
from referee.wire.connection_cap import BotSockets, Flood, OwnerOfPid

NO_SANDBOX = sandbox.SandboxProbe("a scripted table has no sandbox")
FREEZER = sandbox.SandboxProbe(None, bwrap="bwrap", cgroups=CgroupSupport(CgroupMode.V2))
"""A machine whose bots are sandboxed and frozen while not on move (the scripted processes record the holds)."""
_MOST_IDLE_WAITS = 100
"""Waits in a row on a deadline already past with nothing due: the clock stands still while the referee does not
wait, so a referee that does not act on a passed deadline would wait forever."""


@dataclass(frozen=True)
class Asked:
    """A request as a scripted bot sees it."""

    id: int
    number: int
    """1 for the first request this process was sent, 2 for the next..."""
    start: int
    """1 in the bot's first process, 2 in the one started after it..."""
    legal_actions: list[Any]
    time_left_ms: int
    bank_left_ms: int


@dataclass(frozen=True)
class Answer:
    """An action reply: `action` (default: the first legal one) with `id` (default: the request's)."""

    after_ms: float = 0.0
    action: Any = None
    id: int | None = None


@dataclass(frozen=True)
class Send:
    """Any frame."""

    after_ms: float
    frame: bytes


@dataclass(frozen=True)
class Exit:
    """The bot's program ends with `status`, having printed `output`."""

    after_ms: float = 0.0
    status: int = 1
    output: str = ""


Step = Answer | Send | Exit
Script = Callable[[Asked], Sequence[Step]]


def prompt(asked: Asked) -> Sequence[Step]:
    """Answer at once with the first legal action."""
    return [Answer()]


@dataclass(frozen=True)
class ScriptedBot:
    name: str
    script: Script = prompt
    hello_after_ms: float | None = 0.0
    """None: it never says hello."""


@dataclass(eq=False)
class ScriptedProcess:
    """One start of a scripted bot (a BotHandle)."""

    bot: ScriptedBot
    start: int
    pid: int
    identity: bytes
    log_path: Path
    memory_mb: int | None = None
    jail: None = None
    status: int | None = None
    frozen: bool = False
    killed: bool = False
    holds: list[bool] = field(default_factory=list)
    received: list[dict[str, Any]] = field(default_factory=list)
    received_at: list[float] = field(default_factory=list)
    """When each frame of `received` was sent, on the table's clock."""
    requests: int = 0
    on_thaw: Callable[[], None] | None = None

    @property
    def awake(self) -> bool:
        """Its processes may run: not frozen and not killed (an ended program may have left children)."""
        return not self.frozen and not self.killed

    @property
    def pidfd(self) -> int:
        return self.pid

    def exited(self) -> bool:
        return self.status is not None

    def ending(self) -> Ending | None:
        return None if self.status is None else ending_of(self.status, wrapped=False)

    def oom_killed(self) -> bool:
        return False

    def hold(self, frozen: bool) -> None:
        if not self.killed:
            self.frozen = frozen
            self.holds.append(frozen)
            if not frozen and self.on_thaw is not None:
                self.on_thaw()

    def kill(self) -> None:
        self.killed = True
        if self.status is None:
            self.status = -9

    def program_pids(self) -> list[int]:
        return []

    def namespace(self) -> Namespace | None:
        return None

    def requests_received(self) -> list[dict[str, Any]]:
        return [message for message in self.received if message["type"] == codec.REQUEST]

    def request_times(self) -> list[float]:
        """When each request was sent, on the table's clock."""
        sent = zip(self.received_at, self.received, strict=True)
        return [at for at, message in sent if message["type"] == codec.REQUEST]


class ScriptedTable:
    """The bots of one match and the world they live in: the table's clock, its wire, its processes."""

    def __init__(self, bots: Sequence[ScriptedBot], probe: sandbox.SandboxProbe = NO_SANDBOX) -> None:
        self.bots = {bot.name: bot for bot in bots}
        self.probe = probe
        self.now = 1024.0
        self.processes: list[ScriptedProcess] = []
        self._by_identity: dict[bytes, ScriptedProcess] = {}
        self._steps: list[tuple[float, int, ScriptedProcess, Step | bytes]] = []
        self._order = itertools.count()
        self._inbox: deque[Incoming] = deque()
        self._exited: list[int] = []
        self._watched: set[int] = set()
        self._idle = 0
        self.together: list[tuple[str, ...]] = []

    def _note_awake(self) -> None:
        awake = tuple(sorted(process.bot.name for process in self.processes if process.awake))
        if len(awake) > 1:
            self.together.append(awake)

    def spec(self, game: str, games: int = 1, seed: int = 1, limits: Limits = TEST_LIMITS, **extra: Any) -> MatchSpec:
        """The first `games` games of the balanced match of the table's bots, unsandboxed unless its probe
        allows a sandbox."""
        bots = tuple(BotSpec(name, ("scripted", name)) for name in self.bots)
        return MatchSpec(
            match_id=f"scripted-{game}-{seed}",
            game=game,
            bots=bots,
            games=first_games(len(bots), games, DealKey.from_seed(seed)),
            limits=limits,
            sandbox=self.probe.usable,
            **extra,
        )

    def transport(self) -> BotTransport:
        return BotTransport(Transport.IPC, self.open_wire, self.start_bot, self.clock)

    def clock(self) -> float:
        return self.now

    def started(self, name: str) -> list[ScriptedProcess]:
        """Every process of bot `name`, in the order they were started."""
        return [process for process in self.processes if process.bot.name == name]

    # BotTransport.start_bot.

    def start_bot(
        self,
        command: Sequence[str],
        env: Mapping[str, str],
        log_path: Path,
        log_cap_bytes: int,
        *,
        memory_mb: int | None,
        cwd: str | None,
        sandbox: sandbox.SandboxRequest | None,
    ) -> ScriptedProcess:
        bot = self.bots[command[1]]
        pid = 100_000 + len(self.processes)
        start = len(self.started(bot.name)) + 1
        process = ScriptedProcess(bot, start, pid, f"connection-{pid}".encode(), log_path, memory_mb)
        log_path.touch()
        self.processes.append(process)
        self._by_identity[process.identity] = process
        process.on_thaw = self._note_awake
        self._note_awake()
        if bot.hello_after_ms is not None:
            hello = {"type": codec.HELLO, "protocol": limits.PROTOCOL_VERSION, "token": env[limits.ENV_TOKEN]}
            self._after(bot.hello_after_ms, process, codec.encode(hello | {"name": bot.name}))
        return process

    # BotTransport.open_wire, and the Wire.

    def open_wire(
        self,
        workdir: Path,
        bound: Container[bytes],
        likely_peers: Callable[[], Iterable[int]],
        *,
        bot_sockets: BotSockets,
        owner_of_pid: OwnerOfPid,
    ) -> ScriptedTable:
        (workdir / "referee.sock").touch()
        self.endpoint = f"ipc://{workdir / 'referee.sock'}"
        return self

    checks_peers = False

    def watch(self, fd: int) -> None:
        self._watched.add(fd)

    def unwatch(self, fd: int) -> None:
        self._watched.discard(fd)

    def wait(self, deadline: float) -> tuple[bool, list[int], Sequence[Flood]]:
        if not self._inbox and not self._exited:
            due = self._steps[0][0] if self._steps else math.inf
            self._idle = self._idle + 1 if due > self.now >= deadline else 0
            assert self._idle < _MOST_IDLE_WAITS, f"the referee waits again and again on a deadline past ({deadline})"
            self.now = max(self.now, min(due, deadline))
        while self._steps and self._steps[0][0] <= self.now:
            _, _, process, step = heapq.heappop(self._steps)
            self._take(process, step)
        exited = [fd for fd in self._exited if fd in self._watched]
        self._exited.clear()
        return bool(self._inbox), exited, ()

    def receive(self) -> Iterator[Incoming]:
        if self._inbox:
            yield self._inbox.popleft()

    def send(self, identity: bytes, frame: bytes) -> None:
        process = self._by_identity[identity]
        if process.exited():
            return
        message = msgpack.unpackb(frame, raw=False)
        process.received.append(message)
        process.received_at.append(self.now)
        if message["type"] == codec.REQUEST:
            assert not process.frozen, f"request {message['id']} sent to {process.bot.name} while it is frozen"
            process.requests += 1
            asked = Asked(
                message["id"],
                process.requests,
                process.start,
                message["legal_actions"],
                message["time_left_ms"],
                message["bank_left_ms"],
            )
            for step in process.bot.script(asked):
                self._after(step.after_ms, process, _with_request(step, asked))
        elif message["type"] == codec.BYE:
            self._after(0.0, process, Exit(status=0))

    def sender(self, incoming: Incoming, claimant: Sequence[int] = ()) -> int | None:
        return None

    def close(self) -> None:
        self._steps.clear()
        self._inbox.clear()

    # The bots' side.

    def _after(self, delay_ms: float, process: ScriptedProcess, step: Step | bytes) -> None:
        heapq.heappush(self._steps, (self.now + delay_ms / 1000, next(self._order), process, step))

    def _take(self, process: ScriptedProcess, step: Step | bytes) -> None:
        """A bot's step falls due: a frame reaches the referee, or the program ends."""
        if process.exited():
            return
        if isinstance(step, Exit):
            with process.log_path.open("a") as log:
                log.write(step.output)
            process.status = step.status
            self._exited.append(process.pidfd)
            return
        frame = step if isinstance(step, bytes) else step.frame
        self._inbox.append(Incoming(process.identity, [frame]))


def _with_request(step: Step, asked: Asked) -> Step | bytes:
    """An Answer made concrete for `asked`: the frame it sends."""
    if not isinstance(step, Answer):
        return step
    action = asked.legal_actions[0] if step.action is None else step.action
    request_id = asked.id if step.id is None else step.id
    return codec.encode({"type": codec.ACTION, "id": request_id, "action": action})

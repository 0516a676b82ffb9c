"""The bot processes of one match: spawning them, the handshake, restarts, and the shutdown that leaves no
process behind.

A bot that fails its handshake (crash, silence past the startup limit, refused hello) is down for the rest of
the match: every later game records a fault for its seat and forfeits it. A bot that completed its handshake
and later crashed is restarted (with a fresh token and handshake) before the next game; if that restart
fails its handshake, it stays down for the rest of the match. Between rotations of the match's deals every
bot gets a fresh process (`renew`), so that no process sees a deal twice.

Every hello is checked against the process that connected, where the transport lets the referee find it (see
referee.wire.connection): a hello from a process of one bot with another bot's token is refused, and the thief is
charged a protocol error in the game in progress or the next game it plays (`Participant.thefts`); its victim
is not affected. A process is a bot's if it is in the bot's PID namespace (or one nested in it), where bots
have one, which holds even a process that left the bot's session (setsid() after a double fork); else if it
is in the session the referee started the bot in.

Names and logs: once the first handshakes are over, every bot gets the name it plays under for the whole match
(referee.botspec.match_names: its spec's name, or its hello name if the spec is named_by_hello). Its log, one
file per bot in the match's log_dir, is named after it, NAME.log (a hello-named bot's is `.MATCH-botN.log`
until then, and renamed). A crash's fault detail quotes the bot's last lines of output
(process.OUTPUT_TAIL_LINES).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from protocol import codec, limits
from referee.botspec import log_file_names, match_names
from referee.isolation import sandbox
from referee.isolation.process import BotHandle, BotProcess, BotStartError, StartBot, last_output_lines
from referee.isolation.proctable import Namespace, ProcessEntry, live_processes, pid_namespaces, read_process
from referee.records import (
    BotRun,
    BotSpec,
    FaultCause,
    FaultFacts,
    Handshake,
    MatchSpec,
    MemoryHit,
    Stage,
    crash_cause,
)
from referee.wire import peers
from referee.wire.connection import (
    Bindings,
    HandshakeRefused,
    Incoming,
    LookupBudgetSpent,
    OpenWire,
    Peer,
    Router,
    TokenTheft,
    Transport,
)
from referee.wire.connection_cap import Flood
from referee.wire.peers import LookupExpired

_BYE_GRACE_S = 0.5
_log = logging.getLogger(__name__)
_STRENGTH = sandbox.STRENGTH


@dataclass(frozen=True, slots=True)
class Downtime:
    """Why a bot cannot play: the fault charged to its seat in each game it misses."""

    cause: FaultCause
    facts: FaultFacts


@dataclass(eq=False, slots=True)
class Participant:
    index: int
    spec: BotSpec
    log_path: Path
    name: str = ""
    """The name it plays under (Session.start settles it); its spec's name until then."""
    log_start: int = 0
    """Where the output of its latest start begins in its log (a restarted bot's log goes on in the same file,
    and the log cap, Limits.log_cap_bytes, is for the whole match: a start gets what earlier ones left)."""
    process: BotHandle | None = None
    hello_name: str | None = None
    handshake: Handshake | None = None
    """Its first accepted hello."""
    down: Downtime | None = None
    restartable: bool = False
    starts: int = 0
    refusal: str | None = None
    """Why the last hello from this bot's processes was refused (only where the sender is known)."""
    thefts: list[str] = field(default_factory=list)
    """Hellos with another bot's token (the name of the bot whose token each carried), not yet recorded as faults
    of this bot's seat."""
    timeouts: int = 0
    """Its timeouts so far in this match (Limits.max_timeouts)."""


@dataclass(frozen=True, slots=True)
class BotTransport:
    """How one match reaches its bots: the wire their messages travel, how their programs start, and the clock the
    match is timed on. Session and the match loop take one from their caller, as they take the sandbox's probe;
    run_match makes the real one (`local`). A transport that plays its bots from scripts on a clock of its own
    runs the whole match loop without a socket or a process (tests/referee/scripted.py). `kind` is the socket's:
    sandboxed bots have no network, so they need ipc."""

    kind: Transport
    open_wire: OpenWire
    start_bot: StartBot
    clock: Callable[[], float] = time.monotonic
    """Seconds that never go back; every deadline of the match is on it."""
    isolation: sandbox.Isolation | None = None
    """What the match's games are recorded with whatever the sandbox gives (Isolation.REMOTE); None: the sandbox's."""

    @classmethod
    def local(cls, kind: Transport = Transport.IPC) -> BotTransport:
        """Bot processes on this machine, connected to a ROUTER socket of `kind`."""
        return cls(kind, functools.partial(Router, kind), BotProcess.start)


OUT_OF_MEMORY_WORDS = (
    "MemoryError",
    "std::bad_alloc",
    "heap out of memory",
    "Cannot allocate memory",
    "out of memory",
    "failed to allocate",
)
"""What Python, C++, Node.js, glibc and common allocators print when an allocation fails."""


def out_of_memory(line: str) -> bool:
    return any(words in line for words in OUT_OF_MEMORY_WORDS)


class Session:
    """Use as a context manager: every process is killed on the way out, whatever happened.

    The bots are reached through `transport` (their wire, how they start, the match's clock) and sandboxed as
    `sandbox_probe` says this machine allows (sandbox.probe); the caller makes both (run_match).

    `sandboxed` says whether every bot runs in the sandbox: the spec asks for it, the machine allows it, and no
    bot is one of the referee's own programs that needs what a sandbox hides (BotSpec.sandbox: the human seat's
    terminal). Sandboxed bots connect through the match's socket bound into their sandbox, and see nothing of
    the match's work folder, logs or replays."""

    def __init__(
        self, spec: MatchSpec, workdir: Path, transport: BotTransport, sandbox_probe: sandbox.SandboxProbe
    ) -> None:
        self.spec = spec
        self.clock = transport.clock
        self._start_bot = transport.start_bot
        self.bindings = Bindings()
        self.wire = transport.open_wire(
            workdir,
            self.bindings.bound,
            self._bot_pids,
            bot_sockets=self._bot_sockets,
            owner_of_pid=self._owner_of,
        )
        self.log_dir = self._log_dir(spec, workdir)
        self.keeps_logs = self.log_dir != workdir
        self._chosen_logs = log_file_names([bot.name for bot in spec.bots if not bot.named_by_hello])
        chosen = iter(self._chosen_logs)
        jails = spec.sandbox and transport.kind is Transport.IPC and sandbox_probe.usable
        self.sandboxed = jails and all(bot.sandbox for bot in spec.bots)
        sandboxed = sandbox_probe.isolation if self.sandboxed else sandbox.Isolation.NONE
        if self.sandboxed and spec.kernel:
            sandboxed = sandbox.Isolation.KERNEL
        self.isolation = transport.isolation or sandboxed
        """The weakest isolation any bot of the match has had so far (GameRecord.isolation)."""
        self.freezes = self.sandboxed and not spec.ponder and sandbox_probe.cgroups.freezer
        """Bots are frozen while not on move: thawed when a request is sent to them (before its clock starts),
        frozen again when their reply arrives or the request ends otherwise, and from their hello until their
        first request (MatchSpec.ponder turns this off)."""
        self._sandbox_request = None
        if jails:
            socket = Path(self.wire.endpoint.removeprefix("ipc://"))
            sandbox.expose_socket(socket)
            masked = sandbox.masked_paths([workdir, self.log_dir, spec.replay_dir, *spec.private_paths])
            self._sandbox_request = sandbox.SandboxRequest(socket, masked, kernel=spec.kernel)
        self.participants = [
            Participant(
                index,
                bot,
                self.log_dir / (f".{spec.match_id}-bot{index}.log" if bot.named_by_hello else next(chosen)),
                bot.name,
            )
            for index, bot in enumerate(spec.bots)
        ]
        self._by_pidfd: dict[int, Participant] = {}
        self._closed = False
        self.welcome = codec.encode(
            codec.welcome(spec.limits.move_time_ms, spec.limits.time_bank_ms, spec.limits.startup_time_s)
        )

    @staticmethod
    def _log_dir(spec: MatchSpec, workdir: Path) -> Path:
        """The match's log folder, or the work folder (deleted with the match) if there is none or it cannot be
        made (a Dask worker may lack the league's folder): a lost log must not stop a match."""
        if not spec.log_dir:
            return workdir
        folder = Path(spec.log_dir)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            _log.warning("the bots' logs of %s are not kept: cannot make %s (%s)", spec.match_id, folder, error)
            return workdir
        return folder

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # Starting and handshaking.

    def start(self) -> None:
        self._start_and_handshake(self.participants)
        self._settle_names()

    def _settle_names(self) -> None:
        """Name every bot for the rest of the match, and the log of each bot named by its hello after it (a bot
        with a chosen name logs under it from the start, so a resumed match adds to its log; a hello-named
        bot's log replaces one of the same name)."""
        names = match_names([p.spec for p in self.participants], [p.hello_name for p in self.participants])
        for participant, name in zip(self.participants, names, strict=True):
            participant.name = name
        by_hello = [p for p in self.participants if p.spec.named_by_hello]
        files = log_file_names([p.name for p in by_hello], taken=self._chosen_logs)
        for participant, file in zip(by_hello, files, strict=True):
            path = self.log_dir / file
            with contextlib.suppress(FileNotFoundError):
                participant.log_path.replace(path)
            participant.log_path = path

    def bot_runs(self) -> tuple[BotRun, ...]:
        """What the match's record says about each bot."""
        return tuple(
            BotRun(p.name, str(p.log_path) if self.keeps_logs else None, p.handshake, p.starts)
            for p in self.participants
        )

    def restart_crashed(self) -> None:
        """Before a game: restart every bot that crashed since its handshake (including between games)."""
        for participant in self.ready():
            process = participant.process
            if process is not None and process.exited():
                self.mark_crashed(participant, Stage.BETWEEN_GAMES)
        crashed = [p for p in self.participants if p.down is not None and p.restartable]
        if crashed:
            self._start_and_handshake(crashed)

    def renew(self) -> None:
        """Between rotations: replace every bot's process by a fresh one (bye, a moment to exit, then kill, then
        a new start and handshake), so that no process sees a deal twice. A bot that never completed a
        handshake stays down; one that crashed is started again."""
        group = [p for p in self.participants if p.restartable]
        self._say_bye(group)
        for participant in group:
            self.stop(participant)
        self._start_and_handshake(group)

    @property
    def starts(self) -> int:
        """Bot processes started so far."""
        return sum(participant.starts for participant in self.participants)

    def _spawn(self, participant: Participant) -> None:
        token = self.bindings.issue(participant.index)
        declared = participant.spec.env
        jail = self._sandbox_request if participant.spec.sandbox else None
        if jail is not None:
            jail = dataclasses.replace(jail, own=participant.spec.folders)
            env = sandbox.bot_environment(token, declared)
        else:
            env = {**os.environ, **dict(declared), limits.ENV_ENDPOINT: self.wire.endpoint, limits.ENV_TOKEN: token}
        participant.starts += 1
        participant.down = None
        participant.hello_name = None
        participant.refusal = None
        with contextlib.suppress(FileNotFoundError):
            participant.log_start = participant.log_path.stat().st_size
        try:
            process = self._start_bot(
                participant.spec.command,
                env,
                participant.log_path,
                max(0, self.spec.limits.log_cap_bytes - participant.log_start),
                memory_mb=self.spec.limits.memory_mb,
                cwd=participant.spec.cwd,
                sandbox=jail,
            )
        except BotStartError as error:
            participant.down = Downtime(FaultCause.START_FAILED, FaultFacts(note=str(error)))
            return
        participant.process = process
        if process.jail is not None and process.jail.isolation is not self.isolation:
            self.isolation = min(self.isolation, process.jail.isolation, key=_STRENGTH.index)
        self._by_pidfd[process.pidfd] = participant
        self.wire.watch(process.pidfd)

    def _start_and_handshake(self, group: list[Participant]) -> None:
        """Start the bots of `group` and wait for their hellos. Where bots are frozen while not on move, one at
        a time, each with the whole startup limit, frozen from its hello before the next starts: no two bots
        are ever awake together."""
        if self.freezes:
            for participant in group:
                self._start_together([participant])
        else:
            self._start_together(group)

    def _start_together(self, group: list[Participant]) -> None:
        for participant in group:
            self._spawn(participant)
        waiting = {p.index: p for p in group if p.down is None}
        refusals: list[str] = []
        deadline = self.clock() + self.spec.limits.startup_time_s
        while waiting and self.clock() < deadline:
            message_ready, exited, floods = self.wire.wait(deadline)
            for fd in exited:
                participant = self.process_exited(fd)
                if participant.index in waiting:
                    del waiting[participant.index]
                    self._fail_handshake(participant, refusals)
            for flood in floods:
                waiting.pop(self.stop_flooder(flood).index, None)
            if message_ready:
                self._handle_hellos(waiting, refusals)
        for participant in waiting.values():
            self._fail_handshake(participant, refusals)
        for participant in group:
            participant.restartable = participant.down is None
            self.hold(participant, True)

    def _handle_hellos(self, waiting: dict[int, Participant], refusals: list[str]) -> None:
        for incoming in self.wire.receive():
            if self.bindings.owner(incoming.identity) is None:
                self.admit(incoming, refusals)
        for index in [index for index in waiting if self.bindings.identity(index) is not None]:
            self.hold(waiting.pop(index), True)

    def admit(self, incoming: Incoming, refusals: list[str] | None = None) -> Participant | None:
        """Answer a message from a connection not bound yet: bind it (welcome) if it is a hello that may bind,
        refuse it otherwise. A refusal is noted on the bot that sent it when the transport tells who that is,
        else appended to `refusals` (if given). Returns the bot caught with another bot's token, if any.

        The hello is decoded before its sender is looked for: its token names the bot that claims the connection,
        and whether that bot's program made it is checked first and cheaply (Router.sender), so a flood that
        spends the lookup budget cannot get another bot's own hello refused."""
        if len(incoming.frames) != 1:
            return None
        try:
            message = codec.decode_bot_message(incoming.frames[0])
            if not isinstance(message, codec.Hello):
                raise HandshakeRefused("the first message must be hello")
        except (codec.ProtocolViolation, HandshakeRefused) as error:
            self._refuse(incoming, self._peer(incoming), error, refusals)
            return None
        peer = self._peer(incoming, self.bindings.unbound_owner(message.token))
        try:
            owner = self.bindings.bind(incoming.identity, message.protocol, message.token, peer)
        except TokenTheft as theft:
            self.wire.send(incoming.identity, codec.encode(codec.refused(str(theft))))
            return self._charge_theft(self.participants[theft.thief], self.participants[theft.victim])
        except HandshakeRefused as error:
            self._refuse(incoming, peer, error, refusals)
            return None
        participant = self.participants[owner]
        participant.hello_name = message.name
        if participant.handshake is None:
            participant.handshake = Handshake(message.name, message.version, message.protocol)
        self.wire.send(incoming.identity, self.welcome)
        return None

    def _refuse(self, incoming: Incoming, peer: int | Peer, error: Exception, refusals: list[str] | None) -> None:
        self.wire.send(incoming.identity, codec.encode(codec.refused(str(error))))
        if isinstance(peer, int):
            self.participants[peer].refusal = str(error)
        elif refusals is not None and not self.wire.checks_peers:
            refusals.append(str(error))

    def _peer(self, incoming: Incoming, claimant: int | None = None) -> int | Peer:
        """What is known of the process that made the connection (see Bindings.bind). `claimant` is the bot, not
        bound yet, whose token the message carries: its programs are checked first (see Router.sender)."""
        if incoming.vouched:
            return Peer.UNCHECKED if claimant is None else claimant
        if not self.wire.checks_peers:
            return Peer.UNCHECKED
        process = None if claimant is None else self.participants[claimant].process
        try:
            pid = self.wire.sender(incoming, () if process is None else process.program_pids())
        except (LookupBudgetSpent, LookupExpired):
            return Peer.OVER_BUDGET
        sender = self._sender(pid)
        return Peer.STRANGER if sender is None else sender.index

    def _sender(self, pid: int | None) -> Participant | None:
        """The bot of process `pid` (see _bot_of); None if unknown."""
        if pid is None or (process := read_process(pid)) is None:
            return None
        return self._bot_of(process)

    def _bot_of(self, process: ProcessEntry) -> Participant | None:
        """The bot of `process`: the bot whose PID namespace holds it (in it or in one nested in it), or whose
        session does (every process of a bot starts in the session the referee started it in); None if none."""
        namespaces: list[Namespace] | None = None
        for participant in self.participants:
            bot = participant.process
            if bot is None:
                continue
            if process.session == bot.pid:
                return participant
            if (namespace := bot.namespace()) is not None:
                namespaces = pid_namespaces(process.pid) if namespaces is None else namespaces
                if namespace in namespaces:
                    return participant
        return None

    def _bot_pids(self) -> Iterator[int]:
        """The bots' programs: where the process behind a tcp connection is looked for first (then everywhere,
        for the other processes of a bot)."""
        for participant in self.participants:
            if participant.process is not None:
                yield from participant.process.program_pids()

    def _owner_of(self, pid: int) -> int | None:
        sender = self._sender(pid)
        return None if sender is None else sender.index

    def _bot_sockets(self) -> dict[int, int]:
        """The sockets every process of every bot holds (inode -> bot), for the connection cap: asked only while
        connections pile up (bots that hold their one connection each never make the referee look)."""
        sockets = {}
        for process in live_processes():
            bot = self._bot_of(process)
            if bot is not None:
                sockets.update(dict.fromkeys(peers.held_socket_inodes(process.pid), bot.index))
        return sockets

    def stop_flooder(self, flood: Flood) -> Participant:
        """Stop a bot found holding too many connections (which closes them), down for the rest of the match."""
        participant = self.participants[flood.owner]
        self.stop(participant)
        participant.down = Downtime(
            FaultCause.CONNECTION_FLOOD, FaultFacts(count=flood.held, most=limits.MAX_CONNECTIONS_PER_BOT)
        )
        participant.restartable = False
        return participant

    def stop_timed_out(self, participant: Participant, count: int) -> Participant:
        """Stop a bot that reached the match's max_timeouts, down (a timeout) for the rest of the match."""
        self.stop(participant)
        participant.down = Downtime(FaultCause.TIMEOUT_LIMIT, FaultFacts(count=count))
        participant.restartable = False
        return participant

    def _charge_theft(self, thief: Participant, victim: Participant) -> Participant:
        """Queue the fault for the thief's seat; a flood of attempts queues no more than the fault budget."""
        if len(thief.thefts) < self.spec.limits.fault_budget:
            thief.thefts.append(victim.name)
        return thief

    def _fail_handshake(self, participant: Participant, refusals: list[str]) -> None:
        """A bot that never bound: a refused hello is the likeliest cause when there was one. Where the sender of
        a hello is known the refusal is the bot's own; elsewhere connections carry no seat before their token is
        accepted, so a refusal is charged to a bot that never bound."""
        crashed = participant.process is not None and participant.process.exited()
        memory_mb = participant.process.memory_mb if participant.process is not None else None
        facts = (
            self._ending(participant, Stage.HANDSHAKE)
            if crashed
            else FaultFacts(startup_s=self.spec.limits.startup_time_s)
        )
        self.stop(participant)
        refusal = participant.refusal or (refusals.pop(0) if refusals else None)
        if refusal is not None:
            participant.down = Downtime(FaultCause.HELLO_REFUSED, dataclasses.replace(facts, note=refusal))
        elif crashed:
            facts = self._with_last_output(participant, facts, memory_mb)
            participant.down = Downtime(crash_cause(facts), facts)
        else:
            participant.down = Downtime(FaultCause.STARTUP_TIMEOUT, facts)

    # Running.

    def process_exited(self, pidfd: int) -> Participant:
        """The participant whose process just exited (its pidfd became readable); no longer watched."""
        participant = self._by_pidfd.pop(pidfd)
        self.wire.unwatch(pidfd)
        return participant

    def hold(self, participant: Participant, frozen: bool) -> None:
        """Freeze a bot that is not on move (it uses no CPU until thawed), or thaw it; nothing when the match
        lets bots ponder or the bot cannot be frozen (see `freezes`)."""
        process = participant.process
        if not self.freezes or process is None:
            return
        try:
            process.hold(frozen)
        except OSError as error:
            _log.warning("bot %s could not be %s: %s", participant.name, "frozen" if frozen else "thawed", error)

    def send(self, participant: Participant, frame: bytes) -> None:
        identity = self.bindings.identity(participant.index)
        if identity is not None:
            self.wire.send(identity, frame)

    def owner(self, identity: bytes) -> Participant | None:
        index = self.bindings.owner(identity)
        return None if index is None else self.participants[index]

    def mark_crashed(self, participant: Participant, stage: Stage, game: int | None = None) -> None:
        """Stop a bot whose process exited (during `game`, or between games), down with how it ended and the
        last lines it printed."""
        facts = self._ending(participant, stage, game)
        memory_mb = participant.process.memory_mb if participant.process is not None else None
        self.stop(participant)
        facts = self._with_last_output(participant, facts, memory_mb)
        participant.down = Downtime(crash_cause(facts), facts)

    @staticmethod
    def _ending(participant: Participant, stage: Stage, game: int | None = None) -> FaultFacts:
        """How the bot's process ended (the kernel's kill at its memory limit included), during `stage`."""
        process = participant.process
        ending = process.ending() if process is not None else None
        killed = process is not None and process.oom_killed()
        return FaultFacts(
            exit_status=ending.status if ending else None,
            signal=ending.signal if ending else None,
            grace_s=ending.grace_s if ending else None,
            memory=MemoryHit.KILLED if killed else None,
            memory_mb=process.memory_mb if killed and process is not None else None,
            stage=stage,
            game=game,
        )

    @staticmethod
    def _with_last_output(participant: Participant, facts: FaultFacts, memory_mb: int | None) -> FaultFacts:
        """`facts` with the bot's last lines of output, and its memory limit found when they say it ran out of
        memory (a runtime's own words: with RLIMIT_DATA an allocation fails, and the bot reports it)."""
        lines = tuple(last_output_lines(participant.log_path, participant.log_start))
        if memory_mb and facts.memory is None and any(out_of_memory(line) for line in lines):
            facts = dataclasses.replace(facts, memory=MemoryHit.ALLOCATION_FAILED, memory_mb=memory_mb)
        return dataclasses.replace(facts, output=lines)

    def ready(self) -> list[Participant]:
        return [p for p in self.participants if p.down is None]

    # Stopping.

    def stop(self, participant: Participant) -> None:
        """Kill the participant's processes and forget its binding (a restart binds anew)."""
        self.bindings.revoke(participant.index)
        process = participant.process
        if process is None:
            return
        self._by_pidfd.pop(process.pidfd, None)
        self.wire.unwatch(process.pidfd)
        process.kill()
        participant.process = None

    def finish(self) -> None:
        """Say bye to every bot still up, give them a moment to exit, then kill whatever is left."""
        self._say_bye(self.ready())
        self.close()

    def _say_bye(self, group: list[Participant]) -> None:
        """Send bye to the bots of `group` that are up and wait, at most _BYE_GRACE_S, until their processes
        exit. Where bots are frozen while not on move, one at a time, each stopped before the next is thawed if
        its program has exited (children it left in its sandbox run until they are killed), else frozen again:
        no two bots are ever awake together."""
        if not self.freezes:
            self._bye_together(group)
            return
        for participant in group:
            self._bye_together([participant])
            if participant.process is not None and participant.process.exited():
                self.stop(participant)
            else:
                self.hold(participant, True)

    def _bye_together(self, group: list[Participant]) -> None:
        """Say bye to the bots of `group` and wait for them. What they send meanwhile is read and dropped (a
        pending message would end every wait at once)."""
        waiting = set()
        for participant in group:
            if participant.down is None and participant.process is not None:
                self.hold(participant, False)
                self.send(participant, codec.BYE_FRAME)
                waiting.add(participant.process.pidfd)
        deadline = self.clock() + _BYE_GRACE_S
        while waiting and self.clock() < deadline:
            message_ready, exited, _ = self.wire.wait(deadline)
            for fd in exited:
                self.process_exited(fd)
                waiting.discard(fd)
            if message_ready:
                for _dropped in self.wire.receive():
                    pass

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for participant in self.participants:
            with contextlib.suppress(OSError):
                self.stop(participant)
        self.wire.close()

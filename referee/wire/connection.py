"""The match's one ROUTER socket, the poll loop over it and the bots' exit notifications, and the binding of
ZeroMQ identities to bots by secret token and by the process that connected.

All bots run as the same user, so a bot can read another bot's token from /proc/PID/environ. A token alone
therefore does not prove who is speaking: the referee finds which process made the connection (see
referee.wire.peers: on ipc the kernel says, SO_PEERCRED; on tcp over loopback the client's socket is asked of the
kernel by sock_diag, or looked up in /proc/net/tcp, and its holder in /proc/*/fd), and a token binds only a
connection made by a process of the bot it was issued to. Only messages of connections not bound yet pay for
that check; a bound connection's messages take the plain path. The token alone decides where the sender cannot
be known: a libzmq older than 4.0.5 (no ZMQ_SRCFD), or tcp on a machine with neither sock_diag nor
/proc/net/tcp.

On tcp that check can take long (a search of /proc/*/fd when the client is not a bot's program, as long as the
processes it searches hold fds), so a bot opening connection after connection could slow the match. The
referee therefore first checks the claim (Router.sender): whether a program of the bot the hello's token was
issued to holds the client's socket, a search as short as that bot's fds (a bot's open files are capped,
referee.isolation.process), run only while that bot is not bound yet, i.e. during a handshake, when no move clock runs.
Only when the claim fails does it search who holds the socket, and those searches share a fixed budget of the
referee's time (LookupBudget); a hello it cannot check within the budget is refused with no one charged. So a
bot flooding new connections can spend the budget, but never on another bot's own hello: the claimed owner's
check costs no budget, so a flood cannot keep a bot from binding.

Waiting is always bounded by a deadline on the referee's monotonic clock. Bot processes are watched
through their pidfds in the same poll, so a crash is noticed at once, not at the next timeout.
"""

from __future__ import annotations

import contextlib
import enum
import secrets
import struct
import time
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, cast

import zmq

from protocol import limits
from protocol.errors import BotFault, EnvironmentProblem
from referee.wire import peers
from referee.wire.connection_cap import BotSockets, ConnectionCap, Flood, OwnerOfPid, read_ipc_client, read_tcp_client

# Plain ints: pyzmq's flag enums cost an enum construction per `&` or `|` on the per-decision path.
_NOBLOCK = int(zmq.NOBLOCK)
_SNDMORE_NOBLOCK = int(zmq.SNDMORE | zmq.NOBLOCK)
_RCVMORE = int(zmq.RCVMORE)
_SRCFD_SINCE = (4, 0, 5)
_MONITORED = zmq.EVENT_ACCEPTED | zmq.EVENT_DISCONNECTED
_MONITOR_EVENT = struct.Struct("=HI")
"""The first frame of a monitor event (v1): the event, and its value (the connection's fd for both ours)."""
_SETTLE_EVERY = 256
"""Monitor events handled between two looks at who holds the new connections, so a flood is seen while it
lasts."""
_NO_FLOODS: tuple[Flood, ...] = ()

MAX_FRAME_BYTES = 16 * limits.MAX_MESSAGE_BYTES
"""ZeroMQ drops the connection of a peer that sends more than this (larger frames are never buffered).
Frames between MAX_MESSAGE_BYTES and this reach the referee and are a protocol fault of the sender."""
PEER_LOOKUP_SHARE = 0.02
"""On tcp, the share of the referee's time that finding the senders of unbound messages may take in the long
run (20 ms of the referee's CPU time a second)."""
PEER_LOOKUP_BURST_S = 0.02
"""On tcp, the most CPU time those lookups may take at once (one lookup, or several in a row), after a quiet
spell. A lookup by a bot's program costs ~0.1 ms, a search of every process's fds a few ms."""


class Transport(enum.StrEnum):
    IPC = "ipc"
    TCP = "tcp"


class HandshakeRefused(BotFault, ValueError):
    """A hello that cannot bind its connection; the reason is sent back in `refused`."""


class TokenTheft(HandshakeRefused):
    """A hello from a process of one bot carrying the token issued to another bot."""

    def __init__(self, thief: int, victim: int) -> None:
        super().__init__("this token was issued to another bot")
        self.thief = thief
        self.victim = victim


class Peer(enum.Enum):
    """What the referee knows of the process behind a connection, when it is not a bot of the match."""

    UNCHECKED = "unchecked"
    """The sender cannot be known (a libzmq without ZMQ_SRCFD, or tcp without /proc/net/tcp): the token alone
    decides."""
    STRANGER = "stranger"
    """The process is unknown, gone, or of no bot of the match."""
    OVER_BUDGET = "over budget"
    """The process is not the claimed bot's program, and was not looked up further: the referee's time for such
    lookups was spent (LookupBudget)."""


@dataclass(frozen=True, slots=True)
class Incoming:
    identity: bytes
    frames: list[bytes]
    peer_pid: int | None = None
    """On ipc, the pid of the process that made the connection: only for connections not bound yet, when it is
    known."""
    tcp_client: peers.TcpClient | None = None
    """On tcp, the client end of the connection, to find the process holding it (Router.sender): only for
    connections not bound yet, when it is known."""
    vouched: bool = False
    """The wire itself authenticated the connection as the holder of the token its hello carries (a remote seat's
    CURVE key, referee.wire.remote): no process is looked for."""


def new_token() -> str:
    return secrets.token_hex(16)


class LookupBudgetSpent(EnvironmentProblem, RuntimeError):
    """No time is left for finding the sender of a message."""


class LookupBudget:
    """The referee's time for finding the senders of unbound messages: a bucket that holds at most `burst_s`
    seconds, refills at `share` seconds a second of `clock` (wall time), and pays for each lookup's work, counted
    on `work_clock`: the CPU time of the referee's thread (user and system), so the bucket pays for what a flood
    makes the referee do and not for the time other processes of a loaded machine run while a lookup waits for
    a core (a wall-time bucket let a ~4 ms search that took 30 ms under load overdraw a 20 ms burst: an honest
    lookup expired, and the budget stayed spent for the next hello). A lookup starts only while the bucket is
    not empty and must end when it would be (its deadline, on `work_clock`), so in any span of t seconds lookups
    do at most burst_s + share * t of work, plus one step a lookup cannot break off (reading /proc/net/tcp where
    sock_diag is refused: a few ms)."""

    def __init__(
        self,
        share: float = PEER_LOOKUP_SHARE,
        burst_s: float = PEER_LOOKUP_BURST_S,
        clock: Callable[[], float] = time.monotonic,
        work_clock: Callable[[], float] = time.thread_time,
    ) -> None:
        self._share = share
        self._burst_s = burst_s
        self._clock = clock
        self._work_clock = work_clock
        self._left_s = burst_s
        self._refilled_at = clock()

    def run(self, lookup: Callable[[peers.Deadline], int | None]) -> int | None:
        """`lookup(deadline)`, paid for; LookupBudgetSpent if the budget is spent (the lookup is not run)."""
        now = self._clock()
        self._left_s = min(self._burst_s, self._left_s + (now - self._refilled_at) * self._share)
        self._refilled_at = now
        if self._left_s <= 0:
            raise LookupBudgetSpent("no time left for finding the sender of a message")
        started = self._work_clock()
        try:
            return lookup(peers.Deadline(started + self._left_s, self._work_clock))
        finally:
            self._left_s -= self._work_clock() - started


class Wire(Protocol):
    """The match's socket and the wait for what happens next, as Session and the match loop use them: Router is the
    real one; a transport that plays bots from scripts is another (tests/referee/scripted.py)."""

    @property
    def endpoint(self) -> str:
        """Where bots connect (REFEREE_ENDPOINT)."""

    @property
    def checks_peers(self) -> bool:
        """The process behind a connection can be found (`sender`); where not, a token alone binds."""

    def watch(self, fd: int) -> None:
        """Report the exit of the bot whose pidfd is `fd` (referee.isolation.process.BotHandle.pidfd) in `wait`."""

    def unwatch(self, fd: int) -> None: ...

    def wait(self, deadline: float) -> tuple[bool, list[int], Sequence[Flood]]:
        """Block until a message arrives, a watched bot exits, a bot floods connections, or `deadline` (on the
        transport's clock) passes: (a message is waiting, the pidfds of bots that exited, the floods)."""

    def receive(self) -> Iterator[Incoming]:
        """The next message, if one is waiting."""

    def send(self, identity: bytes, frame: bytes) -> None:
        """Queue one frame for a connection; dropped if it is gone."""

    def sender(self, incoming: Incoming, claimant: Sequence[int] = ()) -> int | None:
        """The pid of the process behind a connection not bound yet (only where `checks_peers`)."""

    def close(self) -> None: ...


class OpenWire(Protocol):
    """Makes the match's wire in `workdir`. `bound` is the live set of bound identities (Bindings.bound); the
    callables tell which processes are the bots' (for finding who made a connection, and for the cap on each
    bot's connections)."""

    def __call__(
        self,
        workdir: Path,
        bound: Container[bytes],
        likely_peers: Callable[[], Iterable[int]],
        *,
        bot_sockets: BotSockets,
        owner_of_pid: OwnerOfPid,
    ) -> Wire: ...


class Router:
    """The ROUTER socket bound by the referee, and a poller over it and the bots' pidfds.

    `bound` holds the identities of bound connections (a live view kept by Bindings): their messages are read
    as plain bytes; any other message is read with its source fd, which tells the sender's pid on ipc and the
    client's end on tcp (`sender` finds its process). On tcp `likely_peers` names the processes whose fds are
    searched first for the client's socket (the bots'), and those searches are paid from `lookup_budget`."""

    def __init__(
        self,
        transport: Transport,
        workdir: Path,
        bound: Container[bytes],
        likely_peers: Callable[[], Iterable[int]] = tuple,
        lookup_budget: LookupBudget | None = None,
        bot_sockets: BotSockets = dict,
        owner_of_pid: OwnerOfPid = lambda pid: None,
    ) -> None:
        self._bound = bound
        self._lookup_budget = LookupBudget() if lookup_budget is None else lookup_budget
        self._transport = transport
        self._likely_peers = likely_peers
        self.checks_peers = zmq.zmq_version_info() >= _SRCFD_SINCE and (
            transport is Transport.IPC or peers.tcp_lookup_possible()
        )
        read_client = read_ipc_client if transport is Transport.IPC else read_tcp_client
        self.connections = ConnectionCap(read_client, bot_sockets, owner_of_pid)
        self._context = zmq.Context()
        self.socket = self._context.socket(zmq.ROUTER)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.setsockopt(zmq.MAXMSGSIZE, MAX_FRAME_BYTES)
        self._monitor = self._monitor_socket()
        if transport is Transport.TCP:
            self.socket.bind("tcp://127.0.0.1:*")
        else:
            self.socket.bind(f"ipc://{workdir / 'referee.sock'}")
        self.endpoint: str = self.socket.getsockopt_string(zmq.LAST_ENDPOINT)
        self._poller = zmq.Poller()
        self._poller.register(self.socket, zmq.POLLIN)
        self._monitor_fd = cast(int, self._monitor.getsockopt(zmq.FD))
        self._poller.register(self._monitor_fd, zmq.POLLIN)
        self._read_monitor()

    def _monitor_socket(self) -> zmq.Socket[bytes]:
        """The ROUTER's connection events, read through the monitor's file descriptor (as a bot's pidfd is), so
        the poll per decision watches one more fd and asks ZeroMQ nothing more. The pipe has no high-water mark:
        libzmq's I/O thread would block on a full one."""
        address = f"inproc://connections-{id(self)}"
        self.socket.monitor(address, _MONITORED)
        monitor = self._context.socket(zmq.PAIR)
        monitor.setsockopt(zmq.LINGER, 0)
        monitor.setsockopt(zmq.RCVHWM, 0)
        monitor.connect(address)
        return monitor

    def _read_monitor(self) -> Sequence[Flood]:
        """Every monitor event waiting, passed on to the connection cap; the bots it finds over the cap. Read
        until none is left: the monitor's fd signals new events only after a read found none."""
        monitor, connections = self._monitor, self.connections
        floods: list[Flood] = []
        handled = 0
        while True:
            try:
                event = monitor.recv(_NOBLOCK)
            except zmq.Again:
                break
            while monitor.getsockopt(_RCVMORE):
                monitor.recv(_NOBLOCK)
            if len(event) < _MONITOR_EVENT.size:
                continue
            kind, fd = _MONITOR_EVENT.unpack_from(event)
            if kind == zmq.EVENT_ACCEPTED:
                connections.accepted(fd)
            elif kind == zmq.EVENT_DISCONNECTED:
                connections.closed(fd)
            handled += 1
            if handled % _SETTLE_EVERY == 0:
                floods += connections.settle()
        floods += connections.settle()
        return floods or _NO_FLOODS

    def watch(self, fd: int) -> None:
        self._poller.register(fd, zmq.POLLIN)

    def unwatch(self, fd: int) -> None:
        with contextlib.suppress(KeyError):
            self._poller.unregister(fd)

    def wait(self, deadline: float) -> tuple[bool, list[int], Sequence[Flood]]:
        """Block until a message arrives, a watched process exits, connections open or close, or `deadline`
        (monotonic) passes. Returns (a message is waiting, the fds of processes that exited, the bots newly found
        holding more connections than the cap)."""
        timeout_ms = max(0, int((deadline - time.monotonic()) * 1000) + 1)
        message = False
        exited = []
        floods: Sequence[Flood] = _NO_FLOODS
        socket = self.socket
        for item, _ in self._poller.poll(timeout_ms):
            if item is socket:
                message = True
            elif item == self._monitor_fd:
                floods = self._read_monitor()
            else:
                exited.append(item)
        return message, exited, floods

    def receive(self) -> Iterator[Incoming]:
        """The next message, if one is waiting (call it when `wait` says one is). One per call: `wait` returns at
        once while more are waiting, and looking for a second one (ZMQ_EVENTS) would cost a system call per
        decision, where there almost never is one."""
        socket = self.socket
        try:
            identity = cast(bytes, socket.recv(_NOBLOCK))
        except zmq.Again:
            return
        if identity not in self._bound:
            yield self._receive_unbound(identity)
            return
        getsockopt, recv = socket.getsockopt, socket.recv
        frames = []
        while getsockopt(_RCVMORE):
            frames.append(cast(bytes, recv(_NOBLOCK)))
        yield Incoming(identity, frames)

    def _receive_unbound(self, identity: bytes) -> Incoming:
        """The rest of a message from a connection not bound yet, with what its source fd tells of its sender (the
        fd is valid only now)."""
        socket = self.socket
        frames: list[bytes] = []
        pid = client = None
        while socket.getsockopt(_RCVMORE):
            frame = socket.recv(_NOBLOCK, copy=False)
            if not frames and self.checks_peers and (fd := self._source_fd(frame)) is not None:
                if self._transport is Transport.IPC:
                    pid = peers.ipc_peer_pid(fd)
                else:
                    client = peers.tcp_client(fd)
            frames.append(frame.bytes)
        return Incoming(identity, frames, pid, client)

    @staticmethod
    def _source_fd(frame: zmq.Frame) -> int | None:
        try:
            return cast(int, frame.get(zmq.SRCFD))
        except zmq.ZMQError:
            return None

    def sender(self, incoming: Incoming, claimant: Sequence[int] = ()) -> int | None:
        """The pid of the process that made the connection of `incoming` (not bound yet), or None if unknown.
        On tcp, `claimant` (the programs of the bot whose token the message carries, if that bot is not bound
        yet) is checked first, at no cost to the lookup budget; a search beyond it is paid from the budget and
        raises LookupBudgetSpent or peers.LookupExpired when the budget is spent."""
        client = incoming.tcp_client
        if client is None:
            return incoming.peer_pid
        checked: Sequence[int] = ()
        if claimant and (inode := peers.quick_socket_inode(client)) is not None:
            holder = peers.holder_among(inode, claimant)
            if holder is not None:
                return holder
            checked = claimant
        return self._lookup_budget.run(
            lambda deadline: peers.tcp_client_holder(
                client,
                [pid for pid in self._likely_peers() if pid not in checked],
                deadline=deadline,
                skip=checked,
            )
        )

    def send(self, identity: bytes, frame: bytes) -> None:
        """Queue one frame for a bot; dropped if the bot is gone or not reading (its request then times out)."""
        socket = self.socket
        try:
            socket.send(identity, _SNDMORE_NOBLOCK)
            socket.send(frame, _NOBLOCK)
        except zmq.ZMQError:
            pass

    def close(self) -> None:
        with contextlib.suppress(zmq.ZMQError):
            self.socket.disable_monitor()
        self._monitor.close(0)
        self.socket.close(0)
        self._context.term()


class Bindings:
    """Which bot (by index in the match) owns which token and which ZeroMQ identity."""

    def __init__(self) -> None:
        self._token_owner: dict[str, int] = {}
        self._identity_owner: dict[bytes, int] = {}
        self._owner_identity: dict[int, bytes] = {}

    def issue(self, owner: int) -> str:
        """A fresh secret token for `owner` (its previous token and binding, if any, are revoked)."""
        self.revoke(owner)
        token = new_token()
        self._token_owner[token] = owner
        return token

    def revoke(self, owner: int) -> None:
        for token in [token for token, holder in self._token_owner.items() if holder == owner]:
            del self._token_owner[token]
        identity = self._owner_identity.pop(owner, None)
        if identity is not None:
            del self._identity_owner[identity]

    @property
    def bound(self) -> Container[bytes]:
        """The identities bound now (a live view, for Router)."""
        return self._identity_owner

    def unbound_owner(self, token: str) -> int | None:
        """The owner of `token` if it was issued and its owner is not bound yet, else None."""
        owner = self._token_owner.get(token)
        return None if owner is None or owner in self._owner_identity else owner

    def bind(self, identity: bytes, protocol: int, token: str, peer: int | Peer = Peer.UNCHECKED) -> int:
        """Bind `identity` to the owner of `token`; raises HandshakeRefused saying why not. `peer` is the owner
        whose process made the connection: the token binds only if that is the token's owner (TokenTheft if
        it is another bot)."""
        if protocol != limits.PROTOCOL_VERSION:
            raise HandshakeRefused(
                f"protocol {protocol} is not supported (this referee speaks only {limits.PROTOCOL_VERSION})"
            )
        owner = self._token_owner.get(token)
        if owner is None:
            raise HandshakeRefused("unknown token")
        if peer is Peer.STRANGER:
            raise HandshakeRefused("the connection was not made by the process this token was issued to")
        if peer is Peer.OVER_BUDGET:
            raise HandshakeRefused(
                "too many new connections to check: the referee did not look up who made this one; "
                "say hello again later"
            )
        if peer is not Peer.UNCHECKED and peer != owner:
            raise TokenTheft(thief=peer, victim=owner)
        if owner in self._owner_identity:
            raise HandshakeRefused("this token is already bound to another connection")
        if identity in self._identity_owner:
            raise HandshakeRefused("this connection is already bound")
        self._owner_identity[owner] = identity
        self._identity_owner[identity] = owner
        return owner

    def owner(self, identity: bytes) -> int | None:
        return self._identity_owner.get(identity)

    def identity(self, owner: int) -> bytes | None:
        return self._owner_identity.get(owner)

"""Remote seats: a second ROUTER socket, a CURVE server on TCP, beside the match's local one, behind one Wire.

Who may connect is ZeroMQ's business, not ours: the socket is a CURVE server (protocol.remote_sockets) and a ZAP
handler (pyzmq's ThreadAuthenticator) admits only the public keys of the allow-list, each the key of one seat. A
client without CURVE, with a wrong server key, or with a key not on the list never gets a message through; the
referee logs why (the socket's monitor reports each failed handshake). ZAP names every admitted connection after
its key's seat (its User-Id), and the wire reads that name from the first message of each connection not bound
yet: a remote bot's hello is bound to the seat its key names, whatever token it carries (it never sees one: the
wire puts in the token issued to that seat, `RemoteRouter.tokens`), and is marked as vouched for, since there is
no process of the seat for the referee to look up.

A remote connection's identity on this side is its ROUTER identity behind REMOTE_PREFIX, which no local identity
may carry (a local message with it is dropped), so a reply always goes back to the socket it came from.

The local path is untouched: a match without remote seats uses the plain Router; with them, the only cost on a
local decision is one prefix test per message each way.
"""

from __future__ import annotations

import collections
import contextlib
import enum
import logging
import threading
import time
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import zmq
from zmq.auth.thread import ThreadAuthenticator
from zmq.utils.monitor import parse_monitor_message

from protocol import codec
from protocol.curve_keys import KeyPair
from protocol.errors import EnvironmentProblem
from protocol.remote_sockets import (
    CONTROL,
    DEFAULT_RECONNECT_GRACE_S,
    END,
    FRESH,
    HANDSHAKE_EVENTS,
    PING,
    RESUME,
    RESUMED,
    ZAP_BUSY,
    ZAP_DOMAIN,
    control,
    control_value,
    handshake_failure,
    server_socket,
)
from referee.wire.connection import Incoming, Router, Transport
from referee.wire.connection_cap import BotSockets, Flood, OwnerOfPid
from referee.wire.lag_quota import DEFAULT_LAG_QUOTA_MS, LagQuotas

REMOTE_PREFIX = b"\xffremote:"
_NOBLOCK = int(zmq.NOBLOCK)
_log = logging.getLogger(__name__)


IDENTIFY_S = 5.0
"""How long a connection admitted for a key may stay silent and still hold that key's one place (`referee connect`
speaks at once); past it, another connection of the key may be admitted."""
MAX_SILENT = 8
"""Connections of one key, in a match, that were admitted and never spoke; past this the key is refused (a
connection that says nothing stays open, holding one of the referee's files: `referee connect` speaks at once)."""
ATTEMPTS_BURST = 20
"""The connection attempts of one key served at once after a quiet spell..."""
ATTEMPTS_PER_S = 5.0
"""... and in the long run, a second (`referee connect` retries every RECONNECT_IVL_MS while it is refused)."""


class Verdict(enum.Enum):
    ADMITTED = "admitted"
    UNKNOWN = "unknown"
    BUSY = "busy"
    """The key's one place is taken, or it tried too often: refused for now (ZAP_BUSY)."""


class KeyGate:
    """The ZAP check of a client's key, called in the authenticator's thread: a key on the allow-list is admitted
    only while its seat has no live connection (one connection per key: `spoke` tells which connection holds the
    place, `closed` that it closed) and within its budget of attempts (ATTEMPTS_BURST, ATTEMPTS_PER_S), so a key
    holder who connects in a loop is refused at the handshake, where ZeroMQ closes the connection, and never
    reaches the match. The allow-list is never changed; the places are shared with the referee's thread."""

    def __init__(self, allowed: Mapping[bytes, str], clock: Callable[[], float] = time.monotonic) -> None:
        self.allowed = dict(allowed)
        self._clock = clock
        self._lock = threading.Lock()
        self._unknown: set[bytes] = set()
        self._admitted: dict[str, float] = {}
        """Seat -> when a connection of its key was admitted that has not spoken yet."""
        self._live: dict[str, int] = {}
        """Seat -> the fd of the connection that holds its place."""
        self._tokens: dict[str, tuple[float, float]] = {}
        """Seat -> (attempts left, when last refilled)."""
        self._refusals: dict[tuple[str, str], int] = {}
        self._silent: dict[str, int] = {}
        """Seat -> its admitted connections that never spoke (found when the next one was admitted)."""

    def callback(self, key: bytes) -> Verdict:
        seat = self.allowed.get(key)
        if seat is None:
            if key not in self._unknown and len(self._unknown) < 1000:
                self._unknown.add(key)
                _log.warning("remote seats: refused a connection: its key %s is not on the allow-list", key.decode())
            return Verdict.UNKNOWN
        with self._lock:
            now = self._clock()
            if not self._spend(seat, now):
                why = f"more than {ATTEMPTS_BURST} connection attempts at once ({ATTEMPTS_PER_S:g} a second after)"
            elif seat in self._live or now - self._admitted.get(seat, -IDENTIFY_S) < IDENTIFY_S:
                why = "it already has a live connection (one connection per key)"
            elif self._silent.get(seat, 0) + (seat in self._admitted) > MAX_SILENT:
                why = f"more than {MAX_SILENT} of its connections got in and said nothing"
            else:
                if seat in self._admitted:
                    self._silent[seat] = self._silent.get(seat, 0) + 1
                self._admitted[seat] = now
                return Verdict.ADMITTED
            self._refused(seat, why)
            return Verdict.BUSY

    def _spend(self, seat: str, now: float) -> bool:
        left, at = self._tokens.get(seat, (float(ATTEMPTS_BURST), now))
        left = min(float(ATTEMPTS_BURST), left + (now - at) * ATTEMPTS_PER_S)
        self._tokens[seat] = (left - 1 if left >= 1 else left, now)
        return left >= 1

    def _refused(self, seat: str, why: str) -> None:
        count = self._refusals[seat, why] = self._refusals.get((seat, why), 0) + 1
        if count == 10 ** (len(str(count)) - 1):
            again = f" ({count} times so far)" if count > 1 else ""
            _log.warning("remote seats: refused a connection of %s: %s%s", seat, why, again)

    def spoke(self, seat: str, fd: int | None) -> bool:
        """A connection of `seat` (its fd, if known) sent its first message: it holds the seat's place, unless
        another connection does (then False: it is refused)."""
        with self._lock:
            live = self._live.get(seat)
            if live is not None and live != fd:
                self._refused(seat, "a second connection spoke while its first is live (one connection per key)")
                return False
            if fd is not None:
                self._live[seat] = fd
            self._admitted.pop(seat, None)
            return True

    def closed(self, fd: int) -> None:
        """The connection with `fd` closed: the place it held, if any, is free."""
        with self._lock:
            for seat in [seat for seat, live in self._live.items() if live == fd]:
                del self._live[seat]


class _SeatAuthenticator(ThreadAuthenticator):
    """pyzmq's authenticator, asking the KeyGate about each CURVE key, answering ZAP_BUSY (a temporary refusal) for
    a key whose place is taken, and naming each admitted connection (its User-Id) after its key's seat."""

    def __init__(self, context: zmq.Context[Any], gate: KeyGate) -> None:
        super().__init__(context, log=logging.getLogger(__name__ + ".zap"))
        self.gate = gate
        self._busy = False

    async def _authenticate_curve(self, domain: str, client_key: bytes) -> tuple[bool, bytes]:
        if domain != ZAP_DOMAIN:
            return False, b"unknown domain"
        verdict = self.gate.callback(zmq.utils.z85.encode(client_key))
        self._busy = verdict is Verdict.BUSY
        return verdict is Verdict.ADMITTED, b"OK" if verdict is Verdict.ADMITTED else verdict.value.encode()

    def _send_zap_reply(
        self, request_id: bytes, status_code: bytes, status_text: bytes, user_id: str = "anonymous"
    ) -> None:
        if self._busy and status_code != b"200":
            status_code = ZAP_BUSY
        self._busy = False
        super()._send_zap_reply(request_id, status_code, status_text, user_id)

    def curve_user_id(self, client_public_key: bytes) -> str:
        return self.gate.allowed[zmq.utils.z85.encode(client_public_key)]


class RoundTrips:
    """Each remote seat's round trips, measured by pings that `referee connect` answers itself, not its bot
    (protocol.remote_sockets.PING): one goes out after a frame is sent to a connection with none outstanding, so
    the measurements follow the decisions. A pong counts only with the nonce of the ping outstanding."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._outstanding: dict[bytes, tuple[bytes, float]] = {}
        self._count = 0
        self.samples_ms: dict[str, list[float]] = {}

    def ping(self, identity: bytes) -> bytes | None:
        """The nonce of a ping to send now, or None while one is outstanding."""
        if identity in self._outstanding:
            return None
        self._count += 1
        nonce = self._count.to_bytes(8, "big")
        self._outstanding[identity] = (nonce, self._clock())
        return nonce

    def pong(self, identity: bytes, seat: str, nonce: bytes) -> bool:
        """Whether this answers the ping outstanding (then measured)."""
        sent = self._outstanding.get(identity)
        if sent is None or sent[0] != nonce:
            return False
        del self._outstanding[identity]
        self.samples_ms.setdefault(seat, []).append((self._clock() - sent[1]) * 1000)
        return True

    def forget(self, identity: bytes) -> None:
        """The ping outstanding on a connection that closed will never be answered."""
        self._outstanding.pop(identity, None)

    def summary(self, seat: str) -> str | None:
        """The seat's round trips in words (median and most), None before any."""
        samples = sorted(self.samples_ms.get(seat, ()))
        if not samples:
            return None
        return f"round trip median {samples[len(samples) // 2]:.1f} ms, most {samples[-1]:.1f} ms, {len(samples)} pings"


@dataclass(eq=False, slots=True)
class _Session:
    """What the referee keeps of one `referee connect` session, over the connections it resumes: the seat its key
    names, its identity on this side (`logical`: that of its first connection, bound by the match), the
    connection it speaks through now (`route`, its ROUTER identity there), the frames each way, and the last
    OUTBOX frames sent, to send again those a dropped connection lost."""

    seat: str
    logical: bytes
    route: bytes
    fd: int | None
    sent: int = 0
    received: int = 0
    outbox: collections.deque[bytes] = field(default_factory=lambda: collections.deque(maxlen=OUTBOX))
    away_until: float | None = None
    """Its connection dropped: when its reconnect grace ends."""
    dropped_at: float = 0.0


OUTBOX = 64
"""Frames kept per session to send again after a reconnection; between two messages of a bot the referee sends it
a few (game_over, game_start, a request), so a resume never lacks one but from a bot silent for many games."""


class RemoteRouter(Router):
    """The local Router, plus the CURVE socket bound at `listen` for the seats of `allowed` (public key -> seat
    name), the referee speaking with its key pair `referee`.

    The CURVE socket has a ZeroMQ context of its own (its own I/O thread and ZAP handler), so handshakes at the
    listener never queue before the local bots' messages. A connection that drops is a session away: its seat
    stays bound for `grace_s` while frames for it are kept (its move clock runs on), and a connection of the same
    key that resumes it within the grace (protocol.remote_sockets.RESUME) gets the frames it lacks and goes on;
    past the grace the seat's crash is reported (`disconnected`)."""

    def __init__(
        self,
        listen: str,
        referee: KeyPair,
        allowed: Mapping[bytes, str],
        transport: Transport,
        workdir: Path,
        bound: Container[bytes],
        likely_peers: Callable[[], Iterable[int]] = tuple,
        *,
        bot_sockets: BotSockets = dict,
        owner_of_pid: OwnerOfPid = lambda pid: None,
        lag_quota_ms: int = DEFAULT_LAG_QUOTA_MS,
        grace_s: float = DEFAULT_RECONNECT_GRACE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(transport, workdir, bound, likely_peers, bot_sockets=bot_sockets, owner_of_pid=owner_of_pid)
        self.lag_quota_ms = lag_quota_ms
        """Each remote seat's lag quota per game (referee.wire.lag_quota)."""
        self.grace_s = grace_s
        self._clock = clock
        self.tokens: dict[str, str] = {}
        """The token issued to each remote seat now (by name), put into its bot's hello."""
        self.disconnected: Callable[[str, float], None] = lambda seat, grace_s: None
        """Called with a seat's name (and the grace waited) when the connection bound to it closed (or its
        heartbeats stopped) and did not come back within the grace."""
        self.note: Callable[[str, str], None] = lambda seat, line: None
        """A line for a seat's log."""
        self._sessions: dict[str, _Session] = {}
        """Seat -> its session (one per key: the gate admits one live connection per key)."""
        self._away: set[_Session] = set()
        """The sessions whose connection dropped, within their grace."""
        self._by_route: dict[bytes, _Session] = {}
        self._by_logical: dict[bytes, _Session] = {}
        self._connections: dict[int, _Session] = {}
        """A live remote connection's fd -> its session, from its first message."""
        self._closed_fds: set[int] = set()
        """The fds of remote connections that closed (until ZeroMQ accepts another with the same fd): a message of
        such a connection read after its close was seen is dropped, so it never takes its key's place."""
        self._seat_of: dict[bytes, str] = {}
        self.round_trips = RoundTrips()
        self._refusals: dict[str, int] = {}
        self._remote_context: zmq.Context[Any] = zmq.Context()
        self._authenticator = _SeatAuthenticator(self._remote_context, KeyGate(allowed))
        self._authenticator.start()
        self._remote = server_socket(self._remote_context, referee)
        self._remote.monitor(f"inproc://remote-seats-{id(self)}", HANDSHAKE_EVENTS | zmq.EVENT_ACCEPTED)
        self._remote_monitor = self._remote_context.socket(zmq.PAIR)
        self._remote_monitor.setsockopt(zmq.RCVHWM, 0)
        self._remote_monitor.connect(f"inproc://remote-seats-{id(self)}")
        try:
            self._remote.bind(listen)
        except zmq.ZMQError as error:
            self.close()
            raise EnvironmentProblem(f"cannot listen for remote seats at {listen}: {error}") from None
        self.listening = self._remote.getsockopt_string(zmq.LAST_ENDPOINT)
        self._poller.register(self._remote, zmq.POLLIN)
        self._poller.register(self._remote_monitor, zmq.POLLIN)

    def seat_round_trips(self, identity: bytes) -> list[float] | None:
        """The round trips measured so far (ms) of the remote seat behind `identity`; None for a local
        connection."""
        seat = self._seat_of.get(identity)
        if seat is None:
            return None
        return self.round_trips.samples_ms.get(seat, [])

    def wait(self, deadline: float) -> tuple[bool, list[int], Sequence[Flood]]:
        away = self._away
        if away:
            deadline = min(deadline, *(cast(float, session.away_until) for session in away))
        message, exited, floods = super().wait(deadline)
        fds = []
        for item in cast(list[Any], exited):
            if item is self._remote:
                message = True
            elif item is self._remote_monitor:
                self._log_handshakes()
            else:
                fds.append(item)
        if away:
            self._end_graces()
        return message, fds, floods

    def _end_graces(self) -> None:
        now = self._clock()
        for session in list(self._away):
            if session.away_until is not None and session.away_until <= now:
                self.note(session.seat, f"remote seat {session.seat}: no reconnection within {self.grace_s:g} s")
                self._end(session)

    def _end(self, session: _Session) -> None:
        """Forget a session; a seat bound to it has crashed (its connection lost)."""
        self._forget(session)
        if session.logical in self._bound:
            self.disconnected(session.seat, self.grace_s)

    def _forget(self, session: _Session) -> None:
        self._away.discard(session)
        if self._sessions.get(session.seat) is session:
            del self._sessions[session.seat]
        self._by_logical.pop(session.logical, None)
        self._seat_of.pop(session.logical, None)
        if self._by_route.get(session.route) is session:
            del self._by_route[session.route]
        if session.fd is not None and self._connections.get(session.fd) is session:
            del self._connections[session.fd]
        self.round_trips.forget(session.logical)

    def _log_handshakes(self) -> None:
        while True:
            try:
                event = parse_monitor_message(self._remote_monitor.recv_multipart(_NOBLOCK))
            except zmq.Again:
                return
            why = handshake_failure(event["event"], event["value"])
            if why is not None and event["value"] != int(ZAP_BUSY):
                self._refused(why)
            elif event["event"] == zmq.EVENT_DISCONNECTED:
                self._closed(event["value"])
            elif event["event"] == zmq.EVENT_ACCEPTED:
                self._closed_fds.discard(event["value"])
            elif event["event"] == zmq.EVENT_HANDSHAKE_SUCCEEDED:
                _log.info("remote seats: a key on the allow-list connected")

    def _closed(self, fd: int) -> None:
        self._authenticator.gate.closed(fd)
        self._closed_fds.add(fd)
        session = self._connections.pop(fd, None)
        if session is None or session.fd != fd:
            return
        if session.logical in self._bound:
            _log.warning("remote seats: the connection of %s closed", session.seat)
        if self.grace_s <= 0:
            self._end(session)
            return
        self._by_route.pop(session.route, None)
        session.fd = None
        session.dropped_at = self._clock()
        session.away_until = session.dropped_at + self.grace_s
        self._away.add(session)
        self.round_trips.forget(session.logical)
        self.note(session.seat, f"remote seat {session.seat}: the connection closed; waiting {self.grace_s:g} s for it")

    def _refused(self, why: str) -> None:
        """Log a refusal: each reason the first time, then at 10, 100, 1000, ... (clients retry on their own)."""
        count = self._refusals[why] = self._refusals.get(why, 0) + 1
        if count == 10 ** (len(str(count)) - 1):
            again = f" ({count} times so far)" if count > 1 else ""
            _log.warning("remote seats: refused a connection: %s%s", why, again)

    def receive(self) -> Iterator[Incoming]:
        for incoming in super().receive():
            if not incoming.identity.startswith(REMOTE_PREFIX):
                yield incoming
        remote = self._receive_remote()
        if remote is not None:
            yield remote

    def _receive_remote(self) -> Incoming | None:
        try:
            parts = self._remote.recv_multipart(_NOBLOCK, copy=False)
        except zmq.Again:
            return None
        route = parts[0].bytes
        frames = [part.bytes for part in parts[1:]]
        session = self._by_route.get(route)
        if session is None:
            return self._first(route, parts[1] if len(parts) > 1 else None, frames)
        if len(frames) == 2 and frames[0] == PING and self.round_trips.pong(session.logical, session.seat, frames[1]):
            return None
        session.received += 1
        if session.logical in self._bound:
            return Incoming(session.logical, frames)
        return self._hello(session.logical, session.seat, frames)

    def _first(self, route: bytes, first: zmq.Frame | None, frames: list[bytes]) -> Incoming | None:
        """The first message of a connection: a resume (`referee connect`), or a bot's hello (a client that speaks
        the protocol itself), which begins a session. Either way the connection takes its key's place, unless
        another connection of the key holds it (then it is dropped: the key's holder is charged nothing)."""
        try:
            seat = first.get("User-Id") if first is not None else None
        except zmq.ZMQError:
            seat = None
        if not isinstance(seat, str) or first is None:
            return None
        fd = self._source_fd(first)
        if fd in self._closed_fds or not self._authenticator.gate.spoke(seat, fd):
            return None
        if len(frames) == 3 and frames[0] == CONTROL and frames[1] == RESUME:
            self._resume(seat, route, fd, control_value(frames))
            return None
        session = self._begin(seat, route, fd)
        session.received += 1
        return self._hello(session.logical, seat, frames)

    def _begin(self, seat: str, route: bytes, fd: int | None) -> _Session:
        """A new session of `seat` through the connection `route`; an earlier one is over (its seat's crash
        reported if it was bound)."""
        old = self._sessions.get(seat)
        if old is not None:
            self._end(old)
        session = _Session(seat, REMOTE_PREFIX + route, route, fd)
        self._sessions[seat] = session
        self._by_route[route] = session
        self._by_logical[session.logical] = session
        self._seat_of[session.logical] = seat
        if fd is not None:
            self._connections[fd] = session
        return session

    def _resume(self, seat: str, route: bytes, fd: int | None, received: int | None) -> None:
        """A connection of `seat` asks to resume its session, having received `received` frames of it: the
        session goes on where it is away and still holds every frame the client lacks; else a fresh one begins."""
        session = self._sessions.get(seat)
        lacking = None if session is None or received is None else session.sent - received
        if session is None or session.away_until is None or lacking is None or not 0 <= lacking <= len(session.outbox):
            self._begin(seat, route, fd)
            self._send_raw(route, control(FRESH, round(self.grace_s * 1000)))
            return
        session.route, session.fd, session.away_until = route, fd, None
        self._away.discard(session)
        self._by_route[route] = session
        if fd is not None:
            self._connections[fd] = session
        self._send_raw(route, control(RESUMED, session.received))
        for frame in list(session.outbox)[len(session.outbox) - lacking :]:
            self._send_raw(route, [frame])
        away_s = self._clock() - session.dropped_at
        _log.warning("remote seats: %s reconnected after %.1f s", seat, away_s)
        self.note(seat, f"remote seat {seat}: reconnected after {away_s:.1f} s; {lacking} frame(s) sent again")

    def _hello(self, identity: bytes, seat: str, frames: list[bytes]) -> Incoming:
        """A message of a remote session not bound yet: a hello gets the token of the seat its key names."""
        token = self.tokens.get(seat)
        if len(frames) != 1:
            return Incoming(identity, frames)
        if token is None:
            self.send(identity, codec.encode(codec.refused(f"no seat {seat!r} is waiting for a bot now")))
            _log.warning("remote seats: %s said hello while its seat was not waiting", seat)
            return Incoming(identity, [])
        try:
            message = codec.decode_value(frames[0])
        except codec.ProtocolViolation:
            return Incoming(identity, frames)
        if type(message) is not dict or message.get("type") != codec.HELLO:
            return Incoming(identity, frames)
        return Incoming(identity, [codec.encode({**message, "token": token})], vouched=True)

    def sender(self, incoming: Incoming, claimant: Sequence[int] = ()) -> int | None:
        if incoming.identity.startswith(REMOTE_PREFIX):
            return None
        return super().sender(incoming, claimant)

    def send(self, identity: bytes, frame: bytes) -> None:
        if not identity.startswith(REMOTE_PREFIX):
            super().send(identity, frame)
            return
        session = self._by_logical.get(identity)
        if session is None:
            return
        session.sent += 1
        session.outbox.append(frame)
        if session.away_until is not None:
            return
        self._send_raw(session.route, [frame])
        if (nonce := self.round_trips.ping(identity)) is not None:
            self._send_raw(session.route, [PING, nonce])

    def _send_raw(self, route: bytes, frames: list[bytes]) -> None:
        with contextlib.suppress(zmq.ZMQError):
            self._remote.send_multipart([route, *frames], _NOBLOCK)

    def close(self) -> None:
        """Tell every live session the match is over (END: `referee connect` does not reconnect), then close."""
        for session in self._sessions.values():
            if session.away_until is None:
                self._send_raw(session.route, control(END))
        with contextlib.suppress(zmq.ZMQError):
            self._remote.disable_monitor()
        self._remote_monitor.close(0)
        self._remote.close(END_LINGER_MS if self._sessions else 0)
        self._authenticator.stop()
        self._remote_context.term()
        super().close()


END_LINGER_MS = 500
"""How long closing waits for END to leave."""


def game_lag_quotas(wire: object) -> LagQuotas | None:
    """A new game's lag quotas where the match has remote seats (its wire is a RemoteRouter), else None: a local
    match's decisions are timed as they always were."""
    if isinstance(wire, RemoteRouter):
        return LagQuotas(wire.lag_quota_ms, wire.seat_round_trips)
    return None

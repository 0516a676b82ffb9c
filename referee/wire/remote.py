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

import contextlib
import logging
import math
import time
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import zmq
from zmq.auth.thread import ThreadAuthenticator
from zmq.utils.monitor import parse_monitor_message

from protocol import codec
from protocol.curve_keys import KeyPair
from protocol.errors import EnvironmentProblem
from protocol.remote_sockets import HANDSHAKE_EVENTS, PING, ZAP_DOMAIN, handshake_failure, server_socket
from referee.wire.connection import Incoming, Router, Transport
from referee.wire.connection_cap import BotSockets, Flood, OwnerOfPid
from referee.wire.lag_quota import DEFAULT_LAG_QUOTA_MS, LagQuotas

REMOTE_PREFIX = b"\xffremote:"
_NOBLOCK = int(zmq.NOBLOCK)
_log = logging.getLogger(__name__)


class _SeatKeys:
    """The ZAP check of a client's key (called in the authenticator's thread; the list is never changed)."""

    def __init__(self, allowed: Mapping[bytes, str]) -> None:
        self.allowed = dict(allowed)
        self._unknown: set[bytes] = set()

    def callback(self, domain: str, key: bytes) -> bool:
        if key in self.allowed:
            return True
        if key not in self._unknown and len(self._unknown) < 1000:
            self._unknown.add(key)
            _log.warning("remote seats: refused a connection: its key %s is not on the allow-list", key.decode())
        return False


class _SeatAuthenticator(ThreadAuthenticator):
    """pyzmq's authenticator, naming each admitted connection (its User-Id) after its key's seat."""

    def __init__(self, context: zmq.Context[Any], keys: _SeatKeys) -> None:
        super().__init__(context, log=logging.getLogger(__name__ + ".zap"))
        self._keys = keys

    def curve_user_id(self, client_public_key: bytes) -> str:
        return self._keys.allowed[zmq.utils.z85.encode(client_public_key)]


PING_INTERVAL_S = 0.1
"""At most one ping per connection in this time: a fast link's lag moves slower than its decisions, and a ping with
every request cost the referee a send and a wake-up per decision (`referee bench protocol --remote`)."""


class RoundTrips:
    """Each remote seat's round trips, measured by pings that `referee connect` answers itself, not its bot
    (protocol.remote_sockets.PING): one goes out after a frame is sent to a connection with none outstanding and
    none sent in the last PING_INTERVAL_S, so the measurements follow the decisions. A pong counts only with the
    nonce of the ping outstanding."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._outstanding: dict[bytes, tuple[bytes, float]] = {}
        self._last_sent: dict[bytes, float] = {}
        self._count = 0
        self.samples_ms: dict[str, list[float]] = {}

    def ping(self, identity: bytes) -> bytes | None:
        """The nonce of a ping to send now, or None while one is outstanding or sent less than PING_INTERVAL_S ago."""
        now = self._clock()
        if identity in self._outstanding or now - self._last_sent.get(identity, -math.inf) < PING_INTERVAL_S:
            return None
        self._last_sent[identity] = now
        self._count += 1
        nonce = self._count.to_bytes(8, "big")
        self._outstanding[identity] = (nonce, now)
        return nonce

    def pong(self, identity: bytes, seat: str, nonce: bytes) -> bool:
        """Whether this answers the ping outstanding (then measured)."""
        sent = self._outstanding.get(identity)
        if sent is None or sent[0] != nonce:
            return False
        del self._outstanding[identity]
        self.samples_ms.setdefault(seat, []).append((self._clock() - sent[1]) * 1000)
        return True

    def summary(self, seat: str) -> str | None:
        """The seat's round trips in words (median and most), None before any."""
        samples = sorted(self.samples_ms.get(seat, ()))
        if not samples:
            return None
        return f"round trip median {samples[len(samples) // 2]:.1f} ms, most {samples[-1]:.1f} ms, {len(samples)} pings"


class RemoteRouter(Router):
    """The local Router, plus the CURVE socket bound at `listen` for the seats of `allowed` (public key -> seat
    name), the referee speaking with its key pair `referee`."""

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
    ) -> None:
        super().__init__(transport, workdir, bound, likely_peers, bot_sockets=bot_sockets, owner_of_pid=owner_of_pid)
        self.lag_quota_ms = lag_quota_ms
        """Each remote seat's lag quota per game (referee.wire.lag_quota)."""
        self.tokens: dict[str, str] = {}
        self.disconnected: Callable[[str], None] = lambda seat: None
        """Called with a seat's name when the connection bound to it closes (or its heartbeats stop)."""
        self._connections: dict[int, tuple[bytes, str]] = {}
        self._seat_of: dict[bytes, str] = {}
        self.round_trips = RoundTrips()
        """A remote connection's fd -> (its identity here, its seat), from its first message."""
        self._refusals: dict[str, int] = {}
        """The token issued to each remote seat now (by name), put into its bot's hello."""
        self._authenticator = _SeatAuthenticator(self._context, _SeatKeys(allowed))
        self._authenticator.start()
        self._authenticator.configure_curve_callback(ZAP_DOMAIN, self._authenticator._keys)
        self._remote = server_socket(self._context, referee)
        self._remote.monitor(f"inproc://remote-seats-{id(self)}", HANDSHAKE_EVENTS)
        self._remote_monitor = self._context.socket(zmq.PAIR)
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
        message, exited, floods = super().wait(deadline)
        fds = []
        for item in cast(list[Any], exited):
            if item is self._remote:
                message = True
            elif item is self._remote_monitor:
                self._log_handshakes()
            else:
                fds.append(item)
        return message, fds, floods

    def _log_handshakes(self) -> None:
        while True:
            try:
                event = parse_monitor_message(self._remote_monitor.recv_multipart(_NOBLOCK))
            except zmq.Again:
                return
            why = handshake_failure(event["event"], event["value"])
            if why is not None:
                self._refused(why)
            elif event["event"] == zmq.EVENT_DISCONNECTED:
                self._closed(event["value"])
            elif event["event"] == zmq.EVENT_HANDSHAKE_SUCCEEDED:
                _log.info("remote seats: a key on the allow-list connected")

    def _closed(self, fd: int) -> None:
        identity, seat = self._connections.pop(fd, (b"", ""))
        if identity in self._bound:
            _log.warning("remote seats: the connection of %s closed", seat)
            self.disconnected(seat)

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
        identity = REMOTE_PREFIX + parts[0].bytes
        frames = [part.bytes for part in parts[1:]]
        pinged = self._seat_of.get(identity) if len(frames) == 2 and frames[0] == PING else None
        if pinged is not None and self.round_trips.pong(identity, pinged, frames[1]):
            return None
        if identity in self._bound:
            return Incoming(identity, frames)
        try:
            seat = parts[1].get("User-Id") if len(parts) > 1 else None
        except zmq.ZMQError:
            seat = None
        if not isinstance(seat, str):
            return None
        self._seat_of[identity] = seat
        fd = self._source_fd(parts[1])
        if fd is not None:
            self._connections[fd] = (identity, seat)
        return self._hello(identity, seat, frames)

    def _hello(self, identity: bytes, seat: str, frames: list[bytes]) -> Incoming:
        """A first message of a remote connection: a hello gets the token of the seat its key names."""
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
        own = identity[len(REMOTE_PREFIX) :]
        with contextlib.suppress(zmq.ZMQError):
            self._remote.send_multipart([own, frame], _NOBLOCK)
            if identity in self._seat_of and (nonce := self.round_trips.ping(identity)) is not None:
                self._remote.send_multipart([own, PING, nonce], _NOBLOCK)

    def close(self) -> None:
        with contextlib.suppress(zmq.ZMQError):
            self._remote.disable_monitor()
        self._remote_monitor.close(0)
        self._remote.close(0)
        self._authenticator.stop()
        super().close()


def game_lag_quotas(wire: object) -> LagQuotas | None:
    """A new game's lag quotas where the match has remote seats (its wire is a RemoteRouter), else None: a local
    match's decisions are timed as they always were."""
    if isinstance(wire, RemoteRouter):
        return LagQuotas(wire.lag_quota_ms, wire.seat_round_trips)
    return None

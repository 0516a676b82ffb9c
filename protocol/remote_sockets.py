"""Every socket option of a remote seat's connection, both ends, in one place: the referee's CURVE server socket
(referee.wire.remote) and the author's client socket (protocol.remote_client, `referee connect`).

The referee's socket is a CURVE server whose every handshake is checked by a ZAP handler (ZAP_DOMAIN, with the
domain enforced: no handler, no connection), so a client without CURVE, with another server key in mind, or with
a key not on the allow-list is dropped by ZeroMQ before the referee reads a byte from it. Heartbeats find a dead
peer; a frame larger than MAX_FRAME_BYTES drops its connection; the high-water marks bound what one peer can
queue, so a flood stalls that peer's connection and nothing else.
"""

from __future__ import annotations

import zmq

from protocol import limits
from protocol.curve_keys import KeyPair

ZAP_DOMAIN = "referee-remote-seats"
MAX_FRAME_BYTES = 16 * limits.MAX_MESSAGE_BYTES
"""As on the local socket (referee.wire.connection.MAX_FRAME_BYTES): larger frames are never buffered."""
HIGH_WATER_MARK = 64
"""Messages queued per connection each way; a bot needs one or two at a time."""
HEARTBEAT_IVL_MS = 1000
HEARTBEAT_TIMEOUT_MS = 5000
HEARTBEAT_TTL_MS = 5000
RECONNECT_IVL_MS = 200
PING = b""
"""The first of the two frames of a ping (the second: a nonce), which `referee connect` answers itself, unchanged:
a bot's messages are one frame each, so a ping is never taken for one."""
CONTROL = PING
"""The first frame of every message between the referee and `referee connect` that is not the bot's: a ping
(2 frames) or one of the three-frame controls below, [CONTROL, kind, value]."""
RESUME = b"resume"
"""Connect -> referee, first on every connection: the frames it has received from the referee since its session
began (decimal digits), or nothing to begin a session (a relay just started: an earlier session of its key ends)."""
RESUMED = b"resumed"
"""Referee -> connect: the session goes on, the frames the referee has received of it (decimal digits); the frames
the other side has not received are sent again, in order, by both sides."""
FRESH = b"fresh"
"""Referee -> connect: no session to resume (past the grace, or never begun): start the bot afresh. Its value is
the referee's reconnect grace in ms, how long `connect` may try to come back after a drop."""
END = b"end"
"""Referee -> connect: the match is over; do not reconnect."""
DEFAULT_RECONNECT_GRACE_S = 10.0
"""How long the referee keeps a remote seat whose connection dropped, unless `referee play --reconnect-grace`
says otherwise."""
ZAP_BUSY = b"500"
"""The ZAP status of a connection refused because its key already has a live connection, or tried too often:
`referee connect` tries again (a key not on the list gets 400, and gives up). Not 300, "temporary": libzmq answers
a 300 with silence and leaves the client in its handshake, its connection open."""


def control(kind: bytes, value: int | None = None) -> list[bytes]:
    """A control message's frames."""
    return [CONTROL, kind, b"" if value is None else str(value).encode()]


def control_value(frames: list[bytes]) -> int | None:
    """The number a three-frame control carries, None if it carries none (or junk)."""
    value = frames[2] if len(frames) == 3 else b""
    return int(value) if value.isdigit() and len(value) <= 18 else None


def _common(socket: zmq.Socket[bytes]) -> None:
    socket.setsockopt(zmq.LINGER, 0)
    socket.setsockopt(zmq.MAXMSGSIZE, MAX_FRAME_BYTES)
    socket.setsockopt(zmq.SNDHWM, HIGH_WATER_MARK)
    socket.setsockopt(zmq.RCVHWM, HIGH_WATER_MARK)
    socket.setsockopt(zmq.HEARTBEAT_IVL, HEARTBEAT_IVL_MS)
    socket.setsockopt(zmq.HEARTBEAT_TIMEOUT, HEARTBEAT_TIMEOUT_MS)
    socket.setsockopt(zmq.HEARTBEAT_TTL, HEARTBEAT_TTL_MS)


def server_socket(context: zmq.Context[zmq.Socket[bytes]], referee: KeyPair) -> zmq.Socket[bytes]:
    """The referee's ROUTER for remote seats (not bound yet: start the ZAP handler first)."""
    socket = context.socket(zmq.ROUTER)
    _common(socket)
    socket.setsockopt(zmq.CURVE_SERVER, 1)
    socket.setsockopt(zmq.CURVE_PUBLICKEY, referee.public)
    socket.setsockopt(zmq.CURVE_SECRETKEY, referee.secret)
    socket.setsockopt_string(zmq.ZAP_DOMAIN, ZAP_DOMAIN)
    socket.setsockopt(zmq.ZAP_ENFORCE_DOMAIN, 1)
    return socket


def client_socket(context: zmq.Context[zmq.Socket[bytes]], own: KeyPair, server_public: bytes) -> zmq.Socket[bytes]:
    """An author's DEALER to the referee (not connected yet)."""
    socket = context.socket(zmq.DEALER)
    _common(socket)
    socket.setsockopt(zmq.RECONNECT_IVL, RECONNECT_IVL_MS)
    socket.setsockopt(zmq.CURVE_SERVERKEY, server_public)
    socket.setsockopt(zmq.CURVE_PUBLICKEY, own.public)
    socket.setsockopt(zmq.CURVE_SECRETKEY, own.secret)
    return socket


HANDSHAKE_EVENTS = (
    zmq.EVENT_HANDSHAKE_SUCCEEDED
    | zmq.EVENT_HANDSHAKE_FAILED_AUTH
    | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
    | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
    | zmq.EVENT_DISCONNECTED
)


def handshake_failure(event: int, value: int) -> str | None:
    """Why a handshake failed, in words, from a monitor event; None for any other event."""
    if event == zmq.EVENT_HANDSHAKE_FAILED_AUTH and value == int(ZAP_BUSY):
        return "the key already has a live connection (one connection per key)"
    if event == zmq.EVENT_HANDSHAKE_FAILED_AUTH:
        return f"the key is not on the referee's allow-list (ZAP status {value})"
    if event == zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL:
        if value == zmq.PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH:
            return "the peer does not speak CURVE (plain TCP or another mechanism)"
        if value == zmq.PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC:
            return "the CURVE handshake did not verify (a wrong server key or a damaged key pair)"
        return f"the ZMTP handshake broke its protocol (error 0x{value:x})"
    if event == zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL:
        return "the handshake failed (a client without CURVE, or one that hung up during it)"
    return None

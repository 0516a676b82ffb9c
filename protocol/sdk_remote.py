"""The SDK's own remote seat: a Python bot plays from another machine without `referee connect`.

`run_bot(bot, name, remote="tcp://HOST:PORT", key=SECRET_FILE, server_key=PUBLIC_FILE)` (or the environment
variables REFEREE_REMOTE, REFEREE_KEY and REFEREE_SERVER_KEY) connects the client socket of
protocol.remote_sockets, so every socket option (CURVE, high-water marks, the largest frame, heartbeats) is the
one `referee connect` uses, and plays the seat the key names.

The CURVE socket is served by a thread of its own (`_Upstream`), which answers the referee's pings at once, as
`connect` does: the referee measures the network's round trip by them, so a ping must not wait for the bot to
finish thinking (its lag would then count the thinking). The thread hands the referee's other frames to the
bot's thread over an inproc pair, and the bot's replies back. A bot that thinks in pure Python holds the GIL; the
thread gets it at the interpreter's switch interval (5 ms), so a pong may wait that long, never a whole decision.

The referee asks every seat for a fresh process between rotations of a match (it says bye and then waits for a new
hello); here the same connection says hello again (after REHELLO_PAUSE_S, past the referee's wait for the old
process to exit), and again after a refusal, until the referee closes the connection at the end of the match.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zmq
from zmq.utils.monitor import parse_monitor_message

from protocol.curve_keys import load_pair, load_public
from protocol.errors import EnvironmentProblem
from protocol.remote_client import NoReferee
from protocol.remote_sockets import HANDSHAKE_EVENTS, PING, client_socket, handshake_failure
from protocol.sdk import Bot, DecisionFunction, SessionEnd, run_session

ENV_REMOTE = "REFEREE_REMOTE"
ENV_KEY = "REFEREE_KEY"
ENV_SERVER_KEY = "REFEREE_SERVER_KEY"
DEFAULT_WAIT_S = 60.0
"""How long to wait for the CURVE handshake, as `referee connect --wait`."""
REHELLO_PAUSE_S = 1.0
"""After bye, how long before saying hello again: the referee waits half a second for a seat's old process to
exit and reads nothing meant for the new one meanwhile."""
HELLO_RESEND_S = 10.0
"""A hello that heard nothing back for this long is sent again (one dropped between rotations)."""
_GONE = b"gone"
_STOP = b"stop"
_NOBLOCK = int(zmq.NOBLOCK)


class RefereeLeft(EnvironmentProblem, ConnectionError):
    """The referee closed the connection (its match is over) or its heartbeats stopped."""


@dataclass(frozen=True)
class RemoteSettings:
    """Where a remote seat connects and with which keys (file paths, read when connecting)."""

    endpoint: str
    key: Path
    server_key: Path
    wait_s: float = DEFAULT_WAIT_S

    @classmethod
    def of(
        cls, remote: str | None, key: str | os.PathLike[str] | None, server_key: str | os.PathLike[str] | None
    ) -> RemoteSettings | None:
        """The settings from the arguments, else from the environment; None where no remote endpoint is given.
        A remote endpoint without both key files is an EnvironmentProblem."""
        endpoint = remote or os.environ.get(ENV_REMOTE)
        if not endpoint:
            return None
        key = key or os.environ.get(ENV_KEY)
        server_key = server_key or os.environ.get(ENV_SERVER_KEY)
        if not key or not server_key:
            raise EnvironmentProblem(
                f"a remote seat ({endpoint}) needs its secret key and the referee's public key: "
                f"key= and server_key=, or {ENV_KEY} and {ENV_SERVER_KEY}"
            )
        return cls(endpoint, Path(key), Path(server_key))


class _Upstream(threading.Thread):
    """Serves the CURVE socket: pings answered here, the referee's frames relayed to `inner`'s peer and back."""

    def __init__(self, context: zmq.Context[Any], upstream: zmq.Socket[bytes], monitor: zmq.Socket[bytes]) -> None:
        super().__init__(name="referee-remote-link", daemon=True)
        self.upstream = upstream
        self.monitor = monitor
        address = f"inproc://sdk-remote-{id(self)}"
        self.inner = context.socket(zmq.PAIR)
        self.inner.setsockopt(zmq.LINGER, 0)
        self.inner.bind(address)
        self.outer = context.socket(zmq.PAIR)
        self.outer.setsockopt(zmq.LINGER, 0)
        self.outer.connect(address)

    def run(self) -> None:
        poller = zmq.Poller()
        for socket in (self.upstream, self.monitor, self.outer):
            poller.register(socket, zmq.POLLIN)
        while True:
            ready = dict(poller.poll())
            if self.upstream in ready:
                self._down()
            if self.outer in ready and not self._up():
                return
            if self.monitor in ready and self._referee_left():
                self.outer.send_multipart([b"", _GONE])
                return

    def _down(self) -> None:
        while True:
            try:
                frames = self.upstream.recv_multipart(_NOBLOCK)
            except zmq.Again:
                return
            if len(frames) == 2 and frames[0] == PING:
                with contextlib.suppress(zmq.Again):
                    self.upstream.send_multipart(frames, _NOBLOCK)
            elif len(frames) == 1:
                self.outer.send(frames[0])

    def _up(self) -> bool:
        """Relay the bot's frames; False once told to stop."""
        while True:
            try:
                frames = self.outer.recv_multipart(_NOBLOCK)
            except zmq.Again:
                return True
            if len(frames) != 1:
                return False
            with contextlib.suppress(zmq.Again):
                self.upstream.send(frames[0], _NOBLOCK)

    def _referee_left(self) -> bool:
        left = False
        while True:
            try:
                event = parse_monitor_message(self.monitor.recv_multipart(_NOBLOCK))
            except zmq.Again:
                return left
            left = left or event["event"] == zmq.EVENT_DISCONNECTED


class RemoteLink:
    """The bot's end of a remote seat's connection: a `protocol.sdk.Transport` whose recv raises RefereeLeft once
    the referee has closed the connection."""

    def __init__(self, settings: RemoteSettings, tick_ms: int) -> None:
        own, server_public = load_pair(settings.key), load_public(settings.server_key)
        self.tick_ms = tick_ms
        self.context: zmq.Context[Any] = zmq.Context()
        upstream = client_socket(self.context, own, server_public)
        address = f"inproc://sdk-remote-monitor-{id(self)}"
        upstream.monitor(address, HANDSHAKE_EVENTS)
        monitor = self.context.socket(zmq.PAIR)
        monitor.setsockopt(zmq.RCVHWM, 0)
        monitor.connect(address)
        self._sockets = (upstream, monitor)
        self._thread: _Upstream | None = None
        self._hello: tuple[bytes, float] | None = None
        self._awaiting_hello = False
        try:
            upstream.connect(settings.endpoint)
            _handshake(monitor, settings.wait_s)
        except BaseException:
            self.close()
            raise
        self._thread = _Upstream(self.context, upstream, monitor)
        self._inner = self._thread.inner
        self._thread.start()

    def expect_hello(self) -> None:
        """The next frame sent is a hello: sent again if nothing comes back for HELLO_RESEND_S."""
        self._awaiting_hello = True

    def send(self, frame: bytes, /) -> None:
        if self._awaiting_hello:
            self._awaiting_hello = False
            self._hello = (frame, time.monotonic())
        self._inner.send(frame)

    def recv(self) -> bytes:
        if not self._inner.poll(self.tick_ms):
            self._resend_hello()
            raise zmq.Again()
        frames = self._inner.recv_multipart()
        if len(frames) != 1:
            raise RefereeLeft()
        self._hello = None
        return frames[0]

    def _resend_hello(self) -> None:
        if self._hello is not None and time.monotonic() - self._hello[1] >= HELLO_RESEND_S:
            self._inner.send(self._hello[0])
            self._hello = (self._hello[0], time.monotonic())

    def pause(self, seconds: float) -> None:
        """Wait `seconds`, dropping what comes meanwhile; RefereeLeft if the referee closes the connection."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if self._inner.poll(int(left * 1000) + 1) and len(self._inner.recv_multipart()) != 1:
                raise RefereeLeft()

    def close(self) -> None:
        if self._thread is not None:
            with contextlib.suppress(zmq.ZMQError):
                self._inner.send_multipart([b"", _STOP])
            self._thread.join(timeout=5)
            for pair in (self._thread.inner, self._thread.outer):
                pair.close(0)
        upstream, monitor = self._sockets
        with contextlib.suppress(zmq.ZMQError):
            upstream.disable_monitor()
        monitor.close(0)
        upstream.close(0)
        self.context.term()


def _handshake(monitor: zmq.Socket[bytes], wait_s: float) -> None:
    """Until the CURVE handshake succeeds; NoReferee after `wait_s` or at once when the referee refuses the key."""
    deadline = time.monotonic() + wait_s
    refusal = None
    while (left := deadline - time.monotonic()) > 0:
        if not monitor.poll(int(left * 1000) + 1):
            break
        event = parse_monitor_message(monitor.recv_multipart())
        if event["event"] == zmq.EVENT_HANDSHAKE_SUCCEEDED:
            return
        refusal = handshake_failure(event["event"], event["value"]) or refusal
        if event["event"] == zmq.EVENT_HANDSHAKE_FAILED_AUTH:
            break
    detail = refusal or "is it listening there, and is the server key its public key?"
    raise NoReferee(f"no CURVE handshake with the referee within {wait_s:g} s: {detail}")


def play_remote(
    bot: Bot | DecisionFunction,
    link: RemoteLink,
    name: str,
    version: str | None,
    *,
    silence_s: float,
    arrays_as_tuples: bool,
) -> SessionEnd:
    """Play the seat on `link` until the referee closes the connection: BYE after a match played to its end,
    REFEREE_GONE if it left (or fell silent) before saying bye."""
    byes = 0
    try:
        while True:
            link.expect_hello()
            end = run_session(bot, link, name, version, silence_s=silence_s, arrays_as_tuples=arrays_as_tuples)
            if end is SessionEnd.REFEREE_GONE:
                return end
            byes += end is SessionEnd.BYE
            link.pause(REHELLO_PAUSE_S)
    except RefereeLeft:
        return SessionEnd.BYE if byes else SessionEnd.REFEREE_GONE

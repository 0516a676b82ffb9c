"""The author's end of a remote seat (`referee connect`): run the bot here, relay its frames to a referee over CURVE.

The bot is any program that speaks protocol v1 (a stdio bot behind protocol.stdio_bridge): it connects, as it
would to a referee, to a socket this relay binds in a private folder, with REFEREE_ENDPOINT and a placeholder
REFEREE_TOKEN (the referee binds the seat by the relay's key and puts in the seat's own token). Its frames go
to the referee unchanged and the referee's come back unchanged; nothing is decoded here.

The bot starts once the referee has answered the relay's first message (RESUME: no session yet, so FRESH). When
it exits (after the referee's bye, between rotations of a match, or a crash), a fresh process is started after
RESTART_PAUSE_S: the referee asks every seat for a new process between rotations. When the connection drops, the
bot keeps running and the relay makes a new connection until the referee's reconnect grace is over, resuming the
session there (protocol.remote_sockets: each side sends again the frames the other lacks). When the referee says
the match is over (END) the relay stops the bot and returns.
"""

from __future__ import annotations

import collections
import contextlib
import enum
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import zmq
from zmq.utils.monitor import parse_monitor_message

from protocol import limits
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
    client_socket,
    control,
    control_value,
    handshake_failure,
)

RESTART_PAUSE_S = 0.5
PLACEHOLDER_TOKEN = "remote"
_POLL_MS = 100
OUTBOX = 64
BUSY_RETRY_S = 0.5
"""The pause before a new connection when the referee turned one away for now (the key's old connection is still
alive to it)."""
ANSWER_WAIT_S = 5.0
"""How long the referee's answer to a resume is waited for before the connection is made anew."""
"""Frames sent up kept to send again after a reconnection (a bot sends one or two between the referee's)."""
_NOBLOCK = int(zmq.NOBLOCK)


class NoReferee(EnvironmentProblem, ConnectionError):
    """No CURVE handshake with the referee: it is not listening, or it refused this key."""


@dataclass(frozen=True)
class RelayOutcome:
    bot_starts: int
    frames_up: int
    """Frames the bot sent the referee."""
    frames_down: int


class _Bot:
    def __init__(self, command: Sequence[str], endpoint: str) -> None:
        env = {**os.environ, limits.ENV_ENDPOINT: endpoint, limits.ENV_TOKEN: PLACEHOLDER_TOKEN}
        try:
            self.process = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as error:
            raise EnvironmentProblem(f"cannot start the bot {command[0]!r}: {error.strerror or error}") from error
        self.identity: bytes | None = None

    def exited(self) -> bool:
        return self.process.poll() is not None

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()


class LostReferee(EnvironmentProblem, ConnectionError):
    """The connection to the referee dropped and did not come back within its reconnect grace."""


def relay(
    endpoint: str,
    own: KeyPair,
    server_public: bytes,
    command: Sequence[str],
    *,
    wait_s: float = 60.0,
    say: Callable[[str], None] = lambda text: print(text, file=sys.stderr),
) -> RelayOutcome:
    """Relay `command`'s bot to the referee at `endpoint` until the referee says the match is over. NoReferee if
    no handshake succeeds within `wait_s` (the last refusal's reason, if any, in its message); LostReferee if a
    dropped connection does not come back within the referee's grace."""
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    local = context.socket(zmq.ROUTER)
    local.setsockopt(zmq.LINGER, 0)
    link = _Link(context, endpoint, own, server_public)
    try:
        with tempfile.TemporaryDirectory(prefix="referee-connect-") as folder:
            local.bind(f"ipc://{folder}/bot.sock")
            link.open()
            _handshake(link, wait_s, say)
            say(f"connected to the referee at {endpoint}")
            relaying = _Relay(link, local, command, local.getsockopt_string(zmq.LAST_ENDPOINT), say)
            return relaying.run()
    finally:
        link.close()
        local.close(0)
        context.term()


class _Link:
    """The connection to the referee: a fresh DEALER for each connection, so that nothing queued for a dropped one
    goes out on the next before its resume."""

    def __init__(self, context: zmq.Context[zmq.Socket[bytes]], endpoint: str, own: KeyPair, server: bytes) -> None:
        self._context = context
        self._endpoint = endpoint
        self._own = own
        self._server = server
        self.socket: zmq.Socket[bytes] | None = None
        self.monitor: zmq.Socket[bytes] = context.socket(zmq.PAIR)
        self._opened = 0

    def open(self) -> None:
        self.close()
        self._opened += 1
        self.socket = client_socket(self._context, self._own, self._server)
        address = f"inproc://connect-monitor-{id(self)}-{self._opened}"
        self.socket.monitor(address, HANDSHAKE_EVENTS)
        self.monitor = self._context.socket(zmq.PAIR)
        self.monitor.setsockopt(zmq.RCVHWM, 0)
        self.monitor.connect(address)
        self.socket.connect(self._endpoint)

    def send(self, frames: list[bytes]) -> None:
        if self.socket is not None:
            with contextlib.suppress(zmq.ZMQError):
                self.socket.send_multipart(frames, _NOBLOCK)

    def close(self) -> None:
        """The monitor is stopped before its reader is closed: libzmq's I/O thread blocks on an event for a monitor
        that has no reader."""
        if self.socket is not None:
            with contextlib.suppress(zmq.ZMQError):
                self.socket.disable_monitor()
        self.monitor.close(0)
        if self.socket is not None:
            self.socket.close(0)
            self.socket = None


def _handshake(link: _Link, wait_s: float, say: Callable[[str], None]) -> None:
    deadline = time.monotonic() + wait_s
    refusal = None
    while (left := deadline - time.monotonic()) > 0:
        if not link.monitor.poll(int(left * 1000) + 1):
            break
        event = parse_monitor_message(link.monitor.recv_multipart())
        if event["event"] == zmq.EVENT_HANDSHAKE_SUCCEEDED:
            return
        why = handshake_failure(event["event"], event["value"])
        if why is not None:
            refusal = why
            say(f"the referee refused the connection: {why}")
        if event["event"] == zmq.EVENT_HANDSHAKE_FAILED_AUTH:
            if event["value"] != int(ZAP_BUSY):
                break
            time.sleep(min(BUSY_RETRY_S, max(0.0, deadline - time.monotonic())))
            link.open()
    detail = refusal or "is it listening there, and is --server-key its public key?"
    raise NoReferee(f"no CURVE handshake with the referee within {wait_s:g} s: {detail}")


class _State(enum.Enum):
    ASKING = "asking"
    """Connected, the resume sent, the referee's answer awaited."""
    LIVE = "live"
    DOWN = "down"
    """The connection dropped; a new one is being made until the grace is over."""


class _Relay:
    """One relay session: the bot's frames up and the referee's down, counted each way since the session began
    (the referee's FRESH), the last OUTBOX sent up kept, so that after a dropped connection a new one resumes the
    session (RESUME with the frames received; the referee's RESUMED with those it received) and each side sends
    again what the other lacks. The bot keeps running meanwhile."""

    def __init__(
        self,
        link: _Link,
        local: zmq.Socket[bytes],
        command: Sequence[str],
        bot_endpoint: str,
        say: Callable[[str], None],
    ) -> None:
        self.link = link
        self.local = local
        self.command = command
        self.bot_endpoint = bot_endpoint
        self.say = say
        self.bot: _Bot | None = None
        self.starts = self.up = self.down = 0
        self.frames_up = self.frames_down = 0
        self.outbox: collections.deque[bytes] = collections.deque(maxlen=OUTBOX)
        self.grace_s = DEFAULT_RECONNECT_GRACE_S
        self.state = _State.ASKING
        self.give_up_at = self.asked_until = 0.0
        self.restart_at: float | None = None
        self.reopen_at: float | None = None
        """When to try again after the referee turned a connection away for now (ZAP_BUSY: libzmq does not
        retry a connection refused at its handshake)."""

    def run(self) -> RelayOutcome:
        self._ask()
        self.give_up_at = self.asked_until
        try:
            while True:
                if self._step():
                    return RelayOutcome(self.starts, self.frames_up, self.frames_down)
        finally:
            if self.bot is not None:
                self.bot.stop()

    def _step(self) -> bool:
        """One wait and what came of it; True once the referee said the match is over."""
        poller = zmq.Poller()
        poller.register(self.local, zmq.POLLIN)
        poller.register(self.link.monitor, zmq.POLLIN)
        if self.link.socket is not None:
            poller.register(self.link.socket, zmq.POLLIN)
        ready = dict(poller.poll(_POLL_MS))
        if self.link.socket is not None and self.link.socket in ready and self._referee_to_bot():
            return True
        if self.local in ready:
            self._bot_to_referee()
        if self.link.monitor in ready and self._connection_events():
            return True
        if self.reopen_at is not None and time.monotonic() >= self.reopen_at:
            self.reopen_at = None
            self.link.open()
        if self.state is _State.ASKING and time.monotonic() >= self.asked_until:
            self._drop()
        if self.state is _State.DOWN and time.monotonic() >= self.give_up_at:
            raise LostReferee(f"the connection to the referee dropped and did not come back within {self.grace_s:g} s")
        self._restart_bot()
        return False

    def _connection_events(self) -> bool:
        """Handshakes and drops; True if the referee's last words, read before a drop, said the match is over."""
        while True:
            try:
                event = parse_monitor_message(self.link.monitor.recv_multipart(_NOBLOCK))
            except zmq.Again:
                return False
            if event["event"] == zmq.EVENT_DISCONNECTED and self.state is not _State.DOWN:
                if self._referee_to_bot():
                    return True
                self._drop()
                return False
            if event["event"] == zmq.EVENT_HANDSHAKE_SUCCEEDED and self.state is _State.DOWN:
                self._ask()
            elif event["event"] == zmq.EVENT_HANDSHAKE_FAILED_AUTH and event["value"] == int(ZAP_BUSY):
                self.reopen_at = time.monotonic() + BUSY_RETRY_S
            elif event["event"] == zmq.EVENT_HANDSHAKE_FAILED_AUTH:
                raise NoReferee(
                    f"the referee refused the connection: {handshake_failure(event['event'], event['value'])}"
                )

    def _drop(self) -> None:
        """The connection is gone (or the referee never answered on it): a new one, until the grace is over."""
        if self.state is _State.LIVE:
            self.say(f"the connection to the referee dropped; reconnecting for up to {self.grace_s:g} s")
            self.give_up_at = time.monotonic() + self.grace_s
        self.state = _State.DOWN
        self.link.open()

    def _ask(self) -> None:
        self.state = _State.ASKING
        self.asked_until = time.monotonic() + ANSWER_WAIT_S
        self.link.send(control(RESUME, None if self.bot is None else self.down))

    def _bot_to_referee(self) -> None:
        """Frames of the bot's one connection go up (kept, and sent while the session is live); any other local
        connection's are dropped."""
        while True:
            try:
                identity, *frames = self.local.recv_multipart(_NOBLOCK)
            except zmq.Again:
                return
            bot = self.bot
            if bot is None:
                continue
            if bot.identity is None:
                bot.identity = identity
            if identity != bot.identity or len(frames) != 1:
                continue
            self.up += 1
            self.outbox.append(frames[0])
            self.frames_up += 1
            if self.state is _State.LIVE:
                self.link.send(frames)

    def _referee_to_bot(self) -> bool:
        """The referee's frames: pings answered, controls obeyed, the rest to the bot. True on END."""
        socket = self.link.socket
        assert socket is not None
        while True:
            try:
                frames = socket.recv_multipart(_NOBLOCK)
            except zmq.Again:
                return False
            if len(frames) == 2 and frames[0] == PING:
                self.link.send(frames)
            elif len(frames) == 3 and frames[0] == CONTROL:
                if self._control(frames):
                    return True
            elif len(frames) == 1:
                self.down += 1
                self.frames_down += 1
                if self.bot is not None and self.bot.identity is not None:
                    with contextlib.suppress(zmq.ZMQError):
                        self.local.send_multipart([self.bot.identity, frames[0]], _NOBLOCK)

    def _control(self, frames: list[bytes]) -> bool:
        kind, value = frames[1], control_value(frames)
        if kind == END:
            self.say("the referee closed the connection: the match is over")
            return True
        if kind == FRESH:
            self._fresh(value)
        elif kind == RESUMED and self.state is _State.ASKING:
            lacking = min(len(self.outbox), max(0, self.up - (value or 0)))
            for frame in list(self.outbox)[len(self.outbox) - lacking :]:
                self.link.send([frame])
            self.state = _State.LIVE
            self.say(f"reconnected to the referee; {lacking} frame(s) sent again")
        return False

    def _fresh(self, grace_ms: int | None) -> None:
        """A new session: the bot (re)started, the counts from zero."""
        if grace_ms is not None:
            self.grace_s = grace_ms / 1000
        if self.bot is not None:
            self.say("the referee had no session to resume: the bot starts afresh")
            self.bot.stop()
        self.up = self.down = 0
        self.outbox.clear()
        self.state = _State.LIVE
        self.bot = _Bot(self.command, self.bot_endpoint)
        self.starts += 1
        self.restart_at = None

    def _restart_bot(self) -> None:
        """A bot that exited (bye between rotations, or a crash) is started again after RESTART_PAUSE_S."""
        if self.bot is None:
            return
        if self.restart_at is None and self.bot.exited():
            self.restart_at = time.monotonic() + RESTART_PAUSE_S
        elif self.restart_at is not None and time.monotonic() >= self.restart_at:
            self.bot, self.restart_at = _Bot(self.command, self.bot_endpoint), None
            self.starts += 1

"""The author's end of a remote seat (`referee connect`): run the bot here, relay its frames to a referee over CURVE.

The bot is any program that speaks protocol v1 (a stdio bot behind protocol.stdio_bridge): it connects, as it
would to a referee, to a socket this relay binds in a private folder, with REFEREE_ENDPOINT and a placeholder
REFEREE_TOKEN (the referee binds the seat by the relay's key and puts in the seat's own token). Its frames go
to the referee unchanged and the referee's come back unchanged; nothing is decoded here.

The bot starts once the CURVE handshake with the referee has succeeded. When it exits (after the referee's bye,
between rotations of a match, or a crash) and the referee is still connected, a fresh process is started after
RESTART_PAUSE_S: the referee asks every seat for a new process between rotations. When the referee closes the
connection (its match is over) the relay stops the bot and returns.
"""

from __future__ import annotations

import contextlib
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
from protocol.remote_sockets import HANDSHAKE_EVENTS, PING, client_socket, handshake_failure

RESTART_PAUSE_S = 0.5
PLACEHOLDER_TOKEN = "remote"
_POLL_MS = 100
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


def relay(
    endpoint: str,
    own: KeyPair,
    server_public: bytes,
    command: Sequence[str],
    *,
    wait_s: float = 60.0,
    say: Callable[[str], None] = lambda text: print(text, file=sys.stderr),
) -> RelayOutcome:
    """Relay `command`'s bot to the referee at `endpoint` until the referee closes the connection. NoReferee if
    no handshake succeeds within `wait_s` (the last refusal's reason, if any, in its message)."""
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    upstream = client_socket(context, own, server_public)
    address = f"inproc://connect-monitor-{id(upstream)}"
    upstream.monitor(address, HANDSHAKE_EVENTS)
    monitor = context.socket(zmq.PAIR)
    monitor.setsockopt(zmq.RCVHWM, 0)
    monitor.connect(address)
    local = context.socket(zmq.ROUTER)
    local.setsockopt(zmq.LINGER, 0)
    try:
        with tempfile.TemporaryDirectory(prefix="referee-connect-") as folder:
            local.bind(f"ipc://{folder}/bot.sock")
            upstream.connect(endpoint)
            _handshake(monitor, wait_s, say)
            say(f"connected to the referee at {endpoint}")
            return _serve(upstream, local, monitor, command, local.getsockopt_string(zmq.LAST_ENDPOINT), say)
    finally:
        upstream.disable_monitor()
        for socket in (monitor, local, upstream):
            socket.close(0)
        context.term()


def _handshake(monitor: zmq.Socket[bytes], wait_s: float, say: Callable[[str], None]) -> None:
    deadline = time.monotonic() + wait_s
    refusal = None
    while (left := deadline - time.monotonic()) > 0:
        if not monitor.poll(int(left * 1000) + 1):
            break
        event = parse_monitor_message(monitor.recv_multipart())
        if event["event"] == zmq.EVENT_HANDSHAKE_SUCCEEDED:
            return
        why = handshake_failure(event["event"], event["value"])
        if why is not None:
            refusal = why
            say(f"the referee refused the connection: {why}")
            if event["event"] == zmq.EVENT_HANDSHAKE_FAILED_AUTH:
                break
    detail = refusal or "is it listening there, and is --server-key its public key?"
    raise NoReferee(f"no CURVE handshake with the referee within {wait_s:g} s: {detail}")


def _serve(
    upstream: zmq.Socket[bytes],
    local: zmq.Socket[bytes],
    monitor: zmq.Socket[bytes],
    command: Sequence[str],
    bot_endpoint: str,
    say: Callable[[str], None],
) -> RelayOutcome:
    poller = zmq.Poller()
    for socket in (upstream, local, monitor):
        poller.register(socket, zmq.POLLIN)
    bot = _Bot(command, bot_endpoint)
    starts, up, down = 1, 0, 0
    restart_at: float | None = None
    try:
        while True:
            ready = dict(poller.poll(_POLL_MS))
            if monitor in ready and _referee_left(monitor):
                say("the referee closed the connection")
                return RelayOutcome(starts, up, down)
            if local in ready:
                up += _bot_to_referee(local, upstream, bot)
            if upstream in ready:
                down += _referee_to_bot(upstream, local, bot)
            if restart_at is None and bot.exited():
                restart_at = time.monotonic() + RESTART_PAUSE_S
            elif restart_at is not None and time.monotonic() >= restart_at:
                bot, restart_at = _Bot(command, bot_endpoint), None
                starts += 1
    finally:
        bot.stop()


def _referee_left(monitor: zmq.Socket[bytes]) -> bool:
    left = False
    while True:
        try:
            event = parse_monitor_message(monitor.recv_multipart(_NOBLOCK))
        except zmq.Again:
            return left
        left = left or event["event"] == zmq.EVENT_DISCONNECTED


def _bot_to_referee(local: zmq.Socket[bytes], upstream: zmq.Socket[bytes], bot: _Bot) -> int:
    """Frames of the bot's one connection go up; any other local connection's are dropped."""
    sent = 0
    while True:
        try:
            identity, *frames = local.recv_multipart(_NOBLOCK)
        except zmq.Again:
            return sent
        if bot.identity is None:
            bot.identity = identity
        if identity != bot.identity or len(frames) != 1:
            continue
        with contextlib.suppress(zmq.Again):
            upstream.send(frames[0], _NOBLOCK)
            sent += 1


def _referee_to_bot(upstream: zmq.Socket[bytes], local: zmq.Socket[bytes], bot: _Bot) -> int:
    sent = 0
    while True:
        try:
            frames = upstream.recv_multipart(_NOBLOCK)
        except zmq.Again:
            return sent
        if len(frames) == 2 and frames[0] == PING:
            with contextlib.suppress(zmq.Again):
                upstream.send_multipart(frames, _NOBLOCK)
            continue
        if bot.identity is None or len(frames) != 1:
            continue
        with contextlib.suppress(zmq.ZMQError):
            local.send_multipart([bot.identity, frames[0]], _NOBLOCK)
            sent += 1

"""The stdio bridge: the protocol for a bot that has no ZeroMQ binding, as JSON lines on its stdin and stdout.

    python -m protocol.stdio_bridge [--] COMMAND [ARG...]

The referee starts the bridge as the bot's program (a BOT argument `stdio:BOT`, see referee.botspec). The bridge
connects the DEALER socket on the bot's behalf, starts COMMAND with pipes for its stdin and stdout (its stderr
goes where the bridge's does: the bot's log), and relays: every referee message, decoded from msgpack, becomes
one line of compact JSON on the bot's stdin; every line the bot writes on stdout, one JSON object, is sent to
the referee as one msgpack frame. The messages are those of the ZeroMQ protocol (protocol/PROTOCOL.md, section
"The stdio transport"); a `hello` without a `token` gets the bridge's (REFEREE_TOKEN).

The bridge judges nothing the bot sends beyond turning it into msgpack: the referee checks every message as it
checks any bot's. A line that is not JSON, or whose JSON msgpack cannot hold (an integer past 64 bits), is not
sent; the bridge says so on stderr, where the bot's other diagnostics go. A line longer than
`MAX_LINE_BYTES` is sent as it is, unconverted, so that the referee records the oversized message it is.
When the bot exits, or closes its stdout, the bridge exits with the bot's status (128 + N after signal N).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import msgspec
import zmq

from protocol import limits
from protocol.errors import BotFault
from protocol.sdk import LINGER_MS, MIN_SILENCE_S, SILENCE_PER_DECISION, TICK_MS

MAX_LINE_BYTES = 4 * limits.MAX_MESSAGE_BYTES
"""The longest line of the bot's stdout the bridge converts (JSON is wordier than msgpack); past it, the line
is relayed raw and the referee rejects it as over MAX_MESSAGE_BYTES."""

_READ_CHUNK = 64 * 1024
_EXIT_WAIT_S = 2.0
_NO_PROGRAM = 127

_json_encode = msgspec.json.Encoder().encode
_json_decode = msgspec.json.Decoder().decode
_msgpack_encode = msgspec.msgpack.Encoder().encode
_msgpack_decode = msgspec.msgpack.Decoder().decode


class LineRejected(BotFault, ValueError):
    """A line of the bot's stdout that cannot become a msgpack message (the reason is the message)."""


def json_line(message: Any) -> bytes:
    """One referee message as the bot reads it: compact JSON on one line (JSON escapes every newline)."""
    return _json_encode(message) + b"\n"


def frame_of_line(line: bytes, token: str) -> bytes:
    """The msgpack frame for one line of the bot's stdout; a hello without a token gets `token`."""
    try:
        message = _json_decode(line)
    except msgspec.DecodeError as error:
        raise LineRejected(f"not JSON ({error})") from None
    if type(message) is dict and message.get("type") == "hello" and "token" not in message:
        message["token"] = token
    try:
        return _msgpack_encode(message)
    except (OverflowError, TypeError, ValueError) as error:
        raise LineRejected(f"not a message msgpack can carry ({error})") from None


class LineSplitter:
    """Cuts the bot's stdout into lines; a line past `MAX_LINE_BYTES` comes out raw, at once, cut there (its
    remainder, up to the next newline, is dropped)."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._dropping = False

    def feed(self, chunk: bytes) -> Iterator[tuple[bytes, bool]]:
        """Each complete line (without its newline) and whether it is whole (False: cut, to send raw)."""
        self._buffer += chunk
        while True:
            end = self._buffer.find(b"\n")
            if end < 0:
                break
            line = bytes(self._buffer[:end])
            del self._buffer[: end + 1]
            if self._dropping:
                self._dropping = False
            elif line.strip():
                yield line, True
        if len(self._buffer) > MAX_LINE_BYTES:
            if not self._dropping:
                yield bytes(self._buffer), False
            self._buffer.clear()
            self._dropping = True


def _say(text: str) -> None:
    print(f"stdio bridge: {text}", file=sys.stderr, flush=True)


def _exit_status(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode


class Bridge:
    """One bot behind one connection; `run` relays until the bot's stdout ends and returns its exit status."""

    def __init__(self, socket: zmq.Socket[bytes], child: subprocess.Popen[bytes], token: str) -> None:
        self.socket = socket
        self.child = child
        self.token = token
        assert child.stdin is not None and child.stdout is not None
        self.stdin_fd = child.stdin.fileno()
        self.stdout_fd = child.stdout.fileno()
        self.stdin_open = True
        self.lines = LineSplitter()
        self.parent = os.getppid()
        self.silence_s = MIN_SILENCE_S
        self.quiet_s = 0.0

    def run(self) -> int:
        poller = zmq.Poller()
        poller.register(self.socket, zmq.POLLIN)
        poller.register(self.stdout_fd, zmq.POLLIN)
        while True:
            events = dict(poller.poll(TICK_MS))
            if not events:
                if self._referee_gone():
                    self.child.kill()
                    break
                continue
            self.quiet_s = 0.0
            if self.socket in events:
                self._to_bot()
            if self.stdout_fd in events and not self._from_bot():
                break
        return self._finish()

    def _to_bot(self) -> None:
        while True:
            try:
                frame = self.socket.recv(zmq.NOBLOCK)
            except zmq.Again:
                return
            try:
                message = _msgpack_decode(frame)
            except msgspec.DecodeError as error:
                _say(f"ignored a referee message that is not msgpack ({error})")
                continue
            if type(message) is dict and message.get("type") == "welcome":
                self._note_limits(message.get("limits", {}))
            self._write(json_line(message))

    def _write(self, line: bytes) -> None:
        view = memoryview(line)
        while self.stdin_open and view:
            try:
                written = os.write(self.stdin_fd, view)
            except BrokenPipeError:
                self.stdin_open = False
                return
            view = view[written:]

    def _from_bot(self) -> bool:
        """Relay what the bot wrote; False once its stdout is closed."""
        chunk = os.read(self.stdout_fd, _READ_CHUNK)
        if not chunk:
            return False
        for line, whole in self.lines.feed(chunk):
            if not whole:
                _say(f"relayed a line of more than {MAX_LINE_BYTES} bytes as it is (the referee will refuse it)")
                self.socket.send(line)
                continue
            try:
                self.socket.send(frame_of_line(line, self.token))
            except LineRejected as rejected:
                _say(f"did not send a line of the bot's stdout, {rejected}: {line[:200]!r}")
        return True

    def _note_limits(self, welcome_limits: dict[str, Any]) -> None:
        per_decision_s = (welcome_limits.get("move_time_ms", 0) + welcome_limits.get("time_bank_ms", 0)) / 1000
        self.silence_s = max(self.silence_s, MIN_SILENCE_S + SILENCE_PER_DECISION * per_decision_s)

    def _referee_gone(self) -> bool:
        self.quiet_s += TICK_MS / 1000
        if os.getppid() != self.parent:
            _say("the referee process is gone; stopping the bot")
            return True
        if self.quiet_s >= self.silence_s and self.child.poll() is None:
            _say(f"no word from the referee for {self.silence_s:.0f} s; stopping the bot")
            return True
        return False

    def _finish(self) -> int:
        if self.stdin_open:
            os.close(self.stdin_fd)
            self.stdin_open = False
        try:
            return _exit_status(self.child.wait(_EXIT_WAIT_S))
        except subprocess.TimeoutExpired:
            _say("the bot closed its stdout but did not exit; stopping it")
            self.child.kill()
            return _exit_status(self.child.wait())


def _start_bot(command: Sequence[str]) -> subprocess.Popen[bytes]:
    env = {key: value for key, value in os.environ.items() if key != limits.ENV_ENDPOINT}
    return subprocess.Popen(list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, bufsize=0)


def main(argv: Sequence[str]) -> int:
    command = list(argv[1:] if argv and argv[0] == "--" else argv)
    if not command:
        _say("usage: python -m protocol.stdio_bridge [--] COMMAND [ARG...]")
        return 2
    endpoint = os.environ.get(limits.ENV_ENDPOINT)
    if not endpoint:
        _say(f"{limits.ENV_ENDPOINT} is not set: the referee starts this bridge (referee play GAME stdio:BOT ...)")
        return 4
    try:
        child = _start_bot(command)
    except OSError as error:
        _say(f"cannot start the bot {command[0]!r}: {error}")
        return _NO_PROGRAM
    context = zmq.Context()
    socket: zmq.Socket[bytes] = context.socket(zmq.DEALER)
    socket.setsockopt(zmq.LINGER, LINGER_MS)
    try:
        socket.connect(endpoint)
        return Bridge(socket, child, os.environ.get(limits.ENV_TOKEN, "")).run()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        socket.close()
        context.term()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""The Python bot SDK: a bot is a decision function or an object with hooks; `run_bot` does the rest.

    from protocol.sdk import run_bot

    def choose(observation, legal_actions):
        return legal_actions[0]

    if __name__ == "__main__":
        raise SystemExit(run_bot(choose, name="first"))

An object bot has `act(observation, legal_actions) -> action` and, optionally, `on_game_start(info)`
(a `GameStart`), `on_game_over(result)` (the result map: {"scores": [...], "ranks": [...]}) and
`on_clock(time_left_ms, bank_left_ms)`, called with each request's clock just before its `act` (a search bot
sizes its thinking by it).

`run_bot` reads REFEREE_ENDPOINT and REFEREE_TOKEN, connects one DEALER socket and hands it to `run_session`,
which says hello, answers every request with the same id (rebuilding the observation's logs from their deltas,
so a bot always sees the whole observation: protocol/logs.py), and returns a `SessionEnd` (an int, usable as
exit status) on bye, on refused, or when the referee is gone. It sits on the per-decision hot path, so the loop
does no work a request does not need: one recv, one decode, the logs rebuilt, the bot's decision, one encode,
one send. Messages are decoded and encoded by msgspec (twice as fast as msgpack at decoding a request: its map
keys are cached).

A bot on another machine plays a remote seat (`remote:NAME`) directly: `run_bot(bot, name, remote="tcp://HOST:PORT",
key=SECRET_FILE, server_key=PUBLIC_FILE)`, or REFEREE_REMOTE, REFEREE_KEY and REFEREE_SERVER_KEY in the
environment (protocol.sdk_remote); where a referee or `referee connect` started the bot (REFEREE_ENDPOINT set), it
plays there.

`run_session` takes any `Transport` (recv and send of whole frames): protocol/scripted.py stands a scripted
referee there, so that a bot and this very loop are tested without a socket, a subprocess or a clock.
"""

from __future__ import annotations

import enum
import functools
import os
import sys
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgspec
import zmq

from protocol import limits
from protocol.logs import LOG_FROM, LogReceiver

Action = dict[str, Any]
Observation = dict[str, Any]
DecisionFunction = Callable[[Observation, list[Action]], Action]

TICK_MS = 1000
"""How often a waiting bot wakes to check that its parent (the referee) is still alive."""

MIN_SILENCE_S = 3600.0
"""The shortest silence after which the SDK decides the referee is gone, an hour: a seat may wait that long
with nothing to do (a Scauver seat out of chips hears nothing until the game ends, which at the round cap with
searching bots took more than two minutes). The referee's death is noticed at once through the parent process;
the silence bound is only for a referee that vanished some other way. It also grows with the limits announced in
welcome (see `_silence_after_welcome`)."""

SILENCE_PER_DECISION = 10
"""After welcome, the silence bound is MIN_SILENCE_S plus this many worst-case decisions of other seats."""

LINGER_MS = 200
"""How long closing the socket may wait to flush a last reply."""


class SessionEnd(enum.IntEnum):
    """Why `run_bot` returned; the value is a sensible process exit status."""

    BYE = 0
    REFUSED = 2
    REFEREE_GONE = 3
    NO_ENDPOINT = 4
    NO_REFEREE = 5
    """A remote seat (`run_bot(..., remote=...)`) found no referee that accepted its key."""


@dataclass(frozen=True)
class GameStart:
    """What a bot learns when a game starts (the `game_start` message, plus the limits from `welcome`)."""

    game: str
    seat: int
    players: int
    config: Mapping[str, Any]
    match_id: str
    game_index: int
    limits: Mapping[str, Any] = field(default_factory=dict)


class Bot(Protocol):
    def act(self, observation: Observation, legal_actions: list[Action]) -> Action: ...


class Transport(Protocol):
    """What the message loop needs of its connection: a zmq DEALER socket, or a `ScriptedReferee`.

    `recv` returns the referee's next frame or raises zmq.Again after waiting TICK_MS in vain; `send` sends one
    frame. An exception `recv` raises that is neither zmq.Again nor a ValueError ends the loop."""

    def recv(self) -> bytes: ...

    def send(self, frame: bytes, /) -> Any: ...


@dataclass(frozen=True)
class _Hooks:
    act: DecisionFunction
    on_game_start: Callable[[GameStart], object] | None
    on_game_over: Callable[[dict[str, Any]], object] | None
    on_clock: Callable[[int, int], object] | None = None


def _hooks_of(bot: Bot | DecisionFunction) -> _Hooks:
    act = getattr(bot, "act", None)
    if act is None:
        if not callable(bot):
            raise TypeError(f"a bot is a function (observation, legal_actions) -> action or has .act, not {bot!r}")
        act = bot
    return _Hooks(
        act, getattr(bot, "on_game_start", None), getattr(bot, "on_game_over", None), getattr(bot, "on_clock", None)
    )


def _silence_after_welcome(welcome_limits: Mapping[str, Any]) -> float:
    move_ms = welcome_limits.get("move_time_ms", limits.DEFAULT_MOVE_TIME_MS)
    bank_ms = welcome_limits.get("time_bank_ms", limits.DEFAULT_TIME_BANK_MS)
    return MIN_SILENCE_S + SILENCE_PER_DECISION * (move_ms + bank_ms) / 1000


def _hello(name: str, version: str | None, token: str) -> dict[str, Any]:
    hello: dict[str, Any] = {
        "type": "hello",
        "protocol": limits.PROTOCOL_VERSION,
        "token": token,
        "name": name[: limits.MAX_NAME_CHARS],
    }
    if version is not None:
        hello["version"] = version[: limits.MAX_NAME_CHARS]
    return hello


_encode = msgspec.msgpack.Encoder().encode
decode_message: Callable[[bytes], Any] = msgspec.msgpack.Decoder().decode
"""How the SDK decodes every referee message (the bench times it)."""


def _tuple_decoder() -> Callable[[bytes], Any]:
    import msgpack

    return functools.partial(msgpack.unpackb, raw=False, use_list=False)


def _say(text: str) -> None:
    print(f"bot: {text}", file=sys.stderr, flush=True)


class _Session:
    """One connection to the referee; `run` is the message loop."""

    def __init__(self, socket: Transport, hooks: _Hooks, silence_s: float, decode: Callable[[bytes], Any]) -> None:
        self.socket = socket
        self.decode = decode
        self.hooks = hooks
        self.silence_s = silence_s
        self.limits: Mapping[str, Any] = {}
        self.parent = os.getppid()
        self.quiet_ticks = 0
        self.logs = LogReceiver()

    def run(self) -> SessionEnd:
        recv, decode, send, encode, act, restore, on_clock = (
            self.socket.recv,
            self.decode,
            self.socket.send,
            _encode,
            self.hooks.act,
            self.logs.restore,
            self.hooks.on_clock,
        )
        while True:
            try:
                message = decode(recv())
            except zmq.Again:
                if self._referee_gone():
                    return SessionEnd.REFEREE_GONE
                continue
            except ValueError as error:
                _say(f"ignored an undecodable message: {error}")
                continue
            self.quiet_ticks = 0
            kind = message.get("type") if type(message) is dict else None
            if kind == "request":
                observation = message["observation"]
                log_from = message.get(LOG_FROM)
                if log_from is not None:
                    restore(observation, log_from)
                if on_clock is not None:
                    on_clock(message.get("time_left_ms", 0), message.get("bank_left_ms", 0))
                action = act(observation, message["legal_actions"])
                send(encode({"type": "action", "id": message["id"], "action": action}))
            else:
                end = self._handle(kind, message)
                if end is not None:
                    return end

    def _referee_gone(self) -> bool:
        self.quiet_ticks += 1
        if os.getppid() != self.parent:
            _say("the referee process is gone; exiting")
            return True
        if self.quiet_ticks * TICK_MS / 1000 >= self.silence_s:
            _say(f"no word from the referee for {self.silence_s:.0f} s; exiting")
            return True
        return False

    def _handle(self, kind: object, message: Any) -> SessionEnd | None:
        if kind == "game_start":
            if self.hooks.on_game_start is not None:
                self.hooks.on_game_start(self._game_start(message))
        elif kind == "game_over":
            if self.hooks.on_game_over is not None:
                self.hooks.on_game_over(message["result"])
        elif kind == "welcome":
            self.limits = message.get("limits", {})
            self.silence_s = max(self.silence_s, _silence_after_welcome(self.limits))
        elif kind == "bye":
            return SessionEnd.BYE
        elif kind == "refused":
            _say(f"the referee refused this bot: {message.get('reason', 'no reason given')}")
            return SessionEnd.REFUSED
        else:
            _say(f"ignored a message of unknown type {kind!r}")
        return None

    def _game_start(self, message: dict[str, Any]) -> GameStart:
        return GameStart(
            game=message["game"],
            seat=message["seat"],
            players=message["players"],
            config=message.get("config", {}),
            match_id=message.get("match_id", ""),
            game_index=message.get("game_index", 0),
            limits=self.limits,
        )


def run_session(
    bot: Bot | DecisionFunction,
    transport: Transport,
    name: str,
    version: str | None = None,
    *,
    token: str = "",
    silence_s: float = MIN_SILENCE_S,
    arrays_as_tuples: bool = False,
) -> SessionEnd:
    """Say hello on a connected `transport`, answer every request, and return why the session ended.

    `run_bot` calls this with its socket; tests call it with a `protocol.scripted.ScriptedReferee`."""
    hooks = _hooks_of(bot)
    transport.send(_encode(_hello(name, version, token)))
    return _Session(transport, hooks, silence_s, _tuple_decoder() if arrays_as_tuples else decode_message).run()


def run_bot(
    bot: Bot | DecisionFunction,
    name: str,
    version: str | None = None,
    *,
    endpoint: str | None = None,
    token: str | None = None,
    silence_s: float = MIN_SILENCE_S,
    arrays_as_tuples: bool = False,
    remote: str | None = None,
    key: str | os.PathLike[str] | None = None,
    server_key: str | os.PathLike[str] | None = None,
) -> SessionEnd:
    """Play every game the referee asks for, then return why the session ended.

    `endpoint` and `token` default to the environment (REFEREE_ENDPOINT, REFEREE_TOKEN). `arrays_as_tuples`
    decodes msgpack arrays as tuples instead of lists (with msgpack: slower than the default decoder, for bots
    that want immutable observations). An exception raised by the bot ends the process with status 1 (the
    referee records a crash, which is the honest outcome), its traceback printed to stderr without the SDK's
    own frames: what the student reads starts and ends in the bot's code. A `bot` that is neither a function
    nor an object with `act` raises TypeError at once, before anything is connected.

    Where no endpoint is given (the bot was not started by a referee or by `referee connect`), `remote`
    (tcp://HOST:PORT, else REFEREE_REMOTE) plays a remote seat directly over CURVE with the secret key file `key`
    and the referee's public key file `server_key` (else REFEREE_KEY, REFEREE_SERVER_KEY): the seat the key
    names, every game of the match, until the referee closes the connection (protocol.sdk_remote).
    NO_REFEREE where the referee is not there or refuses the key.
    """
    _hooks_of(bot)
    endpoint = endpoint or os.environ.get(limits.ENV_ENDPOINT)
    token = token if token is not None else os.environ.get(limits.ENV_TOKEN, "")
    if not endpoint:
        return _run_remote(bot, name, version, remote, key, server_key, silence_s, arrays_as_tuples)
    context = zmq.Context()
    socket = context.socket(zmq.DEALER)
    socket.setsockopt(zmq.LINGER, LINGER_MS)
    socket.setsockopt(zmq.RCVTIMEO, TICK_MS)
    try:
        socket.connect(endpoint)
        return run_session(
            bot, socket, name, version, token=token, silence_s=silence_s, arrays_as_tuples=arrays_as_tuples
        )
    except Exception as error:
        print_bot_traceback(error)
        raise SystemExit(1) from None
    finally:
        socket.close()
        context.term()


def _run_remote(
    bot: Bot | DecisionFunction,
    name: str,
    version: str | None,
    remote: str | None,
    key: str | os.PathLike[str] | None,
    server_key: str | os.PathLike[str] | None,
    silence_s: float,
    arrays_as_tuples: bool,
) -> SessionEnd:
    from protocol.errors import RefereeError
    from protocol.sdk_remote import RemoteLink, RemoteSettings, play_remote

    try:
        settings = RemoteSettings.of(remote, key, server_key)
        if settings is None:
            _say(f"{limits.ENV_ENDPOINT} is not set: a bot is started by the referee (referee play GAME BOT ...)")
            return SessionEnd.NO_ENDPOINT
        link = RemoteLink(settings, TICK_MS)
    except RefereeError as error:
        _say(str(error))
        return SessionEnd.NO_REFEREE
    _say(f"connected to the referee at {settings.endpoint}")
    try:
        return play_remote(bot, link, name, version, silence_s=silence_s, arrays_as_tuples=arrays_as_tuples)
    except Exception as error:
        print_bot_traceback(error)
        raise SystemExit(1) from None
    finally:
        link.close()


_SDK_FILES = {
    os.path.normcase(os.path.abspath(os.path.join(os.path.dirname(__file__), module)))
    for module in ("sdk.py", "sdk_remote.py")
}


def _without_sdk_frames(summary: traceback.TracebackException) -> None:
    summary.stack = traceback.StackSummary.from_list(
        [frame for frame in summary.stack if os.path.normcase(os.path.abspath(frame.filename)) not in _SDK_FILES]
    )
    for chained in (summary.__cause__, summary.__context__):
        if chained is not None:
            _without_sdk_frames(chained)


def print_bot_traceback(error: BaseException, file: Any = None) -> None:
    """Print `error`'s traceback as Python would, less the frames of this module (run_bot, the message loop)."""
    summary = traceback.TracebackException.from_exception(error)
    _without_sdk_frames(summary)
    print("".join(summary.format()), end="", file=sys.stderr if file is None else file, flush=True)

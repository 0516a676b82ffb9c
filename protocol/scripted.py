"""A referee in a list: test a Python bot, or the SDK's own loop, with no socket, no subprocess and no clock.

    from protocol.scripted import game_over, game_start, play_script, request, welcome

    replies = play_script(choose, [
        welcome(),
        game_start("scout", seat=1, players=3),
        request(observation, legal_actions),
        game_over(scores=[3, 1, 2]),
    ])
    assert replies[1].action in legal_actions      # replies[0] is the hello

A `ScriptedReferee` stands where the SDK's socket stands (`protocol.sdk.Transport`) and is driven by the
SDK's real message loop (`run_session`). Each `recv` delivers the next item of the script, encoded as the
referee encodes it (protocol/codec.py); once the script is exhausted it delivers `bye`, so the loop ends.
Each frame the bot sends is decoded and validated by the referee's own validator (`codec.decode_bot_message`)
and checked against the contract: hello first and once, then one action per request, with the request's id
and one of its legal actions, sent before the bot reads on. A breach raises a `ContractBreach`.

Script items:
- `request(observation, legal_actions)`: a decision with the WHOLE observation. The scripted referee numbers
  it (ids increase, as the referee's do) and, given `log_keys` (a game's `info.log_keys`), sends its logs as
  deltas exactly as the referee does (protocol.logs.LogSender: one sender per game, afresh at each
  game_start), so the SDK's log reconstruction is exercised too;
- a dict: any referee message, sent verbatim (a raw request is checked like any other, log_from and all);
- bytes: a frame sent as is (an undecodable one, for instance).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from protocol import codec, limits
from protocol.errors import BadInput, BotFault
from protocol.logs import ROUND, LogSender
from protocol.sdk import Bot, DecisionFunction, SessionEnd, run_session

_decode_sent = msgspec.msgpack.Decoder().decode


class ContractBreach(BotFault, AssertionError):
    """The bot broke protocol v1. An AssertionError, so that a test reports it as a failure, and so that it
    crosses the SDK's message loop, which ignores a ValueError from the transport as an undecodable frame."""


class MalformedMessage(ContractBreach):
    """A frame the referee rejects: too large, undecodable, or not a well-formed hello or action (the
    `codec.ProtocolViolation` is the `__cause__`), or a hello for another protocol version."""


class OutOfTurn(ContractBreach):
    """A message the session does not allow at that point: anything before hello, a second hello, an action
    when no request is open, or reading on after bye."""


class WrongRequestId(ContractBreach):
    """An action whose id is not that of the open request."""


class ActionNotLegal(ContractBreach):
    """An action that is not among the open request's legal_actions."""


class MissingReply(ContractBreach):
    """The bot read the next message, or ended its session, without answering the open request."""


class ScriptError(BadInput, ValueError):
    """A script the scripted referee cannot play (raised when it is built, before the bot runs)."""


@dataclass(frozen=True)
class Decision:
    """A request given with its whole observation: the scripted referee gives it an id and trims its logs."""

    observation: Mapping[str, Any]
    legal_actions: Sequence[Any]
    time_left_ms: int = limits.DEFAULT_MOVE_TIME_MS
    bank_left_ms: int = limits.DEFAULT_TIME_BANK_MS


ScriptItem = Decision | Mapping[str, Any] | bytes


def request(
    observation: Mapping[str, Any],
    legal_actions: Sequence[Any],
    *,
    time_left_ms: int = limits.DEFAULT_MOVE_TIME_MS,
    bank_left_ms: int = limits.DEFAULT_TIME_BANK_MS,
) -> Decision:
    """A decision of the bot's seat; `observation` is whole (what the game's `observation(seat)` returns)."""
    return Decision(observation, legal_actions, time_left_ms, bank_left_ms)


def welcome(
    move_time_ms: int = limits.DEFAULT_MOVE_TIME_MS,
    time_bank_ms: int = limits.DEFAULT_TIME_BANK_MS,
    startup_time_s: float = limits.DEFAULT_STARTUP_TIME_S,
) -> dict[str, Any]:
    """The referee's welcome, with the default limits unless told."""
    return codec.welcome(move_time_ms, time_bank_ms, startup_time_s)


def game_start(
    game: str,
    seat: int = 0,
    players: int = 2,
    config: Mapping[str, Any] | None = None,
    match_id: str = "scripted",
    game_index: int = 0,
) -> dict[str, Any]:
    return codec.game_start(game, seat, players, dict(config or {}), match_id, game_index)


def game_over(scores: Sequence[int], ranks: Sequence[int] | None = None, seat: int = 0) -> dict[str, Any]:
    """The end of a game; `ranks` default to the competition ranks of `scores` (highest first, ties shared)."""
    if ranks is None:
        ranks = [1 + sum(other > score for other in scores) for score in scores]
    return codec.game_over({"scores": list(scores), "ranks": list(ranks)}, seat)


def _check_item(item: object, log_keys: Sequence[str]) -> None:
    if isinstance(item, Decision):
        missing = [key for key in (ROUND, *log_keys) if log_keys and key not in item.observation]
        if missing:
            raise ScriptError(f"with log keys {list(log_keys)}, a decision's observation needs {missing}")
        if not item.legal_actions:
            raise ScriptError("a decision needs at least one legal action")
    elif not isinstance(item, Mapping | bytes):
        raise ScriptError(f"a script item is a request(...), a message dict or bytes, not {item!r:.80}")


def _same(value: Any, other: Any) -> bool:
    """Equal and of the same types throughout, as the rules engines compare (True is not 1, 2.0 is not 2)."""
    if type(value) is not type(other):
        return False
    if type(value) is dict:
        return value.keys() == other.keys() and all(_same(item, other[key]) for key, item in value.items())
    if type(value) is list:
        return len(value) == len(other) and all(map(_same, value, other))
    return bool(value == other)


@dataclass
class _OpenRequest:
    id: int
    legal_actions: list[Any]


class ScriptedReferee:
    """The referee's side of one bot session, played from a script; a `protocol.sdk.Transport`.

    `delivered` holds the frames sent to the bot, `received` the bot's messages as the referee decodes them
    (`codec.Hello`, then `codec.ActionReply`s)."""

    def __init__(self, script: Iterable[ScriptItem], *, log_keys: Sequence[str] = (), first_id: int = 1) -> None:
        self._script = list(script)
        self._log_keys = tuple(log_keys)
        for item in self._script:
            _check_item(item, self._log_keys)
        self._next_item = 0
        self._next_id = first_id
        self._logs = LogSender(self._log_keys)
        self._open: _OpenRequest | None = None
        self._hello_seen = False
        self._over = False
        self.delivered: list[bytes] = []
        self.received: list[codec.BotMessage] = []

    @property
    def actions(self) -> list[dict[str, Any]]:
        """The actions the bot answered, in order."""
        return [message.action for message in self.received if isinstance(message, codec.ActionReply)]

    def run(
        self, bot: Bot | DecisionFunction, name: str = "scripted", version: str | None = None, **options: Any
    ) -> SessionEnd:
        """Play the script with the SDK's loop (`options` as for `run_session`); check no request is left open."""
        end = run_session(bot, self, name, version, **options)
        self.finish()
        return end

    def finish(self) -> None:
        """Check that the bot left no request unanswered (`run` does; call it after driving `recv` and `send`
        by hand)."""
        if self._open is not None:
            raise MissingReply(f"the session ended without an answer to request {self._open.id}")

    def recv(self) -> bytes:
        if not self._hello_seen:
            raise OutOfTurn("the bot waits for the referee before saying hello")
        if self._open is not None:
            raise MissingReply(f"the bot reads on without answering request {self._open.id}")
        if self._over:
            raise OutOfTurn("the bot reads on after the session ended (bye or refused)")
        frame = self._next_frame()
        self.delivered.append(frame)
        self._note_sent(frame)
        return frame

    def send(self, frame: bytes, /) -> None:
        try:
            message = codec.decode_bot_message(frame)
        except codec.ProtocolViolation as violation:
            raise MalformedMessage(f"the referee rejects the bot's message: {violation}") from violation
        if isinstance(message, codec.Hello):
            self._take_hello(message)
        else:
            self._take_action(message)
        self.received.append(message)

    def _next_frame(self) -> bytes:
        if self._next_item == len(self._script):
            return codec.BYE_FRAME
        item = self._script[self._next_item]
        self._next_item += 1
        if isinstance(item, Decision):
            return self._encode_decision(item)
        if isinstance(item, bytes):
            return item
        if item.get("type") == codec.GAME_START:
            self._logs = LogSender(self._log_keys)
        return codec.encode(dict(item))

    def _encode_decision(self, decision: Decision) -> bytes:
        observation = dict(decision.observation)
        log_from = self._logs.trim(observation) if self._log_keys else None
        return codec.encode_request(
            self._next_id,
            observation,
            list(decision.legal_actions),
            decision.time_left_ms,
            decision.bank_left_ms,
            log_from,
        )

    def _note_sent(self, frame: bytes) -> None:
        """Open a request for every request frame, and end the session at bye or refused: as the bot sees them."""
        try:
            message = _decode_sent(frame)
        except msgspec.DecodeError:
            return
        kind = message.get("type") if isinstance(message, dict) else None
        if kind == codec.REQUEST:
            request_id, legal = message.get("id"), message.get("legal_actions")
            if type(request_id) is int:
                self._open = _OpenRequest(request_id, legal if type(legal) is list else [])
                self._next_id = max(self._next_id, request_id + 1)
        elif kind in (codec.BYE, codec.REFUSED):
            self._over = True

    def _take_hello(self, hello: codec.Hello) -> None:
        if self._hello_seen:
            raise OutOfTurn("the bot said hello twice")
        if hello.protocol != limits.PROTOCOL_VERSION:
            raise MalformedMessage(
                f"the bot says protocol {hello.protocol}, the referee speaks {limits.PROTOCOL_VERSION}"
            )
        self._hello_seen = True

    def _take_action(self, reply: codec.ActionReply) -> None:
        if not self._hello_seen:
            raise OutOfTurn("the bot sent an action before saying hello")
        open_request = self._open
        if open_request is None:
            raise OutOfTurn(f"the bot answered request {reply.id}, but no request is open")
        if reply.id != open_request.id:
            raise WrongRequestId(f"the bot answered request {reply.id}, but the open request is {open_request.id}")
        if not any(_same(reply.action, legal) for legal in open_request.legal_actions):
            raise ActionNotLegal(
                f"the bot answered request {reply.id} with {reply.action!r:.200}, which is not among its "
                f"{len(open_request.legal_actions)} legal actions"
            )
        self._open = None


def play_script(
    bot: Bot | DecisionFunction,
    script: Iterable[ScriptItem],
    *,
    log_keys: Sequence[str] = (),
    name: str = "scripted",
    **options: Any,
) -> list[codec.BotMessage]:
    """Run `bot` through `script` with the SDK's loop; return what it sent (its hello, then its actions).

    `options` go to `run_session` (token, arrays_as_tuples). Raises a `ContractBreach` when the bot breaks the
    protocol, and whatever the bot raises."""
    referee = ScriptedReferee(script, log_keys=log_keys)
    referee.run(bot, name, **options)
    return referee.received

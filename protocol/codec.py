"""Encoding referee messages and decoding bot messages of protocol v1, with every limit enforced.

A bot frame is checked for size before a byte of it is decoded, decoded by msgpack with length limits,
walked once for nesting depth and plain types (no ext types, no timestamps, no floats in keys), and then
validated into a small frozen dataclass. Anything wrong raises a ProtocolViolation subclass that says what.
The common reply, a flat action in a frame too short to hold anything over a limit, is decoded by msgspec and
given the same checks (`_short_action_reply`); whatever that path does not accept takes the full one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgpack
import msgspec

from protocol.errors import BotFault

from . import limits
from .logs import LOG_FROM

# Messages a bot may send.
HELLO = "hello"
ACTION = "action"

# Messages the referee sends.
WELCOME = "welcome"
GAME_START = "game_start"
REQUEST = "request"
GAME_OVER = "game_over"
BYE = "bye"
REFUSED = "refused"


class ProtocolViolation(BotFault, ValueError):
    """A bot message that breaks protocol v1."""


class MessageTooLarge(ProtocolViolation):
    """A frame over MAX_MESSAGE_BYTES (never decoded)."""


class Undecodable(ProtocolViolation):
    """Bytes that are not exactly one msgpack value within the limits."""


class SchemaError(ProtocolViolation):
    """A decoded message that is not a well-formed bot message."""


@dataclass(frozen=True, slots=True)
class Hello:
    protocol: int
    token: str
    name: str
    version: str | None


@dataclass(frozen=True, slots=True)
class ActionReply:
    id: int
    action: dict[str, Any]


BotMessage = Hello | ActionReply

_HELLO_KEYS = frozenset({"type", "protocol", "token", "name", "version"})
_ACTION_KEYS = frozenset({"type", "id", "action"})
_SCALARS = (str, int, bool, float, type(None))
_FLAT_SCALARS = frozenset(_SCALARS)


def _reject_ext(code: int, data: bytes) -> Any:
    raise Undecodable(f"msgpack ext type {code} is not allowed")


def _check_tree(value: Any, depth: int) -> None:
    """Nesting at most MAX_DEPTH, plain types only, string keys only."""
    kind = type(value)
    if kind is dict:
        if depth >= limits.MAX_DEPTH:
            raise Undecodable(f"nesting deeper than {limits.MAX_DEPTH}")
        for key, item in value.items():
            if type(key) is not str:
                raise Undecodable(f"map keys must be strings, not {type(key).__name__}")
            if type(item) in (dict, list):
                _check_tree(item, depth + 1)
            elif not isinstance(item, _SCALARS):
                raise Undecodable(f"value of type {type(item).__name__} is not allowed")
    elif kind is list:
        if depth >= limits.MAX_DEPTH:
            raise Undecodable(f"nesting deeper than {limits.MAX_DEPTH}")
        for item in value:
            if type(item) in (dict, list):
                _check_tree(item, depth + 1)
            elif not isinstance(item, _SCALARS):
                raise Undecodable(f"value of type {type(item).__name__} is not allowed")
    elif not isinstance(value, _SCALARS):
        raise Undecodable(f"value of type {kind.__name__} is not allowed")


def _is_flat_action_reply(value: Any) -> bool:
    """The common reply, {"type", "id", "action": {str: scalar}}: depth 2, string keys, plain scalars, so it
    passes _check_tree; seen without walking it. Anything else (Scauver's list-valued actions included) is
    walked in full."""
    if type(value) is not dict or len(value) != 3 or type(value.get("id")) is not int or "type" not in value:
        return False
    action = value.get("action")
    if type(action) is not dict:
        return False
    for key, item in action.items():
        if type(key) is not str or type(item) not in _FLAT_SCALARS:
            return False
    return type(value["type"]) in _FLAT_SCALARS


def decode_value(frame: bytes) -> Any:
    """One msgpack value from a bot frame, within every limit of protocol/limits.py."""
    if len(frame) > limits.MAX_MESSAGE_BYTES:
        raise MessageTooLarge(f"a message of {len(frame)} bytes is over the limit of {limits.MAX_MESSAGE_BYTES}")
    try:
        value = msgpack.unpackb(
            frame,
            raw=False,
            strict_map_key=True,
            ext_hook=_reject_ext,
            timestamp=0,
            max_str_len=limits.MAX_STRING_BYTES,
            max_bin_len=limits.MAX_STRING_BYTES,
            max_array_len=limits.MAX_CONTAINER_LEN,
            max_map_len=limits.MAX_CONTAINER_LEN,
            max_ext_len=0,
        )
    except Undecodable:
        raise
    except (ValueError, TypeError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError) as error:
        raise Undecodable(f"not one msgpack value within the limits: {error or type(error).__name__}") from None
    except RecursionError:
        raise Undecodable("nesting too deep") from None
    if not _is_flat_action_reply(value):
        _check_tree(value, 0)
    return value


def _require(message: dict[str, Any], key: str, kind: type, what: str) -> Any:
    value = message.get(key)
    if type(value) is not kind:
        raise SchemaError(f"{what} needs {key!r} of type {kind.__name__}, got {value!r:.80}")
    return value


def _check_keys(message: dict[str, Any], allowed: frozenset[str], what: str) -> None:
    if not allowed.issuperset(message):
        extra = sorted(set(message) - allowed)
        raise SchemaError(f"{what} has unknown keys {extra!r:.120}")


def parse_hello(message: dict[str, Any]) -> Hello:
    _check_keys(message, _HELLO_KEYS, "hello")
    protocol = _require(message, "protocol", int, "hello")
    token = _require(message, "token", str, "hello")
    name = _require(message, "name", str, "hello")
    version = message.get("version")
    if version is not None and type(version) is not str:
        raise SchemaError(f"hello 'version' must be a string, got {version!r:.80}")
    if len(name) > limits.MAX_NAME_CHARS or (version is not None and len(version) > limits.MAX_NAME_CHARS):
        raise SchemaError(f"hello 'name' and 'version' are at most {limits.MAX_NAME_CHARS} characters")
    return Hello(protocol, token, name, version)


def parse_action(message: dict[str, Any]) -> ActionReply:
    if len(message) != 3:
        _check_keys(message, _ACTION_KEYS, "action")
    request_id = message.get("id")
    action = message.get("action")
    if type(request_id) is not int or type(action) is not dict:
        _require(message, "id", int, "action")
        _require(message, "action", dict, "action")
    return ActionReply(request_id, action)  # type: ignore[arg-type]


_decode_unchecked = msgspec.msgpack.Decoder().decode
"""msgspec's decoder, without the limits: used only on frames too short to break any of them."""

_SHORT_FRAME_BYTES = min(limits.MAX_STRING_BYTES, limits.MAX_CONTAINER_LEN)
"""No string or container in a frame this short can be over its limit, and no depth beyond MAX_DEPTH passes
the flat reply's check."""


def _short_action_reply(frame: bytes) -> ActionReply | None:
    """The common reply from a short frame, decoded by msgspec without the limits' pass, or None for anything
    else, which then takes the full path and its precise errors. What it accepts is exactly what the full path
    accepts as a flat action reply, with the same values."""
    if len(frame) > _SHORT_FRAME_BYTES:
        return None
    try:
        value = _decode_unchecked(frame)
    except (msgspec.DecodeError, RecursionError):
        return None
    if _is_flat_action_reply(value) and value["type"] == ACTION:
        return ActionReply(value["id"], value["action"])
    return None


def decode_bot_message(frame: bytes) -> BotMessage:
    """A validated bot message, or a ProtocolViolation that says what is wrong with it."""
    reply = _short_action_reply(frame)
    if reply is not None:
        return reply
    message = decode_value(frame)
    if type(message) is not dict:
        raise SchemaError(f"a message is a map, not {type(message).__name__}")
    kind = message.get("type")
    if kind == ACTION:
        return parse_action(message)
    if kind == HELLO:
        return parse_hello(message)
    if type(kind) is not str:
        raise SchemaError("a message needs a string 'type'")
    raise SchemaError(f"bots do not send messages of type {kind!r:.40}")


_encode = msgspec.msgpack.Encoder().encode
"""msgspec packs the referee's messages (strings as str, never bin) three times as fast as msgpack."""


def encode(message: dict[str, Any]) -> bytes:
    """One referee message as one frame."""
    return _encode(message)


def encode_request(
    request_id: int,
    observation: dict[str, Any],
    legal_actions: Sequence[Any],
    time_left_ms: int,
    bank_left_ms: int,
    log_from: dict[str, int] | None = None,
) -> bytes:
    """A request; `log_from` (protocol/logs.py) when the observation's logs are deltas."""
    request = {
        "type": REQUEST,
        "id": request_id,
        "observation": observation,
        "legal_actions": legal_actions,
        "time_left_ms": time_left_ms,
        "bank_left_ms": bank_left_ms,
    }
    if log_from is not None:
        request[LOG_FROM] = log_from
    return _encode(request)


def welcome(move_time_ms: int, time_bank_ms: int, startup_time_s: float) -> dict[str, Any]:
    return {
        "type": WELCOME,
        "protocol": limits.PROTOCOL_VERSION,
        "seat_token_ok": True,
        "limits": {
            "move_time_ms": move_time_ms,
            "time_bank_ms": time_bank_ms,
            "startup_time_s": startup_time_s,
            "max_message_bytes": limits.MAX_MESSAGE_BYTES,
            "max_depth": limits.MAX_DEPTH,
            "max_container_len": limits.MAX_CONTAINER_LEN,
            "max_string_bytes": limits.MAX_STRING_BYTES,
        },
    }


def game_start(game: str, seat: int, players: int, config: dict[str, Any], match_id: str, game_index: int) -> dict:
    return {
        "type": GAME_START,
        "game": game,
        "seat": seat,
        "players": players,
        "config": config,
        "match_id": match_id,
        "game_index": game_index,
    }


def game_over(result: dict[str, Any], seat: int) -> dict[str, Any]:
    return {"type": GAME_OVER, "result": result, "seat": seat}


def refused(reason: str) -> dict[str, Any]:
    return {"type": REFUSED, "reason": reason}


BYE_FRAME = msgpack.packb({"type": BYE}, use_bin_type=True)

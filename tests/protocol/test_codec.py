"""The codec decodes only well-formed bot messages within every limit, and says precisely what is wrong."""

from __future__ import annotations

import contextlib

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import codec, limits


def pack(value: object) -> bytes:
    return msgpack.packb(value, use_bin_type=True)


def nested(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


GOOD_HELLO = {"type": "hello", "protocol": 1, "token": "abc", "name": "bot", "version": "2"}
GOOD_ACTION = {"type": "action", "id": 7, "action": {"kind": "show", "start": 0, "length": 2}}


def test_a_good_hello_and_action_decode_into_dataclasses() -> None:
    assert codec.decode_bot_message(pack(GOOD_HELLO)) == codec.Hello(1, "abc", "bot", "2")
    hello = {key: value for key, value in GOOD_HELLO.items() if key != "version"}
    assert codec.decode_bot_message(pack(hello)).version is None
    assert codec.decode_bot_message(pack(GOOD_ACTION)) == codec.ActionReply(7, GOOD_ACTION["action"])


BAD_FRAMES = {
    "not msgpack": (b"\xc1 junk", codec.Undecodable),
    "trailing bytes": (pack(GOOD_ACTION) + b"\x00", codec.Undecodable),
    "truncated": (pack(GOOD_ACTION)[:-3], codec.Undecodable),
    "too large": (b"\x00" * (limits.MAX_MESSAGE_BYTES + 1), codec.MessageTooLarge),
    "too deep": (
        pack({"type": "action", "id": 1, "action": {"kind": "x", "v": nested(limits.MAX_DEPTH)}}),
        codec.Undecodable,
    ),
    "long array": (
        pack({"type": "action", "id": 1, "action": {"kind": "x", "v": [0] * (limits.MAX_CONTAINER_LEN + 1)}}),
        codec.Undecodable,
    ),
    "long map": (
        pack({"type": "action", "id": 1, "action": {str(i): i for i in range(limits.MAX_CONTAINER_LEN + 1)}}),
        codec.Undecodable,
    ),
    "long string": (
        pack({"type": "action", "id": 1, "action": {"kind": "x" * (limits.MAX_STRING_BYTES + 1)}}),
        codec.Undecodable,
    ),
    "long binary": (
        pack({"type": "action", "id": 1, "action": {"kind": b"x" * (limits.MAX_STRING_BYTES + 1)}}),
        codec.Undecodable,
    ),
    "ext type": (pack(msgpack.ExtType(5, b"abc")), codec.Undecodable),
    "timestamp": (pack(msgpack.Timestamp(1, 0)), codec.Undecodable),
    "integer key": (pack({1: 2}), codec.Undecodable),
    "binary value": (pack({"type": "action", "id": 1, "action": {"kind": b"x"}}), codec.Undecodable),
    "invalid utf-8": (b"\x81\xa4type\xa2\xff\xfe", codec.Undecodable),
    "not a map": (pack([1, 2]), codec.SchemaError),
    "no type": (pack({"id": 1, "action": {}}), codec.SchemaError),
    "type not a string": (pack({"type": 3}), codec.SchemaError),
    "referee type": (pack({"type": "request", "id": 1}), codec.SchemaError),
    "id is a bool": (pack({"type": "action", "id": True, "action": {}}), codec.SchemaError),
    "id missing": (pack({"type": "action", "action": {}}), codec.SchemaError),
    "action not a map": (pack({"type": "action", "id": 1, "action": [1]}), codec.SchemaError),
    "action extra key": (pack({**GOOD_ACTION, "junk": 1}), codec.SchemaError),
    "hello without token": (pack({"type": "hello", "protocol": 1, "name": "b"}), codec.SchemaError),
    "hello protocol a string": (pack({**GOOD_HELLO, "protocol": "1"}), codec.SchemaError),
    "hello name too long": (pack({**GOOD_HELLO, "name": "n" * (limits.MAX_NAME_CHARS + 1)}), codec.SchemaError),
    "hello extra key": (pack({**GOOD_HELLO, "seat": 0}), codec.SchemaError),
}


@pytest.mark.parametrize("frame, error", list(BAD_FRAMES.values()), ids=list(BAD_FRAMES))
def test_bad_frames_raise_precise_violations(frame: bytes, error: type[codec.ProtocolViolation]) -> None:
    with pytest.raises(error) as raised:
        codec.decode_bot_message(frame)
    assert isinstance(raised.value, ValueError)
    assert str(raised.value)


def test_the_deepest_allowed_nesting_decodes() -> None:
    action = {"kind": "x", "v": nested(limits.MAX_DEPTH - 2)}
    assert codec.decode_bot_message(pack({"type": "action", "id": 1, "action": action})).action == action


def test_referee_messages_round_trip_through_msgpack() -> None:
    frame = codec.encode_request(3, {"hand": [[1, 2]]}, [{"kind": "orient", "flip": False}], 1000, 0)
    assert msgpack.unpackb(frame) == {
        "type": "request",
        "id": 3,
        "observation": {"hand": [[1, 2]]},
        "legal_actions": [{"kind": "orient", "flip": False}],
        "time_left_ms": 1000,
        "bank_left_ms": 0,
    }
    welcome = msgpack.unpackb(codec.encode(codec.welcome(500, 100, 2.0)))
    assert welcome["limits"]["max_message_bytes"] == limits.MAX_MESSAGE_BYTES
    assert msgpack.unpackb(codec.BYE_FRAME) == {"type": "bye"}


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=512))
def test_arbitrary_bytes_never_escape_as_anything_but_a_violation(frame: bytes) -> None:
    with contextlib.suppress(codec.ProtocolViolation):
        codec.decode_bot_message(frame)


json_like = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(json_like)
def test_any_packed_value_decodes_or_is_a_violation(value: object) -> None:
    with contextlib.suppress(codec.ProtocolViolation):
        codec.decode_bot_message(pack(value))


def _through_the_limits(frame: bytes) -> object:
    """What the decoder made of a frame before its short-frame path: msgpack within every limit, then the
    message's schema; the outcome is the message or the kind of violation."""
    try:
        message = codec.decode_value(frame)
        if type(message) is dict and message.get("type") == codec.ACTION:
            return codec.parse_action(message)
        return type(codec.decode_bot_message(frame))
    except codec.ProtocolViolation as error:
        return type(error)


def _outcome(frame: bytes) -> object:
    try:
        message = codec.decode_bot_message(frame)
    except codec.ProtocolViolation as error:
        return type(error)
    return message if type(message) is codec.ActionReply else type(message)


scalar = st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats() | st.text(max_size=8)
scalar |= st.binary(max_size=4)
action_like = st.dictionaries(st.text(max_size=6) | st.integers(0, 3), scalar | st.lists(scalar), max_size=4)
reply_like = st.fixed_dictionaries(
    {"type": st.sampled_from(["action", "hello", "actio", 3]), "id": st.integers(-3, 2**64 - 1) | st.booleans()},
    optional={"action": action_like},
)


@settings(max_examples=400, deadline=None)
@given(reply_like, st.binary(max_size=2))
def test_short_replies_decode_exactly_as_through_the_limits(value: dict, tail: bytes) -> None:
    for frame in (pack(value), pack(value) + tail, pack(value)[:-1]):
        assert _outcome(frame) == _through_the_limits(frame)


@pytest.mark.parametrize("frame", [b"\x91" * 1023 + b"\xc0", b"\xdd\xff\xff\xff\xff", pack(msgpack.Timestamp(1, 0))])
def test_hostile_short_frames_are_violations_on_the_short_path(frame: bytes) -> None:
    with pytest.raises(codec.Undecodable):
        codec.decode_bot_message(frame)

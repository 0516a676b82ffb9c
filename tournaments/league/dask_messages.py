"""What a Dask worker sends the organiser, as plain data: the worker's side (the tasks, which encode) and the
organiser's (decode, which checks).

Every message is one msgpack array of plain values, put as bytes on the worker's own distributed Queue:

    ["probe", ISOLATION]             the worker's isolation level (referee.isolation.sandbox.probe), before any match
    ["game", RECORD]                 a finished game (referee.record_data: the record as plain data)
    ["done", MATCH_ID]               a match played to its end
    ["failed", MATCH_ID, WHY]        a match whose runner raised, with the error in words

The organiser decodes each with msgpack alone (no extension types, bounded sizes) and checks its shape and
every field (`decode`); nothing a worker sends is unpickled, so a worker that sends junk is an error naming it,
never code run in the organiser's process. The tasks themselves (functions and match specs) travel the other
way pickled by Dask: that is the organiser's own code going out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import msgpack

from protocol.errors import BadInput
from referee.isolation.sandbox import Isolation, probe
from referee.records import GameRecord, MatchRecord, MatchSpec
from referee.wire.open_files import raise_open_files_limit

from .record_data import RecordDataError, record_from_data, record_to_data

MAX_MESSAGE_BYTES = 64 << 20
"""A game record with every fault's output is well under a megabyte; anything larger is refused unread."""


class MessageError(BadInput, ValueError):
    """Bytes from a worker that are not one of its messages."""


@dataclass(frozen=True)
class Probe:
    isolation: Isolation


@dataclass(frozen=True)
class Game:
    record: GameRecord


@dataclass(frozen=True)
class Done:
    match_id: str


@dataclass(frozen=True)
class Failed:
    match_id: str
    error: str


Message = Probe | Game | Done | Failed


def encode(*message: Any) -> bytes:
    return bytes(msgpack.packb(list(message), use_bin_type=True))


def decode(payload: object) -> Message:
    """The message in `payload`, checked; MessageError saying what is wrong with anything else."""
    if not isinstance(payload, bytes):
        raise MessageError(f"a {type(payload).__name__} instead of the bytes of a message")
    if len(payload) > MAX_MESSAGE_BYTES:
        raise MessageError(f"a message of {len(payload):,} bytes (at most {MAX_MESSAGE_BYTES:,})")
    try:
        value = msgpack.unpackb(payload, raw=False, strict_map_key=True, use_list=True, ext_hook=_no_extension)
    except (ValueError, TypeError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError) as error:
        raise MessageError(f"bytes that are not plain msgpack ({type(error).__name__}: {error})") from None
    if not isinstance(value, list) or not value or not isinstance(value[0], str):
        raise MessageError(f"a {type(value).__name__} instead of a message [kind, ...]")
    return _message(value[0], value[1:])


def _no_extension(code: int, data: bytes) -> object:
    raise ValueError(f"an extension type ({code})")


def _message(kind: str, fields: list[Any]) -> Message:
    shapes: Mapping[str, int] = {"probe": 1, "game": 1, "done": 1, "failed": 2}
    if shapes.get(kind) != len(fields):
        raise MessageError(f"a message of kind {kind[:40]!r} with {len(fields)} field(s)")
    try:
        if kind == "game":
            return Game(record_from_data(fields[0]))
        if kind == "probe":
            return Probe(Isolation(fields[0]))
    except (RecordDataError, ValueError) as error:
        raise MessageError(f"a {kind} message that does not hold one: {error}") from None
    if not all(isinstance(field, str) and len(field) <= 1 << 16 for field in fields):
        raise MessageError(f"a {kind} message whose fields are not short strings")
    return Done(fields[0]) if kind == "done" else Failed(fields[0], fields[1])


def probe_isolation() -> str:
    """This machine's isolation level for bots (what `referee doctor` reports)."""
    return probe().isolation.value


def probe_on_dask_worker(queues: Mapping[str, str], prober: Callable[[], str]) -> None:
    """A Dask task: report this worker's isolation on its queue."""
    _put(queues, encode("probe", prober()))


def play_on_dask_worker(spec: MatchSpec, queues: Mapping[str, str], runner: Callable[..., MatchRecord]) -> None:
    """A Dask task: play one match, putting each game's record (as plain data) on this worker's queue as it
    ends, then `done`, or `failed` with the error in words. It never raises, so no pickled exception is ever
    waiting for the organiser to read."""
    raise_open_files_limit()
    try:
        runner(spec, on_game=lambda record: _put(queues, encode("game", record_to_data(record))))
    except Exception as error:
        _put(queues, encode("failed", spec.match_id, f"{type(error).__name__}: {error}"))
        return
    _put(queues, encode("done", spec.match_id))


def _put(queues: Mapping[str, str], payload: bytes) -> None:
    import distributed

    worker = distributed.get_worker()
    distributed.Queue(name=queues[worker.address], client=distributed.get_client()).put(payload)

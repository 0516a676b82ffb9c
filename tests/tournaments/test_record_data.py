"""A game record as plain data (tournaments.league.record_data) and the Dask workers' messages
(tournaments.league.dask_messages): every record comes back equal, and anything else is refused with what is
wrong, never built into an object."""

from __future__ import annotations

import json

import msgpack
import pytest

from referee.isolation.sandbox import Isolation
from referee.records import Fault, FaultCause, FaultFacts, GameRecord, MemoryHit, SeatTiming, Stage
from tournaments.league.dask_messages import Done, Failed, Game, MessageError, Probe, decode, encode
from tournaments.league.record_data import RecordDataError, record_from_data, record_to_data

RECORD = GameRecord(
    match_id="m-1",
    index=3,
    game="scout",
    seed=2**62 + 5,
    seats=("ann", "bob", "cy"),
    ranks=(2, 1, 3),
    scores=(4, 9, -2),
    faults=(
        Fault(2, "cy", FaultCause.EXITED, FaultFacts(exit_status=1, stage=Stage.GAME, game=3, output=("boom",))),
        Fault(2, "cy", FaultCause.MEMORY_LIMIT, FaultFacts(memory=MemoryHit.KILLED, memory_mb=512), None, 7),
        Fault(0, "ann", FaultCause.ILLEGAL_ACTION, FaultFacts(request_id=4, note="no such card"), '{"kind": "x"}'),
    ),
    timings=(SeatTiming(10, 1.5, 3.0), SeatTiming(9, 2.0, 4.25), SeatTiming(2, 0.5, 0.5)),
    replay_path="/tmp/replays/m-1-3.json",
    forfeited=(False, False, True),
    isolation=Isolation.PARTIAL,
)


def test_a_record_comes_back_equal_through_json_and_msgpack() -> None:
    data = record_to_data(RECORD)
    assert record_from_data(json.loads(json.dumps(data))) == RECORD
    assert record_from_data(msgpack.unpackb(msgpack.packb(data))) == RECORD
    assert decode(encode("game", data)) == Game(RECORD)


def spoiled(**changes: object) -> dict:
    data = record_to_data(RECORD)
    data.update(changes)
    return data


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ("a string", "the record is a str"),
        (spoiled(seats="ann"), "seats is a str"),
        (spoiled(ranks=[1, 2]), "differ in length"),
        (spoiled(ranks=[1, 2, 9]), "are not ranks of 3 seats"),
        (spoiled(ranks=[1, True, 3]), "a rank is a bool"),
        (spoiled(index="3"), "index is a str"),
        (spoiled(isolation="root"), "isolation 'root' is not one of"),
        (spoiled(faults=[{"seat": 7, "bot": "x", "cause": "exited", "facts": {}}]), "seat 7 is not one of 3"),
        (spoiled(faults=[{"seat": 0, "bot": "x", "cause": "rm -rf", "facts": {}}]), "cause 'rm -rf' is not one of"),
        (spoiled(faults=[{"seat": 0, "bot": "x", "cause": "exited", "facts": {"__class__": 1}}]), "unknown field"),
        (spoiled(faults=[{"seat": 0, "bot": "x", "cause": "exited", "facts": {"memory": "lots"}}]), "not facts"),
        (spoiled(timings=[[1, 2]]), "not [decisions, mean_ms, max_ms]"),
        (spoiled(game="x" * 70000), "game is a str, not a string of at most"),
    ],
)
def test_anything_else_is_refused_saying_what(data: object, says: str) -> None:
    with pytest.raises(RecordDataError) as raised:
        record_from_data(data)
    assert says in str(raised.value)


def test_nothing_in_the_data_is_looked_up_by_name() -> None:
    """A map with a type's name or a pickle opcode in a string stays a string, and a wrong field is refused."""
    record = record_from_data(spoiled(match_id="__import__('os').system('x')", game="cos\nsystem\n"))
    assert record.match_id == "__import__('os').system('x')" and record.game == "cos\nsystem\n"
    with pytest.raises(RecordDataError):
        record_from_data(spoiled(replay_path={"py/object": "os.system"}))


def test_messages_decode_to_their_kinds_and_junk_does_not() -> None:
    assert decode(encode("probe", "full")) == Probe(Isolation.FULL)
    assert decode(encode("done", "m-1")) == Done("m-1")
    assert decode(encode("failed", "m-1", "OSError: disk full")) == Failed("m-1", "OSError: disk full")
    for junk, says in [
        ("text", "a str instead of the bytes"),
        (b"\xc1", "not plain msgpack"),
        (msgpack.packb({"kind": "game"}), "a dict instead of a message"),
        (msgpack.packb(["done"]), "'done' with 0 field"),
        (msgpack.packb(["exec", "code"]), "'exec' with 1 field"),
        (msgpack.packb(["probe", "root"]), "a probe message that does not hold one"),
        (msgpack.packb(["done", 5]), "not short strings"),
        (msgpack.packb(["game", {}]) + b"\x00", "not plain msgpack"),
        (msgpack.ExtType(1, b"x"), "ExtType instead of the bytes"),
        (msgpack.packb(["done", msgpack.ExtType(1, b"x")]), "not plain msgpack (ValueError: an extension type (1))"),
    ]:
        with pytest.raises(MessageError) as raised:
            decode(junk)
        assert says in str(raised.value), junk

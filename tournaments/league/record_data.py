"""A game's record as plain data and back, with a schema check: what a record is when it travels between
machines (the Dask executor's workers send records this way), so that the organiser's process decodes data,
never objects.

    data = record_to_data(record)       # dicts, lists, strings, numbers, booleans and None only
    record = record_from_data(data)     # RecordDataError for anything that is not such a record

`record_from_data` checks every field's type and shape (seats, ranks and scores of one length, ranks in range,
every enum value known) and builds the record from the checked values only: nothing in the data is called,
imported or looked up by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from protocol.errors import BadInput
from referee.isolation.sandbox import Isolation
from referee.records import Fault, FaultCause, FaultFacts, GameRecord, SeatTiming

MAX_SEATS = 16
MAX_TEXT = 1 << 16
"""Characters in one string of a record (a fault's note or output line)."""
MAX_ITEMS = 4096
"""Entries in one list of a record (faults, output lines)."""


class RecordDataError(BadInput, ValueError):
    """Data that is not a game record (record_from_data)."""


def record_to_data(record: GameRecord) -> dict[str, Any]:
    return {
        "match_id": record.match_id,
        "index": record.index,
        "game": record.game,
        "seed": record.seed,
        "seats": list(record.seats),
        "ranks": list(record.ranks),
        "scores": list(record.scores),
        "faults": [_fault_to_data(fault) for fault in record.faults],
        "timings": [[timing.decisions, timing.mean_ms, timing.max_ms] for timing in record.timings],
        "replay_path": record.replay_path,
        "forfeited": list(record.forfeited),
        "isolation": record.isolation.value,
    }


def _fault_to_data(fault: Fault) -> dict[str, Any]:
    return {
        "seat": fault.seat,
        "bot": fault.bot,
        "cause": fault.cause.value,
        "facts": fault.facts.to_json(),
        "sent": fault.sent,
        "before_action": fault.before_action,
    }


def record_from_data(data: object) -> GameRecord:
    """The record `record_to_data` made; RecordDataError saying what is wrong with anything else."""
    fields = _mapping(data, "the record")
    seats = tuple(_text(name, "a seat's bot") for name in _list(fields, "seats"))
    if not 1 <= len(seats) <= MAX_SEATS:
        raise RecordDataError(f"a record has {len(seats)} seats")
    ranks = tuple(_integer(rank, "a rank") for rank in _list(fields, "ranks"))
    scores = tuple(_integer(score, "a score") for score in _list(fields, "scores"))
    forfeited = tuple(_boolean(value, "forfeited") for value in _list(fields, "forfeited"))
    if len(ranks) != len(seats) or len(scores) != len(seats) or len(forfeited) not in (0, len(seats)):
        raise RecordDataError("a record's seats, ranks, scores and forfeits differ in length")
    if not all(1 <= rank <= len(seats) for rank in ranks):
        raise RecordDataError(f"a record's ranks {list(ranks)} are not ranks of {len(seats)} seats")
    return GameRecord(
        match_id=_text(fields.get("match_id"), "match_id"),
        index=_integer(fields.get("index"), "index"),
        game=_text(fields.get("game"), "game"),
        seed=_integer(fields.get("seed"), "seed"),
        seats=seats,
        ranks=ranks,
        scores=scores,
        faults=tuple(_fault(fault, len(seats)) for fault in _list(fields, "faults")),
        timings=tuple(_timing(timing) for timing in _list(fields, "timings")),
        replay_path=_optional(fields.get("replay_path"), _text, "replay_path"),
        forfeited=forfeited,
        isolation=_enum(Isolation, fields.get("isolation"), "isolation"),
    )


def _fault(data: object, seats: int) -> Fault:
    fields = _mapping(data, "a fault")
    seat = _integer(fields.get("seat"), "a fault's seat")
    if not 0 <= seat < seats:
        raise RecordDataError(f"a fault's seat {seat} is not one of {seats}")
    return Fault(
        seat=seat,
        bot=_text(fields.get("bot"), "a fault's bot"),
        cause=_enum(FaultCause, fields.get("cause"), "a fault's cause"),
        facts=_facts(fields.get("facts")),
        sent=_optional(fields.get("sent"), _text, "a fault's sent action"),
        before_action=_optional(fields.get("before_action"), _integer, "a fault's before_action"),
    )


_FACT_TYPES: dict[str, tuple[type, ...]] = {
    "request_id": (int,),
    "allowed_ms": (int,),
    "answered_ms": (int, float),
    "other_replies": (int,),
    "other_id": (int,),
    "startup_s": (int, float),
    "count": (int,),
    "most": (int,),
    "exit_status": (int,),
    "signal": (int,),
    "memory": (str,),
    "memory_mb": (int,),
    "stage": (str,),
    "game": (int,),
    "victim": (str,),
    "not_running": (bool,),
    "note": (str,),
}


def _facts(data: object) -> FaultFacts:
    fields = _mapping(data, "a fault's facts")
    for name, value in fields.items():
        if name == "output":
            for line in _list(fields, "output"):
                _text(line, "a fault's output line")
        elif name not in _FACT_TYPES:
            raise RecordDataError(f"a fault's facts have an unknown field {name!r}")
        elif value is not None and (
            not isinstance(value, _FACT_TYPES[name]) or (isinstance(value, bool) and bool not in _FACT_TYPES[name])
        ):
            raise RecordDataError(f"a fault's fact {name!r} is a {type(value).__name__}")
        elif isinstance(value, str):
            _text(value, f"a fault's fact {name!r}")
    try:
        return FaultFacts.from_json(fields)
    except (ValueError, TypeError) as error:
        raise RecordDataError(f"a fault's facts are not facts: {error}") from None


def _timing(data: object) -> SeatTiming:
    if not isinstance(data, list) or len(data) != 3:
        raise RecordDataError("a seat's timing is not [decisions, mean_ms, max_ms]")
    decisions, mean_ms, max_ms = data
    return SeatTiming(_integer(decisions, "decisions"), _number(mean_ms, "mean_ms"), _number(max_ms, "max_ms"))


def _mapping(data: object, what: str) -> Mapping[str, Any]:
    if not isinstance(data, dict) or not all(isinstance(key, str) for key in data):
        raise RecordDataError(f"{what} is a {type(data).__name__}, not a map of names")
    return data


def _list(fields: Mapping[str, Any], name: str) -> list[Any]:
    value = fields.get(name)
    if not isinstance(value, list) or len(value) > MAX_ITEMS:
        raise RecordDataError(f"{name} is a {type(value).__name__}, not a list of at most {MAX_ITEMS}")
    return value


def _text(value: object, what: str) -> str:
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        raise RecordDataError(f"{what} is a {type(value).__name__}, not a string of at most {MAX_TEXT} characters")
    return value


def _integer(value: object, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise RecordDataError(f"{what} is a {type(value).__name__}, not an integer")
    return value


def _number(value: object, what: str) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise RecordDataError(f"{what} is a {type(value).__name__}, not a number")
    return float(value)


def _boolean(value: object, what: str) -> bool:
    if not isinstance(value, bool):
        raise RecordDataError(f"{what} is a {type(value).__name__}, not true or false")
    return value


def _optional(value: object, check: Any, what: str) -> Any:
    return None if value is None else check(value, what)


def _enum(kind: Any, value: object, what: str) -> Any:
    try:
        return kind(_text(value, what))
    except ValueError:
        raise RecordDataError(f"{what} {value!r} is not one of {', '.join(member.value for member in kind)}") from None

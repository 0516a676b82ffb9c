"""What a principal may read, written once: staff read everything; a student reads their own versions, their
own games, their own bot's logs and the replays of games they sat in; a worker and a spectator read none of it.
Another student's name is shown as the table shows it (tournaments.ladder.standings.shown_names), in a replay too:
its seats name students (pseudonyms to students, names to staff) and baselines, never version ids, and another
seat's output and notes are left out of its faults. To anyone but staff, one item (a version, a log, a replay) that
does not exist and one that is not theirs get the same answer (`hidden`, a Forbidden with one message), so a student
is refused another's item and still cannot probe which ids exist."""

from __future__ import annotations

import enum
from collections import defaultdict
from typing import Any

from sqlalchemy import Connection, select

from referee.records import FaultCause, FaultFacts, describe

from . import schema
from .database import utc
from .errors import Forbidden, UnknownItem
from .ladder_file import LadderFile
from .standings import shown_names
from .submissions import version_of
from .values import GameSummary, Principal, Role, RosterRow, Version, VersionDetail, VersionStatus

GAMES_SHOWN = 200
MAX_SEAT = 2**15


class Item(enum.StrEnum):
    """What one per-item read names by its id."""

    VERSION = "version"
    LOG = "log"
    REPLAY = "replay"


def hidden(item: Item, who: Principal | None) -> Forbidden | UnknownItem:
    """The one answer for an item that does not exist and for one the asker may not read: one error, one message
    (no id in it), so that both look alike. Staff may read every item, so to them it can only be missing."""
    message = f"no {item.value} by that id that you may see"
    return UnknownItem(message) if _staff(who) else Forbidden(message)


def may_read(who: Principal | None, student: str | None) -> bool:
    return who is not None and (who.role is Role.STAFF or (who.role is Role.STUDENT and who.name == student))


def may_read_student(who: Principal | None, student: str) -> None:
    if not may_read(who, student):
        raise Forbidden("only the student themselves and staff may see this")


def versions(connection: Connection, student: str) -> list[Version]:
    rows = connection.execute(
        select(schema.versions)
        .where(schema.versions.c.student == student)
        .order_by(schema.versions.c.created.desc(), schema.versions.c.id)
    )
    return [version_of(row) for row in rows]


def version_detail(connection: Connection, who: Principal | None, version_id: str) -> VersionDetail:
    row = connection.execute(select(schema.versions).where(schema.versions.c.id == version_id)).first()
    if row is None or not may_read(who, row.student):
        raise hidden(Item.VERSION, who)
    return VersionDetail(version_of(row), row.verdict, row.check_report, row.build_log)


def student_games(connection: Connection, student: str, names: dict[str, str]) -> list[GameSummary]:
    """The student's latest games, newest first, the other seats named as `names` has them."""
    mine = (
        select(schema.seats.c.game_id)
        .join(schema.games, schema.games.c.id == schema.seats.c.game_id)
        .where(schema.seats.c.student == student)
        .order_by(schema.games.c.stored.desc(), schema.games.c.id)
        .limit(GAMES_SHOWN)
    )
    ids = list(connection.execute(mine).scalars())
    seats: dict[str, list[Any]] = defaultdict(list)
    stored = {}
    query = (
        select(schema.seats, schema.games.c.stored)
        .join(schema.games, schema.games.c.id == schema.seats.c.game_id)
        .where(schema.seats.c.game_id.in_(ids))
        .order_by(schema.seats.c.game_id, schema.seats.c.seat)
    )
    for row in connection.execute(query):
        seats[row.game_id].append(row)
        stored[row.game_id] = utc(row.stored)
    summaries = []
    for game_id in ids:
        rows = seats[game_id]
        my_seat = next((row.seat for row in rows if row.student == student), None)
        shown = tuple(row.entrant if row.student is None else names.get(row.student, "?") for row in rows)
        faults = tuple(rows[my_seat].faults) if my_seat is not None else ()
        summaries.append(GameSummary(game_id, stored[game_id], shown, tuple(row.rank for row in rows), my_seat, faults))
    return summaries


def game_log(connection: Connection, who: Principal | None, game_id: str, seat: int) -> bytes:
    """The output of the bot at `seat` in the game's match: its own student's and staff's to read. A seat past
    MAX_SEAT is answered as a missing log (the database's integers could not even hold some of them)."""
    if not 0 <= seat <= MAX_SEAT:
        raise hidden(Item.LOG, who)
    row = connection.execute(
        select(schema.seats, schema.games.c.job_id)
        .join(schema.games, schema.games.c.id == schema.seats.c.game_id)
        .where(schema.seats.c.game_id == game_id, schema.seats.c.seat == seat)
    ).first()
    if row is None or not may_read(who, row.student):
        raise hidden(Item.LOG, who)
    log = connection.execute(
        select(schema.logs.c.log).where(schema.logs.c.job_id == row.job_id, schema.logs.c.entrant == row.entrant)
    ).scalar()
    return (log or "").encode()


def _staff(who: Principal | None) -> bool:
    return who is not None and who.role is Role.STAFF


def replay(connection: Connection, file: LadderFile, who: Principal | None, game_id: str) -> dict[str, Any]:
    """A finished game's replay, for staff and the students who sat in it, its seats named as the table names
    them (`shown_replay`)."""
    game = connection.execute(select(schema.games.c.replay).where(schema.games.c.id == game_id)).first()
    seats = connection.execute(select(schema.seats).where(schema.seats.c.game_id == game_id)).all()
    if game is None or not (_staff(who) or any(may_read(who, row.student) for row in seats)):
        raise hidden(Item.REPLAY, who)
    names = shown_names(connection, file, who)
    labels = {row.entrant: row.entrant if row.student is None else names.get(row.student, "?") for row in seats}
    own = None if _staff(who) else {row.seat for row in seats if may_read(who, row.student)}
    return shown_replay(dict(game.replay or {}), labels, own)


def shown_replay(replay: dict[str, Any], labels: dict[str, str], own: set[int] | None) -> dict[str, Any]:
    """`replay` with each bot (a version's id or a baseline's name) shown as `labels` has it; the seats not in
    `own` (None: all are) lose their command and log link, and their faults their output and notes."""
    seats = [
        {**entry, "bot": labels.get(entry.get("bot", ""), "?")}
        | ({} if own is None or entry.get("seat") in own else {"command": [], "log": None})
        for entry in replay.get("seats", [])
    ]
    faults = [
        _shown_fault(fault, labels, own is None or fault.get("seat") in own) for fault in replay.get("faults", [])
    ]
    return {**replay, "seats": seats, "faults": faults}


def _shown_fault(fault: dict[str, Any], labels: dict[str, str], open_seat: bool) -> dict[str, Any]:
    """A fault's words made again from its facts once these name bots as shown (a stolen token's victim); a fault
    recorded without its cause keeps only its kind."""
    facts = dict(fault.get("facts") or {})
    if facts.get("victim") is not None:
        facts["victim"] = labels.get(facts["victim"], "another bot")
    if not open_seat:
        facts.pop("output", None)
        facts.pop("note", None)
    cause = str(fault.get("cause", ""))
    known = cause in {item.value for item in FaultCause}
    detail = describe(FaultCause(cause), FaultFacts.from_json(facts)) if known else str(fault.get("kind", "fault"))
    return {**fault, "bot": labels.get(fault.get("bot", ""), "?"), "facts": facts, "detail": detail}


def roster(connection: Connection) -> list[RosterRow]:
    """Every invited student, by name, with their versions."""
    by_student: dict[str, list[Version]] = defaultdict(list)
    for row in connection.execute(select(schema.versions).order_by(schema.versions.c.created, schema.versions.c.id)):
        by_student[row.student].append(version_of(row))
    rows = []
    for student in connection.execute(select(schema.students).order_by(schema.students.c.name)):
        mine = by_student.get(student.name, [])
        accepted = [version.id for version in mine if version.status is VersionStatus.ACCEPTED]
        playing = accepted[-1] if accepted else None
        rows.append(RosterRow(student.name, student.pseudonym, len(mine), mine[-1] if mine else None, playing))
    return rows

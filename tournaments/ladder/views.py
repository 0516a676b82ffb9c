"""What a principal may read, written once: staff read everything; a student reads their own versions, their
own games, their own bot's logs and the replays of games they sat in; a worker and a spectator read none of it.
Another student's name is shown as the table shows it (tournaments.ladder.standings.shown_names)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlalchemy import Connection, select

from . import schema
from .database import utc
from .errors import Forbidden, UnknownItem
from .submissions import version_of
from .values import GameSummary, Principal, Role, RosterRow, Version, VersionDetail, VersionStatus

GAMES_SHOWN = 200


def may_read_student(who: Principal | None, student: str) -> None:
    if who is None or not (who.role is Role.STAFF or (who.role is Role.STUDENT and who.name == student)):
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
    if row is None:
        raise UnknownItem(f"no version {version_id!r}")
    may_read_student(who, row.student)
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


def _seat(connection: Connection, game_id: str, seat: int) -> Any:
    row = connection.execute(
        select(schema.seats, schema.games.c.job_id)
        .join(schema.games, schema.games.c.id == schema.seats.c.game_id)
        .where(schema.seats.c.game_id == game_id, schema.seats.c.seat == seat)
    ).first()
    if row is None:
        raise UnknownItem(f"no seat {seat} in game {game_id!r}")
    return row


def game_log(connection: Connection, who: Principal | None, game_id: str, seat: int) -> bytes:
    """The output of the bot at `seat` in the game's match: its own student's and staff's to read."""
    row = _seat(connection, game_id, seat)
    if who is None or not (
        who.role is Role.STAFF or (row.student is not None and who.name == row.student and who.role is Role.STUDENT)
    ):
        raise Forbidden("a bot's logs are its own student's and the staff's to read")
    log = connection.execute(
        select(schema.logs.c.log).where(schema.logs.c.job_id == row.job_id, schema.logs.c.entrant == row.entrant)
    ).scalar()
    return (log or "").encode()


def replay(connection: Connection, who: Principal | None, game_id: str) -> dict[str, Any]:
    """A finished game's replay: staff, and the students who sat in it."""
    game = connection.execute(select(schema.games.c.replay).where(schema.games.c.id == game_id)).first()
    if game is None:
        raise UnknownItem(f"no game {game_id!r}")
    if who is None or who.role is not Role.STAFF:
        sat = connection.execute(
            select(schema.seats.c.student).where(schema.seats.c.game_id == game_id, schema.seats.c.student.is_not(None))
        ).scalars()
        if who is None or who.role is not Role.STUDENT or who.name not in set(sat):
            raise Forbidden("a game's replay is for the students who sat in it and the staff")
    return dict(game.replay or {})


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

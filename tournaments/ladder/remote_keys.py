"""The students' remote bots: each student may register one CURVE public key (tournaments.ladder.public_keys);
registering again replaces it. A key is an entrant of the open division under an id of its own ("k" + 15 hex,
also the name of its remote seat), so a new key starts a new row of the open table, as a new version does on the
graded one, and queued open matches of the replaced key are dropped (its author can no longer connect with it).

A key is shown only to its own student and staff (views.may_read_student). One key cannot be two students':
registering a key that is another's (or the hosting worker's) is refused in words that name nobody."""

from __future__ import annotations

import hashlib

from sqlalchemy import Connection, delete, insert, select, update

from . import schema
from .database import now, utc
from .errors import BadKey, Forbidden
from .ladder_file import LadderFile
from .public_keys import valid_public_key
from .values import Division, JobKind, JobState, RemoteKey


def entrant_id(student: str, public_key: str) -> str:
    return "k" + hashlib.sha256(f"{student}\0{public_key}".encode()).hexdigest()[:15]


def require_open(file: LadderFile) -> None:
    if not file.open.remote:
        raise Forbidden("this ladder has no open division for remote bots (its ladder file's [open] remote)")


def register_key(connection: Connection, file: LadderFile, student: str, text: object) -> RemoteKey:
    """Register `text` as `student`'s public key, replacing theirs (the caller holds lock_state)."""
    require_open(file)
    key = valid_public_key(text)
    if key is None:
        raise BadKey("not a CURVE public key: give the 40-character Z85 public key of your NAME.key file")
    current = own_key(connection, student)
    if current is not None and current.public_key == key:
        return current
    holder = connection.execute(
        select(schema.remote_keys.c.student).where(schema.remote_keys.c.public_key == key)
    ).scalar()
    if (holder is not None and holder != student) or key == file.open.server_key:
        raise BadKey("that key cannot be registered: make a key pair of your own (`referee keys new NAME`)")
    entrant = entrant_id(student, key)
    values = {"entrant": entrant, "public_key": key, "registered": now()}
    if current is None:
        connection.execute(insert(schema.remote_keys).values(student=student, **values))
    else:
        connection.execute(update(schema.remote_keys).where(schema.remote_keys.c.student == student).values(**values))
        _drop_queued(connection, current.entrant)
    found = own_key(connection, student)
    assert found is not None
    return found


def own_key(connection: Connection, student: str) -> RemoteKey | None:
    row = connection.execute(select(schema.remote_keys).where(schema.remote_keys.c.student == student)).first()
    return None if row is None else RemoteKey(row.student, row.entrant, row.public_key, utc(row.registered))


def _drop_queued(connection: Connection, entrant: str) -> None:
    """Queued (unclaimed) open matches with `entrant` are dropped: its key no longer connects."""
    rows = connection.execute(
        select(schema.jobs.c.id, schema.jobs.c.payload).where(
            schema.jobs.c.kind == JobKind.MATCH.value,
            schema.jobs.c.division == Division.OPEN.value,
            schema.jobs.c.state == JobState.QUEUED.value,
        )
    )
    doomed = [row.id for row in rows if any(seat["name"] == entrant for seat in row.payload["entrants"])]
    if doomed:
        connection.execute(delete(schema.jobs).where(schema.jobs.c.id.in_(doomed)))

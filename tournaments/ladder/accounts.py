"""Who may use the ladder: tokens for staff, workers and students (tournaments.ladder.tokens), students with
their pseudonyms. Re-inviting a student revokes the token they had."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

from sqlalchemy import Connection, insert, select, update

from . import schema
from .database import now
from .errors import LadderFileError, Unauthorised
from .pseudonyms import pseudonym
from .tokens import matches, new_token, token_id
from .values import Principal, Role

NAME_LIMIT = 200


def issue_token(connection: Connection, role: Role, name: str) -> str:
    """A new token for (role, name), revoking the ones it had; returned once, stored hashed."""
    connection.execute(
        update(schema.tokens)
        .where(schema.tokens.c.role == role.value, schema.tokens.c.name == name, schema.tokens.c.revoked.is_(None))
        .values(revoked=now())
    )
    token, identifier, hashed = new_token()
    connection.execute(
        insert(schema.tokens).values(token_id=identifier, role=role.value, name=name, hash=hashed, created=now())
    )
    return token


def authenticate(connection: Connection, token: str) -> Principal:
    identifier = token_id(token)
    row = None
    if identifier is not None:
        row = connection.execute(
            select(schema.tokens).where(schema.tokens.c.token_id == identifier, schema.tokens.c.revoked.is_(None))
        ).first()
    if row is None or not matches(token, row.hash):
        raise Unauthorised("no valid token: give the one `referee ladder invite` printed (it may have been revoked)")
    return Principal(Role(row.role), row.name)


def invite(connection: Connection, secret: str, names: Sequence[str]) -> dict[str, str]:
    """Student name -> a new token (each student added with their pseudonym if new)."""
    tokens = {}
    for name in names:
        if connection.execute(select(schema.students.c.name).where(schema.students.c.name == name)).first() is None:
            connection.execute(
                insert(schema.students).values(name=name, pseudonym=pseudonym(secret, name), created=now())
            )
        tokens[name] = issue_token(connection, Role.STUDENT, name)
    return tokens


def checked_names(names: Sequence[str], roster: Path | None) -> list[str]:
    """The names given and the roster's (its first column, a header `name` skipped), each once, checked."""
    every = [*names, *(roster_names(roster) if roster is not None else [])]
    found: list[str] = []
    for raw in every:
        name = raw.strip()
        if not name or len(name) > NAME_LIMIT or not name.isprintable():
            raise LadderFileError(f"{raw!r} is not a student name (printable, 1 to {NAME_LIMIT} characters)")
        if name not in found:
            found.append(name)
    if not found:
        raise LadderFileError("name at least one student (NAME... or --roster FILE.csv)")
    return found


def roster_names(roster: Path) -> list[str]:
    try:
        with roster.open(newline="", encoding="utf-8-sig") as handle:
            rows = [row for row in csv.reader(handle) if row and row[0].strip()]
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise LadderFileError(f"cannot read the roster {roster}: {error}") from None
    if rows and rows[0][0].strip().lower() in {"name", "student"}:
        rows = rows[1:]
    return [row[0] for row in rows]

"""A student's submission: a new immutable version, its check queued first. The quota counts the versions a
student made in the last hour and day; after the deadline the late policy refuses them or lets them play
unmarked. The student's previous accepted version keeps playing until the new one passes its check."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

from sqlalchemy import Connection, insert, select

from . import schema
from .database import now, utc
from .errors import LadderFrozen, QuotaExceeded
from .ladder_file import LadderFile, LatePolicy
from .queue import enqueue
from .values import JobKind, Version, VersionStatus

CHECK_PRIORITY = 0


def version_id(student: str, digest: str) -> str:
    return "v" + hashlib.sha256(f"{student}\0{digest}".encode()).hexdigest()[:15]


def existing(connection: Connection, identifier: str) -> Version | None:
    row = connection.execute(select(schema.versions).where(schema.versions.c.id == identifier)).first()
    return None if row is None else version_of(row)


def version_of(row: object) -> Version:
    return Version(
        row.id,  # type: ignore[attr-defined]
        row.student,  # type: ignore[attr-defined]
        row.digest,  # type: ignore[attr-defined]
        utc(row.created),  # type: ignore[attr-defined]
        VersionStatus(row.status),  # type: ignore[attr-defined]
        bool(row.late),  # type: ignore[attr-defined]
    )


def is_late(connection: Connection, file: LadderFile, at: datetime) -> bool:
    """Past the deadline (the ladder file's, or a snapshot taken early)."""
    frozen = connection.execute(select(schema.state.c.frozen)).scalar_one()
    deadline = file.settings.deadline
    return bool(frozen) or (deadline is not None and at >= deadline)


def check_quota(connection: Connection, file: LadderFile, student: str, at: datetime) -> None:
    for window, quota in (
        (timedelta(hours=1), file.settings.quota_per_hour),
        (timedelta(days=1), file.settings.quota_per_day),
    ):
        recent = [
            utc(created)
            for created in connection.execute(
                select(schema.versions.c.created)
                .where(schema.versions.c.student == student, schema.versions.c.created > at - window)
                .order_by(schema.versions.c.created)
            ).scalars()
        ]
        if len(recent) >= quota:
            opens = recent[len(recent) - quota] + window
            raise QuotaExceeded(
                f"{quota} submission(s) per {_words(window)} are used up: the next one opens at "
                f"{opens.strftime('%Y-%m-%d %H:%M:%S')} UTC",
                opens,
            )


def _words(window: timedelta) -> str:
    return "hour" if window == timedelta(hours=1) else "day"


def add_version(connection: Connection, file: LadderFile, student: str, digest: str) -> Version:
    """The version of `digest` for `student`, queued for its check (the same content again: its version as is)."""
    at = now()
    identifier = version_id(student, digest)
    found = existing(connection, identifier)
    late = is_late(connection, file, at)
    if late and file.settings.late_policy is LatePolicy.REFUSE:
        raise LadderFrozen("the deadline has passed: the ladder takes no more submissions")
    if found is not None:
        return found
    check_quota(connection, file, student, at)
    connection.execute(
        insert(schema.versions).values(
            id=identifier, student=student, digest=digest, created=at, status=VersionStatus.CHECKING.value, late=late
        )
    )
    payload = {
        "version": identifier,
        "digest": digest,
        "game": file.league.game,
        "players": file.league.players,
        "kernel": file.league.kernel,
    }
    enqueue(connection, JobKind.CHECK, payload, CHECK_PRIORITY, version_id=identifier)
    return Version(identifier, student, digest, at, VersionStatus.CHECKING, late)

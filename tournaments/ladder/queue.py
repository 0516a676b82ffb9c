"""The database as the job queue (as AI Arena's ladder does): a job is a row; a worker's claim is one short
transaction that takes the first queued job and marks it claimed; a report marks it done; a claim not reported
within the ladder's claim_timeout_s is queued again.

A claim reads its job with SELECT ... FOR UPDATE SKIP LOCKED: on PostgreSQL two workers claiming at once lock
different rows, neither waits for the other; on SQLite the clause is dropped and the transaction's BEGIN
IMMEDIATE (tournaments.ladder.database) lets one writer in at a time. Either way no two claims get one job.

Every transaction that adds jobs or stores results first locks the ladder's state row (lock_state), so that
the scheduler's view of the queue and of the games is not changed under it by another report."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, func, insert, select, update

from . import schema
from .database import now
from .values import Division, Job, JobKind, JobState

MAX_ATTEMPTS = 3
"""Claims of one job before it is given up."""


def lock_state(connection: Connection) -> None:
    connection.execute(select(schema.state.c.id).with_for_update())


def bump_changes(connection: Connection) -> None:
    connection.execute(update(schema.state).values(changes=schema.state.c.changes + 1))


def enqueue(
    connection: Connection,
    kind: JobKind,
    payload: dict[str, Any],
    priority: int,
    version_id: str | None = None,
    division: Division = Division.GRADED,
) -> str:
    """A new queued job (the caller holds lock_state, which keeps `seq` unique)."""
    identifier = uuid.uuid4().hex
    seq = connection.execute(select(func.coalesce(func.max(schema.jobs.c.seq), 0))).scalar_one() + 1
    connection.execute(
        insert(schema.jobs).values(
            id=identifier,
            seq=seq,
            kind=kind.value,
            priority=priority,
            payload=payload,
            state=JobState.QUEUED.value,
            attempts=0,
            created=now(),
            version_id=version_id,
            division=division.value,
        )
    )
    return identifier


def claim(connection: Connection, worker: str, hosts_remote: bool = False) -> Job | None:
    """The first queued job (by priority, then age), now claimed by `worker`; None if none is queued. Only a
    worker that `hosts_remote` seats claims an open division's match, and it takes those first."""
    divisions = [Division.OPEN, Division.GRADED] if hosts_remote else [Division.GRADED]
    for division in divisions:
        row = connection.execute(
            select(schema.jobs.c.id, schema.jobs.c.kind, schema.jobs.c.payload)
            .where(schema.jobs.c.state == JobState.QUEUED.value, schema.jobs.c.division == division.value)
            .order_by(schema.jobs.c.priority, schema.jobs.c.seq)
            .limit(1)
            .with_for_update(skip_locked=True)
        ).first()
        if row is not None:
            break
    if row is None:
        return None
    connection.execute(
        update(schema.jobs)
        .where(schema.jobs.c.id == row.id)
        .values(
            state=JobState.CLAIMED.value,
            claimed_by=worker,
            claimed_at=now(),
            attempts=schema.jobs.c.attempts + 1,
        )
    )
    return Job(row.id, JobKind(row.kind), dict(row.payload))


def finish(connection: Connection, job_id: str) -> bool:
    """Mark the job done; False if it already was (a repeated or late report, to be ignored)."""
    done = connection.execute(
        update(schema.jobs)
        .where(schema.jobs.c.id == job_id, schema.jobs.c.state != JobState.DONE.value)
        .values(state=JobState.DONE.value, finished=now())
    )
    return done.rowcount == 1


def reissue_expired(connection: Connection, at: datetime, timeout_s: int) -> tuple[int, list[Any]]:
    """Queue again every job claimed before `at` - timeout and not reported, unless it has had MAX_ATTEMPTS
    already (a job that takes down every worker that claims it): those are given up, done with no result.
    Returns how many were queued again, and the rows given up."""
    expired = (
        schema.jobs.c.state == JobState.CLAIMED.value,
        schema.jobs.c.claimed_at < at - timedelta(seconds=timeout_s),
    )
    given_up = list(connection.execute(select(schema.jobs).where(*expired, schema.jobs.c.attempts >= MAX_ATTEMPTS)))
    connection.execute(
        update(schema.jobs)
        .where(*expired, schema.jobs.c.attempts >= MAX_ATTEMPTS)
        .values(state=JobState.DONE.value, finished=at)
    )
    queued = connection.execute(
        update(schema.jobs).where(*expired).values(state=JobState.QUEUED.value, claimed_by=None, claimed_at=None)
    )
    return int(queued.rowcount), given_up


def pending(connection: Connection, kind: JobKind, division: Division = Division.GRADED) -> list[dict[str, Any]]:
    """The payloads of the jobs of `kind` in `division` queued or claimed."""
    return [
        dict(payload)
        for payload in connection.execute(
            select(schema.jobs.c.payload).where(
                schema.jobs.c.kind == kind.value,
                schema.jobs.c.state != JobState.DONE.value,
                schema.jobs.c.division == division.value,
            )
        ).scalars()
    ]

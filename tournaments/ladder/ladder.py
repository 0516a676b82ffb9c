"""A ladder open on its database: the one object the CLI, the server and the tests call.

    ladder = open_ladder(Path("class-ladder"))              # or db_url="postgresql+psycopg://..."
    who = ladder.authenticate(token)
    version = ladder.submit(who, unpacked_folder)

Each method is one short transaction; what it does is in the module it calls (accounts, submissions, queue,
scheduling, standings, deadline)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, select

from . import accounts, deadline, remote_keys, schema, store, views
from .copy_leads import CopiesCache, CopiesReport, current_versions
from .database import DATABASE_FILE, default_url, now, open_engine
from .errors import BadResult, Forbidden, LadderFileError, LadderFrozen, UnknownItem
from .fit import Fit, ladder_fit
from .ladder_file import LADDER_FILE, LadderFile, LatePolicy, load_ladder_file
from .queue import MAX_ATTEMPTS, bump_changes, claim, finish, lock_state, reissue_expired
from .results import record_check, record_match
from .scheduling import fill_queue
from .standings import ladder_table, shown_names
from .submissions import add_version, check_quota, is_late
from .values import (
    Division,
    GameSummary,
    Job,
    JobKind,
    JobResult,
    LadderTable,
    MarkRow,
    Principal,
    RemoteKey,
    RemoteSeat,
    Role,
    RosterRow,
    Version,
    VersionDetail,
)

GAVE_UP_CHECK = (
    f"the check never finished: {MAX_ATTEMPTS} workers claimed it and none reported (the submission may stop "
    "the machine that checks it)"
)


def open_ladder(folder: Path, db_url: str | None = None) -> Ladder:
    """The ladder made by init_ladder in `folder`; `db_url` None: its SQLite file."""
    path = folder / LADDER_FILE
    if not path.is_file():
        raise LadderFileError(f"{folder} holds no ladder (no {LADDER_FILE}): make one with `referee ladder init`")
    file = load_ladder_file(path)
    if db_url is None and not (folder / DATABASE_FILE).is_file():
        raise LadderFileError(f"{folder} has no {DATABASE_FILE}: a ladder made on PostgreSQL opens with --db URL")
    engine = open_engine(db_url or default_url(folder))
    with engine.connect() as connection:
        if connection.execute(select(schema.state.c.id)).first() is None:
            engine.dispose()
            raise LadderFileError(f"the database {engine.url!r} is not {folder}'s: it holds no ladder")
    return Ladder(folder, file, engine)


class Ladder:
    def __init__(self, folder: Path, file: LadderFile, engine: Engine) -> None:
        self.folder = folder
        self.file = file
        self.engine = engine
        self.store = store.store_folder(folder)
        self._fits: dict[Division, tuple[int, Fit]] = {}
        self._copies = CopiesCache(self.store, file.league.copies.base)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Ladder:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _secret(self) -> str:
        with self.engine.connect() as connection:
            return str(connection.execute(select(schema.state.c.secret)).scalar_one())

    def authenticate(self, token: str) -> Principal:
        """Who holds `token` (Unauthorised if nobody does)."""
        with self.engine.begin() as connection:
            return accounts.authenticate(connection, token)

    def invite(self, names: Sequence[str], roster: Path | None = None, who: Principal | None = None) -> dict[str, str]:
        """Name -> a new token for each student named or on the roster (re-inviting revokes the old token).
        `who`: the asker, staff only (None: the ladder's owner at the command line)."""
        _require(who, Role.STAFF)
        checked = accounts.checked_names(names, roster)
        secret = self._secret()
        with self.engine.begin() as connection:
            return accounts.invite(connection, secret, checked)

    def fetch_version(self, digest: str) -> Path:
        """A version's folder in this ladder's store, by content hash (do_job's fetch_version for local workers)."""
        return store.version_folder(self.store, digest)

    def submit(self, who: Principal, folder: Path) -> Version:
        """A new version of `who`'s bot from `folder` (unpacked and checked by the caller), copied into the store
        and queued for its check; QuotaExceeded, LadderFrozen, Forbidden (not a student)."""
        _require(who, Role.STUDENT)
        with self.engine.begin() as connection:
            at = now()
            if is_late(connection, self.file, at) and self.file.settings.late_policy is LatePolicy.REFUSE:
                raise LadderFrozen("the deadline has passed: the ladder takes no more submissions")
            check_quota(connection, self.file, who.name, at)
        digest = store.keep(self.store, folder)
        with self.engine.begin() as connection:
            lock_state(connection)
            return add_version(connection, self.file, who.name, digest)

    def versions(self, who: Principal, student: str) -> list[Version]:
        """A student's versions, newest first (their own, or staff)."""
        views.may_read_student(who, student)
        with self.engine.connect() as connection:
            return views.versions(connection, student)

    def version(self, who: Principal, version_id: str) -> VersionDetail:
        with self.engine.connect() as connection:
            return views.version_detail(connection, who, version_id)

    def claim(self, who: Principal, worker: str, hosts_remote: bool = False) -> Job | None:
        """The next job for `worker` (a name for the staff's page), claimed in one short transaction. Only a worker
        that `hosts_remote` seats (referee worker --listen) is given the open division's matches, those first."""
        _require(who, Role.WORKER, Role.STAFF, strict=True)
        with self.engine.begin() as connection:
            return claim(connection, worker, hosts_remote)

    def register_key(self, who: Principal, public_key: object) -> RemoteKey:
        """Register (or replace) `who`'s CURVE public key, their remote bot in the open division
        (tournaments.ladder.remote_keys); BadKey for a key the ladder does not take, Forbidden if not a student
        or the ladder has no open division. New tables are queued for it at once."""
        _require(who, Role.STUDENT, strict=True)
        with self.engine.begin() as connection:
            lock_state(connection)
            key = remote_keys.register_key(connection, self.file, who.name, public_key)
            bump_changes(connection)
        self.fill_queue()
        return key

    def remote_seat(self, who: Principal, student: str) -> RemoteSeat:
        """A student's key and where to connect (their own, or staff)."""
        views.may_read_student(who, student)
        with self.engine.connect() as connection:
            key = remote_keys.own_key(connection, student)
        division = self.file.open
        return RemoteSeat(division.remote, key, division.connect, division.server_key)

    def report(self, who: Principal, job_id: str, result: JobResult) -> None:
        """Store a job's result, once: a result posted again, or late after its job was reissued and done, is
        ignored; one for a job no worker ever claimed is refused (BadResult). Then the queue is filled again."""
        _require(who, Role.WORKER, Role.STAFF, strict=True)
        with self.engine.begin() as connection:
            lock_state(connection)
            job = connection.execute(select(schema.jobs).where(schema.jobs.c.id == job_id)).first()
            if job is None:
                raise UnknownItem(f"no job {job_id!r}")
            if result.kind.value != job.kind:
                raise BadResult(f"job {job_id} is a {job.kind}, the result a {result.kind.value}")
            if not job.attempts:
                raise BadResult(f"job {job_id} was never claimed: a worker reports only a job it claimed")
            if not finish(connection, job_id):
                return
            if result.kind is JobKind.CHECK:
                record_check(connection, job.version_id, result.data)
            else:
                record_match(connection, job_id, dict(job.payload), result.data)
            bump_changes(connection)
        self.fill_queue(force=result.kind is JobKind.CHECK)

    def reissue_expired(self, at: datetime | None = None) -> int:
        """Queue again the jobs claimed and not reported within claim_timeout_s of `at` (default: now); how
        many. A job claimed MAX_ATTEMPTS times is given up instead (a check's version is refused, saying so)."""
        with self.engine.begin() as connection:
            lock_state(connection)
            queued, given_up = reissue_expired(connection, at or now(), self.file.settings.claim_timeout_s)
            for job in given_up:
                if job.kind == JobKind.CHECK.value:
                    record_check(connection, job.version_id, {"passed": False, "verdict": GAVE_UP_CHECK})
            if given_up:
                bump_changes(connection)
        return queued

    def fill_queue(self, *, force: bool = True) -> int:
        """Queue the matches the table needs now (tournaments.ladder.scheduling); how many were added.
        `force`: even when the queue is more than half full."""
        with self.engine.begin() as connection:
            lock_state(connection)
            return fill_queue(connection, self.file, force=force)

    def table(self, who: Principal | None, division: Division = Division.GRADED) -> LadderTable:
        """The table of `division` as `who` may see it (None: a spectator). The open division's is its own: its
        games never enter the graded table or the marks."""
        if division is Division.OPEN:
            remote_keys.require_open(self.file)
        with self.engine.connect() as connection:
            return ladder_table(connection, self.file, self._current_fit(connection, division), who, division)

    def _current_fit(self, connection: Connection, division: Division = Division.GRADED) -> Fit:
        changes = int(connection.execute(select(schema.state.c.changes)).scalar_one())
        cached = self._fits.get(division)
        if cached is None or cached[0] != changes:
            cached = self._fits[division] = (changes, ladder_fit(connection, self.file, division))
        return cached[1]

    def roster(self, who: Principal | None = None) -> list[RosterRow]:
        """Every invited student with their pseudonym, versions and the version playing (staff only)."""
        _require(who, Role.STAFF)
        with self.engine.connect() as connection:
            return views.roster(connection)

    def copies(self, who: Principal | None = None) -> CopiesReport:
        """Possible copies among the students' current accepted versions (tournaments.ladder.copy_leads): leads
        from their code, never verdicts; staff only. Worked out again only when a student's version changes."""
        _require(who, Role.STAFF)
        with self.engine.connect() as connection:
            current = current_versions(connection)
        return self._copies.report(current)

    def student_games(self, who: Principal, student: str) -> list[GameSummary]:
        views.may_read_student(who, student)
        with self.engine.connect() as connection:
            return views.student_games(connection, student, shown_names(connection, self.file, who))

    def game_log(self, who: Principal, game_id: str, seat: int) -> bytes:
        with self.engine.connect() as connection:
            return views.game_log(connection, who, game_id, seat)

    def replay(self, who: Principal, game_id: str) -> dict[str, Any]:
        with self.engine.connect() as connection:
            return views.replay(connection, self.file, who, game_id)

    def deadline_snapshot(self, who: Principal | None = None) -> int:
        """Freeze the ladder on each student's last accepted on-time version and queue the final run's
        matches; how many students have a version in it. Staff only (None: the ladder's own clock)."""
        _require(who, Role.STAFF)
        with self.engine.begin() as connection:
            lock_state(connection)
            count = deadline.take_snapshot(connection)
            bump_changes(connection)
        self.fill_queue()
        return count

    def deadline_due(self, at: datetime | None = None) -> bool:
        """The ladder file's deadline has passed and no snapshot is taken yet (the server then takes it)."""
        when = self.file.settings.deadline
        with self.engine.connect() as connection:
            frozen = bool(connection.execute(select(schema.state.c.frozen)).scalar_one())
        return not frozen and when is not None and (at or now()) >= when

    def marks(self, who: Principal | None = None) -> list[MarkRow]:
        """Each student's mark from their snapshot version (staff only)."""
        _require(who, Role.STAFF)
        with self.engine.connect() as connection:
            return deadline.marks(connection, self.file, self._current_fit(connection))

    def marks_csv(self, who: Principal | None = None) -> str:
        """The marks as CSV: student, version, mark, elo, games and the share against each baseline."""
        return deadline.marks_csv(self.marks(who), [bot.name for bot in self.file.league.bots])

    def export_marks(self, folder: Path, who: Principal | None = None) -> tuple[Path, Path]:
        """Write FOLDER/marks.csv and FOLDER/gradescope.json ({student: results.json}); their paths."""
        rows = self.marks(who)
        folder.mkdir(parents=True, exist_ok=True)
        csv_path, gradescope_path = folder / "marks.csv", folder / "gradescope.json"
        csv_path.write_text(deadline.marks_csv(rows, [bot.name for bot in self.file.league.bots]), encoding="utf-8")
        results = {row.student: deadline.gradescope_results(row, self.file) for row in rows}
        gradescope_path.write_text(json.dumps(results, indent=1), encoding="utf-8")
        return csv_path, gradescope_path

    def changes(self) -> int:
        """A counter bumped on every change to the table (cheap to poll)."""
        with self.engine.connect() as connection:
            return int(connection.execute(select(schema.state.c.changes)).scalar_one())


def _require(who: Principal | None, *roles: Role, strict: bool = False) -> None:
    """`who` has one of `roles` (None, the ladder's owner in-process, passes unless `strict`)."""
    if who is None and strict:
        raise Forbidden("this needs a worker's token")
    if who is not None and who.role not in roles:
        raise Forbidden(f"a {who.role.value} may not do this")

"""The ladder's values, as plain frozen data that the server turns into JSON and pages."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from .errors import BadResult


class Role(enum.StrEnum):
    STUDENT = "student"
    STAFF = "staff"
    WORKER = "worker"


@dataclass(frozen=True)
class Principal:
    role: Role
    name: str
    """The student's or worker's name; "admin" for staff."""


ADMIN = "admin"


@dataclass(frozen=True)
class LadderCreated:
    folder: Path
    admin_token: str
    worker_token: str


class VersionStatus(enum.StrEnum):
    CHECKING = "checking"
    ACCEPTED = "accepted"
    REFUSED = "refused"


@dataclass(frozen=True)
class Version:
    id: str
    student: str
    digest: str
    created: datetime
    status: VersionStatus
    late: bool = False


@dataclass(frozen=True)
class VersionDetail:
    version: Version
    verdict: str | None
    check_report: dict[str, Any] | None
    build_log: str | None


class JobKind(enum.StrEnum):
    CHECK = "check"
    MATCH = "match"


class Division(enum.StrEnum):
    """Each division has its own entrants, games and table."""

    GRADED = "graded"
    """The students' uploaded versions and the baselines: the marks come from this one."""
    OPEN = "open"
    """The baselines and the students' remote bots (the ladder file's [open]); never marked."""


class JobState(enum.StrEnum):
    QUEUED = "queued"
    CLAIMED = "claimed"
    DONE = "done"


@dataclass(frozen=True)
class Job:
    id: str
    kind: JobKind
    payload: dict[str, Any]
    """Plain data: everything do_job needs, versions named by content hash."""

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind.value, "payload": self.payload}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Job:
        return cls(str(data["id"]), JobKind(data["kind"]), dict(data["payload"]))


@dataclass(frozen=True)
class JobResult:
    """What a job gave, as plain data. A check: passed, verdict, report (check-bot's JSON), build_log. A match:
    games, each with its index, seed, seats (entrant names), ranks, scores, faults, forfeited, isolation and
    replay; logs: entrant -> its output, capped."""

    kind: JobKind
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "data": self.data}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JobResult:
        """A result as a worker posted it; BadResult when it is not one (a kind that is none, data not an object)."""
        try:
            return cls(JobKind(data["kind"]), dict(data["data"]))
        except (KeyError, TypeError, ValueError):
            raise BadResult("a job result is an object with a kind (check or match) and its data (an object)") from None


@dataclass(frozen=True)
class TableRow:
    name: str
    """The student's name (staff; their own row), a pseudonym, or a baseline's name."""
    elo: float | None
    """None for an entrant with no games yet (a new version being placed: listed last)."""
    interval: tuple[float, float] | None
    games: int
    settled: bool
    """Its places against its neighbours are decided (separated, or known to be within the resolution)."""
    group: int
    baseline: bool = False
    mine: bool = False
    version: str | None = None
    """Shown to staff and to the version's own student only."""


@dataclass(frozen=True)
class LadderTable:
    rows: tuple[TableRow, ...]
    settled: bool
    games: int
    changes: int
    frozen: bool = False
    division: Division = Division.GRADED


@dataclass(frozen=True)
class GameSummary:
    id: str
    stored: datetime
    seats: tuple[str, ...]
    """Shown names, as the table shows them to the asker."""
    ranks: tuple[int, ...]
    my_seat: int | None
    faults: tuple[str, ...]
    """The asker's own seat's fault causes."""


@dataclass(frozen=True)
class MarkRow:
    student: str
    version_id: str | None
    mark: float | None
    shares: dict[str, float | None]
    """Baseline -> score share against it."""
    games: int
    elo: float | None = None


@dataclass(frozen=True)
class RosterRow:
    """A student as the staff's page lists them."""

    name: str
    pseudonym: str
    versions: int
    latest: Version | None
    playing: str | None
    """The id of the accepted version on the table now."""


@dataclass(frozen=True)
class RemoteKey:
    """A student's registered CURVE public key; `entrant` is its row of the open table and its remote seat."""

    student: str
    entrant: str
    public_key: str
    registered: datetime


@dataclass(frozen=True)
class RemoteSeat:
    """What a student needs to play the open division from their machine: their key (None until registered) and
    where to connect, `referee connect CONNECT --key NAME.key_secret --server-key FILE`, FILE holding server_key."""

    open: bool
    key: RemoteKey | None
    connect: str | None
    server_key: str | None

"""The class ladder: students submit versions, the database queues checks and matches, workers play them, the
settling allocator chooses the tables, and the table, the deadline and the marks come from the stored games.

May import: referee, protocol, league/, ratings/, classroom/ and the modules at the top of tournaments/. Not
pages/, bench/, cli/ or server/ (the web app calls this room, never the other way).
"""

from .copy_leads import CopiesReport, CopyLead
from .errors import (
    BadKey,
    BadResult,
    DatabaseProblem,
    Forbidden,
    LadderError,
    LadderFileError,
    LadderFrozen,
    NoSandbox,
    QuotaExceeded,
    Unauthorised,
    UnknownItem,
)
from .jobs import do_job, require_sandbox
from .ladder import Ladder, open_ladder
from .match_job import NotTheHost, RemoteHost
from .setup import init_ladder
from .values import (
    Division,
    GameSummary,
    Job,
    JobKind,
    JobResult,
    LadderCreated,
    LadderTable,
    MarkRow,
    Principal,
    RemoteKey,
    RemoteSeat,
    Role,
    RosterRow,
    TableRow,
    Version,
    VersionDetail,
    VersionStatus,
)
from .views import Item, hidden

__all__ = [
    "BadKey",
    "BadResult",
    "CopiesReport",
    "CopyLead",
    "do_job",
    "DatabaseProblem",
    "Division",
    "Forbidden",
    "GameSummary",
    "hidden",
    "Item",
    "Job",
    "JobKind",
    "JobResult",
    "Ladder",
    "LadderCreated",
    "LadderError",
    "LadderFileError",
    "LadderFrozen",
    "LadderTable",
    "MarkRow",
    "NoSandbox",
    "NotTheHost",
    "Principal",
    "QuotaExceeded",
    "RemoteHost",
    "RemoteKey",
    "RemoteSeat",
    "require_sandbox",
    "Role",
    "RosterRow",
    "TableRow",
    "Unauthorised",
    "UnknownItem",
    "Version",
    "VersionDetail",
    "VersionStatus",
    "init_ladder",
    "open_ladder",
]

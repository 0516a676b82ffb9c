"""The ladder's tables (SQLAlchemy Core): one description for SQLite and PostgreSQL. The database is the ladder's
whole state, the job queue included (tournaments.ladder.queue); the Alembic revisions in migrations/ create and
change it, so a change here goes with a new revision.

Times are stored as timezone-aware UTC; JSON columns hold plain data (check reports, job payloads, results)."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData()

state = Table(
    "ladder_state",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("secret", String(64), nullable=False, comment="Keys the pseudonyms and the deals; never shown."),
    Column("frozen", Boolean, nullable=False, default=False),
    Column("deadline", DateTime(timezone=True)),
    Column("snapshot_at", DateTime(timezone=True)),
    Column(
        "changes",
        Integer,
        nullable=False,
        default=0,
        comment="Bumped on every change to what the table shows (Ladder.changes).",
    ),
)

students = Table(
    "students",
    metadata,
    Column("name", String(200), primary_key=True),
    Column("pseudonym", String(64), nullable=False, unique=True),
    Column("created", DateTime(timezone=True), nullable=False),
)

tokens = Table(
    "tokens",
    metadata,
    Column(
        "token_id",
        String(32),
        primary_key=True,
        comment="The token's public part, for looking it up; the rest is checked against `hash`.",
    ),
    Column("role", String(16), nullable=False),
    Column("name", String(200), nullable=False),
    Column("hash", String(200), nullable=False, comment="argon2id of the whole token."),
    Column("created", DateTime(timezone=True), nullable=False),
    Column("revoked", DateTime(timezone=True)),
    Index("tokens_by_name", "role", "name"),
)

versions = Table(
    "versions",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("student", String(200), ForeignKey("students.name"), nullable=False),
    Column(
        "digest",
        String(80),
        nullable=False,
        comment="The content hash of the folder: its copy is versions/DIGEST/ in the ladder folder.",
    ),
    Column("created", DateTime(timezone=True), nullable=False),
    Column("status", String(16), nullable=False),
    Column("late", Boolean, nullable=False, default=False),
    Column("check_report", JSON),
    Column("build_log", Text),
    Column("verdict", Text),
    Index("versions_by_student", "student", "created"),
)

jobs = Table(
    "jobs",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("seq", Integer, nullable=False, unique=True, comment="Queue order within a priority."),
    Column("kind", String(16), nullable=False),
    Column("priority", Integer, nullable=False, default=1, comment="0 first: checks come before matches."),
    Column("payload", JSON, nullable=False),
    Column("state", String(16), nullable=False),
    Column("claimed_by", String(200)),
    Column("claimed_at", DateTime(timezone=True)),
    Column("attempts", Integer, nullable=False, default=0),
    Column("created", DateTime(timezone=True), nullable=False),
    Column("finished", DateTime(timezone=True)),
    Column("version_id", String(40), comment="A check's version."),
    Column(
        "division",
        String(16),
        nullable=False,
        server_default="graded",
        comment="A match's division: only a worker that hosts remote seats claims an open one.",
    ),
    Index("jobs_queue", "state", "priority", "seq"),
)

games = Table(
    "games",
    metadata,
    Column(
        "id",
        String(80),
        primary_key=True,
        comment="JOB:INDEX: a game posted twice (a repeated report, a reissued job's late one) is stored once.",
    ),
    Column("job_id", String(40), ForeignKey("jobs.id"), nullable=False),
    Column("game_index", Integer, nullable=False),
    Column("seed", BigInteger, nullable=False),
    Column("stored", DateTime(timezone=True), nullable=False),
    Column(
        "final", Boolean, nullable=False, default=False, comment="Played after the deadline's snapshot (the final run)."
    ),
    Column("isolation", String(16), nullable=False),
    Column(
        "division",
        String(16),
        nullable=False,
        server_default="graded",
        comment="Each division's table is fitted on its own games: an open game never changes a mark.",
    ),
    Column("replay", JSON),
    UniqueConstraint("job_id", "game_index", name="games_once"),
)

seats = Table(
    "seat_results",
    metadata,
    Column("game_id", String(80), ForeignKey("games.id"), primary_key=True),
    Column("seat", Integer, primary_key=True),
    Column("entrant", String(200), nullable=False, comment="A version's id, or a baseline's name."),
    Column("student", String(200), comment="None for a baseline."),
    Column("rank", Integer, nullable=False),
    Column("score", Integer, nullable=False),
    Column("faults", JSON, nullable=False),
    Column("forfeited", Boolean, nullable=False, default=False),
    Index("seats_by_entrant", "entrant"),
)

logs = Table(
    "match_logs",
    metadata,
    Column("job_id", String(40), ForeignKey("jobs.id"), primary_key=True),
    Column("entrant", String(200), primary_key=True),
    Column(
        "log", Text, nullable=False, comment="The bot's output in the match, capped; its own student and staff only."
    ),
)

snapshot = Table(
    "deadline_snapshot",
    metadata,
    Column("student", String(200), ForeignKey("students.name"), primary_key=True),
    Column("version_id", String(40), ForeignKey("versions.id"), nullable=False),
)

remote_keys = Table(
    "remote_keys",
    metadata,
    Column("student", String(200), ForeignKey("students.name"), primary_key=True, comment="One key per student."),
    Column(
        "entrant",
        String(40),
        nullable=False,
        unique=True,
        comment="The open division's entrant (and remote seat) of this key; a new key is a new entrant.",
    ),
    Column("public_key", String(40), nullable=False, unique=True, comment="Z85 CURVE public key."),
    Column("registered", DateTime(timezone=True), nullable=False),
)
"""The students' remote bots: a CURVE public key each (tournaments.ladder.remote_keys)."""

"""Opening the ladder's database: SQLite (a file in the ladder folder, the default) or PostgreSQL (a
postgresql+psycopg:// URL), migrated to the newest revision on open (Alembic, migrations/ in this package).

One code path serves both. Every transaction on SQLite starts with BEGIN IMMEDIATE, which takes the write lock
at once: two writers then queue on the lock (busy_timeout) instead of one failing when it upgrades a read
lock, and a claim (tournaments.ladder.queue) reads and marks its job with no other writer between. WAL lets
readers go on meanwhile. On PostgreSQL a claim locks its row with SELECT ... FOR UPDATE SKIP LOCKED."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, OperationalError

from .errors import DatabaseProblem

DATABASE_FILE = "ladder.sqlite"
BUSY_TIMEOUT_MS = 30_000
MIGRATIONS = Path(__file__).with_name("migrations")
_MIGRATING = threading.Lock()
_MIGRATION_LOCK = 0x1ADDE5
"""The PostgreSQL advisory lock key of a migration (any fixed number)."""


def default_url(folder: Path) -> str:
    return f"sqlite:///{(folder / DATABASE_FILE).resolve()}"


def open_engine(url: str) -> Engine:
    """An engine for `url`, migrated to the newest revision (DatabaseProblem if it cannot be)."""
    try:
        parsed = make_url(url)
        if parsed.get_backend_name() == "postgresql" and parsed.drivername == "postgresql":
            parsed = parsed.set(drivername="postgresql+psycopg")
        engine = create_engine(parsed, pool_pre_ping=True)
    except (ArgumentError, NoSuchModuleError, ImportError) as error:
        raise DatabaseProblem(f"cannot use the database {url!r}: {error}") from None
    if engine.dialect.name == "sqlite":
        _immediate_transactions(engine)
    elif engine.dialect.name != "postgresql":
        raise DatabaseProblem(f"the ladder runs on SQLite or PostgreSQL, not {engine.dialect.name}")
    try:
        migrate(engine)
    except OperationalError as error:
        engine.dispose()
        raise DatabaseProblem(f"cannot open the database: {error.orig}") from None
    return engine


def migrate(engine: Engine) -> None:
    """Bring the database to the newest revision (a new one is created whole). Alembic's environment is global
    to the process, so one migration runs at a time in it; on PostgreSQL an advisory lock keeps other processes
    (a server and its workers starting together) out too, and SQLite's BEGIN IMMEDIATE does the same."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with _MIGRATING, engine.begin() as connection:
        if engine.dialect.name == "postgresql":
            connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_MIGRATION_LOCK})")
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


def _immediate_transactions(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def now() -> datetime:
    return datetime.now(UTC)


def utc(value: datetime) -> datetime:
    """A stored time as UTC (SQLite gives it back without its zone)."""
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)

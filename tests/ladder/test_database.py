from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from ladder_helpers import Made

from tournaments.ladder.schema import metadata


def test_the_migrations_make_exactly_the_schema_the_code_describes(made: Made) -> None:
    with made.ladder.engine.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), metadata)
    assert differences == []


def test_sqlite_runs_in_write_ahead_mode(made: Made) -> None:
    if made.db_url is not None:
        pytest.skip("a PostgreSQL ladder")
    with made.ladder.engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"

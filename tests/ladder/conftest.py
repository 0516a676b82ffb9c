"""Fixtures of the ladder's tests: a fresh ladder on SQLite, and one on PostgreSQL where
CARD_REFEREE_TEST_POSTGRES names a server's URL (a database the tests may empty; .ci/run starts one)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy
from ladder_helpers import Made

from tournaments.ladder import init_ladder, open_ladder

POSTGRES = os.environ.get("CARD_REFEREE_TEST_POSTGRES")


def fresh_postgres_url() -> str:
    """A new database on the test server, so that each test starts empty."""
    assert POSTGRES is not None
    name = f"ladder_{uuid.uuid4().hex[:12]}"
    engine = sqlalchemy.create_engine(POSTGRES, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.exec_driver_sql(f"CREATE DATABASE {name}")
    engine.dispose()
    return sqlalchemy.engine.make_url(POSTGRES).set(database=name).render_as_string(hide_password=False)


def drop_postgres(url: str) -> None:
    assert POSTGRES is not None
    name = sqlalchemy.engine.make_url(url).database
    engine = sqlalchemy.create_engine(POSTGRES, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.exec_driver_sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """None (the ladder's SQLite file), or a new PostgreSQL database when the server is there."""
    if request.param == "sqlite":
        yield None
        return
    if POSTGRES is None:
        pytest.skip("CARD_REFEREE_TEST_POSTGRES names no PostgreSQL server")
    url = fresh_postgres_url()
    yield url
    drop_postgres(url)


@pytest.fixture
def made(tmp_path: Path, db_url: str | None) -> Iterator[Made]:
    folder = tmp_path / "ladder"
    created = init_ladder(folder, "scout", 3, ["heuristic", "random"], db_url=db_url)
    with open_ladder(folder, db_url) as ladder:
        yield Made(folder, created, ladder, db_url)

"""A PostgreSQL server for the tests of the ladder and its server: CARD_REFEREE_TEST_POSTGRES names one whose
role may make databases (.ci/run starts Debian's postgresql and sets it). Each test gets a database of its own.
Without it, tests on PostgreSQL skip, except where REFEREE_REQUIRE_POSTGRES is set (CI): a skip there would
hide a PostgreSQL half of the ladder that nobody ran."""

from __future__ import annotations

import os
import uuid

import pytest
import sqlalchemy

SERVER = "CARD_REFEREE_TEST_POSTGRES"
REQUIRE_POSTGRES = "REFEREE_REQUIRE_POSTGRES"


def require_postgres() -> str:
    """The test server's URL; skip the test without one (fail where REFEREE_REQUIRE_POSTGRES is set)."""
    url = os.environ.get(SERVER)
    if url:
        return url
    if os.environ.get(REQUIRE_POSTGRES):
        pytest.fail(f"{REQUIRE_POSTGRES} is set but {SERVER} names no PostgreSQL server (.ci/run starts one)")
    pytest.skip(f"{SERVER} names no PostgreSQL server")


def fresh_postgres_url(server: str) -> str:
    """A new, empty database on `server`, as a URL."""
    name = f"ladder_{uuid.uuid4().hex[:12]}"
    engine = sqlalchemy.create_engine(server, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.exec_driver_sql(f"CREATE DATABASE {name}")
    engine.dispose()
    return sqlalchemy.engine.make_url(server).set(database=name).render_as_string(hide_password=False)


def drop_postgres(server: str, url: str) -> None:
    name = sqlalchemy.engine.make_url(url).database
    engine = sqlalchemy.create_engine(server, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.exec_driver_sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    engine.dispose()

"""Fixtures of the ladder's tests: a fresh ladder on SQLite, and one on PostgreSQL where
CARD_REFEREE_TEST_POSTGRES names a server's URL (tests/postgres_checks.py; .ci/run starts one)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from ladder_helpers import Made
from postgres_checks import drop_postgres, fresh_postgres_url, require_postgres

from tournaments.ladder import init_ladder, open_ladder


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """None (the ladder's SQLite file), or a new PostgreSQL database when the server is there."""
    if request.param == "sqlite":
        yield None
        return
    server = require_postgres()
    url = fresh_postgres_url(server)
    yield url
    drop_postgres(server, url)


@pytest.fixture
def made(tmp_path: Path, db_url: str | None) -> Iterator[Made]:
    folder = tmp_path / "ladder"
    created = init_ladder(folder, "scout", 3, ["heuristic", "random"], db_url=db_url)
    with open_ladder(folder, db_url) as ladder:
        yield Made(folder, created, ladder, db_url)

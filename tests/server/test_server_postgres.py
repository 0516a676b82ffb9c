"""The ladder on PostgreSQL end to end on loopback, as a course that outgrew SQLite runs it: `referee ladder init`,
`invite` and `serve` with `--db postgresql://...`, two `referee worker`s sharing the queue (PostgreSQL's
FOR UPDATE SKIP LOCKED), students submitting with `referee submit`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
from postgres_checks import drop_postgres, fresh_postgres_url, require_postgres
from processes import LadderSite, eventually, get_json, make_ladder

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "class"


@pytest.fixture
def site(tmp_path: Path) -> Iterator[LadderSite]:
    server = require_postgres()
    url = fresh_postgres_url(server).replace("postgresql+psycopg://", "postgresql://", 1)
    made = make_ladder(tmp_path, db_url=url)
    try:
        yield made
    finally:
        made.close()
        drop_postgres(server, url)


def test_a_ladder_on_postgresql_checks_plays_and_shares_its_queue_between_two_workers(site: LadderSite) -> None:
    site.fast()
    site.serve(jobs=0)
    assert not (site.folder / "ladder.sqlite").exists(), "the ladder lives in PostgreSQL, not in a SQLite file"
    workers = [site.start_worker(), site.start_worker()]
    for student, bot in (("ann", "first_move"), ("bob", "half_random")):
        accepted = site.submit(student, FIXTURES / bot)
        assert accepted.returncode == 0, accepted.stdout + accepted.stderr
        assert ": accepted" in accepted.stdout
    refused = site.submit("cat", FIXTURES / "crash_at_start")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert ": refused" in refused.stdout

    def two_students_played() -> list[dict[str, Any]] | None:
        rows = [row for row in get_json(f"{site.url}/api/table")["rows"] if not row["baseline"]]
        return rows if len(rows) == 2 and all(row["games"] > 0 for row in rows) else None

    eventually(two_students_played, "both accepted bots playing")
    for index, worker in enumerate(workers):
        eventually(lambda worker=worker: "reported match job" in worker.output(), f"worker {index} taking a match")
    assert get_json(f"{site.url}/api/students/cat/games", site.students["cat"]) == [], "a refused version never plays"

    assert site.db_url is not None
    engine = sqlalchemy.create_engine(site.db_url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.connect() as connection:
            doubled = connection.exec_driver_sql(
                "SELECT job_id, game_index FROM games GROUP BY job_id, game_index HAVING COUNT(*) > 1"
            ).all()
            by_worker = connection.exec_driver_sql(
                "SELECT COUNT(DISTINCT claimed_by) FROM jobs WHERE kind = 'match' AND state = 'done'"
            ).scalar_one()
    finally:
        engine.dispose()
    assert doubled == [], "no match was played twice"
    assert by_worker == 2, "both workers' matches were recorded"

"""The deadline end to end on loopback, with real processes: `referee serve` takes the snapshot by itself when the
ladder file's deadline passes, refuses a late `referee submit`, its workers play the final run among the snapshot's
versions to its end, and `referee ladder marks` exports the marks (CSV, and Gradescope's results with a
leaderboard entry)."""

from __future__ import annotations

import csv
import json
import re
import sqlite3
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from processes import BOUND_S, LadderSite, eventually, get_json, make_ladder, referee

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "class"
PAIR_CAP = 30
"""Small, so that the final run ends (every pair at its cap, if the table has not settled before)."""


@pytest.fixture
def site(tmp_path: Path) -> Iterator[LadderSite]:
    made = make_ladder(tmp_path, students=("ann", "bob"))
    try:
        yield made
    finally:
        made.close()


def test_at_its_deadline_the_server_freezes_plays_the_final_run_and_exports_marks(site: LadderSite) -> None:
    site.fast()
    set_ladder_key(site, "pair_cap", str(PAIR_CAP))
    with (site.folder / "ladder.toml").open("a") as file:
        file.write("\n[marks]\nrandom = [[0.0, 40]]\n")
    site.serve(jobs=1)
    versions = {}
    for student, bot in (("ann", "first_move"), ("bob", "half_random")):
        accepted = site.submit(student, FIXTURES / bot)
        assert accepted.returncode == 0, accepted.stdout + accepted.stderr
        found = re.search(r"version (v[0-9a-f]+): accepted", accepted.stdout)
        assert found is not None, accepted.stdout
        versions[student] = found.group(1)

    assert site.server is not None
    site.server.stop()
    deadline = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=1)
    set_ladder_key(site, "deadline", deadline.strftime("%Y-%m-%dT%H:%M:%SZ"))
    while datetime.now(UTC) <= deadline:
        time.sleep(0.2)
    assert query(site, "SELECT COUNT(*) FROM games WHERE final") == 0
    site.serve(jobs=1)

    eventually(lambda: get_json(f"{site.url}/api/table")["frozen"], "the server taking the deadline's snapshot")
    late = site.submit("ann", FIXTURES / "half_random")
    assert late.returncode == 1, late.stdout + late.stderr

    def final_run_over() -> bool:
        pending = query(site, "SELECT COUNT(*) FROM jobs WHERE kind = 'match' AND state IN ('queued', 'claimed')")
        return pending == 0 and query(site, "SELECT COUNT(*) FROM games WHERE final") > 0

    eventually(final_run_over, "the final run played to its end", bound=BOUND_S * 2)
    with sqlite3.connect(site.folder / "ladder.sqlite") as db:
        seated = {
            row[0]
            for row in db.execute(
                "SELECT DISTINCT entrant FROM seat_results JOIN games ON games.id = game_id WHERE final"
            )
        }
        snapshot = dict(db.execute("SELECT student, version_id FROM deadline_snapshot").fetchall())
    assert snapshot == versions, "each student's last accepted on-time version"
    assert seated & set(versions.values()), "the final run plays the snapshot's versions"
    assert seated <= {*versions.values(), "heuristic", "random"}, "and no other version"

    out = site.root / "marks"
    referee("ladder", "marks", str(site.folder), "-o", str(out), cwd=site.root)
    rows = {row["student"]: row for row in csv.DictReader((out / "marks.csv").open())}
    assert {student: row["version"] for student, row in rows.items()} == versions
    assert {row["mark"] for row in rows.values()} == {"40"}, "every share of games against random is at least 0"
    results = json.loads((out / "gradescope.json").read_text())
    assert set(results) == {"ann", "bob"}
    assert all(result["leaderboard"] for result in results.values())


def set_ladder_key(site: LadderSite, key: str, value: str) -> None:
    """Set `key` in the ladder file's [ladder] table (after `referee ladder init` wrote it)."""
    path = site.folder / "ladder.toml"
    text = re.sub(rf"(?m)^{key} = .*\n", "", path.read_text())
    path.write_text(text.replace("[ladder]\n", f"[ladder]\n{key} = {value}\n", 1))


def query(site: LadderSite, sql: str) -> int:
    with sqlite3.connect(site.folder / "ladder.sqlite") as db:
        return int(db.execute(sql).fetchone()[0])

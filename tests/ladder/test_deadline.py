"""The deadline: snapshot, freeze, final run, marks exported as CSV and Gradescope results."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from ladder_helpers import Made, bot_folder, pass_checks, played, worker

from tournaments.ladder import Forbidden, JobKind, LadderFrozen, init_ladder, open_ladder

MARKS = "\n[marks]\nrandom = [[0.5, 40]]\nheuristic = [[0.5, 80]]\n"


def _ladder(tmp_path: Path, db_url: str | None, *, late: str = "refuse", deadline: str = "") -> Iterator[Made]:
    folder = tmp_path / "ladder"
    created = init_ladder(folder, "scout", 3, ["heuristic", "random"], db_url=db_url)
    path = folder / "ladder.toml"
    text = path.read_text().replace('late_policy = "refuse"', f'late_policy = "{late}"{deadline}')
    path.write_text(text + MARKS)
    with open_ladder(folder, db_url) as ladder:
        yield Made(folder, created, ladder, db_url)


@pytest.fixture
def marked(tmp_path: Path, db_url: str | None) -> Iterator[Made]:
    yield from _ladder(tmp_path, db_url)


def _play_all(made: Made, winner: str, matches: int) -> None:
    for _ in range(matches):
        job = made.ladder.claim(worker(made), "w")
        assert job is not None and job.kind is JobKind.MATCH
        made.ladder.report(worker(made), job.id, played(job, winner=winner))


def test_snapshot_freezes_the_ladder_and_marks_each_student_from_their_snapshot_version(
    marked: Made, tmp_path: Path
) -> None:
    made = marked
    tokens = made.ladder.invite(["ann", "bob", "cid"])
    ann, bob = (made.ladder.authenticate(tokens[name]) for name in ("ann", "bob"))
    mine = made.ladder.submit(ann, bot_folder(tmp_path / "src", "ann", 0))
    made.ladder.submit(bob, bot_folder(tmp_path / "src", "bob", 1))
    pass_checks(made)
    _play_all(made, mine.id, 6)
    with pytest.raises(Forbidden):
        made.ladder.deadline_snapshot(ann)
    staff = made.ladder.authenticate(made.created.admin_token)
    assert made.ladder.deadline_snapshot(staff) == 2
    assert made.ladder.table(None).frozen
    with pytest.raises(LadderFrozen):
        made.ladder.submit(bob, bot_folder(tmp_path / "src", "bob2", 2))
    rows = {row.student: row for row in made.ladder.marks(staff)}
    assert rows["ann"].version_id == mine.id and rows["ann"].mark == 80
    assert rows["ann"].shares == {"heuristic": 1.0, "random": 1.0}
    assert rows["cid"].version_id is None and rows["cid"].mark is None
    csv_path, gradescope_path = made.ladder.export_marks(tmp_path / "out", staff)
    table = {row["student"]: row for row in csv.DictReader(csv_path.open())}
    assert table["ann"]["mark"] == "80" and table["ann"]["heuristic_share"] == "1"
    assert table["cid"]["mark"] == ""
    results = json.loads(gradescope_path.read_text())
    assert results["ann"]["score"] == 80 and results["ann"]["tests"][0]["max_score"] == 80
    assert results["ann"]["leaderboard"][0]["name"] == "Elo"
    with pytest.raises(Forbidden):
        made.ladder.marks(ann)


def test_the_final_run_keeps_playing_the_snapshot_versions(marked: Made, tmp_path: Path) -> None:
    made = marked
    tokens = made.ladder.invite(["ann", "bob"])
    for number, name in enumerate(("ann", "bob")):
        made.ladder.submit(made.ladder.authenticate(tokens[name]), bot_folder(tmp_path / "src", name, number))
    pass_checks(made)
    made.ladder.deadline_snapshot()
    snapshot = {row.version_id for row in made.ladder.marks()}
    job = made.ladder.claim(worker(made), "w")
    assert job is not None and job.kind is JobKind.MATCH
    assert {entrant["name"] for entrant in job.payload["entrants"]} - {"heuristic", "random"} <= snapshot


def test_the_unmarked_policy_lets_a_late_version_play_while_the_marks_stay_the_snapshots(tmp_path: Path) -> None:
    for made in _ladder(tmp_path, None, late="unmarked"):
        ann = made.ladder.authenticate(made.ladder.invite(["ann"])["ann"])
        on_time = made.ladder.submit(ann, bot_folder(tmp_path / "src", "a", 0))
        pass_checks(made)
        made.ladder.deadline_snapshot()
        late = made.ladder.submit(ann, bot_folder(tmp_path / "src", "b", 1))
        assert late.late
        pass_checks(made)
        staff = made.ladder.authenticate(made.created.admin_token)
        versions = {row.version for row in made.ladder.table(staff).rows} | _queued(made)
        assert {on_time.id, late.id} <= versions
        assert [row.version_id for row in made.ladder.marks()] == [on_time.id]


def _queued(made: Made) -> set[str]:
    names: set[str] = set()
    while (job := made.ladder.claim(worker(made), "w")) is not None:
        names |= {entrant["name"] for entrant in job.payload.get("entrants", [])}
    return names


def test_a_deadline_in_the_past_is_due_until_the_snapshot_is_taken(tmp_path: Path) -> None:
    for made in _ladder(tmp_path, None, deadline="\ndeadline = 2020-01-01T00:00:00Z"):
        assert made.ladder.deadline_due()
        made.ladder.deadline_snapshot()
        assert not made.ladder.deadline_due()

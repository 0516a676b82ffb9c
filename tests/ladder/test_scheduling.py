"""Scheduling after every change: new versions seated, a cap per pair, and nothing more once the table is
settled; the table as each asker may see it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from ladder_helpers import Made, bot_folder, pass_checks, played, students, worker

from tournaments.ladder import JobKind, init_ladder, open_ladder

MATCH_BOUND = 200
"""More matches than any of these tests needs: a loop past it is a scheduler that never stops."""


def _ladder(tmp_path: Path, **settings: object) -> Iterator[Made]:
    folder = tmp_path / "ladder"
    created = init_ladder(folder, "scout", 3, ["heuristic", "random"])
    path = folder / "ladder.toml"
    extra = "".join(f"\n{key} = {str(value).lower()}" for key, value in settings.items())
    path.write_text(path.read_text().replace("pseudonyms = true", "pseudonyms = true" + extra, 1))
    with open_ladder(folder) as ladder:
        yield Made(folder, created, ladder, None)


def _play_until_idle(made: Made, winner: str) -> int:
    """Play every match the ladder queues, `winner` first in each; how many."""
    for count in range(MATCH_BOUND):
        job = made.ladder.claim(worker(made), "w")
        if job is None:
            return count
        assert job.kind is JobKind.MATCH
        made.ladder.report(worker(made), job.id, played(job, winner=winner))
    raise AssertionError(f"the ladder was still queueing matches after {MATCH_BOUND}")


def test_a_new_version_is_seated_as_soon_as_it_passes(tmp_path: Path) -> None:
    for made in _ladder(tmp_path):
        people = students(made, "ann", "bob")
        made.ladder.submit(people["ann"], bot_folder(tmp_path / "src", "ann", 0))
        pass_checks(made)
        job = made.ladder.claim(worker(made), "w")
        assert job is not None
        made.ladder.report(worker(made), job.id, played(job))
        bob = made.ladder.submit(people["bob"], bot_folder(tmp_path / "src", "bob", 1))
        pass_checks(made)
        seated = set()
        while (job := made.ladder.claim(worker(made), "w")) is not None:
            seated |= {entrant["name"] for entrant in job.payload["entrants"]}
        assert bob.id in seated


def test_no_pair_plays_past_the_pair_cap(tmp_path: Path) -> None:
    for made in _ladder(tmp_path, pair_cap=12):
        people = students(made, "ann")
        made.ladder.submit(people["ann"], bot_folder(tmp_path / "src", "ann", 0))
        pass_checks(made)
        assert _play_until_idle(made, "heuristic") == 2
        staff = made.ladder.authenticate(made.created.admin_token)
        assert made.ladder.table(staff).games == 12


def test_scheduling_stops_once_the_table_is_settled(tmp_path: Path) -> None:
    for made in _ladder(tmp_path):
        people = students(made, "ann")
        made.ladder.submit(people["ann"], bot_folder(tmp_path / "src", "ann", 0))
        pass_checks(made)
        _play_until_idle(made, "heuristic")
        table = made.ladder.table(None)
        assert table.settled and all(row.settled for row in table.rows)


@pytest.fixture
def two(made: Made, tmp_path: Path) -> Made:
    people = students(made, "ann", "bob")
    made.ladder.submit(people["ann"], bot_folder(tmp_path / "src", "ann", 0))
    made.ladder.submit(people["bob"], bot_folder(tmp_path / "src", "bob", 1))
    pass_checks(made)
    job = made.ladder.claim(worker(made), "w")
    assert job is not None
    made.ladder.report(worker(made), job.id, played(job))
    return made


def test_spectators_see_pseudonyms_students_their_own_name_staff_every_name(two: Made) -> None:
    made = two
    public = {row.name for row in made.ladder.table(None).rows if not row.baseline}
    assert public and not public & {"ann", "bob"}
    assert all(row.version is None for row in made.ladder.table(None).rows)
    ann = made.ladder.authenticate(made.ladder.invite(["ann"])["ann"])
    rows = [row for row in made.ladder.table(ann).rows if not row.baseline]
    assert [row.name for row in rows if row.mine] == ["ann"] and "bob" not in {row.name for row in rows}
    assert all((row.version is not None) == row.mine for row in rows)
    staff = made.ladder.authenticate(made.created.admin_token)
    assert {row.name for row in made.ladder.table(staff).rows} == {"ann", "bob", "heuristic", "random"}


def test_without_pseudonyms_everyone_sees_names(tmp_path: Path) -> None:
    for made in _ladder(tmp_path):
        path = made.folder / "ladder.toml"
        path.write_text(path.read_text().replace("pseudonyms = true", "pseudonyms = false"))
        with open_ladder(made.folder) as ladder:
            ann = ladder.authenticate(ladder.invite(["ann"])["ann"])
            ladder.submit(ann, bot_folder(tmp_path / "src", "ann", 0))
            again = Made(made.folder, made.created, ladder, None)
            pass_checks(again)
            job = ladder.claim(worker(again), "w")
            assert job is not None
            ladder.report(worker(again), job.id, played(job))
            assert "ann" in {row.name for row in ladder.table(None).rows}

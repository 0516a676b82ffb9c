from __future__ import annotations

import tomllib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from ladder_helpers import Made, bot_folder, pass_checks, students, worker

from tournaments.ladder import (
    Forbidden,
    JobKind,
    LadderFrozen,
    QuotaExceeded,
    Role,
    UnknownItem,
    VersionStatus,
    init_ladder,
    open_ladder,
)


def test_a_submission_is_an_immutable_copy_queued_for_its_check(made: Made, tmp_path: Path) -> None:
    ann = students(made, "ann")["ann"]
    folder = bot_folder(tmp_path / "src", "ann")
    version = made.ladder.submit(ann, folder)
    assert version.status is VersionStatus.CHECKING
    (folder / "bot.py").write_text("changed after the upload")
    kept = made.ladder.fetch_version(version.digest)
    assert "run_bot" in (kept / "bot.py").read_text()
    assert not (kept / "bot.py").stat().st_mode & 0o222
    job = made.ladder.claim(worker(made), "w")
    assert job is not None and job.kind is JobKind.CHECK and job.payload["digest"] == version.digest


def test_the_same_content_again_is_the_same_version_and_costs_no_quota(made: Made, tmp_path: Path) -> None:
    ann = students(made, "ann")["ann"]
    folder = bot_folder(tmp_path / "src", "ann")
    first = made.ladder.submit(ann, folder)
    assert made.ladder.submit(ann, folder) == first
    assert len(made.ladder.versions(ann, "ann")) == 1


def test_the_hourly_quota_refuses_with_the_time_the_next_slot_opens(tmp_path: Path) -> None:
    folder = tmp_path / "ladder"
    init_ladder(folder, "scout", 3, ["heuristic"])
    path = folder / "ladder.toml"
    path.write_text(path.read_text().replace("quota_per_hour = 6", "quota_per_hour = 2"))
    with open_ladder(folder) as ladder:
        ann = ladder.authenticate(ladder.invite(["ann"])["ann"])
        first = ladder.submit(ann, bot_folder(tmp_path / "src", "a", 0))
        ladder.submit(ann, bot_folder(tmp_path / "src", "b", 1))
        with pytest.raises(QuotaExceeded) as refused:
            ladder.submit(ann, bot_folder(tmp_path / "src", "c", 2))
        assert (refused.value.next_slot - first.created).total_seconds() == 3600
        assert len(ladder.versions(ann, "ann")) == 2


def test_the_daily_quota_refuses_with_the_time_the_next_slot_opens(tmp_path: Path) -> None:
    folder = tmp_path / "ladder"
    init_ladder(folder, "scout", 3, ["heuristic"])
    path = folder / "ladder.toml"
    text = path.read_text().replace("quota_per_hour = 6", "quota_per_hour = 10")
    path.write_text(text.replace("quota_per_day = 30", "quota_per_day = 2"))
    with open_ladder(folder) as ladder:
        ann = ladder.authenticate(ladder.invite(["ann"])["ann"])
        first = ladder.submit(ann, bot_folder(tmp_path / "src", "a", 0))
        ladder.submit(ann, bot_folder(tmp_path / "src", "b", 1))
        with pytest.raises(QuotaExceeded, match="per day") as refused:
            ladder.submit(ann, bot_folder(tmp_path / "src", "c", 2))
        assert (refused.value.next_slot - first.created).total_seconds() == 24 * 3600
        assert len(ladder.versions(ann, "ann")) == 2


def test_only_students_submit_and_read_their_own_versions(made: Made, tmp_path: Path) -> None:
    people = students(made, "ann", "bob")
    folder = bot_folder(tmp_path / "src", "ann")
    with pytest.raises(Forbidden):
        made.ladder.submit(worker(made), folder)
    version = made.ladder.submit(people["ann"], folder)
    with pytest.raises(Forbidden):
        made.ladder.versions(people["bob"], "ann")
    with pytest.raises(Forbidden):
        made.ladder.version(people["bob"], version.id)
    with pytest.raises(UnknownItem):
        made.ladder.version(made.ladder.authenticate(made.created.admin_token), "v000000000000000")
    staff = made.ladder.authenticate(made.created.admin_token)
    assert staff.role is Role.STAFF
    assert made.ladder.version(staff, version.id).version == version


def test_the_previous_accepted_version_plays_until_the_new_one_passes(made: Made, tmp_path: Path) -> None:
    people = students(made, "ann", "bob")
    old = made.ladder.submit(people["ann"], bot_folder(tmp_path / "src", "ann1", 0))
    made.ladder.submit(people["bob"], bot_folder(tmp_path / "src", "bob", 1))
    pass_checks(made)
    new = made.ladder.submit(people["ann"], bot_folder(tmp_path / "src", "ann2", 1))
    assert old.id in matched(made) and new.id not in matched(made)
    pass_checks(made)
    made.ladder.fill_queue()
    assert new.id in matched(made)


def matched(made: Made) -> set[str]:
    """The entrants of every match job waiting (claimed here, then queued again)."""
    names: set[str] = set()
    while (job := made.ladder.claim(worker(made), "w")) is not None:
        names |= {entrant["name"] for entrant in job.payload.get("entrants", [])}
    made.ladder.reissue_expired(datetime.now(UTC) + timedelta(days=1))
    return names


def test_after_the_deadline_the_refuse_policy_freezes_submissions(made: Made, tmp_path: Path) -> None:
    ann = students(made, "ann")["ann"]
    made.ladder.deadline_snapshot()
    with pytest.raises(LadderFrozen):
        made.ladder.submit(ann, bot_folder(tmp_path / "src", "ann"))


def test_the_ladder_file_written_by_init_is_a_league_file_with_a_ladder_table(made: Made) -> None:
    data = tomllib.loads((made.folder / "ladder.toml").read_text())
    assert data["game"] == "scout" and data["players"] == 3
    assert [bot["name"] for bot in data["bots"]] == ["heuristic", "random"]
    assert data["ladder"]["pseudonyms"] is True
    assert "marks" not in data


def test_the_ladder_file_s_commented_marks_example_marks_once_uncommented(made: Made) -> None:
    path = made.folder / "ladder.toml"
    path.write_text(path.read_text().replace("# [marks]\n# ", "[marks]\n"))
    with open_ladder(made.folder, made.db_url) as reopened:
        assert reopened.file.league.marks == {"heuristic": ((0.25, 70.0), (0.65, 100.0))}


def test_the_roster_lists_each_student_with_the_version_playing_for_staff_only(made: Made, tmp_path: Path) -> None:
    people = students(made, "ann", "bob")
    first = made.ladder.submit(people["ann"], bot_folder(tmp_path / "src", "a1", 0))
    pass_checks(made)
    second = made.ladder.submit(people["ann"], bot_folder(tmp_path / "src", "a2", 1))
    with pytest.raises(Forbidden):
        made.ladder.roster(people["ann"])
    rows = {row.name: row for row in made.ladder.roster(made.ladder.authenticate(made.created.admin_token))}
    assert rows["ann"].versions == 2 and rows["ann"].latest == second and rows["ann"].playing == first.id
    assert rows["bob"].versions == 0 and rows["bob"].latest is None and rows["bob"].playing is None
    assert rows["ann"].pseudonym != "ann"

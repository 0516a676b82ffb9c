"""The database as the queue: claims never overlap, a result counts once, an expired claim is given out again."""

from __future__ import annotations

import multiprocessing
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from ladder_helpers import Made, bot_folder, claim_match, pass_checks, played, students, worker

from tournaments.ladder import BadResult, Forbidden, Job, JobKind, JobResult, VersionStatus, open_ladder

WORKERS = 4
STUDENTS = 24


def test_concurrent_workers_never_claim_one_job(made: Made, tmp_path: Path) -> None:
    """Each of several workers on its own connection pool claims until the queue is empty, all at once."""
    people = students(made, *(f"s{number}" for number in range(STUDENTS)))
    for number, who in enumerate(people.values()):
        made.ladder.submit(who, bot_folder(tmp_path / "src", f"b{number}", number))
    claimed: dict[str, list[str]] = {}
    failed: list[BaseException] = []
    start = threading.Barrier(WORKERS)

    def work(name: str) -> None:
        try:
            with open_ladder(made.folder, made.db_url) as ladder:
                me = ladder.authenticate(made.created.worker_token)
                start.wait(timeout=60)
                mine = claimed.setdefault(name, [])
                while (job := ladder.claim(me, name)) is not None:
                    mine.append(job.id)
        except BaseException as error:
            failed.append(error)
            raise

    threads = [threading.Thread(target=work, args=(f"w{number}",)) for number in range(WORKERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not failed
    every = [job for jobs in claimed.values() for job in jobs]
    assert len(every) == STUDENTS
    assert len(set(every)) == len(every)


def _claim_all(folder: str, db_url: str | None, token: str, name: str, start: Any, out: Any) -> None:
    """A worker process: claim until the queue is empty, then send the ids claimed."""
    with open_ladder(Path(folder), db_url) as ladder:
        me = ladder.authenticate(token)
        start.wait(timeout=60)
        mine = []
        while (job := ladder.claim(me, name)) is not None:
            mine.append(job.id)
    out.put(mine)


def test_worker_processes_never_claim_one_job(made: Made, tmp_path: Path) -> None:
    people = students(made, *(f"s{number}" for number in range(STUDENTS)))
    for number, who in enumerate(people.values()):
        made.ladder.submit(who, bot_folder(tmp_path / "src", f"b{number}", number))
    context = multiprocessing.get_context("spawn")
    start, out = context.Barrier(WORKERS), context.Queue()
    arguments = (str(made.folder), made.db_url, made.created.worker_token)
    processes = [
        context.Process(target=_claim_all, args=(*arguments, f"p{number}", start, out)) for number in range(WORKERS)
    ]
    for process in processes:
        process.start()
    claimed = [out.get(timeout=300) for _ in processes]
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    every = [job for jobs in claimed for job in jobs]
    assert len(every) == STUDENTS and len(set(every)) == len(every)


def _two_accepted(made: Made, tmp_path: Path) -> None:
    people = students(made, "ann", "bob")
    made.ladder.submit(people["ann"], bot_folder(tmp_path / "src", "ann", 0))
    made.ladder.submit(people["bob"], bot_folder(tmp_path / "src", "bob", 1))
    pass_checks(made)


def _games(made: Made) -> int:
    staff = made.ladder.authenticate(made.created.admin_token)
    return made.ladder.table(staff).games


def test_a_result_posted_twice_counts_once(made: Made, tmp_path: Path) -> None:
    _two_accepted(made, tmp_path)
    job = claim_match(made)
    result = played(job)
    made.ladder.report(worker(made), job.id, result)
    once = _games(made)
    made.ladder.report(worker(made), job.id, result)
    assert once == len(job.payload["games"]) == _games(made)


def test_an_expired_claim_is_reissued_and_its_late_report_does_not_double_count(made: Made, tmp_path: Path) -> None:
    _two_accepted(made, tmp_path)
    job = claim_match(made, "slow")
    assert made.ladder.reissue_expired() == 0
    later = datetime.now(UTC) + timedelta(seconds=made.ladder.file.settings.claim_timeout_s + 1)
    assert made.ladder.reissue_expired(later) == 1
    again = made.ladder.claim(worker(made), "fast")
    assert again is not None and again.id == job.id
    made.ladder.report(worker(made), job.id, played(job, winner="heuristic"))
    made.ladder.report(worker(made), again.id, played(again, winner="random"))
    assert _games(made) == len(job.payload["games"])


def test_a_result_that_does_not_fit_its_job_is_refused(made: Made, tmp_path: Path) -> None:
    _two_accepted(made, tmp_path)
    job = claim_match(made)
    wrong = played(job)
    wrong.data["games"][0]["seats"] = ["someone", "else", "entirely"]
    with pytest.raises(BadResult):
        made.ladder.report(worker(made), job.id, wrong)
    assert _games(made) == 0
    with pytest.raises(BadResult):
        made.ladder.report(worker(made), job.id, JobResult(JobKind.CHECK, {"passed": True}))


def test_only_workers_claim_and_report(made: Made, tmp_path: Path) -> None:
    ann = students(made, "ann")["ann"]
    with pytest.raises(Forbidden):
        made.ladder.claim(ann, "me")
    with pytest.raises(Forbidden):
        made.ladder.report(ann, "x", JobResult(JobKind.CHECK, {}))


def test_a_job_is_plain_data_that_survives_json(made: Made, tmp_path: Path) -> None:
    _two_accepted(made, tmp_path)
    job = claim_match(made)
    assert Job.from_dict(job.to_dict()) == job
    result = played(job)
    assert JobResult.from_dict(result.to_dict()) == result


def test_a_check_that_no_worker_finishes_is_given_up_and_its_version_refused(made: Made, tmp_path: Path) -> None:
    ann = students(made, "ann")["ann"]
    version = made.ladder.submit(ann, bot_folder(tmp_path / "src", "ann"))
    later = datetime.now(UTC) + timedelta(seconds=made.ladder.file.settings.claim_timeout_s + 1)
    for attempt in range(3):
        job = made.ladder.claim(worker(made), f"doomed{attempt}")
        assert job is not None and job.payload["version"] == version.id
        assert made.ladder.reissue_expired(later) == (1 if attempt < 2 else 0)
    assert made.ladder.claim(worker(made), "another") is None
    detail = made.ladder.version(ann, version.id)
    assert detail.version.status is VersionStatus.REFUSED and "never finished" in (detail.verdict or "")

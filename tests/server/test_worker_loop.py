"""The worker's loop on its own: it waits out a server that cannot be reached, keeps a finished result until the
server takes it, and leaves a job that fails to be reissued. The jobs here are real checks done by the ladder's
do_job, of a folder the test writes; only the source of jobs (the server) is a double."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tournaments.ladder import Job, JobKind, JobResult, UnknownItem
from tournaments.server.client import ServerUnreachable
from tournaments.server.worker import Backoff, RemoteJobs, work

FIRST_MOVE = Path(__file__).resolve().parents[1] / "fixtures" / "class" / "first_move"


class FlakyServer:
    """Answers a claim or a report only after failing `outages` times in a row, as a restarting server does."""

    name = "test-worker"

    def __init__(self, jobs: list[Job], outages: int, folder: Path) -> None:
        self.jobs = jobs
        self.outages = outages
        self.folder = folder
        self.failures = 0
        self.reports: list[tuple[str, JobResult]] = []

    def _maybe_down(self) -> None:
        if self.failures < self.outages:
            self.failures += 1
            raise ServerUnreachable("connection refused")
        self.failures = 0

    def claim(self) -> Job | None:
        self._maybe_down()
        return self.jobs.pop(0) if self.jobs else None

    def report(self, job: Job, result: JobResult) -> None:
        self._maybe_down()
        self.reports.append((job.id, result))

    def fetch(self, digest: str) -> Path:
        if digest == GONE:
            raise UnknownItem(f"no version {digest}")
        return self.folder


GONE = "f" * 64


def check_job(job_id: str, digest: str = "0" * 64) -> Job:
    payload = {"digest": digest, "version": f"v-{job_id}", "game": "scout", "players": 3, "student": "ann"}
    return Job(job_id, JobKind.CHECK, payload)


def test_a_worker_waits_out_a_restarting_server_and_reports_once(tmp_path: Path) -> None:
    server = FlakyServer([check_job("j1")], outages=3, folder=FIRST_MOVE)
    done = work(server, threading.Event(), idle=0.01, backoff=Backoff(0.01, 0.05), jobs=1)
    assert done == 1
    assert [job_id for job_id, _ in server.reports] == ["j1"]
    assert server.reports[0][1].kind is JobKind.CHECK
    assert server.reports[0][1].data["passed"] is True, server.reports[0][1].data["verdict"]


def test_a_job_that_fails_is_left_to_be_reissued_and_the_worker_goes_on() -> None:
    server = FlakyServer([check_job("gone", GONE), check_job("j2")], outages=0, folder=FIRST_MOVE)
    stop = threading.Event()
    original = server.report

    def report_and_stop(job: Job, result: JobResult) -> None:
        original(job, result)
        stop.set()

    server.report = report_and_stop  # type: ignore[method-assign]
    assert work(server, stop, idle=0.01, backoff=Backoff(0.01, 0.05)) == 1
    assert [job_id for job_id, _ in server.reports] == ["j2"]


def test_a_stopped_worker_stops_while_waiting() -> None:
    stop = threading.Event()
    stop.set()
    server = FlakyServer([check_job("j1")], outages=10**9, folder=FIRST_MOVE)
    assert work(server, stop, idle=0.01, backoff=Backoff(0.01, 0.05)) == 0


def test_backoff_grows_to_its_longest() -> None:
    pause = Backoff(0.5, 4.0).pauses()
    assert [pause() for _ in range(6)] == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]


@pytest.mark.parametrize("digest", ["../../etc", "a/b", "tree:ab:cd", "", "é"])
def test_a_remote_worker_fetches_only_content_hashes(tmp_path: Path, digest: str) -> None:
    from protocol.errors import BadInput
    from tournaments.server.client import LadderClient

    jobs = RemoteJobs(LadderClient("http://127.0.0.1:9", "token"), "w", tmp_path / "cache")
    with pytest.raises(BadInput):
        jobs.fetch(digest)
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())

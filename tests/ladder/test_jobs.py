"""Jobs done for real through do_job: check-bot on tiny submission folders, a match in the sandbox, and a worker
killed in the middle of a match."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from ladder_helpers import FIXTURES, Made

from referee.isolation import gvisor
from referee.isolation import sandbox as sandboxing
from referee.isolation.sandbox import SandboxProbe
from tournaments.ladder import (
    Forbidden,
    Job,
    JobKind,
    NoSandbox,
    Principal,
    VersionStatus,
    do_job,
    init_ladder,
    open_ladder,
    require_sandbox,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def local(tmp_path: Path) -> Iterator[Made]:
    """A ladder on SQLite: these tests are about the jobs, which do not depend on the database."""
    folder = tmp_path / "ladder"
    created = init_ladder(folder, "scout", 3, ["heuristic", "random"])
    with open_ladder(folder) as ladder:
        yield Made(folder, created, ladder, None)


def _do_checks(made: Made, worker: Principal) -> None:
    """Claim and do jobs until every check is done (matches met on the way are queued again)."""
    while (job := made.ladder.claim(worker, "w")) is not None:
        if job.kind is JobKind.CHECK:
            made.ladder.report(worker, job.id, do_job(job, made.ladder.fetch_version))
    made.ladder.reissue_expired(datetime.now(UTC) + timedelta(days=1))


def test_a_broken_submission_is_refused_with_its_report_and_never_plays_a_conforming_one_does(local: Made) -> None:
    made = local
    tokens = made.ladder.invite(["ann", "bob"])
    ann, bob = (made.ladder.authenticate(tokens[name]) for name in ("ann", "bob"))
    worker = made.ladder.authenticate(made.created.worker_token)
    good = made.ladder.submit(ann, FIXTURES / "first_move")
    bad = made.ladder.submit(bob, FIXTURES / "crash_at_start")
    _do_checks(made, worker)
    accepted = made.ladder.version(ann, good.id)
    refused = made.ladder.version(bob, bad.id)
    assert accepted.version.status is VersionStatus.ACCEPTED and accepted.check_report is not None
    assert refused.version.status is VersionStatus.REFUSED
    assert refused.verdict is not None and "does not conform" in refused.verdict
    assert bad.digest not in refused.verdict and str(made.folder) not in str(refused.check_report)
    assert refused.check_report is not None and refused.check_report["text"][-1] == refused.verdict
    assert any(line.startswith("handshake:") for line in accepted.check_report["text"]), "the report a person reads"
    job = made.ladder.claim(worker, "w")
    assert job is not None and job.kind is JobKind.MATCH
    names = {entrant["name"] for entrant in job.payload["entrants"]}
    assert names == {good.id, "heuristic", "random"}

    made.ladder.report(worker, job.id, do_job(job, made.ladder.fetch_version))
    staff = made.ladder.authenticate(made.created.admin_token)
    table = made.ladder.table(staff)
    assert table.games == len(job.payload["games"])
    assert {row.version for row in table.rows if not row.baseline} == {good.id}
    games = made.ladder.student_games(ann, "ann")
    assert len(games) == len(job.payload["games"]) and games[0].my_seat is not None
    assert isinstance(made.ladder.game_log(ann, games[0].id, games[0].my_seat), bytes)
    assert made.ladder.replay(ann, games[0].id)
    with pytest.raises(Forbidden):
        made.ladder.game_log(bob, games[0].id, games[0].my_seat)
    with pytest.raises(Forbidden):
        made.ladder.replay(bob, games[0].id)
    with pytest.raises(Forbidden):
        made.ladder.student_games(bob, "ann")


CLAIMER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from tournaments.ladder import JobKind, do_job, open_ladder

    folder, token, started = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    with open_ladder(folder) as ladder:
        worker = ladder.authenticate(token)
        job = ladder.claim(worker, "doomed")
        assert job is not None and job.kind is JobKind.MATCH

        def fetch(digest):
            started.write_text(job.id)
            return ladder.fetch_version(digest)

        ladder.report(worker, job.id, do_job(job, fetch))
    """
)


def test_a_worker_killed_mid_match_loses_no_game_and_its_reissued_job_counts_once(local: Made, tmp_path: Path) -> None:
    made = local
    ann = made.ladder.authenticate(made.ladder.invite(["ann"])["ann"])
    worker = made.ladder.authenticate(made.created.worker_token)
    made.ladder.submit(ann, FIXTURES / "first_move")
    _do_checks(made, worker)
    started = tmp_path / "started"
    child = subprocess.Popen(
        [sys.executable, "-c", CLAIMER, str(made.folder), made.created.worker_token, str(started)],
        cwd=ROOT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not started.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert started.exists(), "the worker never started its match"
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(timeout=60)
    killed = started.read_text()
    staff = made.ladder.authenticate(made.created.admin_token)
    assert made.ladder.table(staff).games == 0
    assert made.ladder.reissue_expired(datetime.now(UTC) + timedelta(days=1)) == 1
    job = made.ladder.claim(worker, "survivor")
    assert job is not None and job.id == killed
    result = do_job(job, made.ladder.fetch_version)
    made.ladder.report(worker, job.id, result)
    made.ladder.report(worker, job.id, result)
    assert made.ladder.table(staff).games == len(job.payload["games"])


@pytest.mark.parametrize("kind", [JobKind.CHECK, JobKind.MATCH])
def test_a_machine_without_the_sandbox_runs_no_students_bot(
    local: Made, monkeypatch: pytest.MonkeyPatch, kind: JobKind
) -> None:
    made = local
    ann = made.ladder.authenticate(made.ladder.invite(["ann"])["ann"])
    worker = made.ladder.authenticate(made.created.worker_token)
    made.ladder.submit(ann, FIXTURES / "first_move")
    if kind is JobKind.MATCH:
        _do_checks(made, worker)
    job = made.ladder.claim(worker, "w")
    assert job is not None and job.kind is kind
    fetched: list[str] = []

    def fetch(digest: str) -> Path:
        fetched.append(digest)
        return made.ladder.fetch_version(digest)

    monkeypatch.setattr(sandboxing, "probe", lambda: SandboxProbe("bubblewrap (bwrap) is not installed"))
    with pytest.raises(NoSandbox, match="bwrap"):
        do_job(job, fetch)
    with pytest.raises(NoSandbox):
        require_sandbox()
    assert fetched == [], "nothing of the student's was even fetched"


def _first_match(folder: Path, kernel: bool) -> tuple[Made, Principal, Job]:
    """A ladder (its file with `kernel = true` or without), ann's accepted version, and its first match, claimed."""
    created = init_ladder(folder, "scout", 3, ["heuristic", "random"])
    if kernel:
        (folder / "ladder.toml").write_text("kernel = true\n" + (folder / "ladder.toml").read_text())
    ladder = open_ladder(folder)
    made = Made(folder, created, ladder, None)
    ann = ladder.authenticate(ladder.invite(["ann"])["ann"])
    ladder.submit(ann, FIXTURES / "first_move")
    worker = ladder.authenticate(created.worker_token)
    _do_checks(made, worker)
    job = ladder.claim(worker, "w")
    assert job is not None and job.kind is JobKind.MATCH
    return made, worker, job


needs_kernel = pytest.mark.skipif(
    not gvisor.probe().usable and not os.environ.get("REFEREE_REQUIRE_KERNEL"),
    reason=f"no kernel per bot here: {gvisor.probe().problem}",
)


@pytest.mark.parametrize("kernel", [False, pytest.param(True, marks=needs_kernel)])
def test_a_ladder_file_s_kernel_reaches_its_checks_and_graded_matches(tmp_path: Path, kernel: bool) -> None:
    """`kernel = true` in the ladder file puts every bot of a check and of a graded match under a kernel of its
    own (the key was read as a league's and silently left out of the ladder's jobs)."""
    made, _, job = _first_match(tmp_path / "ladder", kernel)
    with made.ladder:
        assert job.payload["kernel"] is kernel


@needs_kernel
def test_a_kernel_ladder_refuses_at_its_check_a_bot_that_cannot_run_there(tmp_path: Path) -> None:
    """A shell-script bot plays in the full sandbox but not under a kernel of its own: at a kernel ladder its check
    refuses it with the reason, so it never enters the ladder to forfeit every game."""
    folder = tmp_path / "ladder"
    created = init_ladder(folder, "scout", 3, ["heuristic", "random"])
    (folder / "ladder.toml").write_text("kernel = true\n" + (folder / "ladder.toml").read_text())
    script = tmp_path / "shell-bot" / "bot"
    script.parent.mkdir()
    script.write_text('#!/bin/sh\nexec python3 -c "from bots.python.random_bot import main; main()"\n')
    script.chmod(0o755)
    with open_ladder(folder) as ladder:
        ann = ladder.authenticate(ladder.invite(["ann"])["ann"])
        version = ladder.submit(ann, script.parent)
        _do_checks(Made(folder, created, ladder, None), ladder.authenticate(created.worker_token))
        refused = ladder.version(ann, version.id)
    assert refused.version.status is VersionStatus.REFUSED
    assert refused.verdict is not None and "play it at the full level" in str(refused.check_report)


@needs_kernel
def test_a_graded_match_of_a_kernel_ladder_is_played_at_the_kernel_level(tmp_path: Path) -> None:
    made, _, job = _first_match(tmp_path / "ladder", kernel=True)
    with made.ladder:
        result = do_job(job, made.ladder.fetch_version)
    assert {game["isolation"] for game in result.data["games"]} == {"kernel"}

"""Ctrl-C and SIGTERM stop `referee play` the way they stop every command (tournaments/cli/signals.py): the
exit status is 128 + the signal, the command says what it got done, and no bot process of the match is left
alive, not even one started in the very instant the signal arrived; with the bots sandboxed or not."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from sandbox_checks import require_sandbox

from referee.isolation import uids
from referee.isolation.proctable import live_processes, read_process

NEVER_CONNECTS = Path(__file__).resolve().parents[1] / "fixtures" / "bots" / "never_connects.py"
PLAY_NEVER_CONNECTS = ["play", "scout", str(NEVER_CONNECTS), "random", "random", "--startup-time", "60"]
UNSANDBOXED = ["--no-sandbox"]
"""The fixture bot records its pid in FIXTURE_PID_DIR, which a sandbox would hide from it."""


def running(pid: int) -> bool:
    process = read_process(pid)
    return process is not None and process.state != "Z"


def assert_gone(pid: int, seconds: float = 10.0) -> None:
    """Fail if `pid` is still running after a few seconds, killing it first so that a failure leaks nothing."""
    deadline = time.monotonic() + seconds
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if running(pid):
        os.kill(pid, signal.SIGKILL)
        pytest.fail(f"bot process {pid} outlived the stopped command")


def _uid(pid: int) -> int | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    return next((int(line.split()[1]) for line in status.splitlines() if line.startswith("Uid:")), None)


def processes_of(uid_range: range) -> list[int]:
    """The live processes whose uid is in `uid_range`."""
    return [entry.pid for entry in live_processes() if _uid(entry.pid) in uid_range]


def private_uids() -> range:
    """Sandbox uids no other test run uses (REFEREE_SANDBOX_UIDS), so a check of what runs under them sees only
    this test's bots."""
    start = random.randrange(3_000_000_000, 4_000_000_000, 1024)
    return range(start, start + 1024)


def recorded_pid(directory: Path, process: subprocess.Popen[str], seconds: float = 60.0) -> int:
    """The pid the fixture bot wrote into `directory` (its file may exist a moment before its text does)."""
    deadline = time.monotonic() + seconds
    while not (texts := [text for file in directory.glob("*.pid") if (text := file.read_text())]):
        assert time.monotonic() < deadline and process.poll() is None, process.communicate()
        time.sleep(0.05)
    return int(texts[0])


@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_stopped_play_exits_128_plus_the_signal_and_kills_its_bots(
    tmp_path: Path, signum: signal.Signals, status: int
) -> None:
    command = [sys.executable, "-c", "from tournaments.cli import main; main()", *PLAY_NEVER_CONNECTS, *UNSANDBOXED]
    env = {**os.environ, "FIXTURE_PID_DIR": str(tmp_path)}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        bot = recorded_pid(tmp_path, process)
        process.send_signal(signum)
        _, errors = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == status, errors
    assert "Stopped after 0 of 6 game(s)" in errors and "Traceback" not in errors
    assert_gone(bot)


# Runs `referee play` with subprocess.Popen wrapped so that SIGTERM arrives just after the first bot process
# is created and before the match has been handed it: the window that only the shared stop path can close.
SIGTERM_AT_FIRST_BOT = textwrap.dedent(
    """
    import os, signal, subprocess, sys, time

    real_popen = subprocess.Popen

    class TerminatedAtBirth(real_popen):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            if kwargs.get("start_new_session"):
                print(self.pid, file=sys.stderr, flush=True)
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(60)

    subprocess.Popen = TerminatedAtBirth
    from tournaments.cli import main
    main(sys.argv[1:])
    """
)


@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_stopped_play_kills_its_sandboxed_bots(signum: signal.Signals, status: int) -> None:
    """The sandboxed bots run under uids of their own: none is left running once the command has stopped."""
    require_sandbox()
    bot_uids = private_uids()
    env = {**os.environ, uids.UID_RANGE_VARIABLE: f"{bot_uids.start}-{bot_uids.stop - 1}"}
    command = [sys.executable, "-c", "from tournaments.cli import main; main()", *PLAY_NEVER_CONNECTS]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 60
        while not (bots := processes_of(bot_uids)):  # bots start one at a time: the first never connects
            assert time.monotonic() < deadline and process.poll() is None, process.communicate()
            time.sleep(0.05)
        process.send_signal(signum)
        _, errors = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == status, errors
    assert "Stopped after 0 of 6 game(s)" in errors and "Traceback" not in errors  # the balanced 3-seat match
    for bot in bots:
        assert_gone(bot)
    assert not processes_of(bot_uids)


@pytest.mark.parametrize("sandbox", [True, False], ids=["sandboxed", "unsandboxed"])
def test_sigterm_while_a_bot_starts_kills_the_bot_its_match_never_knew(sandbox: bool) -> None:
    if sandbox:
        require_sandbox()
    completed = subprocess.run(
        [sys.executable, "-c", SIGTERM_AT_FIRST_BOT, *PLAY_NEVER_CONNECTS, *([] if sandbox else UNSANDBOXED)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert completed.returncode == 143, completed.stderr
    assert "Traceback" not in completed.stderr
    bot = int(next(line for line in completed.stderr.splitlines() if line.isdigit()))  # after any warning
    assert_gone(bot)

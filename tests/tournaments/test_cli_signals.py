"""Ctrl-C and SIGTERM stop `referee play` the way they stop every command (tournaments/cli/signals.py): the
exit status is 128 + the signal, the command says what it got done, and no bot process of the match is left
alive, not even one started in the very instant the signal arrived."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from referee.proctable import read_process

NEVER_CONNECTS = Path(__file__).resolve().parents[1] / "fixtures" / "bots" / "never_connects.py"
PLAY_NEVER_CONNECTS = ["play", "scout", str(NEVER_CONNECTS), "random", "random", "--startup-time", "60"]


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
    command = [sys.executable, "-c", "from tournaments.cli import main; main()", *PLAY_NEVER_CONNECTS]
    env = {**os.environ, "FIXTURE_PID_DIR": str(tmp_path)}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        bot = recorded_pid(tmp_path, process)
        process.send_signal(signum)
        _, errors = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == status, errors
    assert "Stopped after 0 of 1 game(s)" in errors and "Traceback" not in errors
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


def test_sigterm_while_a_bot_starts_kills_the_bot_its_match_never_knew() -> None:
    completed = subprocess.run(
        [sys.executable, "-c", SIGTERM_AT_FIRST_BOT, *PLAY_NEVER_CONNECTS], capture_output=True, text=True, timeout=60
    )
    assert completed.returncode == 143, completed.stderr
    assert "Traceback" not in completed.stderr
    bot = int(completed.stderr.splitlines()[0])
    assert_gone(bot)

"""A rootless run: `referee doctor`, `referee play` and a league run by a user who is not root, whose doctor
output, warning on stderr and recorded isolation level (play's JSON, the store) must agree.

As root the test makes that user (useradd, once) and runs the commands as it with setpriv; if the Python
that runs the tests lies under a folder other users cannot enter (a 0700 /root holding pyenv), the commands
run in a mount namespace of their own where a world-readable tmpfs replaces that folder, with only the
interpreter's installation bound back in (nothing on the machine changes). Without root the commands run as
the current user. It skips where neither can be done, and fails there instead under REFEREE_REQUIRE_SANDBOX.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_checks import REQUIRE_SANDBOX

pytestmark = pytest.mark.timeout(600)

USER = "referee-rootless"
REFEREE = Path(sys.executable).with_name("referee")
LEAGUE = """
game = "scauver"
players = 2
seed = 5
deals_per_match = 1

[config]
round_cap = 25

[[bots]]
name = "a"
command = "random"

[[bots]]
name = "b"
command = "random"

[[bots]]
name = "c"
command = "random"
"""


def _cannot(reason: str) -> None:
    if os.environ.get(REQUIRE_SANDBOX):
        pytest.fail(f"{REQUIRE_SANDBOX} is set but a rootless run cannot be made here: {reason}")
    pytest.skip(reason)


def _blocked_ancestor(path: Path) -> tuple[Path, Path] | None:
    """The first folder above `path` that other users cannot enter, and its child on the way to `path`."""
    for folder in reversed(path.parents):
        if folder != Path("/") and not folder.stat().st_mode & stat.S_IXOTH:
            return folder, path.parents[len(path.parents) - len(folder.parts) - 1]
    return None


def _as_user_prefix(work: Path) -> list[str]:
    """The command prefix that runs a command as USER, HOME and TMPDIR in `work`."""
    environment = ["env", f"HOME={work}", f"TMPDIR={work}", f"PATH={os.environ.get('PATH', '/usr/bin:/bin')}"]
    if os.geteuid() != 0:
        return environment
    for tool in ("useradd", "setpriv", "unshare"):
        if shutil.which(tool) is None:
            _cannot(f"{tool} is not installed")
    if subprocess.run(["id", USER], capture_output=True, check=False).returncode != 0:
        made = subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER],
            capture_output=True,
            text=True,
            check=False,
        )
        if made.returncode != 0:
            _cannot(f"useradd {USER} failed: {made.stderr.strip()}")
    switch = ["setpriv", "--reuid", USER, "--regid", USER, "--clear-groups", "--", *environment]
    blocked = _blocked_ancestor(Path(os.path.realpath(sys.executable)))
    if blocked is None:
        return switch
    folder, child = blocked
    script = (
        'set -e; stage=$(mktemp -d); mount --bind "$1" "$stage"; mount -t tmpfs -o mode=0755 tmpfs "$2"; '
        'mkdir -p "$1"; mount --bind "$stage" "$1"; shift 2; exec "$@"'
    )
    return [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        script,
        "sh",
        str(child),
        str(folder),
        *switch,
    ]


@pytest.fixture(scope="module")
def rootless() -> Iterator[tuple[list[str], Path]]:
    """(the prefix that runs a command as a user who is not root, a folder that user owns)."""
    work = Path(tempfile.mkdtemp(prefix="referee-rootless-"))
    try:
        prefix = _as_user_prefix(work)
        if os.geteuid() == 0:
            shutil.chown(work, USER, USER)
        yield prefix, work
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run(rootless: tuple[list[str], Path], *args: str) -> subprocess.CompletedProcess[str]:
    prefix, work = rootless
    return subprocess.run(
        [*prefix, str(REFEREE), *args], capture_output=True, text=True, cwd=work, timeout=300, check=False
    )


def test_doctor_stderr_and_the_recorded_level_agree(rootless: tuple[list[str], Path]) -> None:
    _, work = rootless
    who = subprocess.run([*rootless[0], "id", "-u"], capture_output=True, text=True, check=False)
    assert who.stdout.strip() not in ("", "0"), who.stderr
    doctor = _run(rootless, "doctor", "--json")
    report = json.loads(doctor.stdout)
    level = report["isolation"]
    missing = [check["name"] for check in report["checks"] if check["required"] and not check["ok"]]
    assert level != "full" and missing, "without root no bot gets a uid of its own"
    assert doctor.returncode == 1

    play = _run(rootless, "play", "scauver", "random", "random", "--seed", "3", "-o", "round_cap=25", "--json")
    assert play.returncode == 0, play.stderr
    assert [game["isolation"] for game in json.loads(play.stdout)["games"]] == [level, level]
    _says_what_is_missing(play.stderr, level, missing)

    league = work / "rootless.toml"
    league.write_text(LEAGUE)
    if os.geteuid() == 0:
        shutil.chown(league, USER, USER)
    run = _run(rootless, "tournament", "run", str(league), "-j", "1", "--bootstrap", "0")
    assert run.returncode == 0, run.stderr
    _says_what_is_missing(run.stderr, level, missing)
    with sqlite3.connect(league.with_suffix(".sqlite")) as db:
        stored = dict(db.execute("SELECT isolation, COUNT(*) FROM games GROUP BY isolation").fetchall())
    assert set(stored) == {level} and stored[level] == 6


def _says_what_is_missing(stderr: str, level: str, missing: list[str]) -> None:
    if level == "none":
        assert stderr.count("warning: the sandbox cannot run here") == 1, stderr
        return
    assert stderr.count("warning: bots run with partial isolation") == 1, stderr
    for name in missing:
        assert f"{name}: " in stderr, (name, stderr)

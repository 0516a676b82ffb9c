"""Fixtures shared across test packages: the bots in other languages, built or installed once per run.

This file puts tests/ on sys.path, where tests/referee and tests/protocol (folders without __init__.py) could
pass for the real packages; pyproject's `pythonpath = ["."]` puts the project root there too, so the real,
regular packages win the import."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    # A suite started in the background by a non-interactive shell (`cmd &`) inherits SIGINT ignored, and so would
    # every referee a test starts: Ctrl-C would never reach them and the tests of stopping would test nothing.
    # A handler here is reset to the default in each child at exec.
    signal.signal(signal.SIGINT, signal.default_int_handler)
C_BOT_DIR = ROOT / "bots" / "c"
JS_BOT_DIR = ROOT / "bots" / "js"


def _missing_c_toolchain() -> str | None:
    for tool in ("make", "cc", "pkg-config"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    if subprocess.run(["pkg-config", "--exists", "libzmq"], check=False).returncode != 0:
        return "libzmq is not installed (apt-get install libzmq3-dev)"
    if subprocess.run(["pkg-config", "--exists", "msgpack-c"], check=False).returncode != 0 and (
        subprocess.run(["pkg-config", "--exists", "msgpack"], check=False).returncode != 0
    ):
        return "msgpack-c is not installed (apt-get install libmsgpack-dev)"
    return None


@pytest.fixture(scope="session")
def c_bot() -> Path:
    """The C random bot, built by its Makefile (skips only when the compiler or libraries are missing)."""
    reason = _missing_c_toolchain()
    if reason is not None:
        pytest.skip(f"cannot build the C bot: {reason}")
    build = subprocess.run(["make", "-C", str(C_BOT_DIR)], capture_output=True, text=True, check=False)
    assert build.returncode == 0, build.stdout + build.stderr
    return C_BOT_DIR / "random_bot"


@pytest.fixture(scope="session")
def js_bot() -> list[str]:
    """The command of the Node.js random bot (skips when node or its npm packages are missing)."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    if not (JS_BOT_DIR / "node_modules" / "zeromq").is_dir():
        pytest.skip("the JS bot's packages are not installed (npm ci --prefix bots/js)")
    return ["node", str(JS_BOT_DIR / "random_bot.js")]


SMALL_DISK_BYTES = 2 * 1024 * 1024


@dataclass(frozen=True)
class SmallDisk:
    """A directory on a tmpfs of its own of SMALL_DISK_BYTES."""

    path: Path

    def fill(self, leave_bytes: int = 0) -> None:
        """Fill the disk but `leave_bytes` (with one file, `filler`)."""
        free = shutil.disk_usage(self.path).free
        with open(self.path / "filler", "wb") as filler:
            filler.write(b"\0" * max(0, free - leave_bytes))


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[SmallDisk]:
    """A small disk to fill up, unmounted after the test. Mounting needs root (or CAP_SYS_ADMIN): elsewhere the
    test is skipped, or fails where REFEREE_REQUIRE_SANDBOX is set (a CI that runs as root, where a skip would
    hide a lost check)."""
    directory = tmp_path / "small-disk"
    directory.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={SMALL_DISK_BYTES}", "tmpfs", str(directory)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        reason = f"cannot mount a small tmpfs here: {mounted.stderr.strip() or mounted.returncode}"
        if os.environ.get("REFEREE_REQUIRE_SANDBOX"):
            pytest.fail(reason)
        pytest.skip(reason)
    try:
        yield SmallDisk(directory)
    finally:
        subprocess.run(["umount", "--lazy", str(directory)], capture_output=True, check=False)

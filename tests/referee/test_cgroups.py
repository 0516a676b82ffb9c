"""A bot's cgroup as the referee writes it, on a folder standing in for a cgroup v2 parent (this tests the files
and values written; tests/referee/test_freezing.py tests freezing on the machine's own cgroups)."""

from __future__ import annotations

import dataclasses
import signal
import subprocess
import time
from pathlib import Path

from protocol import limits
from referee.isolation.cgroups import FREEZE_WAIT_S, BotCgroup, CgroupMode, CgroupSupport, Freezer, Hierarchy


def v2_freezer(folder: Path, frozen: bool = True) -> Freezer:
    """A stand-in for cgroup v2's freezer in `folder`, its events file saying the freeze is (or is not) complete."""
    (folder / "cgroup.freeze").write_text("0")
    (folder / "cgroup.events").write_text(f"populated 1\nfrozen {int(frozen)}\n")
    return Freezer(folder / "cgroup.freeze", b"1", b"0", folder / "cgroup.events", b"frozen 1")


def test_a_cgroup_v2_bot_gets_an_equal_weight_and_a_quota(tmp_path: Path) -> None:
    support = CgroupSupport(CgroupMode.V2, (Hierarchy(tmp_path, frozenset({"memory", "pids", "cpu"})),))
    assert support.cpu and support.freezer
    BotCgroup.create(support, "bot-1", 256 * 1024 * 1024, 64, {0, 1})
    folder = tmp_path / "card-referee-bot-1"
    assert (folder / "cpu.weight").read_text() == "100"
    quota = int(2 * limits.BOT_CPU_SHARE * 100_000)
    assert (folder / "cpu.max").read_text() == f"{quota} 100000"
    assert (folder / "memory.max").read_text() == str(256 * 1024 * 1024)
    assert (folder / "pids.max").read_text() == "64"


def test_holding_writes_the_freezer_file_each_time_from_its_start(tmp_path: Path) -> None:
    freezer = tmp_path / "cgroup.freeze"
    group = BotCgroup((tmp_path,), v2_freezer(tmp_path))
    assert group.can_hold
    group.hold(True)
    assert freezer.read_text() == "1"
    group.hold(False)
    assert freezer.read_text() == "0"
    assert not BotCgroup((tmp_path,)).can_hold


def test_a_bot_that_never_reports_frozen_holds_the_referee_only_for_the_bound(tmp_path: Path) -> None:
    """A freeze the cgroup never reports complete (a process stuck in a kernel call) is waited for FREEZE_WAIT_S,
    then the floor is set and the referee goes on."""
    group = BotCgroup((tmp_path,), v2_freezer(tmp_path, frozen=False))
    started = time.monotonic()
    group.hold(True)
    assert FREEZE_WAIT_S <= time.monotonic() - started < 5.0
    assert (tmp_path / "cgroup.freeze").read_text() == "1"


def test_without_cpu_or_freezer_a_v1_machine_says_so() -> None:
    support = CgroupSupport(CgroupMode.V1, (Hierarchy(Path("/x"), frozenset({"memory"})),))
    assert not support.cpu and not support.freezer


def test_a_frozen_bot_gets_the_lowest_cpu_weight_and_quota_and_its_own_back_when_thawed(tmp_path: Path) -> None:
    support = CgroupSupport(CgroupMode.V2, (Hierarchy(tmp_path, frozenset({"memory", "pids", "cpu"})),))
    group = BotCgroup.create(support, "bot-2", None, 64, {0, 1})
    folder = tmp_path / "card-referee-bot-2"
    quota = int(2 * limits.BOT_CPU_SHARE * 100_000)
    assert group.cpu_floor == (
        (folder / "cpu.weight", "1", "100"),
        (folder / "cpu.max", "1000 100000", f"{quota} 100000"),
    )
    for name in ("cpu.weight", "cpu.max"):
        (folder / name).write_text("")  # a regular file keeps what a shorter value does not overwrite
    holding = dataclasses.replace(group, freezer=v2_freezer(folder))
    holding.hold(True)
    assert (folder / "cgroup.freeze").read_text() == "1"
    assert (folder / "cpu.weight").read_text() == "1"
    assert (folder / "cpu.max").read_text() == "1000 100000"
    holding.hold(False)
    assert (folder / "cgroup.freeze").read_text() == "0"
    assert (folder / "cpu.weight").read_text() == "100"
    assert (folder / "cpu.max").read_text() == f"{quota} 100000"
    holding.remove()


def test_killing_a_bot_kills_every_process_in_its_cgroups_and_thaws_them(tmp_path: Path) -> None:
    """What its cgroups hold dies, whatever its session (a process frozen by cgroup v1 dies of SIGKILL only once
    thawed, so the freezer is thawed too, after the signal)."""
    stray = subprocess.Popen(["sleep", "600"], start_new_session=True)
    try:
        (tmp_path / "cgroup.procs").write_text(f"{stray.pid}\n")
        group = BotCgroup((tmp_path,), v2_freezer(tmp_path))
        (tmp_path / "cgroup.freeze").write_text("1")
        group.kill()
        assert stray.wait(timeout=10) == -signal.SIGKILL
        assert (tmp_path / "cgroup.freeze").read_text() == "0"
    finally:
        stray.kill()
        stray.wait()

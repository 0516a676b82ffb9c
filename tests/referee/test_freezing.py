"""Bots not on move are frozen: a bot that burns CPU in a background thread and in a child of a session of its
own makes no progress during the other seat's turns, unless the match lets bots ponder (MatchSpec.ponder),
and freezing changes no result.

The burner (tests/fixtures/bots/burns_off_turn.py) measures itself, by the wall clock inside its sandbox, in
which 10 ms of each interval between its answer and its next request its thread ran; the other seat
(thinks_each_move.py) takes 0.4 s per decision, so each such interval is long, and the burner leaves its first
and last 0.15 s out (the referee's time to freeze and thaw it, generously under load).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from referee_helpers import FIXTURE_BOTS, TEST_LIMITS, fixture_bot, match_spec
from sandbox_checks import require_sandbox

from referee import replay
from referee.games import load_game
from referee.isolation import cgroups, sandbox
from referee.isolation.cgroups import BotCgroup, CgroupMode
from referee.isolation.process import BotProcess
from referee.match import run_match
from referee.records import MatchRecord
from referee.session import BotTransport


def _burn(tmp_path: Path, ponder: bool) -> tuple[MatchRecord, list[dict[str, float]]]:
    require_sandbox()
    if not sandbox.probe().cgroups.freezer:
        pytest.skip(f"bots cannot be frozen here: {sandbox.probe().whole_bot_limits}")
    spec = match_spec(
        "scout", [fixture_bot("burns_off_turn"), fixture_bot("thinks_each_move")], games=1, seed=3,
        limits=TEST_LIMITS, log_dir=str(tmp_path / "logs"), ponder=ponder,
    )  # fmt: skip
    record = run_match(spec)
    log = Path(str(record.bots[0].log_path)).read_text()
    burns = [json.loads(line.removeprefix("BURN ")) for line in log.splitlines() if line.startswith("BURN ")]
    assert len(burns) >= 3, log[-2000:]
    return record, burns


def _ran(burns: list[dict[str, float]], part: str) -> float:
    """The part of the other seats' time in which the burner's thread (part "ran_s") or its child in a session
    of its own ("child_ran_s") ran."""
    return sum(burn[part] for burn in burns) / sum(burn["off_turn_s"] for burn in burns)


def test_a_bot_not_on_move_gets_no_cpu(tmp_path: Path) -> None:
    record, burns = _burn(tmp_path, ponder=False)
    assert _ran(burns, "ran_s") <= 0.02 and _ran(burns, "child_ran_s") <= 0.02, burns
    assert not record.games[0].faults


def test_with_ponder_a_bot_runs_on_the_others_time(tmp_path: Path) -> None:
    record, burns = _burn(tmp_path, ponder=True)
    assert _ran(burns, "ran_s") >= 0.1 and _ran(burns, "child_ran_s") >= 0.1, burns
    assert not record.games[0].faults


def test_freezing_changes_no_result(tmp_path: Path) -> None:
    """The same deals between the same deterministic bots, frozen and pondering: the same results."""
    require_sandbox()
    bots = ["heuristic", "heuristic"]
    results = []
    for ponder in (False, True):
        spec = match_spec("scout", bots, games=2, seed=5, log_dir=str(tmp_path / str(ponder)), ponder=ponder)
        record = run_match(dataclasses.replace(spec, replay_dir=str(tmp_path / f"replays-{ponder}")))
        results.append([(game.ranks, game.scores) for game in record.games])
    assert results[0] == results[1]


SLEEPER = "import time\nprint('up', flush=True)\ntime.sleep(600)\n"


def test_freezing_takes_the_bot_and_its_children_not_the_sandbox_in_front_of_it(tmp_path: Path) -> None:
    """A frozen bot's program is in its frozen freezer cgroup; bwrap and the init of its PID namespace, which
    run no bot code, are not (cgroup v1 mode, whose freezer is a hierarchy of its own, v1's or a hybrid
    machine's cgroup2 one: freezing wakes every sleeping process it holds, on every decision). Every process of
    the bot is scheduled as SCHED_BATCH."""
    require_sandbox()
    support = sandbox.probe().cgroups
    if support.mode is not CgroupMode.V1 or not support.freezer:
        pytest.skip(f"no cgroup v1 freezer here: {sandbox.probe().whole_bot_limits}")
    workdir = tmp_path / "match"
    workdir.mkdir()
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(workdir / "referee.sock"))
    sandbox.expose_socket(workdir / "referee.sock")
    request = sandbox.SandboxRequest(workdir / "referee.sock", sandbox.masked_paths([workdir]))
    log = tmp_path / "bot.log"
    process = BotProcess.start(
        [sys.executable, "-c", SLEEPER], sandbox.bot_environment("t"), log, 1 << 16, sandbox=request
    )
    try:
        deadline = time.monotonic() + 60
        while "up" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert "up" in log.read_text(), log.read_text()
        process.hold(True)
        assert process.jail is not None and process.jail.cgroup is not None
        pids = process.jail.cgroup.pids()
        sandbox_pids = {process.pid, *(pid for pid in pids if _parent(pid) == process.pid)}
        assert len(pids) == 3 and len(sandbox_pids) == 2, pids
        (bot_pid,) = pids - sandbox_pids
        assert process.jail.cgroup.freezer is not None
        freezer_file = process.jail.cgroup.freezer.file
        in_freezer = {int(pid) for pid in (freezer_file.parent / "cgroup.procs").read_text().split()}
        assert in_freezer == {bot_pid}, (in_freezer, pids)
        while not _frozen(freezer_file) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _frozen(freezer_file)
        assert {os.sched_getscheduler(pid) for pid in pids} == {os.SCHED_BATCH}
    finally:
        process.kill()
        listener.close()
    assert not process.jail or not process.jail.cgroup or not process.jail.cgroup.pids()


SPINNER = """
import mmap, sys, threading, time
with open(sys.argv[1], "r+b") as file:
    stamps = mmap.mmap(file.fileno(), 8 * 4)
def spin(slot):
    while True:
        stamps[slot * 8:slot * 8 + 8] = time.monotonic_ns().to_bytes(8, "little")
for slot in range(4):
    threading.Thread(target=spin, args=(slot,), daemon=True).start()
print("up", flush=True)
threading.Event().wait()
"""


def test_a_freeze_is_complete_when_hold_returns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Four threads spin, each stamping the machine's clock into a shared file. Once `hold(True)` returns, the
    cgroup says the bot is frozen, and by their own stamps none of the threads runs again. The kernel completes a
    freeze asynchronously (a running thread stops within microseconds, one waiting for a CPU when it next gets
    one), and its interface promises only that the state file says when; a referee that did not wait for that
    could thaw the next bot while this one still ran. The wait is bounded by FREEZE_WAIT_S, lengthened here so
    that a loaded machine cannot fail the test."""
    support = sandbox.probe().cgroups
    if not support.freezer or os.geteuid() != 0:
        pytest.skip(f"bots cannot be frozen here: {sandbox.probe().whole_bot_limits}")
    monkeypatch.setattr(cgroups, "FREEZE_WAIT_S", 30.0)
    shared = tmp_path / "stamps"
    shared.write_bytes(bytes(8 * 4))
    group = BotCgroup.create(support, f"spin-{os.getpid()}", 1 << 28, 64, sorted(os.sched_getaffinity(0)))
    spinner = subprocess.Popen(
        [sys.executable, "-c", SPINNER, str(shared)], stdout=subprocess.PIPE, text=True, preexec_fn=group.join
    )
    try:
        assert spinner.stdout is not None and spinner.stdout.readline() == "up\n"
        assert group.freezer is not None
        not_frozen, late = 0, []
        for _ in range(40):
            time.sleep(0.005)
            group.hold(True)
            frozen_at = time.monotonic_ns()
            not_frozen += not _frozen(group.freezer.file)
            time.sleep(0.005)
            stamps = shared.read_bytes()
            group.hold(False)
            last = max(int.from_bytes(stamps[slot * 8 : slot * 8 + 8], "little") for slot in range(4))
            late += [last - frozen_at] if last > frozen_at else []
        assert not not_frozen, f"{not_frozen} of 40 freezes were not complete when hold returned"
        assert not late, f"{len(late)} of 40 freezes let the spinner run on, by up to {max(late) / 1000:.0f} us"
    finally:
        spinner.kill()
        spinner.wait()
        group.remove()


def test_a_hybrid_machine_freezes_bots_through_its_cgroup2_hierarchy() -> None:
    """Where cgroup v1 holds the limits and a cgroup2 hierarchy is mounted beside it (systemd's hybrid layout),
    bots are frozen through cgroup2's cgroup.freeze, not v1's freezer.state (`bench protocol` prints what
    freezing costs)."""
    support = sandbox.probe().cgroups
    cgroup2 = any(line.split()[2] == "cgroup2" for line in Path("/proc/self/mounts").read_text().splitlines())
    if support.mode is not CgroupMode.V1 or not cgroup2 or os.geteuid() != 0:
        pytest.skip(f"not a hybrid cgroup machine run as root: {sandbox.probe().whole_bot_limits}")
    group = BotCgroup.create(support, f"hybrid-{os.getpid()}", None, 8, ())
    try:
        assert group.freezer is not None and group.freezer.file.name == "cgroup.freeze", group
        folder = group.freezer.file.parent
        assert support.freezer_kind.startswith("cgroup v2 freezer")
    finally:
        group.remove()
    assert not folder.exists()


def _frozen(freezer_file: Path) -> bool:
    """Whether the freezer of `freezer_file` (v1's freezer.state, or cgroup.freeze) has stopped every task."""
    if freezer_file.name == "freezer.state":
        return freezer_file.read_text().strip() == "FROZEN"
    return "frozen 1" in (freezer_file.parent / "cgroup.events").read_text().splitlines()


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


class _CountingThaws:
    """A bot process whose thaws are counted."""

    def __init__(self, process: BotProcess, thaws: list[int]) -> None:
        self._process = process
        self._thaws = thaws

    def __getattr__(self, name: str) -> Any:
        return getattr(self._process, name)

    def hold(self, frozen: bool) -> None:
        if not frozen:
            self._thaws.append(self._process.pid)
        self._process.hold(frozen)


def test_a_bot_on_move_again_is_not_frozen_and_thawed_in_between(tmp_path: Path) -> None:
    """After a bot's answer, if it is the one seat on move next, it keeps running (no one else is thawed in
    between); every other decision thaws its bot. 3-seat SCOUT has many such pairs (a Scout, then that seat's
    own next move in a round of few cards). The scripted version, exact to the thaw, is in
    test_match_scripted.py; this one is the real sandbox's."""
    require_sandbox()
    if not sandbox.probe().cgroups.freezer:
        pytest.skip(f"bots cannot be frozen here: {sandbox.probe().whole_bot_limits}")
    thaws: list[int] = []

    def start(*args: Any, **kwargs: Any) -> _CountingThaws:
        return _CountingThaws(BotProcess.start(*args, **kwargs), thaws)

    bots = dataclasses.replace(BotTransport.local(), start_bot=start)
    spec = match_spec("scout", ["random", "random", "random"], games=1, seed=2, replay_dir=str(tmp_path))
    record = run_match(spec, transport=bots)
    moves = replay.load(str(record.games[0].replay_path))["actions"]
    state = load_game("scout").new_game(3, record.games[0].seed)
    alone, again, phases = [], 0, 0
    for move in moves:
        movers = state.to_move()
        alone.append(movers[0] if len(movers) == 1 else None)
        phases += len(movers) > 1 and (len(alone) < 2 or alone[-2] is not None)
        again += alone[-1] is not None and len(alone) > 1 and alone[-2] == alone[-1]
        state.apply(move["seat"], move["action"])
    in_game = len(thaws) - 3  # the bye thaws each bot once
    assert again > 0 and all(move["by"] == "bot" for move in moves)
    assert len(moves) - again - phases <= in_game <= len(moves) - again


def _runtime_s(pids: set[int]) -> float:
    """The CPU time every thread of `pids` has had, in seconds (the scheduler's own count, in ns)."""
    total = 0
    for pid in pids:
        for stat in Path(f"/proc/{pid}/task").glob("*/schedstat"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                total += int(stat.read_text().split()[0])
    return total / 1e9


def _taken_while_frozen(floor: bool) -> tuple[float, float]:
    """(share of a CPU the frozen reader took, share the busy bot on move had), both pinned to one CPU, over
    five freezes of 0.3 s: short enough that the reads in flight at each freeze (64 of about 35 ms of CPU
    each) are not done by its end, however loaded the machine."""
    support = sandbox.probe().cgroups
    if not (support.freezer and support.cpu and support.cpuset) or os.geteuid() != 0:
        pytest.skip(f"no freezer, cpu and cpuset cgroups here: {sandbox.probe().whole_bot_limits}")
    cpu = max(os.sched_getaffinity(0))
    groups = [BotCgroup.create(support, f"floor-{os.getpid()}-{name}", 1 << 29, 512, {cpu}) for name in "rm"]
    reader_group = groups[0] if floor else dataclasses.replace(groups[0], cpu_floor=())
    reader = subprocess.Popen(
        [sys.executable, str(FIXTURE_BOTS / "_kernel_reader.py")], stdout=subprocess.PIPE, preexec_fn=groups[0].join
    )
    mover = subprocess.Popen(
        [sys.executable, "-c", "print('busy', flush=True)\nwhile True: pass"], stdout=subprocess.PIPE,
        preexec_fn=groups[1].join,
    )  # fmt: skip
    try:
        assert reader.stdout is not None and reader.stdout.readline() == b"reading\n"
        assert mover.stdout is not None and mover.stdout.readline() == b"busy\n"
        taken = busy = elapsed = 0.0
        for _ in range(5):
            reader_group.hold(True)
            started, reader_before, mover_before = time.monotonic(), _runtime_s({reader.pid}), _runtime_s({mover.pid})
            time.sleep(0.3)
            taken += _runtime_s({reader.pid}) - reader_before
            busy += _runtime_s({mover.pid}) - mover_before
            elapsed += time.monotonic() - started
            reader_group.hold(False)
            time.sleep(0.2)
    finally:
        for process in (reader, mover):
            process.kill()
            process.wait()
        for group in (reader_group, *groups):
            group.remove()
    return taken / elapsed, busy / elapsed


def test_a_frozen_bot_busy_in_the_kernel_takes_no_cpu_from_the_bot_on_move() -> None:
    """64 threads in long reads of a shared-memory file go on inside the kernel after the freeze (each call to
    its end); with the CPU floor while frozen, what is left of them yields to the bot on move on their CPU (here
    it took 0.08-0.09 of what the bot on move had, against 1.0 without the floor)."""
    taken, busy = _taken_while_frozen(True)
    assert busy > 0 and taken <= 0.2 * busy, (taken, busy)


def test_without_the_cpu_floor_a_frozen_bot_busy_in_the_kernel_takes_cpu() -> None:
    """The same without the floor: the reads in flight when the freeze came take a good part of the CPU from the
    bot on move (what the test above would see if the floor were gone)."""
    taken, busy = _taken_while_frozen(False)
    assert busy > 0 and taken >= 0.6 * busy, (taken, busy)


AWAKE_LIMITS = dataclasses.replace(TEST_LIMITS, log_cap_bytes=8 * 1024 * 1024)


def _awake_intervals(tmp_path: Path) -> list[list[tuple[int, int]]]:
    """Two awake recorders play two games of SCOUT (a start-up each, an orientation decision at every round,
    new processes between the games, a bye each): each one's awake intervals, as it recorded them."""
    require_sandbox()
    if not sandbox.probe().cgroups.freezer:
        pytest.skip(f"bots cannot be frozen here: {sandbox.probe().whole_bot_limits}")
    recorder = fixture_bot("awake_recorder")
    bots = [dataclasses.replace(recorder, name=name) for name in ("first", "second")]
    spec = match_spec("scout", bots, games=2, seed=5, limits=AWAKE_LIMITS, log_dir=str(tmp_path / "logs"))
    record = run_match(spec)
    assert not any(game.faults for game in record.games), [game.faults for game in record.games]
    intervals = []
    for bot in record.bots:
        log = Path(str(bot.log_path)).read_text()
        batches = [json.loads(line.removeprefix("AWAKE ")) for line in log.splitlines() if line.startswith("AWAKE ")]
        intervals.append(sorted((start, end) for batch in batches for start, end in batch))
        assert len(intervals[-1]) >= 10, log[-2000:]
    return intervals


def _overlaps(first: list[tuple[int, int]], second: list[tuple[int, int]]) -> list[tuple[tuple[int, int], ...]]:
    """The pairs of intervals, one of each sorted list, that share an instant."""
    found, later = [], 0
    for a in first:
        while later < len(second) and second[later][1] < a[0]:
            later += 1
        index = later
        while index < len(second) and second[index][0] <= a[1]:
            found.append((a, second[index]))
            index += 1
    return found


def test_no_two_bots_are_ever_awake_together(tmp_path: Path) -> None:
    """Start-ups, simultaneous decisions, byes and the rest thaw one bot at a time: two bots that would pass
    their hands over a channel the kernel shares while both run never run together, by their own clocks. (The
    referee before this rule, which thawed every seat of SCOUT's orientation decision at once, fails it; bots
    that ponder overlap only when the scheduler runs them on two CPUs at once, which a loaded machine may not
    do, so the scripted table's test_without_freezing_bots_start_together_and_the_table_says_so is the control.)"""
    first, second = _awake_intervals(tmp_path)
    assert not _overlaps(first, second), _overlaps(first, second)[:5]

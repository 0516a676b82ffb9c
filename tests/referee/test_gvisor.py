"""The kernel isolation level (referee.isolation.gvisor): every bot under a gVisor kernel of its own.

Skipped, with runsc's reason, where runsc cannot run (.ci/run installs it and sets REFEREE_REQUIRE_KERNEL, so CI
runs them); the refusal where it cannot run is tested everywhere. The slim root's file set is tested without
runsc in test_kernel_root.py.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, cast

import pytest
from click.testing import CliRunner
from page_cache_channel import BITS, SHARED_PARENT, round_bits_right, shared_file
from referee_helpers import FIXTURE_BOTS

from referee.isolation import gvisor, kernel_root
from referee.isolation.process import BotProcess, BotStartError
from referee.isolation.proctable import live_processes, read_process
from referee.isolation.sandbox import Isolation, SandboxRequest, runtime_dir
from referee.match import run_match
from referee.records import BotSpec, GameSpec, MatchSpec
from tournaments.cli import main

needs_runsc = pytest.mark.skipif(
    not gvisor.probe().usable and not os.environ.get("REFEREE_REQUIRE_KERNEL"),
    reason=f"no kernel per bot here: {gvisor.probe().problem}",
)
"""CI (REFEREE_REQUIRE_KERNEL, set by .ci/run, which installs runsc) fails instead of skipping."""

CHANNELS = str(FIXTURE_BOTS / "kernel_channels.py")
DISK_STATS = str(FIXTURE_BOTS / "attack_disk_stats.py")
SHARED_FILE = sys.executable
"""A file every bot may map read-only (the interpreter: in /usr, or in the runtime a Python bot is shown)."""
HANG_BOUND_S = 120.0
CHANCE_BOUND = 0.65
"""The share of bits a receiver may get right over a test's rounds: chance is 0.5 (a binomial of 96 bits a
round: 0.65 of 3 rounds is 5.1 standard deviations above it, 3.3 with the spread 38 rounds under load gave,
7.5 bits a round); the open channel gave 0.6-0.99 a round, 0.74-0.88 over a test's rounds."""
PAGE_CACHE_ROUNDS = 3


def _runsc_processes() -> list[int]:
    """Live processes of this referee's kernels (their bundles are named after its pid)."""
    mark = f"{gvisor.KERNELS}/bot-{os.getpid()}-"
    found = []
    for process in live_processes():
        with open(f"/proc/{process.pid}/cmdline", "rb") as file:
            if mark.encode() in file.read() and process.state != "Z":
                found.append(process.pid)
    return found


def _slim_roots_mounted(referee: int) -> list[str]:
    """The mount points of `referee`'s bots' slim roots in this (the host's) mount namespace."""
    mark = f"/{gvisor.KERNELS}/bot-{referee}-"
    return [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines() if mark in line]


def _boot_ticks() -> int:
    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * os.sysconf("SC_CLK_TCK"))


def _sentries_since(tick: int) -> list[int]:
    """Live processes started at or after `tick` under the uid a Sentry and its platform's stubs run as (runsc
    drops them to nobody): what a kernel would leave behind, whatever its command line."""
    found = []
    for process in live_processes():
        try:
            status = Path(f"/proc/{process.pid}/status").read_text()
            stat = Path(f"/proc/{process.pid}/stat").read_bytes()
        except OSError:
            continue
        uid = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("Uid:"))
        started = int(stat.rsplit(b")", 1)[1].split()[19])
        if uid == gvisor.NOBODY and started >= tick and process.state != "Z":
            found.append(process.pid)
    return found


def _start(tmp_path: Path, name: str, *args: str) -> tuple[BotProcess, Path]:
    log = tmp_path / f"{name}.log"
    process = BotProcess.start(
        [sys.executable, CHANNELS, *args],
        {"PATH": os.defpath},
        log,
        1 << 20,
        memory_mb=512,
        sandbox=SandboxRequest(None, kernel=True),
    )
    return process, log


def _lines(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]


def _finish(process: BotProcess, log: Path) -> dict[str, Any]:
    deadline = time.monotonic() + HANG_BOUND_S
    while not process.exited() and time.monotonic() < deadline:
        time.sleep(0.05)
    process.kill()
    return _lines(log)[-1]


def _scout_spec(tmp_path: Path, kernel: bool = True) -> MatchSpec:
    bots = tuple(BotSpec(f"random{index}", (sys.executable, "-m", "bots.python.random_bot")) for index in range(3))
    games = tuple(GameSpec(index, 40 + index, tuple((seat + index) % 3 for seat in range(3))) for index in range(3))
    return MatchSpec("kernel-match", "scout", bots, games, log_dir=str(tmp_path / "logs"), kernel=kernel)


@needs_runsc
def test_a_match_plays_under_a_kernel_per_bot_and_records_it(tmp_path: Path) -> None:
    since = _boot_ticks()
    record = run_match(_scout_spec(tmp_path))
    assert [game.isolation for game in record.games] == [Isolation.KERNEL] * 3
    assert [game.faults for game in record.games] == [(), (), ()]
    assert _runsc_processes() == []
    assert _sentries_since(since) == []
    assert not [path for path in (runtime_dir() / gvisor.KERNELS).glob(f"bot-{os.getpid()}-*")]
    assert _slim_roots_mounted(os.getpid()) == []


@needs_runsc
def test_the_kernel_is_gone_once_the_referee_is_killed(tmp_path: Path) -> None:
    since = _boot_ticks()
    referee = subprocess.Popen(
        [str(Path(sys.executable).parent / "referee"), "play", "scout", "random", "random", "--kernel"]
        + ["--games", "200"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    prefix = f"{gvisor.KERNELS}/bot-{referee.pid}-".encode()

    def kernels() -> list[int]:
        found = []
        for process in live_processes():
            entry = read_process(process.pid)
            try:
                with open(f"/proc/{process.pid}/cmdline", "rb") as file:
                    named = prefix in file.read()
            except OSError:
                continue
            if named and entry is not None and entry.state != "Z":
                found.append(process.pid)
        return found

    def running() -> bool:
        """A bot's kernel runs, and its root has left the host's mount namespace (the probe's kernel, which the
        referee runs first, keeps its root there until it ends)."""
        return bool(kernels()) and not _slim_roots_mounted(referee.pid)

    deadline = time.monotonic() + HANG_BOUND_S
    while not running() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert kernels(), "the referee started no kernel"
    assert _slim_roots_mounted(referee.pid) == [], "once a bot's kernel runs, its root is that kernel's alone"
    os.kill(referee.pid, signal.SIGKILL)
    referee.wait()
    deadline = time.monotonic() + HANG_BOUND_S
    while (kernels() or _sentries_since(since)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert kernels() == []
    assert _sentries_since(since) == []
    assert _slim_roots_mounted(referee.pid) == [], "no bot's root outlives its kernel"
    left = [bundle.name for bundle in (runtime_dir() / gvisor.KERNELS).glob(f"bot-{referee.pid}-*")]
    assert left, "a referee killed with SIGKILL leaves its bundles (what remove_stale_bundles is for)"
    removed = gvisor.remove_stale_bundles()
    assert sorted(bundle.name for bundle in removed if bundle.name in left) == sorted(left)
    assert not list((runtime_dir() / gvisor.KERNELS).glob(f"bot-{referee.pid}-*"))


@needs_runsc
def test_doctor_reports_the_kernel_level() -> None:
    result = CliRunner().invoke(main, ["doctor", "--json"])
    kernel = json.loads(result.output)["kernel"]
    assert kernel["ok"] is True
    assert kernel["platform"] == gvisor.PLATFORM
    assert kernel["version"]
    assert "a kernel of its own for every bot" in kernel["detail"]


def test_the_kernel_level_is_refused_where_runsc_cannot_run(monkeypatch: pytest.MonkeyPatch) -> None:
    missing = gvisor.KernelProbe(f"gVisor's runsc is not installed: {gvisor.INSTALL}")
    monkeypatch.setattr(gvisor, "probe", lambda: missing)
    result = CliRunner().invoke(main, ["play", "scout", "random", "random", "--kernel", "--games", "1"])
    assert result.exit_code == 1
    assert "the kernel isolation level needs gVisor" in result.output
    assert "apt-get install runsc" in result.output


def test_the_kernel_level_is_refused_without_the_sandbox() -> None:
    result = CliRunner().invoke(main, ["play", "scout", "random", "random", "--kernel", "--no-sandbox"])
    assert result.exit_code == 1
    assert "cannot go with --no-sandbox" in result.output


@needs_runsc
def test_a_futex_on_a_shared_file_reaches_no_other_bot(tmp_path: Path) -> None:
    """On one kernel a futex on a file both bots map is one futex (the host's wake reaches the waiter: checked
    first, so the fixture is known to work); under a kernel each, the waker's wakes reach no one."""
    waiter = subprocess.Popen([sys.executable, CHANNELS, "futex-wait", SHARED_FILE, "4"], stdout=subprocess.PIPE)
    assert waiter.stdout is not None and json.loads(waiter.stdout.readline()) == {"waiting": True}
    host = json.loads(subprocess.check_output([sys.executable, CHANNELS, "futex-wake", SHARED_FILE, "1"]))
    waited = json.loads(waiter.communicate(timeout=HANG_BOUND_S)[0])
    assert host["reached"] > 0 and waited["woken"] > 0

    receiver, receiver_log = _start(tmp_path, "receiver", "futex-wait", SHARED_FILE, "6")
    deadline = time.monotonic() + HANG_BOUND_S
    while not (receiver_log.exists() and _lines(receiver_log)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _lines(receiver_log) == [{"waiting": True}]
    sender, sender_log = _start(tmp_path, "sender", "futex-wake", SHARED_FILE, "2")
    sent = _finish(sender, sender_log)
    received = _finish(receiver, receiver_log)
    assert sent["wakes"] > 0 and sent["reached"] == 0
    assert received["woken"] == 0 and received["timeouts"] > 0


def _on_one_cpu(*args: str) -> dict[str, Any]:
    """The fixture run on the host, on one CPU: the kernel hands inode numbers and cookies out in per-CPU batches,
    so only on one CPU do a later process's numbers follow an earlier one's."""
    cpu = min(os.sched_getaffinity(0))
    output = subprocess.check_output(
        [sys.executable, CHANNELS, *args], preexec_fn=lambda: os.sched_setaffinity(0, {cpu})
    )
    return cast(dict[str, Any], json.loads(output))


@needs_runsc
def test_global_counters_start_afresh_in_every_kernel(tmp_path: Path) -> None:
    """Pipe inode numbers and socket cookies are counters of the whole machine on one kernel: a bot that makes
    many moves them for every later bot (checked on the host first). Each kernel counts from its own start, so
    a second bot's first numbers are the first bot's, whatever the first one made, in the same rotation and in
    the next."""
    before = _on_one_cpu("counters", "1")
    _on_one_cpu("counters", "200")
    after = _on_one_cpu("counters", "1")
    assert after["pipe_inodes"][0] > before["pipe_inodes"][0] + 200
    assert after["cookies"][0] > before["cookies"][0] + 200

    first = _finish(*_start(tmp_path, "first", "counters", "1"))
    sender = _finish(*_start(tmp_path, "sender", "counters", "200"))
    receiver = _finish(*_start(tmp_path, "receiver", "counters", "1"))
    assert sender["pipe_inodes"][1] > sender["pipe_inodes"][0]
    assert receiver["pipe_inodes"][0] == first["pipe_inodes"][0] == sender["pipe_inodes"][0]
    assert receiver["cookies"] == first["cookies"]
    assert not str(receiver["sockstat"]).startswith("sockets:")


@needs_runsc
def test_a_bot_in_a_folder_below_a_private_tmp_the_command_names_still_runs(tmp_path: Path) -> None:
    """An organiser's word `/tmp` is the bot's private /tmp, which holds nothing of the host's: the bot's own
    folder and its working folder below it (a checkout in /tmp, as a CI clone) are still copied and made, where
    the word stood for them all and hid them (runsc found no program or no working folder)."""
    script = tmp_path / "where.py"
    script.write_text("import json, os\nprint(json.dumps({'cwd': os.getcwd()}))\n")
    tmp_path.chmod(0o755)
    log = tmp_path / "cwd.log"
    process = BotProcess.start(
        [sys.executable, str(script), "/tmp"],
        {"PATH": os.defpath},
        log,
        1 << 20,
        cwd=str(tmp_path),
        sandbox=SandboxRequest(None, kernel=True),
    )
    assert _finish(process, log) == {"cwd": str(tmp_path)}, log.read_text()


@needs_runsc
def test_no_bot_reads_the_hosts_free_space_through_its_kernel(tmp_path: Path) -> None:
    """A bot's kernel answers statfs of its gofer mounts (/usr, its own folder) from the host's disk, which every
    bot's printed output moves: its kernel refuses statfs and fstatfs (ustat it does not have), in its own /tmp
    too. Without a sandbox the same calls give the host's numbers (the fixture works)."""
    shown = ("/usr", "/etc", str(FIXTURE_BOTS), "/tmp")
    host = json.loads(subprocess.check_output([sys.executable, DISK_STATS, "statfs", *shown[:3]]))
    assert all(found[call][0] > 0 for found in host.values() for call in ("statvfs", "fstatvfs")), host
    log = tmp_path / "stats.log"
    process = BotProcess.start(
        [sys.executable, DISK_STATS, "statfs", *shown],
        {"PATH": os.defpath},
        log,
        1 << 20,
        sandbox=SandboxRequest(None, kernel=True),
    )
    found = _finish(process, log)
    assert set(found) == set(shown)
    assert {name: value for stats in found.values() for name, value in stats.items() if name != "ustat"} == {
        "statvfs": "refused: EPERM",
        "fstatvfs": "refused: EPERM",
    }
    assert {stats["ustat"] for stats in found.values()} <= {"refused: ENOSYS", "refused: EPERM", "no ustat here"}


@needs_runsc
def test_the_page_cache_carries_nothing_from_one_bot_to_the_next(tmp_path: Path) -> None:
    """A sender bot reads the pages of a file both bots are shown that stand for the 1 bits of a random message;
    the next bot, started once the sender has gone (the next rotation's process), times its first reads of
    every page. Through the host's page cache it got 60-95 of 96 bits right, and the full sandbox's bot gets
    all (docs/results.md): each bot's kernel now reads a copy of its own, and it gets what chance gives."""
    with tempfile.TemporaryDirectory(dir=SHARED_PARENT) as shared:
        path = shared_file(Path(shared))
        right = [round_bits_right(True, path, tmp_path) for _ in range(PAGE_CACHE_ROUNDS)]
    assert None not in right
    assert sum(filter(None, right)) <= CHANCE_BOUND * BITS * len(right), right


@needs_runsc
def test_the_page_cache_carries_nothing_between_two_bots_alive_at_once(tmp_path: Path) -> None:
    """The same, with the receiver started first and reading after the sender, started after it, has gone: two
    bots of one table. Through the host's page cache it got 79-84 of 96 bits right."""
    with tempfile.TemporaryDirectory(dir=SHARED_PARENT) as shared:
        path = shared_file(Path(shared))
        rounds = (round_bits_right(True, path, tmp_path, together=True) for _ in range(PAGE_CACHE_ROUNDS))
        right = [found for found in rounds if found is not None]
    assert right, "the senders outlived every receiver's wait: nothing was measured"
    assert sum(right) <= CHANCE_BOUND * BITS * len(right), right


@needs_runsc
def test_a_bot_whose_runtime_cannot_be_copied_is_refused_never_shown_more(tmp_path: Path) -> None:
    """A program the slim root has no rule for (a shell script) does not start at the kernel level, saying what
    to do: its own fault, not the referee's, and never the whole system instead."""
    script = tmp_path / "bot.sh"
    script.write_text("#!/bin/sh\nexec sleep 5\n")
    script.chmod(0o755)
    tmp_path.chmod(0o755)
    with pytest.raises(BotStartError, match="play it at the full level"):
        BotProcess.start(
            [str(script)],
            {"PATH": os.defpath},
            tmp_path / "script.log",
            1 << 20,
            sandbox=SandboxRequest(None, own=(str(tmp_path),), kernel=True),
        )
    assert _slim_roots_mounted(os.getpid()) == []


REPOSITORY = Path(__file__).resolve().parents[2]
C_BOT = REPOSITORY / "bots" / "c" / "random_bot"
JS_BOT = REPOSITORY / "bots" / "js" / "random_bot.js"


@needs_runsc
@pytest.mark.skipif(
    not C_BOT.exists() or shutil.which("node") is None or not (JS_BOT.parent / "node_modules").is_dir(),
    reason="the C bot is not built or the JS bot's modules are not installed (.ci/run does both)",
)
def test_the_c_and_javascript_bots_play_on_their_slim_roots(tmp_path: Path) -> None:
    """Their runtimes (an ELF program and its libraries; node and the bot's node_modules) are what their roots
    hold: both play a clean game beside a Python bot."""
    bots = (
        BotSpec("c", (str(C_BOT),)),
        BotSpec("js", (str(shutil.which("node")), str(JS_BOT))),
        BotSpec("python", (sys.executable, "-m", "bots.python.random_bot")),
    )
    games = (GameSpec(0, 7, (0, 1, 2)),)
    record = run_match(MatchSpec("slim-roots", "scout", bots, games, log_dir=str(tmp_path / "logs"), kernel=True))
    assert [game.isolation for game in record.games] == [Isolation.KERNEL]
    assert [game.faults for game in record.games] == [()]


@pytest.mark.skipif(os.geteuid() != 0, reason="a slim root is mounted only as root")
def test_a_slim_root_a_killed_referee_left_mounted_is_unmounted_with_its_bundle() -> None:
    """A referee killed between making a bot's root and starting the bot leaves that tmpfs in the host's mount
    namespace: the next referee's remove_stale_bundles unmounts it before it removes the bundle."""
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    parent = runtime_dir() / gvisor.KERNELS
    parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    bundle = Path(tempfile.mkdtemp(prefix=f"bot-{gone.pid}-1-", dir=parent))
    (bundle / "rootfs").mkdir()
    kernel_root.mount_root(
        kernel_root.KernelRoot.plan([str(shutil.which("true"))], (), (), True), str(bundle / "rootfs")
    )
    assert _slim_roots_mounted(gone.pid) == [str(bundle / "rootfs")]
    assert bundle in gvisor.remove_stale_bundles()
    assert _slim_roots_mounted(gone.pid) == []
    assert not bundle.exists()

"""A control group per sandboxed bot, so that its limits hold for all its processes together: memory (tmpfs
files included), processes and threads, the CPUs it may run on, an equal CPU weight and a CPU quota
(limits.BOT_CPU_SHARE of the referee's CPUs), and the freezer that stops it while it is not on move, with a CPU
floor while it is frozen.

Which kind the machine allows is found once per process (`cgroup_support`):
- cgroup v2, where the cgroup that holds the referee's own one hands the memory and pids controllers to its
  sub-cgroups and lets the referee create cgroups in it (a delegated subtree, or the root cgroup as root);
- else cgroup v1, where the referee may create cgroups in the memory and pids hierarchies (as root on a
  machine or container with v1 or hybrid cgroups); the cpuset and cpu hierarchies are used too where writable,
  and for freezing, a hybrid machine's cgroup2 hierarchy (mounted without controllers, as systemd's
  /sys/fs/cgroup/unified) where writable, else v1's freezer hierarchy: v1's freezer.state switches the
  kernel-wide freezer on and off whenever no other cgroup is frozen, cgroup2's cgroup.freeze reaches only the
  cgroup's own tasks (`bench protocol` prints what freezing costs);
- else none: the sandbox then limits each process (RLIMIT_DATA) and the bot's uid (RLIMIT_NPROC) instead.

A bot joins its cgroups itself, between fork and exec (`BotCgroup.join`), so even its first child is counted.
`BotCgroup.remove` kills whatever is left in them and removes them. `BotCgroup.hold` freezes or thaws every
process of the bot at once (cgroup v2's cgroup.freeze, v1's freezer.state).

The freezer stops a process only where it returns to user space: a call already in the kernel (a long read of
a tmpfs file, a large mapping populated) runs on to its end, and a bot with many threads in such calls keeps
CPUs busy while frozen (the third audit measured 12-26% of a CPU, up to 1.06 s in one wait). Recent kernels
throttle a cgroup over its CPU quota only at that same return too, so while frozen a bot's cgroup also gets the
lowest CPU weight there is (the CPU floor: what is left of its calls runs only on CPU time no one else wants) and
the lowest quota (which older kernels enforce inside calls as well); both are restored before it is thawed.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import logging
import os
import signal
import time
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from protocol import limits
from protocol.errors import EnvironmentProblem

_REMOVE_SECONDS = 2.0
FREEZE_WAIT_S = 0.01
"""How long freezing a bot waits for its processes to stop: a running process stops within microseconds, one
waiting for a CPU on a loaded machine within a scheduler slice or two; one still inside a long kernel call is
left to finish it under the CPU floor."""
_FREEZE_SPIN_S, _FREEZE_POLL_S = 0.001, 0.0002
_V1_OPTIONAL = ("cpuset", "cpu", "freezer")
"""cgroup v1 hierarchies used where the referee may create cgroups in them (memory and pids are required)."""
_CPU_PERIOD_US = 100_000
_CPU_WEIGHT_V2, _CPU_SHARES_V1 = 100, 1024
"""Every bot's CPU weight: the default of a cgroup, the same for every bot."""
_PREFIX = "card-referee-"
_FLOOR_QUOTA_US = 1000
"""The smallest CPU quota a cgroup may have (1 ms per period)."""
_FLOOR_WEIGHT_V2, _FLOOR_SHARES_V1 = 1, 2
"""The smallest CPU weight of a cgroup."""

_log = logging.getLogger(__name__)


class CgroupMode(enum.StrEnum):
    V2 = "cgroup v2"
    V1 = "cgroup v1"
    NONE = "none"


class CgroupError(EnvironmentProblem, OSError):
    """A bot's cgroup could not be created or limited."""


@dataclass(frozen=True)
class Hierarchy:
    """Where the referee's own cgroup is in one hierarchy: its folder, and the controllers it holds."""

    folder: Path
    controllers: frozenset[str]
    unified: bool = False
    """A hybrid machine's cgroup2 hierarchy, used only to freeze (its controllers: "freezer")."""


@dataclass(frozen=True)
class CgroupSupport:
    """What this machine lets the referee do with cgroups, and why not more."""

    mode: CgroupMode
    parents: tuple[Hierarchy, ...] = ()
    """Where bot cgroups are created: one folder (v2), or one per v1 hierarchy used (memory, pids, cpuset)."""
    reason: str = ""
    """Why cgroup v2 (and, in v1 mode or none, v1) cannot be used; empty for v2."""

    @property
    def cpuset(self) -> bool:
        return self._has("cpuset")

    @property
    def cpu(self) -> bool:
        """Bots get an equal CPU weight and a CPU quota."""
        return self._has("cpu")

    @property
    def freezer(self) -> bool:
        """Bots can be frozen (every cgroup v2 has cgroup.freeze; v1 needs the freezer hierarchy, or a hybrid
        machine's cgroup2 one)."""
        return self.mode is CgroupMode.V2 or self._has("freezer")

    @property
    def freezer_kind(self) -> str:
        """Which freezer bots get, in words: cgroup v2's (in v2, or a hybrid machine's cgroup2 hierarchy), v1's."""
        if self.mode is CgroupMode.V2:
            return "cgroup v2 freezer"
        if any(parent.unified for parent in self.parents):
            return "cgroup v2 freezer, in the hybrid machine's cgroup2 hierarchy"
        return "cgroup v1 freezer"

    def _has(self, controller: str) -> bool:
        return any(controller in parent.controllers for parent in self.parents)


def _mounts() -> Iterator[tuple[str, Path, str, frozenset[str]]]:
    """(root in the filesystem, mount point, fs type, super options) of each cgroup mount of this process."""
    with open("/proc/self/mountinfo") as mountinfo:
        for line in mountinfo:
            before, _, after = line.partition(" - ")
            fields, tail = before.split(), after.split()
            if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
                yield fields[3], Path(fields[4]), tail[0], frozenset(tail[2].split(","))


def _own_cgroups() -> dict[str, str]:
    """Controller list ("" for v2) -> this process's path in that hierarchy, from /proc/self/cgroup."""
    own = {}
    with open("/proc/self/cgroup") as cgroups:
        for line in cgroups:
            parts = line.rstrip("\n").split(":", 2)
            if len(parts) == 3:
                own[parts[1]] = parts[2]
    return own


def _folder(mount_root: str, mount_point: Path, path: str) -> Path:
    relative = path[len(mount_root) :] if mount_root != "/" and path.startswith(mount_root) else path
    return mount_point / relative.lstrip("/")


def _can_create_in(folder: Path, offering: str | None = None) -> bool:
    """Whether the referee may create a cgroup in `folder` (and the new cgroup has the file `offering`)."""
    probe = folder / f"{_PREFIX}probe-{os.getpid()}"
    try:
        probe.mkdir()
    except OSError:
        return False
    try:
        return offering is None or (probe / offering).exists()
    finally:
        with contextlib.suppress(OSError):
            probe.rmdir()


def _cgroup2_mount() -> tuple[str, Path] | None:
    """(root in the filesystem, mount point) of this process's cgroup2 hierarchy, if one is mounted."""
    return next(((root, point) for root, point, kind, _ in _mounts() if kind == "cgroup2"), None)


def _v2_parent(own: dict[str, str]) -> tuple[Hierarchy | None, str]:
    """The folder where bot cgroups go in cgroup v2: beside the referee's own cgroup (a process may not sit in
    a cgroup that hands controllers to sub-cgroups, so the bots' cgroups are its siblings), or under the root
    when the referee is in the root cgroup."""
    path = own.get("")
    mount = _cgroup2_mount()
    if path is None or mount is None:
        return None, "no cgroup v2 hierarchy is mounted"
    folder = _folder(mount[0], mount[1], path)
    at_root = folder == mount[1]
    parent = folder if at_root else folder.parent
    needed = {"memory", "pids"}
    try:
        delegated = set((parent / "cgroup.subtree_control").read_text().split())
    except OSError as error:
        return None, f"cgroup v2 at {parent} cannot be read ({error.strerror})"
    if not needed <= delegated:
        missing = " and ".join(sorted(needed - delegated))
        why = f"cgroup v2 at {parent} does not delegate {missing} to its sub-cgroups"
    elif not _can_create_in(parent):
        why = f"cgroup v2 at {parent} is not writable by this user"
    else:
        return Hierarchy(parent, frozenset(delegated & {"memory", "pids", "cpuset", "cpu"})), ""
    if not at_root and _delegated_to_us(folder):
        own_subtree = delegated_subtree(folder)
        if own_subtree is not None:
            return own_subtree, ""
        why += f"; the referee's own cgroup {folder} is delegated to it but could not be split"
    return None, why


DELEGATE_XATTRS = ("user.delegate", "trusted.delegate")
"""What systemd (251 and later) sets on a unit's cgroup run with Delegate=yes: the cgroup is the process's to
manage (`systemd-run --user --scope -p Delegate=yes referee ...` in a systemd user session)."""
REFEREE_LEAF = f"{_PREFIX}referee"


def _delegated_to_us(folder: Path) -> bool:
    for name in DELEGATE_XATTRS:
        with contextlib.suppress(OSError):
            if os.getxattr(folder, name) == b"1":
                return True
    return False


def delegated_subtree(folder: Path) -> Hierarchy | None:
    """The referee's own cgroup, delegated to it, made the parent of the bots' cgroups: every process in it
    moves to a leaf (REFEREE_LEAF; cgroup v2 lets only a cgroup without processes hand controllers down), then
    memory and pids are handed to its sub-cgroups. None if the cgroup does not offer them or refuses."""
    try:
        available = set((folder / "cgroup.controllers").read_text().split())
        if not {"memory", "pids"} <= available:
            return None
        leaf = folder / REFEREE_LEAF
        leaf.mkdir(exist_ok=True)
        for pid in (folder / "cgroup.procs").read_text().split():
            with contextlib.suppress(ProcessLookupError):
                _write(leaf / "cgroup.procs", pid)
        wanted = sorted({"memory", "pids", "cpuset", "cpu"} & available)
        _write(folder / "cgroup.subtree_control", " ".join(f"+{name}" for name in wanted))
    except OSError as error:
        _log.debug("the delegated cgroup %s cannot hold the bots' cgroups: %s", folder, error)
        return None
    return Hierarchy(folder, frozenset(wanted))


def _v1_parents(own: dict[str, str]) -> tuple[list[Hierarchy], str]:
    found: dict[str, Hierarchy] = {}
    for root, point, kind, options in _mounts():
        if kind != "cgroup":
            continue
        for controller in ("memory", "pids", *_V1_OPTIONAL):
            path = next((path for names, path in own.items() if controller in names.split(",")), None)
            if controller in options and path is not None:
                found[controller] = Hierarchy(_folder(root, point, path), frozenset({controller}))
    missing = [name for name in ("memory", "pids") if name not in found]
    if missing:
        return [], f"no cgroup v1 {' or '.join(missing)} hierarchy is mounted"
    for name in ("memory", "pids"):
        if not _can_create_in(found[name].folder):
            return [], f"cgroup v1 {name} at {found[name].folder} is not writable by this user"
    for name in _V1_OPTIONAL:
        if name in found and not _can_create_in(found[name].folder):
            del found[name]
    unified = _unified_freezer(own)
    if unified is not None:
        found["freezer"] = unified
    return list(found.values()), ""


def _unified_freezer(own: dict[str, str]) -> Hierarchy | None:
    """Where bots get a cgroup only to be frozen on a hybrid machine: under the referee's own cgroup in the
    cgroup2 hierarchy (without controllers, it may hold processes and sub-cgroups both), if cgroup.freeze is
    there (Linux 5.2 and later) and the referee may create cgroups in it."""
    path = own.get("")
    mount = _cgroup2_mount()
    if path is None or mount is None:
        return None
    folder = _folder(mount[0], mount[1], path)
    return Hierarchy(folder, frozenset({"freezer"}), unified=True) if _can_create_in(folder, "cgroup.freeze") else None


@functools.cache
def cgroup_support() -> CgroupSupport:
    """The cgroups bots can be given here (found once per process, then cached)."""
    try:
        own = _own_cgroups()
        v2, why_not_v2 = _v2_parent(own)
        if v2 is not None:
            return CgroupSupport(CgroupMode.V2, (v2,))
        v1, why_not_v1 = _v1_parents(own)
    except OSError as error:
        return CgroupSupport(CgroupMode.NONE, reason=f"cgroups cannot be read ({error})")
    if v1:
        return CgroupSupport(CgroupMode.V1, tuple(v1), why_not_v2)
    return CgroupSupport(CgroupMode.NONE, reason=f"{why_not_v2}; {why_not_v1}")


def _write(path: Path, value: str) -> None:
    with open(path, "w") as file:
        file.write(value)


def _cpu_list(cpus: Collection[int]) -> str:
    return ",".join(str(cpu) for cpu in sorted(cpus))


@dataclass(eq=False)
class BotCgroup:
    """The cgroup(s) of one bot: one folder per hierarchy."""

    folders: tuple[Path, ...]
    freezer: Freezer | None = None
    """How the bot is frozen and thawed (None: no freezer)."""
    freezer_apart: bool = False
    """The freezer's cgroup is in a hierarchy of its own, holding none of the bot's limits (cgroup v1 mode)."""
    cpu_floor: tuple[tuple[Path, str, str], ...] = ()
    """The CPU files set while the bot is frozen, with their value then and their usual one (the CPU floor; empty
    without a cpu cgroup)."""
    _freezer_fd: int | None = field(default=None, repr=False)
    """The freezer file, kept open: freezing is on every decision's path, and opening a cgroup file walks and
    locks the cgroup filesystem each time (`bench protocol` prints what freezing costs)."""
    _state_fd: int | None = field(default=None, repr=False)
    """The file that tells whether the freeze is complete, kept open for the same reason."""
    _floor_fds: tuple[int, ...] = field(default=(), repr=False)
    """The files of `cpu_floor`, kept open for the same reason."""

    @classmethod
    def create(
        cls, support: CgroupSupport, name: str, memory_bytes: int | None, max_tasks: int, cpus: Collection[int]
    ) -> BotCgroup:
        """Create the bot's cgroups (anew: a leftover of the same name is emptied and removed first) with its
        limits; CgroupError if that fails (nothing is left behind then)."""
        folders = []
        try:
            for parent in support.parents:
                folder = parent.folder / f"{_PREFIX}{name}"
                _clear(folder)
                folder.mkdir()
                folders.append(folder)
                _limit(folder, parent, support.mode, memory_bytes, max_tasks, cpus)
        except OSError as error:
            BotCgroup(tuple(folders)).remove()
            raise CgroupError(f"cannot set up the bot's cgroup: {error}") from None
        floor = _cpu_floor(folders, support.mode, cpus)
        return cls(tuple(folders), _freezer(folders), freezer_apart=support.mode is CgroupMode.V1, cpu_floor=floor)

    def oom_kills(self) -> int:
        """How many of the bot's processes the kernel killed for going over its memory limit (memory.events in
        v2, memory.oom_control in v1; 0 where neither can be read)."""
        kills = 0
        for folder in self.folders:
            for name in ("memory.events", "memory.oom_control"):
                with contextlib.suppress(OSError, ValueError):
                    for line in (folder / name).read_text().splitlines():
                        key, _, value = line.partition(" ")
                        if key == "oom_kill":
                            kills += int(value)
        return kills

    def join(self) -> None:
        """Move the calling process into the bot's cgroups (between fork and exec)."""
        for folder in self.folders:
            _write(folder / "cgroup.procs", "0")

    @property
    def can_hold(self) -> bool:
        return self.freezer is not None

    def hold(self, frozen: bool) -> None:
        """Freeze (stop every process of the bot where it is, children included) or thaw it; nothing where the bot has
        no freezer. Either is done by the time this returns, so that no other bot is thawed while this one still runs: a
        freeze is asynchronous (each process stops on its next way back to user space, within microseconds when it runs,
        or when it next gets a CPU), and the kernel promises only that the state file says when it is complete, so this
        waits for that, at most FREEZE_WAIT_S. Only then is the CPU floor set, which would keep a process that still has
        to reach that point off the CPU; a process still inside a kernel call by then runs no code of its own until it
        is thawed, and what the call does meanwhile gets the floor (lifted before the thaw)."""
        if self.freezer is None:
            return
        if self._freezer_fd is None:
            self._open_freezer(self.freezer)
        assert self._freezer_fd is not None
        if frozen:
            os.pwrite(self._freezer_fd, self.freezer.freeze, 0)
            self._wait_frozen(self.freezer)
        for fd, (_, low, usual) in zip(self._floor_fds, self.cpu_floor, strict=True):
            os.pwrite(fd, (low if frozen else usual).encode(), 0)
        if not frozen:
            os.pwrite(self._freezer_fd, self.freezer.thaw, 0)

    def _open_freezer(self, freezer: Freezer) -> None:
        self._freezer_fd = os.open(freezer.file, os.O_WRONLY | os.O_CLOEXEC)
        self._state_fd = os.open(freezer.state, os.O_RDONLY | os.O_CLOEXEC)
        self._floor_fds = tuple(os.open(file, os.O_WRONLY | os.O_CLOEXEC) for file, _, _ in self.cpu_floor)

    def _wait_frozen(self, freezer: Freezer) -> bool:
        """Wait until every process of the bot is frozen (True), or FREEZE_WAIT_S has passed (False). The
        referee yields its CPU between reads (on a machine with every CPU busy the bot's processes need a turn
        to reach the point where they stop), and sleeps between them after the first millisecond, which only a
        bot inside a long kernel call or a very loaded machine takes."""
        assert self._state_fd is not None
        started = time.monotonic()
        while freezer.frozen_mark not in os.pread(self._state_fd, 256, 0):
            waited = time.monotonic() - started
            if waited > FREEZE_WAIT_S:
                return False
            if waited < _FREEZE_SPIN_S:
                os.sched_yield()
            else:
                time.sleep(_FREEZE_POLL_S)
        return True

    def exempt(self, pids: Collection[int]) -> None:
        """Take `pids` (the sandbox's own processes in front of the bot: bwrap and the init of its PID namespace)
        out of the bot's freezer, where the freezer is a hierarchy of its own (cgroup v1 mode: v1's freezer, or
        a hybrid machine's cgroup2 hierarchy): every sleeping process there is woken to be frozen and again to
        be thawed, on every decision, and these never run bot code. Each stays in the bot's other cgroups (its
        limits and the kill at the end still reach it). In cgroup v2 the freezer is the bot's one cgroup, and
        nothing is moved."""
        if self.freezer is None or not self.freezer_apart:
            return
        parent_procs = self.freezer.file.parent.parent / "cgroup.procs"
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                _write(parent_procs, str(pid))

    def kill(self) -> None:
        """SIGKILL every process of the bot, whatever its session or PID namespace, and thaw it (none runs again);
        the cgroups stay until `remove`."""
        for folder in self.folders:
            _kill_and_thaw(folder)

    def pids(self) -> set[int]:
        found: set[int] = set()
        for folder in self.folders:
            with contextlib.suppress(OSError):
                found.update(int(pid) for pid in (folder / "cgroup.procs").read_text().split())
        return found

    def remove(self) -> None:
        """Kill every process left in the bot's cgroups and remove them (a few tries: a killed process leaves
        its cgroup only once it has exited)."""
        for fd in (*self._floor_fds, self._freezer_fd, self._state_fd):
            if fd is not None:
                os.close(fd)
        self._freezer_fd, self._state_fd, self._floor_fds = None, None, ()
        for folder in self.folders:
            if not _clear(folder):
                _log.warning("the cgroup %s of a bot could not be removed", folder)


def _limit(
    folder: Path, parent: Hierarchy, mode: CgroupMode, memory_bytes: int | None, max_tasks: int, cpus: Collection[int]
) -> None:
    if "memory" in parent.controllers and memory_bytes is not None:
        if mode is CgroupMode.V2:
            _write(folder / "memory.max", str(memory_bytes))
            if (folder / "memory.swap.max").exists():
                _write(folder / "memory.swap.max", "0")
        else:
            _write(folder / "memory.limit_in_bytes", str(memory_bytes))
            with contextlib.suppress(OSError):
                _write(folder / "memory.memsw.limit_in_bytes", str(memory_bytes))
    if "pids" in parent.controllers:
        _write(folder / "pids.max", str(max_tasks))
    if "cpu" in parent.controllers and cpus:
        quota = _quota(cpus)
        if mode is CgroupMode.V2:
            _write(folder / "cpu.weight", str(_CPU_WEIGHT_V2))
            _write(folder / "cpu.max", f"{quota} {_CPU_PERIOD_US}")
        else:
            _write(folder / "cpu.shares", str(_CPU_SHARES_V1))
            _write(folder / "cpu.cfs_period_us", str(_CPU_PERIOD_US))
            _write(folder / "cpu.cfs_quota_us", str(quota))
    if "cpuset" in parent.controllers and cpus:
        if mode is CgroupMode.V1:
            _write(folder / "cpuset.mems", (parent.folder / "cpuset.effective_mems").read_text().strip())
        _write(folder / "cpuset.cpus", _cpu_list(cpus))


def _quota(cpus: Collection[int]) -> int:
    return max(_FLOOR_QUOTA_US, int(len(cpus) * limits.BOT_CPU_SHARE * _CPU_PERIOD_US))


def _cpu_floor(folders: list[Path], mode: CgroupMode, cpus: Collection[int]) -> tuple[tuple[Path, str, str], ...]:
    """The CPU files of the bot's cgroup with their floor and usual values (empty without a cpu cgroup)."""
    if mode is CgroupMode.V2:
        values = {
            "cpu.weight": (str(_FLOOR_WEIGHT_V2), str(_CPU_WEIGHT_V2)),
            "cpu.max": (f"{_FLOOR_QUOTA_US} {_CPU_PERIOD_US}", f"{_quota(cpus)} {_CPU_PERIOD_US}"),
        }
    else:
        values = {
            "cpu.shares": (str(_FLOOR_SHARES_V1), str(_CPU_SHARES_V1)),
            "cpu.cfs_quota_us": (str(_FLOOR_QUOTA_US), str(_quota(cpus))),
        }
    if not cpus:
        return ()
    return tuple(
        (folder / name, low, usual)
        for folder in folders
        for name, (low, usual) in values.items()
        if (folder / name).exists()
    )


@dataclass(frozen=True)
class Freezer:
    """A bot's freezer: the file written to freeze and thaw it, with what is written, and the file that says
    whether the freeze is complete, with what it then holds."""

    file: Path
    freeze: bytes
    thaw: bytes
    state: Path
    frozen_mark: bytes


_FREEZERS = (
    ("cgroup.freeze", b"1", b"0", "cgroup.events", b"frozen 1"),
    ("freezer.state", b"FROZEN", b"THAWED", "freezer.state", b"FROZEN"),
)
"""cgroup v2's freezer and v1's: the file, what freezes and what thaws, the state file and its mark of frozen
(v1 says FREEZING until every process has stopped)."""


def _freezer(folders: list[Path]) -> Freezer | None:
    for folder in folders:
        for name, freeze, thaw, state, frozen_mark in _FREEZERS:
            if (folder / name).exists():
                return Freezer(folder / name, freeze, thaw, folder / state, frozen_mark)
    return None


def _thaw(folder: Path) -> None:
    """Thaw `folder` if frozen: a process frozen by cgroup v1 dies of SIGKILL only once thawed."""
    for name, _, thaw, _, _ in _FREEZERS:
        with contextlib.suppress(OSError):
            if (folder / name).exists():
                _write(folder / name, thaw.decode())


def _clear(folder: Path) -> bool:
    """Kill what is in `folder` (a cgroup) and remove it; True if it is gone."""
    deadline = time.monotonic() + _REMOVE_SECONDS
    _kill_and_thaw(folder)
    while folder.exists():
        _kill_all(folder)
        with contextlib.suppress(OSError):
            folder.rmdir()
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _kill_and_thaw(folder: Path) -> None:
    """SIGKILL every process in `folder`, then thaw it: a process frozen by cgroup v1 dies of SIGKILL only once
    thawed, and one thawed with SIGKILL pending dies on its way back to user space, so none runs again."""
    _kill_all(folder)
    _thaw(folder)


def _kill_all(folder: Path) -> None:
    with contextlib.suppress(OSError):
        for pid in (folder / "cgroup.procs").read_text().split():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(pid), signal.SIGKILL)

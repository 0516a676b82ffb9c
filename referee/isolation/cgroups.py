"""A control group per sandboxed bot, so that its limits hold for all its processes together: memory (tmpfs
files included), processes and threads, and the CPUs it may run on.

Which kind the machine allows is found once per process (`cgroup_support`):
- cgroup v2, where the cgroup that holds the referee's own one hands the memory and pids controllers to its
  sub-cgroups and lets the referee create cgroups in it (a delegated subtree, or the root cgroup as root);
- else cgroup v1, where the referee may create cgroups in the memory and pids hierarchies (as root on a
  machine or container with v1 or hybrid cgroups); the cpuset hierarchy is used too where writable;
- else none: the sandbox then limits each process (RLIMIT_DATA) and the bot's uid (RLIMIT_NPROC) instead.

A bot joins its cgroups itself, between fork and exec (`BotCgroup.join`), so even its first child is counted.
`BotCgroup.remove` kills whatever is left in them and removes them.
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
from dataclasses import dataclass
from pathlib import Path

_REMOVE_SECONDS = 2.0
_PREFIX = "card-referee-"

_log = logging.getLogger(__name__)


class CgroupMode(enum.StrEnum):
    V2 = "cgroup v2"
    V1 = "cgroup v1"
    NONE = "none"


class CgroupError(OSError):
    """A bot's cgroup could not be created or limited."""


@dataclass(frozen=True)
class Hierarchy:
    """Where the referee's own cgroup is in one hierarchy: its folder, and the controllers it holds."""

    folder: Path
    controllers: frozenset[str]


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
        return any("cpuset" in parent.controllers for parent in self.parents)


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


def _can_create_in(folder: Path) -> bool:
    probe = folder / f"{_PREFIX}probe-{os.getpid()}"
    try:
        probe.mkdir()
    except OSError:
        return False
    with contextlib.suppress(OSError):
        probe.rmdir()
    return True


def _v2_parent(own: dict[str, str]) -> tuple[Hierarchy | None, str]:
    """The folder where bot cgroups go in cgroup v2: beside the referee's own cgroup (a process may not sit in
    a cgroup that hands controllers to sub-cgroups, so the bots' cgroups are its siblings), or under the root
    when the referee is in the root cgroup."""
    path = own.get("")
    mount = next(((root, point) for root, point, kind, _ in _mounts() if kind == "cgroup2"), None)
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
        return Hierarchy(parent, frozenset(delegated & {"memory", "pids", "cpuset"})), ""
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
        wanted = sorted({"memory", "pids", "cpuset"} & available)
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
        for controller in ("memory", "pids", "cpuset"):
            path = next((path for names, path in own.items() if controller in names.split(",")), None)
            if controller in options and path is not None:
                found[controller] = Hierarchy(_folder(root, point, path), frozenset({controller}))
    missing = [name for name in ("memory", "pids") if name not in found]
    if missing:
        return [], f"no cgroup v1 {' or '.join(missing)} hierarchy is mounted"
    for name in ("memory", "pids"):
        if not _can_create_in(found[name].folder):
            return [], f"cgroup v1 {name} at {found[name].folder} is not writable by this user"
    if "cpuset" in found and not _can_create_in(found["cpuset"].folder):
        del found["cpuset"]
    return list(found.values()), ""


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
        return cls(tuple(folders))

    def join(self) -> None:
        """Move the calling process into the bot's cgroups (between fork and exec)."""
        for folder in self.folders:
            _write(folder / "cgroup.procs", "0")

    def pids(self) -> set[int]:
        found: set[int] = set()
        for folder in self.folders:
            with contextlib.suppress(OSError):
                found.update(int(pid) for pid in (folder / "cgroup.procs").read_text().split())
        return found

    def remove(self) -> None:
        """Kill every process left in the bot's cgroups and remove them (a few tries: a killed process leaves
        its cgroup only once it has exited)."""
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
    if "cpuset" in parent.controllers and cpus:
        if mode is CgroupMode.V1:
            _write(folder / "cpuset.mems", (parent.folder / "cpuset.effective_mems").read_text().strip())
        _write(folder / "cpuset.cpus", _cpu_list(cpus))


def _clear(folder: Path) -> bool:
    """Kill what is in `folder` (a cgroup) and remove it; True if it is gone."""
    deadline = time.monotonic() + _REMOVE_SECONDS
    while folder.exists():
        procs = folder / "cgroup.procs"
        with contextlib.suppress(OSError):
            for pid in procs.read_text().split():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(int(pid), signal.SIGKILL)
        with contextlib.suppress(OSError):
            folder.rmdir()
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True

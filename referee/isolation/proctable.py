"""The machine's process table as /proc describes it (no psutil): processes, their sessions and their PID
namespaces, and killing a session with everything in it. The referee uses it to tell which bot a process belongs
to and to leave no process of a bot behind; tournaments use it to stop the bots of a worker that is going away."""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

_NS_GET_PARENT = 0xB702
"""ioctl on a namespace fd: _IO(NSIO 0xb7, 2), an fd of the parent PID namespace (EPERM above the caller's)."""


@dataclass(frozen=True)
class ProcessEntry:
    """One process as /proc/PID/stat describes it."""

    pid: int
    ppid: int
    session: int
    state: str


def read_process(pid: int) -> ProcessEntry | None:
    """The process `pid` as /proc describes it (so no psutil is needed), or None if there is none."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    # After the command name: state ppid pgrp session ...
    return ProcessEntry(pid=pid, ppid=int(fields[1]), session=int(fields[3]), state=fields[0].decode())


@dataclass(frozen=True)
class Namespace:
    """A PID namespace, named as the kernel names it: the device and inode of its nsfs file."""

    device: int
    inode: int


def _namespace_of(fd: int) -> Namespace:
    info = os.fstat(fd)
    return Namespace(info.st_dev, info.st_ino)


def pid_namespaces(pid: int) -> list[Namespace]:
    """The PID namespace of process `pid`, then each namespace above it up to the caller's (so a process in a
    namespace nested in a bot's one still names the bot's); empty if the process is gone."""
    try:
        fd = os.open(f"/proc/{pid}/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return []
    chain = []
    try:
        while True:
            chain.append(_namespace_of(fd))
            try:
                parent = fcntl.ioctl(fd, _NS_GET_PARENT)
            except OSError:
                return chain
            os.close(fd)
            fd = parent
    finally:
        os.close(fd)


def live_processes() -> Iterator[ProcessEntry]:
    """Every process on the machine except zombies (they run nothing). A process that ends while this runs is
    skipped."""
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and (process := read_process(int(entry.name))) and process.state != "Z":
            yield process


def session_members(session_id: int) -> list[int]:
    """Pids of every live process in the session `session_id`."""
    return [process.pid for process in live_processes() if process.session == session_id]


def kill_with_sessions(pids: Iterable[int]) -> None:
    """SIGKILL each process and every other member of the session it leads (the forks of a bot)."""
    for leader in pids:
        for pid in {leader, *session_members(leader)}:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

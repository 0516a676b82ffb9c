"""The resource limits (rlimits) set on a bot's process between fork and exec; every process it starts
inherits them.

Every bot: open files (RLIMIT_NOFILE, limits.MAX_OPEN_FILES per process: the referee checks which bot made a new
tcp connection by reading its program's fds, see referee.wire.connection, and a bot must not be able to make that
check slow; in the sandbox, where every socket is a unix socket with the machine's default buffer, see
referee.isolation.seccomp, it also bounds the kernel memory a process's sockets hold, which RLIMIT_DATA does not
count and the bot's memory cgroup charges), memory (RLIMIT_DATA, which counts memory actually written to, so
runtimes that reserve large address ranges such as V8 or Go still start) and, if asked, CPU time.

A sandboxed bot also gets: no core files, files of at most limits.MAX_TMP_BYTES (RLIMIT_FSIZE), no way to raise
its priority or take a real-time policy (RLIMIT_NICE and RLIMIT_RTPRIO 0), and, when it runs under a uid of its
own, at most limits.MAX_PROCESSES processes and threads for that uid (RLIMIT_NPROC: with the uid the bot's own,
that counts the bot as a whole).
"""

from __future__ import annotations

import resource
from dataclasses import dataclass

from protocol import limits


def open_files_cap() -> int:
    """The RLIMIT_NOFILE a bot gets (soft and hard): MAX_OPEN_FILES, or the referee's own hard limit if lower
    (a limit cannot be raised past it)."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return limits.MAX_OPEN_FILES if hard == resource.RLIM_INFINITY else min(hard, limits.MAX_OPEN_FILES)


@dataclass(frozen=True)
class BotLimits:
    memory_bytes: int | None = None
    cpu_seconds: int | None = None
    sandboxed: bool = False
    own_uid: bool = False
    """The bot runs under a uid no other process has (RLIMIT_NPROC then limits the bot as a whole)."""

    def apply(self) -> None:
        """Set the limits on the calling process (between fork and exec)."""
        _both(resource.RLIMIT_NOFILE, open_files_cap())
        if self.memory_bytes is not None:
            _both(resource.RLIMIT_DATA, self.memory_bytes)
        if self.cpu_seconds is not None:
            resource.setrlimit(resource.RLIMIT_CPU, (self.cpu_seconds, self.cpu_seconds + 1))
        if not self.sandboxed:
            return
        _both(resource.RLIMIT_CORE, 0)
        _both(resource.RLIMIT_FSIZE, limits.MAX_TMP_BYTES)
        _both(resource.RLIMIT_NICE, 0)
        _both(resource.RLIMIT_RTPRIO, 0)
        if self.own_uid:
            _both(resource.RLIMIT_NPROC, limits.MAX_PROCESSES)


def _both(which: int, value: int) -> None:
    resource.setrlimit(which, (value, value))

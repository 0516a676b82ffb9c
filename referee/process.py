"""Bot programs as subprocesses that cannot hurt the referee and cannot outlive their match.

Each bot runs in its own session and process group, with stdin closed, a memory limit (RLIMIT_DATA, which
counts memory actually written to, so runtimes that reserve large address ranges such as V8 or Go still
start), an optional CPU limit, and stdout+stderr in one pipe that a thread drains into a log file capped at
`log_cap_bytes`: a bot that prints megabytes never blocks and never fills the disk. `kill` ends the whole
process group and every other process of the bot's session, forked children included.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

_DRAIN_CHUNK = 64 * 1024
_REAP_SECONDS = 2.0


class BotStartError(OSError):
    """The bot's program could not be started at all (missing file, not executable, ...)."""


def _limit_resources(memory_bytes: int | None, cpu_seconds: int | None) -> None:
    """Runs in the child between fork and exec."""
    if memory_bytes is not None:
        resource.setrlimit(resource.RLIMIT_DATA, (memory_bytes, memory_bytes))
    if cpu_seconds is not None:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))


def _drain(read_fd: int, log_path: Path, cap_bytes: int) -> None:
    """Copy the bot's output into the log until the pipe closes; past the cap, read and discard."""
    written = 0
    with open(log_path, "ab", buffering=0) as log:
        while True:
            try:
                chunk = os.read(read_fd, _DRAIN_CHUNK)
            except OSError:
                break
            if not chunk:
                break
            if written < cap_bytes:
                room = cap_bytes - written
                log.write(chunk[:room])
                written += min(room, len(chunk))
                if written >= cap_bytes:
                    log.write(f"\n[log truncated at {cap_bytes} bytes]\n".encode())
    os.close(read_fd)


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


def last_output_line(log_path: Path, max_chars: int = 200) -> str | None:
    """The last non-empty line a bot printed (for the detail of a crash), or None."""
    try:
        with open(log_path, "rb") as log:
            log.seek(max(0, log.seek(0, os.SEEK_END) - 4096))
            tail = log.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    return lines[-1][:max_chars] if lines else None


class BotProcess:
    """One running bot program. `pidfd` becomes readable when the process exits (for zmq.Poller)."""

    def __init__(self, popen: subprocess.Popen[bytes], log_path: Path, drain: threading.Thread) -> None:
        self._popen = popen
        self.log_path = log_path
        self._drain = drain
        self.pid = popen.pid
        self.pidfd = os.pidfd_open(popen.pid)
        self._killed = False

    @classmethod
    def start(
        cls,
        command: Sequence[str],
        env: Mapping[str, str],
        log_path: Path,
        log_cap_bytes: int,
        memory_mb: int | None = None,
        cpu_seconds: int | None = None,
        cwd: str | None = None,
    ) -> BotProcess:
        memory_bytes = memory_mb * 1024 * 1024 if memory_mb else None
        read_fd, write_fd = os.pipe()
        try:
            popen = subprocess.Popen(
                list(command),
                stdin=subprocess.DEVNULL,
                stdout=write_fd,
                stderr=write_fd,
                env=dict(env),
                cwd=cwd,
                start_new_session=True,
                preexec_fn=lambda: _limit_resources(memory_bytes, cpu_seconds),
            )
        except (OSError, subprocess.SubprocessError) as error:
            os.close(read_fd)
            raise BotStartError(f"cannot start {' '.join(command)!r}: {error}") from error
        finally:
            os.close(write_fd)
        drain = threading.Thread(
            target=_drain, args=(read_fd, log_path, log_cap_bytes), name=f"bot-log-{popen.pid}", daemon=True
        )
        drain.start()
        return cls(popen, log_path, drain)

    def exited(self) -> bool:
        return self._popen.poll() is not None

    def describe_exit(self) -> str:
        code = self._popen.poll()
        if code is None:
            return "is still running"
        if code < 0:
            with contextlib.suppress(ValueError):
                return f"was killed by {signal.Signals(-code).name}"
        return f"exited with status {code}"

    def kill(self) -> None:
        """Kill the process group and every other member of the bot's session, and return once they are all
        gone (SIGKILL is asynchronous); reap; close the log."""
        if self._killed:
            return
        self._killed = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._popen.wait(_REAP_SECONDS)
        deadline = time.monotonic() + _REAP_SECONDS
        while (members := session_members(self.pid)) and time.monotonic() < deadline:
            for pid in members:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.005)
        self._drain.join(_REAP_SECONDS)
        os.close(self.pidfd)

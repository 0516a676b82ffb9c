"""Bot programs as subprocesses that cannot hurt the referee and cannot outlive their match.

Each bot runs in its own session and process group, with stdin closed, a memory limit (RLIMIT_DATA, which
counts memory actually written to, so runtimes that reserve large address ranges such as V8 or Go still
start), an optional CPU limit, a cap on open files (RLIMIT_NOFILE, limits.MAX_OPEN_FILES per process: the
referee checks which bot made a new tcp connection by reading its program's fds, see referee.connection, and
a bot must not be able to make that check slow), and stdout+stderr in one pipe that a thread drains into a
log file capped at `log_cap_bytes`: a bot that prints megabytes never blocks and never fills the disk.

Where the machine allows it (Linux with util-linux `unshare`, as root or with unprivileged user namespaces;
probed once per process, see `containment`), the bot also runs in its own PID namespace: the referee starts
`unshare --pid --fork --kill-child -- BOT...` (plus `--user --map-root-user` when not root), so `pid` is the
unshare process, the session leader, and the bot's program is the namespace's init, its child. unshare exits
with the bot's status (and dies of the signal that killed it), so crashes are seen as before; the rlimits set
before exec are inherited by the bot; /proc stays the referee's, so pids in /proc and from SO_PEERCRED are
the referee's numbers and every process of the bot keeps the session id `pid` unless it calls setsid().
Containment: when unshare dies, --kill-child SIGKILLs the init (PR_SET_PDEATHSIG), and when the init dies the
kernel kills every process left in the namespace before the init is reaped, so a daemon that double-forked
and called setsid() dies with its bot. unshare itself gets SIGKILL when the referee's thread that started it
ends, so a referee killed without a chance to clean up takes its bots along (they see no parent to watch).
Inside, the bot is pid 1, with the signal semantics of an init: a signal it sends itself whose action is the
default one is ignored.

Elsewhere the bot runs in its session only, and a process that leaves the session (setsid() after a double
fork) can escape. `kill` ends the whole process group, every other process of the bot's session, and (in a
namespace) waits until the namespace's init is gone, which means every process in it is.
"""

from __future__ import annotations

import contextlib
import ctypes
import enum
import fcntl
import functools
import logging
import os
import resource
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from protocol import limits

_DRAIN_CHUNK = 64 * 1024
_REAP_SECONDS = 2.0
_PROBE_SECONDS = 5.0
_PID_NAMESPACE_FLAGS = ("--pid", "--fork", "--kill-child")
_USER_NAMESPACE_FLAGS = ("--user", "--map-root-user")
_PR_SET_PDEATHSIG = 1
_NS_GET_PARENT = 0xB702
"""ioctl on a namespace fd: _IO(NSIO 0xb7, 2), an fd of the parent PID namespace (EPERM above the caller's)."""

_log = logging.getLogger(__name__)


class BotStartError(OSError):
    """The bot's program could not be started at all (missing file, not executable, ...)."""


class Containment(enum.Enum):
    """What holds every process of a bot, so that `BotProcess.kill` can end them all."""

    PID_NAMESPACE = "pid namespace"
    """The bot's own PID namespace: nothing it starts can outlive it."""
    SESSION = "session"
    """The bot's session only: a process that calls setsid() leaves it."""


@dataclass(frozen=True)
class Wrapper:
    """How bots are started on this machine: the containment and the command prefix that gives it."""

    containment: Containment
    prefix: tuple[str, ...] = ()


@functools.cache
def containment() -> Wrapper:
    """A PID namespace per bot if util-linux `unshare` can make one here (tried once with `true`, then cached),
    else the session only."""
    unshare = shutil.which("unshare")
    if unshare is not None:
        user = () if os.geteuid() == 0 else _USER_NAMESPACE_FLAGS
        prefix = (unshare, *user, *_PID_NAMESPACE_FLAGS, "--")
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            probe = subprocess.run(
                [*prefix, "true"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=_PROBE_SECONDS,
                check=False,
            )
            if probe.returncode == 0:
                return Wrapper(Containment.PID_NAMESPACE, prefix)
    _log.warning("bots run in a session only (no PID namespace available): a bot's daemon can outlive it")
    return Wrapper(Containment.SESSION)


def _resolve_program(program: str, env: Mapping[str, str], cwd: str | None) -> str:
    """The executable Popen would run for `program` (looked up in the bot's PATH unless it names a path), so a
    missing program is a start error even when unshare, not the program, is what the referee starts."""
    if os.sep in program:
        path = os.path.join(cwd or os.getcwd(), program)
        found = path if os.path.isfile(path) and os.access(path, os.X_OK) else None
    else:
        found = shutil.which(program, path=env.get("PATH", os.defpath))
    if found is None:
        raise BotStartError(f"cannot start {program!r}: no such executable file")
    return os.path.abspath(found)


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _die_with_referee(referee: int) -> None:
    """Runs in the child between fork and exec: SIGKILL it when the referee's thread that started it ends.
    A bot in a namespace sees no parent (getppid() is 0 there) so it cannot notice a referee that died without
    a bye; the unshare process dying ends the namespace instead. The referee starts and stops a match's bots
    in one thread."""
    _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != referee:
        os._exit(1)


def _prepare_child(memory_bytes: int | None, cpu_seconds: int | None, referee: int | None) -> None:
    """Runs in the child between fork and exec; `referee` is set when the child is unshare."""
    if referee is not None:
        _die_with_referee(referee)
    _limit_resources(memory_bytes, cpu_seconds)


def _limit_resources(memory_bytes: int | None, cpu_seconds: int | None) -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (open_files_cap(),) * 2)
    if memory_bytes is not None:
        resource.setrlimit(resource.RLIMIT_DATA, (memory_bytes, memory_bytes))
    if cpu_seconds is not None:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))


def open_files_cap() -> int:
    """The RLIMIT_NOFILE a bot gets (soft and hard): MAX_OPEN_FILES, or the referee's own hard limit if lower
    (a limit cannot be raised past it)."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return limits.MAX_OPEN_FILES if hard == resource.RLIM_INFINITY else min(hard, limits.MAX_OPEN_FILES)


def _drain(read_fd: int, log_path: Path, cap_bytes: int) -> None:
    """Copy the bot's output into the log until the pipe closes; past the cap, or once the log cannot be
    written (a full disk), read and discard, so the bot never blocks on its output."""
    written = 0
    log = _open_log(log_path)
    while True:
        try:
            chunk = os.read(read_fd, _DRAIN_CHUNK)
        except OSError:
            break
        if not chunk:
            break
        if log is not None and written < cap_bytes:
            room = cap_bytes - written
            try:
                log.write(chunk[:room])
                written += min(room, len(chunk))
                if written >= cap_bytes:
                    log.write(f"\n[log truncated at {cap_bytes} bytes]\n".encode())
            except OSError as error:
                _log.warning("stopped writing the bot log %s: %s", log_path, error.strerror or error)
                with contextlib.suppress(OSError):
                    log.close()
                log = None
    if log is not None:
        with contextlib.suppress(OSError):
            log.close()
    os.close(read_fd)


def _open_log(log_path: Path) -> BinaryIO | None:
    try:
        return open(log_path, "ab", buffering=0)
    except OSError as error:
        _log.warning("cannot write the bot log %s: %s", log_path, error.strerror or error)
        return None


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
    """One running bot program. `pidfd` becomes readable when the process exits (for zmq.Poller); `pid` is the
    leader of the bot's session (in a PID namespace, the unshare process whose child is the bot's program)."""

    def __init__(
        self, popen: subprocess.Popen[bytes], log_path: Path, drain: threading.Thread, containment: Containment
    ) -> None:
        self._popen = popen
        self.log_path = log_path
        self._drain = drain
        self.containment = containment
        self.pid = popen.pid
        self.pidfd = os.pidfd_open(popen.pid)
        self._killed = False
        self._namespace: Namespace | None = None
        self._init: int | None = None

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
        wrapper = containment()
        referee = None
        if wrapper.prefix:
            command = [*wrapper.prefix, _resolve_program(command[0], env, cwd), *command[1:]]
            referee = os.getpid()
            _libc()
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
                preexec_fn=lambda: _prepare_child(memory_bytes, cpu_seconds, referee),
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
        _log.debug("bot %d (log %s) runs in its own %s", popen.pid, log_path, wrapper.containment.value)
        return cls(popen, log_path, drain, wrapper.containment)

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
        gone (SIGKILL is asynchronous) and, in a PID namespace, once its init is (the kernel empties the
        namespace before the init's exit completes, whatever session its processes are in); reap; close the
        log."""
        if self._killed:
            return
        self._killed = True
        inits = self._namespace_inits()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._popen.wait(_REAP_SECONDS)
        deadline = time.monotonic() + _REAP_SECONDS
        while (left := self._processes_left(inits)) and time.monotonic() < deadline:
            for pid in left:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.005)
        self._drain.join(_REAP_SECONDS)
        os.close(self.pidfd)

    def namespace(self) -> Namespace | None:
        """The bot's own PID namespace (that of its init), or None without one, or while the init has not
        started (or is gone) and the namespace was never seen; found once, then remembered."""
        if self._namespace is None:
            for init in self._namespace_inits():
                namespaces = pid_namespaces(init)
                if namespaces and namespaces[0] not in pid_namespaces(os.getpid()):
                    self._namespace, self._init = namespaces[0], init
        return self._namespace

    def program_pids(self) -> list[int]:
        """The pid of the bot's program and, in a namespace, of the unshare process in front of it (the
        program's pid is known once `namespace` has found it): the processes that most likely speak for it."""
        self.namespace()
        return [self.pid] if self._init is None else [self._init, self.pid]

    def _namespace_inits(self) -> list[int]:
        """The init of the bot's PID namespace (the child of unshare), if there is one and it runs."""
        if self.containment is not Containment.PID_NAMESPACE:
            return []
        return [process.pid for process in live_processes() if process.ppid == self.pid]

    def _processes_left(self, inits: list[int]) -> set[int]:
        members = set(session_members(self.pid))
        for pid in inits:
            process = read_process(pid)
            if process is not None and process.state != "Z":
                members.add(pid)
        return members

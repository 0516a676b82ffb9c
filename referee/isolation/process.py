"""Bot programs as subprocesses that cannot hurt the referee and cannot outlive their match: starting them,
draining their output, and killing every process of a bot.

Each bot runs in its own session and process group, with stdin closed, its resource limits set between fork and
exec (referee.isolation.bot_limits), and stdout+stderr in one pipe that a thread drains into a log file capped at
`log_cap_bytes`: a bot that prints megabytes never blocks and never fills the disk. The process the referee
starts dies when the referee's thread that started it ends (PR_SET_PDEATHSIG), and takes the bot along.

A sandboxed bot (`sandbox` given to `BotProcess.start`: see referee.isolation.sandbox) runs under bubblewrap:
`pid` is the outer bwrap process, the session leader; its child is bwrap's init, pid 1 of the bot's own PID
namespace, which starts the bot's program (through setpriv as root, under the bot's own uid). An unsandboxed
bot runs in its own PID namespace under util-linux unshare where the machine allows it, else in its session only
(referee.isolation.containment). Either way `kill` ends the whole process group, every other process of the bot's
session, and (in a namespace) waits until the namespace's init is gone, which means every process in it is.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import logging
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

from protocol.errors import BotFault
from referee.isolation import gvisor, kernel_root
from referee.isolation import sandbox as sandboxing
from referee.isolation.bot_limits import BotLimits, open_files_cap
from referee.isolation.containment import Containment, Wrapper, containment
from referee.isolation.proctable import Namespace, live_processes, pid_namespaces, read_process, session_members

__all__ = ["BotProcess", "BotStartError", "Containment", "Wrapper", "containment", "open_files_cap"]

_DRAIN_CHUNK = 64 * 1024
_REAP_SECONDS = 2.0
_PR_SET_PDEATHSIG = 1

_log = logging.getLogger(__name__)


class BotStartError(BotFault, OSError):
    """The bot's program could not be started at all (missing file, not executable, ...)."""


def _resolve_program(program: str, env: Mapping[str, str], cwd: str | None) -> str:
    """The executable Popen would run for `program` (looked up in the bot's PATH unless it names a path), so a
    missing program is a start error even when unshare or bwrap, not the program, is what the referee starts.
    Absolute, symlinks kept: a virtual environment's python is a symlink to its base interpreter, and only
    run by its own path does it use the environment."""
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
    a bye; the unshare or bwrap process dying ends the namespace instead. The referee starts and stops a
    match's bots in one thread."""
    _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != referee:
        os._exit(1)


def _batch_scheduling() -> None:
    """Runs in the child between fork and exec: schedule the bot (and what it starts) as SCHED_BATCH, which
    differs from the default policy in one way only: a bot's thread that wakes up does not preempt the thread
    running on that CPU. The referee wakes every thread of a bot twice a decision (freezing it after its answer
    and thawing it before its next request), and with the default policy those threads preempted the referee
    in the middle of its work; a bot on move still runs as soon as the referee waits for its answer. Every bot
    gets the same policy, CPU weight and quota, so none gains on another."""
    with contextlib.suppress(OSError):
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))


def _prepare_child(bot_limits: BotLimits, referee: int | None, jail: sandboxing.Jail | None) -> None:
    """Runs in the child between fork and exec; `referee` is set when the child is unshare or bwrap."""
    if referee is not None:
        _die_with_referee(referee)
    _batch_scheduling()
    if jail is not None:
        jail.enter()
    else:
        bot_limits.apply()


def _drain(read_fd: int, log: BinaryIO | None, log_path: Path, cap_bytes: int) -> None:
    """Copy the bot's output into the log until the pipe closes; past the cap, or once the log cannot be
    written (a full disk; None: it could not even be opened), read and discard, so the bot never blocks on its
    output. The log is opened before the bot starts, so the file may be renamed at any time after
    (referee.session names it after the bot once its hello has told its name)."""
    written = 0
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
        return open(log_path, "ab", buffering=0)  # noqa: SIM115 (closed by the drain thread)
    except OSError as error:
        _log.warning("cannot write the bot log %s: %s", log_path, error.strerror or error)
        return None


OUTPUT_TAIL_LINES = 20
"""How many of a bot's last lines of output the detail of its crash keeps."""


def last_output_lines(
    log_path: Path, since: int = 0, count: int = OUTPUT_TAIL_LINES, max_chars: int = 200
) -> list[str]:
    """The last `count` non-empty lines a bot printed after byte `since` of its log (where its latest start
    began), each cut at `max_chars`, oldest first: the cause of a crash is often a few lines above its last
    one (a stack trace, then the runtime's version)."""
    try:
        with open(log_path, "rb") as log:
            log.seek(max(since, log.seek(0, os.SEEK_END) - count * (max_chars + 1) * 4))
            tail = log.read().decode("utf-8", errors="replace")
    except OSError:
        return []
    lines = [line.rstrip()[:max_chars] for line in tail.splitlines() if line.strip()]
    return lines[-count:]


@dataclass(frozen=True, slots=True)
class Ending:
    """How a process ended: killed by `signal`, or exited with `status` (its own; neither: not known)."""

    status: int | None = None
    signal: int | None = None
    grace_s: float | None = None
    """A remote seat's: its connection closed and did not come back within this reconnect grace."""


def ending_of(code: int, wrapped: bool) -> Ending:
    """The ending an exit status says. A negative one is the signal that killed the process; one above 128, from
    a program run through a wrapper (bwrap, unshare: they exit with 128 + the signal that killed their child), is
    that signal too; from a program run directly it is its own status."""
    number = -code if code < 0 else code - 128 if code > 128 else None
    if number is not None and _signal_name(number) is not None and (code < 0 or wrapped):
        return Ending(signal=number)
    return Ending(status=code)


def describe_ending(ending: Ending) -> str:
    """An ending in words: a signal by its name and number; a status above 128 with the usual meaning given."""
    if ending.signal is not None:
        return f"was killed by {_signal_name(ending.signal) or 'a signal'} (signal {ending.signal})"
    code = ending.status
    if code is None:
        return "exited"
    name = _signal_name(code - 128) if code > 128 else None
    if name is None:
        return f"exited with status {code}"
    return f"exited with status {code} (the status a shell gives a program killed by {name}, signal {code - 128})"


def describe_exit_status(code: int, wrapped: bool) -> str:
    """An exit status in words (ending_of, describe_ending)."""
    return describe_ending(ending_of(code, wrapped))


def _signal_name(number: int) -> str | None:
    try:
        return signal.Signals(number).name
    except ValueError:
        return None


class BotHandle(Protocol):
    """A started bot program (see BotProcess, the real one)."""

    @property
    def pid(self) -> int:
        """The leader of the bot's session."""

    @property
    def pidfd(self) -> int:
        """What Wire.watch watches for the bot's exit."""

    @property
    def memory_mb(self) -> int | None: ...

    @property
    def jail(self) -> sandboxing.Jail | None:
        """Its sandbox, if it runs in one."""

    def exited(self) -> bool: ...

    def ending(self) -> Ending | None:
        """How it ended (its status or the signal that killed it); None while it runs."""

    def oom_killed(self) -> bool:
        """The kernel killed it (or one of its processes) for going over its memory limit."""

    def hold(self, frozen: bool) -> None:
        """Freeze it (it uses no CPU until thawed) or thaw it; nothing where it cannot be frozen."""

    def kill(self) -> None:
        """Kill every process of the bot, and return once they are gone."""

    def program_pids(self) -> list[int]:
        """The processes of the bot's program (where a connection's maker is looked for first)."""

    def namespace(self) -> Namespace | None:
        """The bot's PID namespace, if it has one."""


class StartBot(Protocol):
    """Starts a bot's `command` with exactly `env`, its output to `log_path` (BotStartError if it cannot)."""

    def __call__(
        self,
        command: Sequence[str],
        env: Mapping[str, str],
        log_path: Path,
        log_cap_bytes: int,
        *,
        memory_mb: int | None,
        cwd: str | None,
        sandbox: sandboxing.SandboxRequest | None,
    ) -> BotHandle: ...


class BotProcess:
    """One running bot program. `pidfd` becomes readable when the process exits (for zmq.Poller); `pid` is the
    leader of the bot's session (in a PID namespace, the unshare or outer bwrap process whose child is the
    namespace's init)."""

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        log_path: Path,
        drain: threading.Thread,
        containment: Containment,
        jail: sandboxing.Jail | None = None,
        memory_mb: int | None = None,
    ) -> None:
        self._popen = popen
        self.memory_mb = memory_mb
        """The bot's memory limit, to name it when the bot hits it."""
        self.log_path = log_path
        self._drain = drain
        self.containment = containment
        self.jail = jail
        self.pid = popen.pid
        self.pidfd = os.pidfd_open(popen.pid)
        self._killed = False
        self._namespace: Namespace | None = None
        self._init: int | None = None
        self._sandbox_exempted = False
        """The sandbox's own processes have been taken out of the bot's freezer (at its first freeze, when the
        bot has said hello, so the init has started the bot's program, which stays in)."""

    @property
    def sandboxed(self) -> bool:
        return self.jail is not None

    @property
    def uid(self) -> int | None:
        """The host uid the sandboxed bot runs under, if it has one of its own."""
        return None if self.jail is None else self.jail.uid

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
        sandbox: sandboxing.SandboxRequest | None = None,
    ) -> BotProcess:
        """Start `command` with exactly `env`; in the sandbox if `sandbox` is given (sandboxing.SandboxError if
        it cannot be set up), else contained as referee.isolation.containment finds possible."""
        memory_bytes = memory_mb * 1024 * 1024 if memory_mb else None
        jail: sandboxing.Jail | None = None
        if sandbox is not None:
            try:
                program = [_resolve_program(command[0], env, cwd), *command[1:]]
                if sandbox.kernel:
                    jail = gvisor.confine(program, cwd, sandbox, memory_bytes, env)
                else:
                    jail = sandboxing.confine(program, cwd, sandbox, memory_bytes)
            except (sandboxing.ProgramHiddenFromBot, kernel_root.SlimRootRefused) as error:
                raise BotStartError(str(error)) from None
            kept_in, argv = Containment.PID_NAMESPACE, jail.argv
        else:
            wrapper = containment()
            kept_in, argv = wrapper.containment, list(command)
            if wrapper.prefix:
                argv = [*wrapper.prefix, _resolve_program(command[0], env, cwd), *command[1:]]
        referee = os.getpid() if kept_in is Containment.PID_NAMESPACE else None
        _libc()
        bot_limits = BotLimits(memory_bytes, cpu_seconds)
        log = _open_log(log_path)
        read_fd, write_fd = os.pipe()
        try:
            popen = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=write_fd,
                stderr=write_fd,
                env=dict(env),
                cwd=cwd,
                start_new_session=True,
                pass_fds=() if jail is None else jail.inherited_fds,
                preexec_fn=lambda: _prepare_child(bot_limits, referee, jail),
            )
        except BaseException as error:
            os.close(read_fd)
            if log is not None:
                log.close()
            if jail is not None:
                jail.release()
            if isinstance(error, OSError | subprocess.SubprocessError):
                raise BotStartError(f"cannot start {' '.join(command)!r}: {error}") from error
            raise
        finally:
            os.close(write_fd)
        if jail is not None:
            jail.started()
        drain = threading.Thread(
            target=_drain, args=(read_fd, log, log_path, log_cap_bytes), name=f"bot-log-{popen.pid}", daemon=True
        )
        drain.start()
        where = "sandbox" if jail is not None else kept_in.value
        _log.debug("bot %d (log %s) runs in its own %s", popen.pid, log_path, where)
        return cls(popen, log_path, drain, kept_in, jail, memory_mb)

    def exited(self) -> bool:
        return self._popen.poll() is not None

    @property
    def returncode(self) -> int | None:
        """Its exit status once it has exited (negative: the signal that killed it), else None."""
        return self._popen.poll()

    @property
    def can_hold(self) -> bool:
        """The bot can be frozen (it is sandboxed with a cgroup and the machine has the freezer)."""
        return self.jail is not None and self.jail.cgroup is not None and self.jail.cgroup.can_hold

    def hold(self, frozen: bool) -> None:
        """Freeze every process of the bot (it uses no CPU until thawed) or thaw them; nothing if it cannot be
        frozen, or once it was killed."""
        if self.can_hold and not self._killed:
            assert self.jail is not None and self.jail.cgroup is not None
            if frozen and not self._sandbox_exempted and self.jail.exempts_wrappers:
                self._sandbox_exempted = True
                self.jail.cgroup.exempt(self._sandbox_pids())
            self.jail.cgroup.hold(frozen)

    def ending(self) -> Ending | None:
        """How the bot's process ended; None while it runs."""
        code = self._popen.poll()
        if code is None:
            return None
        return ending_of(code, self.jail is not None or self.containment is not Containment.SESSION)

    def oom_killed(self) -> bool:
        """The kernel killed a process of the bot for going over its memory limit (its cgroup counted an
        oom_kill)."""
        return self.jail is not None and self.jail.cgroup is not None and bool(self.jail.cgroup.oom_kills())

    def describe_exit(self) -> str:
        """How the bot ended, in words: a signal by its name and number, and the memory limit when the kernel
        killed it for going over it."""
        ending = self.ending()
        if ending is None:
            return "is still running"
        said = describe_ending(ending)
        if self.oom_killed():
            limit = f" of {self.memory_mb} MiB" if self.memory_mb else ""
            said += f": it hit the memory limit{limit}"
        return said

    def kill(self) -> None:
        """Kill the process group, every other member of the bot's session and, where it has cgroups, every
        process in them (thawed only once SIGKILL is pending: none runs again, not even while another seat is on
        move), and return once they are all gone (SIGKILL is asynchronous) and, in a PID namespace, once its
        init is (the kernel empties the namespace before the init's exit completes, whatever session its
        processes are in); reap; close the log."""
        if self._killed:
            return
        self._killed = True
        inits = self._namespace_inits()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        if self.jail is not None and self.jail.cgroup is not None:
            self.jail.cgroup.kill()
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
        if self.jail is not None:
            self.jail.release()

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
        """The pid of the bot's program and, in a namespace, of the unshare or bwrap process in front of it (the
        namespace's init is known once `namespace` has found it): the processes that most likely speak for it."""
        self.namespace()
        return [self.pid] if self._init is None else [self._init, self.pid]

    def _sandbox_pids(self) -> list[int]:
        """bwrap (the process started) and the init of the bot's PID namespace: no bot code runs in either."""
        self.namespace()
        return [self.pid] if self._init is None else [self.pid, self._init]

    def _namespace_inits(self) -> list[int]:
        """The init of the bot's PID namespace (the child of unshare or of the outer bwrap), if there is one and
        it runs."""
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

"""The sandbox of a bot: the one place that turns a bot's command into the command line that isolates it, with
bubblewrap (`bwrap`, the tool Flatpak builds its sandboxes with), its own uid, cgroups and limits.

Each sandboxed bot, with every process it starts, gets:
- its own PID namespace with its own /proc (it sees its own processes only; bwrap's init is pid 1 and reaps,
  and when the bot's program ends, or the referee, every process of the sandbox is killed), and its own mount,
  IPC, UTS (hostname "bot") and cgroup namespaces;
- a network namespace of its own with nothing in it but a loopback device, and unix sockets only (the seccomp
  filter): the match's ipc socket, bound in at `SOCKET_INSIDE`, is its one way out;
- an unprivileged host uid of its own, leased from a range (referee.isolation.uids) when the referee runs as root: bwrap
  starts util-linux `setpriv`, which takes the uid and its gid, drops every supplementary group, the whole
  capability bounding set and the inheritable set, and sets no_new_privs before it execs the bot. So the bot
  has no capabilities and cannot trace, signal or read the memory of any process but its own. Without root,
  bwrap maps the organiser's uid in a user namespace of its own instead (its processes are still invisible);
- a read-only view of the system (/usr, /etc, the /bin, /sbin, /lib* links or folders, the CPU topology in
  /sys/devices/system/cpu) and of the folders the organiser's side decides (`shown_folders`): for a
  submission (BotSpec.folders, SandboxRequest.own) its own folder or build copy and its program's runtime
  where the program lies outside it (its installation, a Python's virtual environment, base installation and
  the SDK packages), never a folder its command's words name, for they are arguments, not mounts; for a bot
  the organiser named (a league file's, the command line's) `program_folders`: that runtime, the folder of
  each file its command names and its `cwd` if its spec gives one. The match's own files (its work folder,
  logs, replays) and the organiser's (MatchSpec.private_paths: a league's file and store) are masked even
  there (an empty folder, an unreadable file);
- a private writable /tmp and HOME (`HOME_INSIDE`), each a tmpfs of limits.MAX_TMP_BYTES, new at every start,
  and a private /dev (null, zero, random, urandom, tty, a /dev/shm tmpfs);
- nothing else of the machine: no store, league file, replays, logs, other bots' folders, organiser's home;
- an environment of REFEREE_ENDPOINT, REFEREE_TOKEN, PATH, HOME, TMPDIR and LANG plus what its BotSpec declares
  (`bot_environment`);
- a seccomp filter that refuses the calls reaching kernel state shared between bots or kept past them
  (referee.isolation.seccomp: keyrings, file locks, leases and notifications, inotify and fanotify, the page
  cache's residency, io_uring, sysinfo, sockets of other families than AF_UNIX, socket cookies), and the
  machine's global counters in /proc and /sys shown constant or empty (PROC_SHOWN_CONSTANT, PROC_SHOWN_EMPTY,
  PROC_HIDDEN_FOLDERS, CPU_HIDDEN): no bot can pass bits to another through them, nor keep notes in them for a
  later process;
- limits for the bot as a whole where the machine has cgroups for it (referee.isolation.cgroups: memory, processes
  and threads, the referee's CPUs), else RLIMIT_NPROC of its uid and per-process limits
  (referee.isolation.bot_limits: memory, open files, file size, CPU time, no priority above the referee's).

`probe()` finds once per process what this machine allows (`Isolation`: full, partial or none, and
`shortfalls`, what full would need); `report()` says it for `referee doctor`. Each Jail knows the level its
bot really got, which the games record (GameRecord.isolation). Where no sandbox can run, the referee runs
bots unsandboxed (referee.isolation.process keeps its older PID-namespace containment for that path) and
records the games at isolation none.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import glob
import importlib.util
import itertools
import logging
import os
import platform
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from protocol import limits
from protocol.errors import BotFault, EnvironmentProblem
from referee.isolation import seccomp, uids
from referee.isolation.bot_limits import BotLimits
from referee.isolation.cgroups import BotCgroup, CgroupError, CgroupMode, CgroupSupport, cgroup_support

SOCKET_INSIDE = "/run/referee/referee.sock"
ENDPOINT_INSIDE = f"ipc://{SOCKET_INSIDE}"
"""The REFEREE_ENDPOINT of a sandboxed bot."""
HOME_INSIDE = "/home/bot"
TMP_INSIDE = "/tmp"
HOSTNAME = "bot"
SYSTEM_FOLDERS = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""Shown read-only to every bot (a folder that is a symlink on the host, as /bin is with a merged /usr, is the
same symlink inside)."""
CPU_TOPOLOGY = "/sys/devices/system/cpu"
"""The one part of /sys a bot sees (read-only): numerical libraries (OpenBLAS, PyTorch) size their thread pools
from it."""
SDK_PACKAGES = ("protocol", "bots", "referee")
"""The packages of this project a Python bot may import: the SDK, the built-in bots, and the referee's (whose
rules engine, referee.games, the heuristic bots use). Code only: none of them holds a match's data."""

PROC_SHOWN_CONSTANT = ("loadavg", "stat", "meminfo", "uptime")
"""Global /proc counters shown with constant contents of their usual format (no load, the bot's memory limit as
the whole memory, every CPU idle) instead of the machine's: what a bot reads there, another bot cannot have
changed. Programs that parse them at start (runtimes sizing their heaps or thread pools) still find them."""
PROC_SHOWN_EMPTY = (
    "vmstat", "diskstats", "interrupts", "softirqs", "schedstat", "zoneinfo", "buddyinfo", "pagetypeinfo",
    "slabinfo", "swaps", "locks", "key-users", "keys", "cgroups", "timer_list", "sched_debug", "vmallocinfo",
    "latency_stats", "lock_stat", "kpagecount", "kpageflags", "kpagecgroup", "sys/fs/file-nr", "sys/fs/inode-nr",
    "sys/fs/inode-state", "sys/fs/dentry-state", "sys/fs/aio-nr", "sys/kernel/pty/nr",
)  # fmt: skip
"""Global /proc counters (every bot's page faults, interrupts, open files, locks...) shown as empty files, where
the kernel has them."""
PROC_HIDDEN_FOLDERS = ("pressure", "fs")
"""Global /proc folders shown empty (pressure stall counters; per-filesystem statistics such as ext4's free
block groups)."""
CPU_HIDDEN = ("cpufreq", "cpuidle", "cpu[0-9]*/cpufreq", "cpu[0-9]*/cpuidle")
"""The parts of CPU_TOPOLOGY that count (frequency and idle states change with every bot's load): shown
empty."""

_PROBE_SECONDS = 10.0
_SETPRIV_FLAGS = ("--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs")
_SETPRIV_CAPABILITIES = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP")
"""What bwrap leaves to setpriv (as root), which gives them up with the uid switch and the bounding set."""

_log = logging.getLogger(__name__)


class SandboxError(EnvironmentProblem, RuntimeError):
    """A bot cannot be sandboxed although the machine allows it (no free uid, a cgroup that cannot be made...):
    the referee's trouble, not the bot's."""


class ProgramHiddenFromBot(BotFault, RuntimeError):
    """A bot's program (or a file its command names) that the bot's own uid may not read: the folder shown to
    it, or one below, lets no other user in. The bot's fault (its start fails), told with what to do; not a
    SandboxError, which is the referee's trouble."""


class Isolation(enum.StrEnum):
    """What holds a bot: what `probe` found and `referee doctor` reports, or what a match asked for (kernel) or
    could not give (remote). STRENGTH orders them."""

    FULL = "full"
    """The sandbox with a uid of the bot's own and cgroup limits for the bot as a whole."""
    PARTIAL = "partial"
    """The sandbox, without a uid of its own or without cgroups (see SandboxProbe.shortfalls)."""
    NONE = "none"
    """No sandbox: bots run as the organiser, in a PID namespace or a session (referee.isolation.process)."""
    KERNEL = "kernel"
    """The strongest: every bot under an application kernel of its own (gVisor's runsc: referee.isolation.gvisor),
    with its own uid and cgroup limits; asked for (MatchSpec.kernel), never what `probe` finds."""
    REMOTE = "remote"
    """A seat played from another machine (referee.wire.remote_seats): neither its sandbox nor its clock is the
    referee's."""


STRENGTH = (Isolation.REMOTE, Isolation.NONE, Isolation.PARTIAL, Isolation.FULL, Isolation.KERNEL)
"""The levels from the weakest."""


@dataclass(frozen=True)
class SandboxProbe:
    """What this machine allows (see `probe`)."""

    problem: str | None
    """Why no bot can be sandboxed here; None when they can."""
    bwrap: str | None = None
    version: str | None = None
    setpriv: str | None = None
    own_uid_problem: str | None = None
    """Why bots cannot get a uid of their own (None when they do)."""
    cgroups: CgroupSupport = CgroupSupport(CgroupMode.NONE)
    seccomp_problem: str | None = "not tried"
    """Why bots run without the seccomp filter (None when they have it)."""

    @property
    def seccomp(self) -> bool:
        return self.usable and self.seccomp_problem is None

    @property
    def usable(self) -> bool:
        return self.problem is None

    @property
    def own_uid(self) -> bool:
        return self.usable and self.own_uid_problem is None

    @property
    def isolation(self) -> Isolation:
        if not self.usable:
            return Isolation.NONE
        full = self.own_uid and self.seccomp and self.cgroups.mode is not CgroupMode.NONE
        return Isolation.FULL if full else Isolation.PARTIAL

    @property
    def shortfalls(self) -> tuple[str, ...]:
        """What the full sandbox needs that this machine lacks, one line each with why (empty at full)."""
        return tuple(f"{check.name}: {check.detail}" for check in report(self) if check.required and not check.ok)

    @property
    def whole_bot_limits(self) -> str:
        """How the limits for a bot as a whole are enforced here."""
        if self.cgroups.mode is CgroupMode.NONE:
            per_uid = "RLIMIT_NPROC of the bot's own uid, " if self.own_uid else ""
            return f"{per_uid}per-process rlimits only (no cgroups: {self.cgroups.reason})"
        controllers = sorted({name for parent in self.cgroups.parents for name in parent.controllers})
        return f"{self.cgroups.mode.value} ({', '.join(controllers)})"


# The command line.


def _namespace_flags(user_namespace: bool) -> list[str]:
    flags = ["--unshare-pid", "--unshare-ipc", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
    if user_namespace:
        flags.append("--unshare-user")
    return [*flags, "--hostname", HOSTNAME, "--die-with-parent", "--new-session"]


def _seccomp_flags(seccomp_fd: int | None) -> list[str]:
    return [] if seccomp_fd is None else ["--seccomp", str(seccomp_fd)]


def _capability_flags(switches_uid: bool) -> list[str]:
    flags = ["--cap-drop", "ALL"]
    for capability in _SETPRIV_CAPABILITIES if switches_uid else ():
        flags += ["--cap-add", capability]
    return flags


def _system_flags() -> list[str]:
    flags = []
    for folder in SYSTEM_FOLDERS:
        if os.path.islink(folder):
            flags += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            flags += ["--ro-bind", folder, folder]
    if os.path.isdir(CPU_TOPOLOGY):
        flags += [*_folders_to(CPU_TOPOLOGY), "--ro-bind", CPU_TOPOLOGY, CPU_TOPOLOGY]
        for pattern in CPU_HIDDEN:
            for folder in sorted(glob.glob(os.path.join(CPU_TOPOLOGY, pattern))):
                flags += ["--size", "4096", "--perms", "0555", "--tmpfs", folder, "--remount-ro", folder]
    return [*flags, "--proc", "/proc", "--dev", "/dev"]


def _proc_flags(memory_bytes: int | None) -> list[str]:
    """Flags that show the global counters of /proc constant or empty (after --proc): a bot cannot read what
    other bots do from the machine's load, memory, interrupts or open files."""
    flags = []
    for name, path in constant_proc_files(memory_bytes).items():
        flags += ["--ro-bind", str(path), f"/proc/{name}"]
    for name in PROC_SHOWN_EMPTY:
        if os.path.exists(f"/proc/{name}"):
            flags += ["--ro-bind", str(empty_file()), f"/proc/{name}"]
    for name in PROC_HIDDEN_FOLDERS:
        if os.path.isdir(f"/proc/{name}"):
            flags += ["--size", "4096", "--perms", "0555", "--tmpfs", f"/proc/{name}", "--remount-ro", f"/proc/{name}"]
    return flags


def _private_flags() -> list[str]:
    size = str(limits.MAX_TMP_BYTES)
    flags = ["--size", size, "--perms", "1777", "--tmpfs", TMP_INSIDE]
    flags += ["--size", size, "--perms", "1777", "--tmpfs", "/dev/shm"]
    return [*flags, *_folders_to(HOME_INSIDE), "--size", size, "--perms", "0777", "--tmpfs", HOME_INSIDE]


def _folders_to(path: str, made: set[str] | None = None) -> list[str]:
    """Flags that create each folder above `path` inside the sandbox, readable by the bot's uid (bwrap makes
    missing parents of a mount point 0700, which only root could enter)."""
    made = set() if made is None else made
    flags = []
    parts = Path(path).parts
    for depth in range(2, len(parts)):
        folder = str(Path(*parts[:depth]))
        if folder not in made and not _system(folder):
            made.add(folder)
            flags += ["--perms", "0755", "--dir", folder]
    return flags


def _program_flags(folders: Sequence[str], masked: Sequence[str], cwd: str, writable: Sequence[str] = ()) -> list[str]:
    made: set[str] = set()
    flags = []
    for folder in sorted({*folders, *writable}):
        flags += [*_folders_to(folder, made), "--bind" if folder in writable else "--ro-bind", folder, folder]
        made.add(folder)
    for path in _shown_paths(masked, folders):
        if os.path.isdir(path):
            flags += ["--size", "4096", "--tmpfs", path]
        elif os.path.exists(path):
            flags += ["--ro-bind", str(unreadable_file()), path]
    if not any(_within(cwd, folder) for folder in folders) and not _system(cwd):
        flags += [*_folders_to(cwd, made), "--perms", "0755", "--dir", cwd]
    return [*flags, "--chdir", cwd]


def _shown_paths(masked: Sequence[str], folders: Sequence[str]) -> list[str]:
    """Every path at which a folder shown would show one of the `masked` paths (through the folder as given and
    through where its symlinks lead), in order, each once."""
    candidates = [candidate for path in masked for candidate in _with_real(path)]
    shown: list[str] = []
    for folder in folders:
        aliases = _with_real(folder)
        for candidate, alias in itertools.product(candidates, aliases):
            if _within(candidate, alias):
                relative = os.path.relpath(candidate, alias)
                shown += [os.path.normpath(os.path.join(other, relative)) for other in aliases]
    return list(dict.fromkeys(shown))


def runtime_dir() -> Path:
    """The referee's own folder for what its sandboxes need (the uid locks live in it, as root)."""
    if os.geteuid() == 0:
        return uids.UIDS_DIR.parent
    return Path(tempfile.gettempdir(), f"card-referee-{os.geteuid()}")


@functools.cache
def unreadable_file() -> Path:
    """An empty file that no bot may read (mode 0, and bots have no capabilities): bound over the files a
    folder shown to a bot holds but the bot must not see."""
    folder = runtime_dir()
    folder.mkdir(mode=0o755, parents=True, exist_ok=True)
    path = folder / "unreadable"
    if not path.exists():
        path.touch(mode=0)
    path.chmod(0)
    return path


@functools.cache
def empty_file() -> Path:
    """An empty file every bot may read: bound over the global counters of /proc."""
    return _runtime_file("empty", "")


def _meminfo(memory_bytes: int | None) -> str:
    machine = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGESIZE")
    total_kb = (machine if memory_bytes is None else memory_bytes) // 1024
    lines = [("MemTotal", total_kb), ("MemFree", total_kb), ("MemAvailable", total_kb), ("Buffers", 0)]
    lines += [("Cached", 0), ("SwapCached", 0), ("SwapTotal", 0), ("SwapFree", 0), ("Shmem", 0)]
    return "".join(f"{name + ':':<16}{value:>8} kB\n" for name, value in lines)


def _stat(cpus: int) -> str:
    idle = " 0 0 0 0 0 0 0 0 0 0"
    rows = [f"cpu {idle}", *(f"cpu{cpu}{idle}" for cpu in range(cpus))]
    rows += ["intr 0", "ctxt 0", "btime 0", "processes 0", "procs_running 1", "procs_blocked 0", "softirq 0"]
    return "\n".join(rows) + "\n"


@functools.cache
def constant_proc_files(memory_bytes: int | None) -> dict[str, Path]:
    """The files shown at /proc/NAME (PROC_SHOWN_CONSTANT) for a bot limited to `memory_bytes`."""
    contents = {
        "loadavg": "0.00 0.00 0.00 1/1 1\n",
        "stat": _stat(os.cpu_count() or 1),
        "meminfo": _meminfo(memory_bytes),
        "uptime": "0.00 0.00\n",
    }
    suffix = "" if memory_bytes is None else f"-{memory_bytes}"
    return {name: _runtime_file(f"proc-{name}{suffix}", text) for name, text in contents.items()}


def _runtime_file(name: str, text: str) -> Path:
    """A file of runtime_dir() holding `text`, readable by every bot (written anew, atomically)."""
    folder = runtime_dir()
    folder.mkdir(mode=0o755, parents=True, exist_ok=True)
    path = folder / name
    with tempfile.NamedTemporaryFile("w", dir=folder, delete=False, prefix=f".{name}-") as file:
        file.write(text)
    os.chmod(file.name, 0o444)
    os.replace(file.name, path)
    return path


def _socket_flags(socket: Path | None) -> list[str]:
    if socket is None:
        return []
    return [*_folders_to(SOCKET_INSIDE), "--bind", str(socket), SOCKET_INSIDE]


def _exec_prefix(uid: int | None, setpriv: str | None) -> list[str]:
    """What runs the bot's program inside: setpriv taking the bot's uid (as root), then `env -u PWD` (bwrap
    sets PWD, which is not part of a bot's environment)."""
    switch = [] if uid is None or setpriv is None else [setpriv, "--reuid", str(uid), "--regid", str(uid)]
    switch += [*_SETPRIV_FLAGS, "--"] if switch else []
    return [*switch, shutil.which("env") or "/usr/bin/env", "-u", "PWD"]


def sandbox_command(
    bwrap: str,
    command: Sequence[str],
    *,
    folders: Sequence[str],
    cwd: str,
    socket: Path | None,
    uid: int | None,
    setpriv: str | None,
    masked: Sequence[str] = (),
    seccomp_fd: int | None = None,
    writable: Sequence[str] = (),
    memory_bytes: int | None = None,
) -> list[str]:
    """The bwrap command line that runs `command` (its program an absolute path) in a sandbox showing
    `folders` read-only, in `cwd`, with the match's `socket` bound at SOCKET_INSIDE, as host `uid` through
    `setpriv` (as root), or in a user namespace as the organiser (uid None). The `masked` paths (the match's
    own files) are hidden where a folder shown holds them. `seccomp_fd` is a file descriptor the bwrap process
    inherits, to read the seccomp filter from (referee.isolation.seccomp). The `writable` folders are shown
    read-write (a submission's build, in a copy of its folder: nothing a bot plays from is ever writable).
    /proc/meminfo shows `memory_bytes` (the bot's limit) as the whole memory."""
    switches_uid = uid is not None and setpriv is not None
    return [
        bwrap,
        *_namespace_flags(user_namespace=os.geteuid() != 0),
        *_capability_flags(switches_uid),
        *_seccomp_flags(seccomp_fd),
        *_system_flags(),
        *_proc_flags(memory_bytes),
        *_private_flags(),
        *_program_flags(folders, masked, cwd, writable),
        *_socket_flags(socket),
        "--",
        *_exec_prefix(uid, setpriv),
        *command,
    ]


def options_through_fd(argv: Sequence[str]) -> tuple[int, list[str]]:
    """`argv` (a sandbox_command) with bwrap's options moved into a file descriptor for `bwrap --args FD`, as
    Flatpak passes them: bwrap is the sandbox's pid 1, and any process inside can read its command line in
    /proc/1/cmdline, which would list every folder shown and every path hidden. Only the command after `--`
    stays on the line. The fd is not inherited by default (Popen's pass_fds hands it to bwrap alone)."""
    split = argv.index("--")
    fd = os.memfd_create("referee-bwrap-options", os.MFD_CLOEXEC)
    options = b"".join(os.fsencode(option) + b"\0" for option in argv[1:split])
    if os.write(fd, options) != len(options):
        os.close(fd)
        raise SandboxError("the sandbox's options could not be written for bwrap")
    os.lseek(fd, 0, os.SEEK_SET)
    return fd, [argv[0], "--args", str(fd), *argv[split:]]


# What a bot's program needs to see.


def _system(path: str) -> bool:
    return any(_within(path, folder) for folder in SYSTEM_FOLDERS) or path in ("/", "/proc", "/dev")


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _with_real(path: str) -> list[str]:
    """`path` as given, and where symlinks lead (a runtime that resolves its script's path, as Node does, needs
    the real one)."""
    real = os.path.realpath(path)
    return [path] if real == path else [path, real]


def _installation(program: str) -> list[str]:
    """The prefix of a program installed as PREFIX/bin/PROGRAM with its PREFIX/lib (a Python or Node
    installation, a virtual environment), found through every symlink of the program."""
    found = []
    for path in _with_real(program):
        bin_folder = os.path.dirname(path)
        prefix = os.path.dirname(bin_folder)
        found.append(bin_folder)
        if os.path.basename(bin_folder) == "bin" and (
            os.path.isfile(os.path.join(prefix, "pyvenv.cfg")) or os.path.isdir(os.path.join(prefix, "lib"))
        ):
            found.append(prefix)
    return found


def _venv_home(prefix: str) -> list[str]:
    """The base installation of the virtual environment at `prefix` (its pyvenv.cfg's `home`, a bin folder)."""
    with contextlib.suppress(OSError), open(os.path.join(prefix, "pyvenv.cfg")) as config:
        for line in config:
            key, sep, value = line.partition("=")
            if sep and key.strip() == "home":
                return [os.path.dirname(path) for path in _with_real(value.strip())]
    return []


def _is_python(program: str) -> bool:
    return any(os.path.basename(path).startswith("python") for path in _with_real(program))


@functools.cache
def sdk_folders() -> tuple[str, ...]:
    """Where this project's SDK packages are imported from (for Python bots)."""
    folders: list[str] = []
    for name in SDK_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            folders += [os.path.abspath(location) for location in spec.submodule_search_locations]
    return tuple(folders)


def program_folders(command: Sequence[str], cwd: str | None) -> tuple[str, ...]:
    """The folders an organiser's bot's command needs (a league file's, the command line's: the organiser typed
    its words), outermost only, system folders left out: its program's runtime (`runtime_folders`), the folder
    of each file its arguments name (relative to its cwd) or the folder they name, and its `cwd` if set."""
    base = cwd or os.getcwd()
    folders = list(runtime_folders(command[0]))
    for word in command[1:]:
        path = os.path.abspath(os.path.join(base, word))
        if os.path.isfile(path):
            folders += _with_real(os.path.dirname(path))
        elif os.path.isdir(path) and path != "/":
            folders += _with_real(path)
    if cwd is not None:
        folders += _with_real(os.path.abspath(cwd))
    return _outermost(folders)


def runtime_folders(program: str) -> tuple[str, ...]:
    """What running `program` needs besides the system: its folder and installation, and for a Python program
    its virtual environment's base and the SDK."""
    folders = _installation(program)
    for prefix in list(folders):
        folders += _venv_home(prefix)
    if _is_python(program):
        folders += sdk_folders()
    return _outermost(folders)


def shown_folders(command: Sequence[str], cwd: str | None, own: Sequence[str] | None) -> tuple[str, ...]:
    """The folders a bot's sandbox shows besides the system and its private ones. With `own` (BotSpec.folders:
    a submission's folder or build copy, the organiser's side's choice) exactly those, and the runtime of its
    program where the program lies outside them (`node`, the referee's Python: found on the organiser's PATH);
    the words after the program are arguments, never mounts, so none of them can show a classmate's folder,
    the teacher's or the league's. Without `own` (None: the organiser's bot), `program_folders`."""
    if own is None:
        return program_folders(command, cwd)
    mine = [real for folder in own for real in _with_real(os.path.abspath(folder))]
    inside = any(_within(path, folder) for path in _with_real(command[0]) for folder in mine)
    return _outermost([*mine, *(() if inside else runtime_folders(command[0]))])


def _outermost(folders: Iterable[str]) -> tuple[str, ...]:
    """The existing folders that are not system folders, each once, outermost only, in order."""
    kept = sorted({folder for folder in folders if not _system(folder) and os.path.isdir(folder)})
    return tuple(folder for folder in kept if not any(_within(folder, other) and folder != other for other in kept))


def normalised_command(command: Sequence[str], cwd: str | None) -> list[str]:
    """`command` with each word that names an existing path through `..` rewritten to the path it names, as the
    kernel finds it (what comes before the last `..` through its symlinks, the rest as written, so that a
    virtual environment's python stays itself): in the sandbox the folder before a `..` may not be shown, as in
    `python3 /course/bars/../bots/mine.py`."""
    base = cwd or os.getcwd()
    return [_through_parents(word, base) for word in command]


def _through_parents(word: str, base: str) -> str:
    parts = word.split("/")
    if ".." not in parts:
        return word
    last = len(parts) - 1 - parts[::-1].index("..")
    head = os.path.join(base, "/".join(parts[: last + 1]) or "/")
    resolved = os.path.join(os.path.realpath(head), *parts[last + 1 :])
    return resolved if os.path.exists(resolved) else word


def check_readable(command: Sequence[str], cwd: str | None, folders: Sequence[str]) -> None:
    """ProgramHiddenFromBot if a bot under a uid of its own (no group, so only the permissions of "other" users
    count) could not run `command`: its program executable, each file its arguments name readable, each folder
    from the one shown (`folders`) down to them enterable. Folders above a shown one are made 0755 in the
    sandbox, so only those below count."""
    base = cwd or os.getcwd()
    wanted = [(command[0], stat.S_IXOTH)]
    wanted += [
        (os.path.join(base, word), stat.S_IROTH) for word in command[1:] if os.path.isfile(os.path.join(base, word))
    ]
    for path, bit in wanted:
        shown = next((folder for folder in folders if _within(os.path.abspath(path), folder)), None)
        if shown is None:
            continue
        blocked = _unenterable(shown, os.path.dirname(os.path.abspath(path)))
        if blocked is not None:
            raise ProgramHiddenFromBot(
                f"the bot runs under a uid of its own, which cannot enter {blocked} (mode "
                f"{stat.filemode(os.stat(blocked).st_mode)}: only its owner may), so it cannot reach "
                f"{path}: run `chmod o+rx {blocked}` (and o+r on the bot's files), or move the bot to a folder "
                "other users may read"
            )
        with contextlib.suppress(OSError):
            if not os.stat(path).st_mode & bit:
                what, mode = ("run", "o+rx") if bit == stat.S_IXOTH else ("read", "o+r")
                raise ProgramHiddenFromBot(
                    f"the bot runs under a uid of its own, which may not {what} {path} (mode "
                    f"{stat.filemode(os.stat(path).st_mode)}): run `chmod {mode} {path}`"
                )


def _unenterable(shown: str, folder: str) -> str | None:
    """The first folder from `shown` down to `folder` that other users may not enter (None: all may)."""
    relative = os.path.relpath(folder, shown)
    steps = [] if relative == "." else relative.split(os.sep)
    current = shown
    for step in [None, *steps]:
        current = current if step is None else os.path.join(current, step)
        with contextlib.suppress(OSError):
            if not os.stat(current).st_mode & stat.S_IXOTH:
                return current
    return None


def bot_environment(token: str, declared: Iterable[tuple[str, str]] = ()) -> dict[str, str]:
    """A sandboxed bot's whole environment: PATH and LANG from the referee's, HOME and TMPDIR inside, what its
    spec declares (which may override those four), and its endpoint and token."""
    environment = {"PATH": os.environ.get("PATH", os.defpath), "LANG": os.environ.get("LANG", "C.UTF-8")}
    environment |= {"HOME": HOME_INSIDE, "TMPDIR": TMP_INSIDE}
    environment |= dict(declared)
    return environment | {limits.ENV_ENDPOINT: ENDPOINT_INSIDE, limits.ENV_TOKEN: token}


def expose_socket(socket: Path) -> None:
    """Let bots of other uids connect to the match's socket (its folder stays the referee's only)."""
    os.chmod(socket, 0o666)


# What this machine allows.


def _bwrap_version(bwrap: str) -> str | None:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        run = subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=_PROBE_SECONDS)
        return run.stdout.strip() or None
    return None


def _own_uid_problem(setpriv: str | None) -> str | None:
    if os.geteuid() != 0:
        return "the referee does not run as root, so it cannot give bots other uids (they run as the organiser)"
    if setpriv is None:
        return "util-linux setpriv is not installed"
    try:
        uids.uid_range()
    except uids.BadUidRange as error:
        return str(error)
    return None


def _why_it_failed(stderr: str) -> str:
    last = stderr.strip().splitlines()[-1] if stderr.strip() else "no message"
    hint = ""
    if os.geteuid() != 0 and ("namespace" in last or "Operation not permitted" in last):
        hint = (
            " (unprivileged user namespaces look disabled: sysctl kernel.unprivileged_userns_clone=1, "
            "user.max_user_namespaces > 0, or an AppArmor profile for bwrap; or run the referee as root)"
        )
    return f"bwrap cannot start a sandbox here: {last}{hint}"


def _try_sandbox(bwrap: str, setpriv: str | None, own_uid: bool, program: bytes | None) -> str | None:
    """Start `true` in a full sandbox (with a leased uid when bots get one, and the seccomp `program` if given);
    the reason it failed, or None."""
    true = shutil.which("true") or "/bin/true"
    lease = uids.lease_uid() if own_uid else None
    filter_fd = None if program is None else seccomp.filter_fd(program)
    try:
        with tempfile.TemporaryDirectory(prefix="referee-probe-") as folder:
            socket = Path(folder, "probe.sock")
            socket.touch()
            command = sandbox_command(
                bwrap,
                [true],
                folders=(),
                cwd="/",
                socket=socket,
                uid=None if lease is None else lease.uid,
                setpriv=setpriv,
                seccomp_fd=filter_fd,
            )
            run = subprocess.run(
                command,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=_PROBE_SECONDS,
                env={},
                pass_fds=() if filter_fd is None else (filter_fd,),
            )
    except (OSError, subprocess.SubprocessError) as error:
        return f"bwrap cannot be run: {error}"
    finally:
        if lease is not None:
            lease.release()
        if filter_fd is not None:
            os.close(filter_fd)
    return None if run.returncode == 0 else _why_it_failed(run.stderr)


@functools.cache
def probe() -> SandboxProbe:
    """What isolation bots get on this machine: tried once per process (a sandbox running `true`), then cached.
    Logs a warning when bots cannot be sandboxed, and what enforces their limits at debug level."""
    result = _probe()
    if result.problem is not None:
        _log.warning("bots run unsandboxed: %s", result.problem)
    else:
        _log.debug("sandbox: %s isolation; limits of a bot as a whole: %s", result.isolation, result.whole_bot_limits)
    return result


def _probe() -> SandboxProbe:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return SandboxProbe("bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
    setpriv = shutil.which("setpriv")
    own_uid_problem = _own_uid_problem(setpriv)
    program = seccomp.filter_program()
    seccomp_problem = None if program is not None else f"no seccomp filter is written for {platform.machine()}"
    try:
        failure = _try_sandbox(bwrap, setpriv, own_uid_problem is None, program)
        if (
            failure is not None
            and program is not None
            and _try_sandbox(bwrap, setpriv, own_uid_problem is None, None) is None
        ):
            failure, seccomp_problem = None, f"bwrap cannot load the seccomp filter ({failure})"
    except uids.NoFreeUid as error:
        failure = f"no uid for a bot: {error}"
    return SandboxProbe(
        problem=failure,
        bwrap=bwrap,
        version=_bwrap_version(bwrap),
        setpriv=setpriv,
        own_uid_problem=own_uid_problem,
        cgroups=cgroup_support(),
        seccomp_problem=seccomp_problem,
    )


# One bot's sandbox.


@dataclass(frozen=True)
class SandboxRequest:
    """What the referee gives a bot's sandbox: the match's socket, and the match's own files to keep hidden. A
    build (tournaments.league.builds) has no socket and one writable folder, the copy it builds in."""

    socket: Path | None
    masked: tuple[str, ...] = ()
    kernel: bool = False
    """Under a kernel of the bot's own (referee.isolation.gvisor) instead of bwrap."""
    writable: tuple[str, ...] = ()
    own: tuple[str, ...] | None = None
    """The bot's own folders (BotSpec.folders; a build's copy): what `shown_folders` shows of it. None: the
    folders its command names (an organiser's bot)."""


class Jail:
    """One sandboxed bot: its uid, its cgroups, its seccomp filter's fd and its command line, held from
    `confine` until `release`."""

    exempts_wrappers = True
    """bwrap and the init of the bot's PID namespace are taken out of its freezer (no bot code runs in them)."""

    def __init__(
        self,
        argv: list[str],
        lease: uids.UidLease | None,
        cgroup: BotCgroup | None,
        bot_limits: BotLimits,
        seccomp_fd: int | None = None,
    ) -> None:
        self.argv = argv
        self.uid = None if lease is None else lease.uid
        self.cgroup = cgroup
        self.limits = bot_limits
        self.seccomp_fd = seccomp_fd
        self.options_fd: int | None = None
        self._lease = lease
        self.isolation: Isolation = Isolation.PARTIAL
        """What this bot really got: full only with its own uid, its cgroup and the seccomp filter (set by
        `confine`, which may lose the cgroup of one bot on a machine that has cgroups)."""

    @property
    def inherited_fds(self) -> tuple[int, ...]:
        """The file descriptors the bwrap process must inherit (Popen's pass_fds)."""
        return tuple(fd for fd in (self.seccomp_fd, self.options_fd) if fd is not None)

    def enter(self) -> None:
        """Runs in the child between fork and exec: join the bot's cgroups, take its rlimits."""
        if self.cgroup is not None:
            self.cgroup.join()
        self.limits.apply()

    def started(self) -> None:
        """Once bwrap is started (it has its own copies of the filter's and the options' fds)."""
        for fd in self.inherited_fds:
            os.close(fd)
        self.seccomp_fd = self.options_fd = None

    def release(self) -> None:
        """Once every process of the bot is gone: remove its cgroups (killing what they still hold), free its
        uid."""
        self.started()
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None
        if self._lease is not None:
            self._lease.release()
            self._lease = None


def confine(command: Sequence[str], cwd: str | None, request: SandboxRequest, memory_bytes: int | None) -> Jail:
    """The sandbox for one bot (its program an absolute path): a uid leased, cgroups made. SandboxError if the
    machine allows no sandbox or this one cannot be set up."""
    found = probe()
    if found.problem is not None or found.bwrap is None:
        raise SandboxError(f"bots cannot be sandboxed here: {found.problem}")
    bot_limits = BotLimits(memory_bytes, limits.MAX_CPU_SECONDS, sandboxed=True, own_uid=found.own_uid)
    if request.own is None:
        command = normalised_command(command, cwd)
    folders = shown_folders(command, cwd, request.own)
    if found.own_uid:
        check_readable(command, cwd, folders)
    jail = Jail([], _lease(found), None, bot_limits)
    try:
        if found.cgroups.mode is not CgroupMode.NONE:
            name = f"bot-{jail.uid}" if jail.uid is not None else f"bot-{os.getpid()}-{next(_serial)}"
            jail.cgroup = _cgroup(found.cgroups, name, memory_bytes)
        program = seccomp.filter_program() if found.seccomp else None
        jail.seccomp_fd = None if program is None else seccomp.filter_fd(program)
        argv = sandbox_command(
            found.bwrap,
            command,
            folders=folders,
            cwd=os.path.abspath(cwd or os.getcwd()),
            socket=request.socket,
            uid=jail.uid,
            setpriv=found.setpriv,
            masked=request.masked,
            seccomp_fd=jail.seccomp_fd,
            writable=request.writable,
            memory_bytes=memory_bytes,
        )
        jail.options_fd, jail.argv = options_through_fd(argv)
        whole = jail.uid is not None and jail.cgroup is not None and jail.seccomp_fd is not None
        jail.isolation = Isolation.FULL if whole else Isolation.PARTIAL
    except BaseException:
        jail.release()
        raise
    return jail


def _lease(found: SandboxProbe) -> uids.UidLease | None:
    if not found.own_uid:
        return None
    try:
        return uids.lease_uid()
    except (uids.NoFreeUid, uids.BadUidRange) as error:
        raise SandboxError(str(error)) from None


def _cgroup(support: CgroupSupport, name: str, memory_bytes: int | None) -> BotCgroup | None:
    try:
        return BotCgroup.create(support, name, memory_bytes, limits.MAX_PROCESSES, os.sched_getaffinity(0))
    except CgroupError as error:
        _log.warning("a bot runs without its cgroup (per-process limits only): %s", error)
        return None


_serial = itertools.count(1)


# The report for `referee doctor`.


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    required: bool = True
    """Part of the full sandbox (`referee doctor` fails without it); else a hardening where the machine has it."""


def report(found: SandboxProbe | None = None) -> list[Check]:
    """What isolation bots get here, one check per part of the sandbox, each saying why it is missing."""
    found = probe() if found is None else found
    installed = found.bwrap is not None
    checks = [
        Check("bubblewrap", installed, f"{found.bwrap} ({found.version})" if installed else str(found.problem)),
        Check(
            "sandbox starts",
            found.usable,
            "own PID, mount, IPC, UTS, cgroup and empty network namespaces; read-only system; private /tmp and HOME"
            if found.usable
            else str(found.problem),
        ),
    ]
    if not found.usable:
        return checks
    checks.append(
        Check(
            "own uid per bot",
            found.own_uid,
            _uid_detail() if found.own_uid else str(found.own_uid_problem),
        )
    )
    checks.append(
        Check("limits for a bot as a whole", found.cgroups.mode is not CgroupMode.NONE, found.whole_bot_limits)
    )
    checks.append(
        Check(
            "shared kernel objects closed (seccomp)",
            found.seccomp,
            "refused: " + "; ".join(seccomp.refused_calls()) if found.seccomp else str(found.seccomp_problem),
        )
    )
    checks.append(
        Check(
            "global counters hidden",
            True,
            f"/proc/{{{','.join(PROC_SHOWN_CONSTANT)}}} constant; {len(PROC_SHOWN_EMPTY)} other /proc counters, "
            f"/proc/{{{','.join(PROC_HIDDEN_FOLDERS)}}} and CPU frequency and idle statistics empty",
        )
    )
    checks.append(
        Check(
            "bots frozen while not on move",
            found.cgroups.freezer,
            f"{found.cgroups.freezer_kind} (a league's ponder = true, or --ponder, turns it off)"
            if found.cgroups.freezer
            else "no cgroup freezer: bots run while others are on move (they may take CPU from the bot on move, "
            "time it, or think on its time)",
            required=False,
        )
    )
    checks.append(
        Check(
            "equal CPU weight and a CPU quota per bot",
            found.cgroups.cpu,
            f"a cpu cgroup per bot, at most {limits.BOT_CPU_SHARE:.0%} of the referee's CPUs"
            if found.cgroups.cpu
            else "no writable cpu cgroup: a bot gets a CPU share per session it starts, and may starve the referee",
            required=False,
        )
    )
    checks.append(
        Check(
            "CPUs kept to the referee's",
            found.cgroups.cpuset,
            "a cpuset cgroup per bot"
            if found.cgroups.cpuset
            else "no writable cpuset cgroup: a bot may widen its affinity to every CPU of the machine",
            required=False,
        )
    )
    return checks


GET_MORE = {
    "bubblewrap": "install bubblewrap (apt install bubblewrap, dnf install bubblewrap, pacman -S bubblewrap)",
    "sandbox starts": "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 and "
    "user.max_user_namespaces > 0; on Ubuntu 24.04 and later, kernel.apparmor_restrict_unprivileged_userns=0 "
    "or an AppArmor profile for bwrap), or run the referee as root",
    "own uid per bot": "run the referee as root (sudo): giving each bot a uid of its own takes root",
    "limits for a bot as a whole": "run the referee as root on a machine with cgroup v2 (or v1 memory and pids "
    "hierarchies it may write), or in a systemd scope that delegates its cgroup: "
    "systemd-run --user --scope -p Delegate=yes referee ...",
    "shared kernel objects closed (seccomp)": "run on x86_64 or aarch64 Linux with a bubblewrap that loads seccomp "
    "filters (bubblewrap 0.3 or newer)",
    "bots frozen while not on move": "let the referee write a freezer cgroup (cgroup v2, or v1's freezer "
    "hierarchy: as root, or delegated)",
    "equal CPU weight and a CPU quota per bot": "let the referee write a cpu cgroup (cgroup v2's cpu controller, "
    "or v1's cpu hierarchy: as root, or delegated)",
    "CPUs kept to the referee's": "let the referee write a cpuset cgroup (as root, or with cpuset delegated)",
}
"""For each check of `report`, what gives it where it is missing."""


def how_to_get_more(checks: Iterable[Check]) -> list[str]:
    """What would give the missing parts of the sandbox, one line per check that failed."""
    return [f"{check.name}: {GET_MORE[check.name]}" for check in checks if not check.ok and check.name in GET_MORE]


def _uid_detail() -> str:
    uid_range = uids.uid_range()
    return f"uids {uid_range.start}-{uid_range.stop - 1} (locks in {uids.UIDS_DIR}), no capabilities, no_new_privs"


def masked_paths(paths: Iterable[str | os.PathLike[str] | None]) -> tuple[str, ...]:
    """The match's own files as SandboxRequest.masked wants them (absolute, the unset ones left out)."""
    return tuple(os.path.abspath(path) for path in paths if path is not None)


def hidden_paths(masked: Sequence[str], folders: Sequence[str]) -> list[str]:
    """Every path at which one of `folders` shows one of the `masked` paths (for referee.isolation.gvisor)."""
    return _shown_paths(masked, folders)


def within(path: str, folder: str) -> bool:
    return _within(path, folder)

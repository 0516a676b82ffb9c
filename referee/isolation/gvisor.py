"""A kernel per bot: the one place that turns a bot's command into a gVisor `runsc run` of an OCI bundle, every
runsc flag and every part of the bundle's spec spelled out here, as referee.isolation.sandbox does for bwrap.

gVisor's runsc is an application kernel: the bot's system calls are served by a kernel of its own (the Sentry,
a user-space process started for this bot alone) instead of the machine's. So what bubblewrap leaves shared
between bots because it lives in the one host kernel is per bot here, and new at every start: the cache of
the files it reads, futexes (even on a file both map), socket cookies and inode numbers, /proc (loadavg,
meminfo, stat, net: the Sentry's own figures). A fresh process is a fresh kernel. What the Sentry still asks the
host for and shows as it is, the free space of the host's disk (`statfs`), it refuses the bot
(`SHARED_THROUGH_HOST`). Its cache misses read the files it shows through the host's page cache, so it
shows no host file: its root is a slim copy made in memory for that start alone (referee.isolation.kernel_root),
and no page it reads is another bot's or its previous process's (first-touch timing tells it nothing).

Each bot, at the kernel level (Isolation.KERNEL), gets:
- `runsc run` of a bundle of its own under `runtime_dir()/kernels/ID/` (the spec, its root, the container's
  state), removed when the bot is released;
- a read-only root of its own (`slim_root`): a tmpfs mounted for this start, holding a copy of its runtime and
  of the folders bubblewrap would show it (`sandbox.shown_folders`, masked paths left out), made by the referee,
  then left to the bot's kernel alone (`runsc run` starts in a mount namespace of its own, and the referee
  unmounts it from its own once it runs: freed when the kernel ends, however the referee ends); its folders
  below its private mounts bound from that copy over them (`covered_folders`); a build's writable folders bound;
- a private /tmp, HOME and /dev/shm (tmpfs of limits.MAX_TMP_BYTES), the Sentry's own /proc, /sys and /dev,
  and the match's socket bound at sandbox.SOCKET_INSIDE: runsc's gofer connects it to the referee's host
  socket (`--host-uds=open`: the one host socket among its mounts);
- no network (`--network=none`: a loopback device of its own Sentry);
- a uid inside (the leased one, as bwrap's, so its folders must be readable by others), no capabilities,
  no_new_privs, the rlimits bubblewrap's bot gets, inside its kernel;
- the cgroup of a bot as a whole (referee.isolation.cgroups), joined by `runsc run` before it execs, so the
  gofer, the Sentry and the platform's stub processes are all in it (runsc's own cgroup handling is off:
  `--ignore-cgroups`): the memory limit counts the Sentry's memory too, and the freezer stops the whole
  kernel while the bot is not on move.

`probe()` finds once per process whether runsc runs here (it starts `true` under it) and says why not;
`report()` says it for `referee doctor`. Nothing falls back: a match that asks for the kernel level where
runsc cannot run is refused (`require`).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import itertools
import json
import logging
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protocol import limits
from protocol.errors import EnvironmentProblem
from referee.isolation import kernel_root, sandbox, uids
from referee.isolation.bot_limits import BotLimits, open_files_cap
from referee.isolation.cgroups import BotCgroup, CgroupError, CgroupMode

PLATFORM = "ptrace"
"""How the Sentry intercepts the bot's system calls. ptrace runs anywhere; kvm needs /dev/kvm and hangs in a
virtual machine without nested virtualisation (as on this project's machines); systrap, faster, needs a runsc
of 2023 or later (Debian 12 ships 20221219)."""
RUNSC_FLAGS = (
    f"--platform={PLATFORM}",
    "--network=none",
    "--host-uds=open",
    "--host-fifo=none",
    "--ignore-cgroups",
    "--file-access=exclusive",
    "--overlay2=none",
    "--oci-seccomp",
)
"""The flags of every `runsc` command, before its subcommand: the platform; no network but the Sentry's own
loopback; the gofer may connect to a host socket found through the bundle's mounts (the match's socket, bound
at sandbox.SOCKET_INSIDE; the match's own folders, where other sockets are, stay hidden), never create one; no
host FIFO; the cgroups are the referee's (the bot's cgroup, joined before exec); the root (its slim copy,
read-only) is the bot's alone; no overlay (nothing written goes anywhere but the private tmpfs mounts; an overlay
in memory would not keep reads of unchanged files from the host's page cache either: the slim root does); the
spec's seccomp filter loaded by the Sentry (`kernel_seccomp`)."""
SHARED_THROUGH_HOST = ("statfs", "fstatfs")
"""The calls a bot's kernel answers from the host: the free space and inodes of the host's disk (its gofer
mounts' `statfs`), which every bot's printed output moves. Refused inside the kernel (`kernel_seccomp`, loaded
by the Sentry: `--oci-seccomp`), as the full sandbox's filter refuses them (referee.isolation.seccomp)."""
INSTALL = "install gVisor's runsc (Debian and Ubuntu: apt-get install runsc) and run the referee as root"
"""What gives the kernel level where it is missing."""
NAMESPACES = ("pid", "network", "ipc", "uts", "mount")
NOBODY = 65534
"""The uid inside a bot's kernel where none is leased (the probe's `true`)."""
_PROBE_SECONDS = 30.0
KERNELS = "kernels"
"""The folder of runtime_dir() that holds the bots' bundles."""

_log = logging.getLogger(__name__)


class KernelUnavailable(EnvironmentProblem, RuntimeError):
    """The kernel level was asked for and runsc cannot run here: says why, and what to install."""


@dataclass(frozen=True)
class KernelProbe:
    """Whether runsc runs here (see `probe`)."""

    problem: str | None
    """Why bots cannot get a kernel of their own here; None when they can."""
    runsc: str | None = None
    version: str | None = None

    @property
    def usable(self) -> bool:
        return self.problem is None


# The bundle's spec.


def _bind(source: str, destination: str, writable: bool = False) -> dict[str, Any]:
    return {
        "destination": destination,
        "type": "bind",
        "source": source,
        "options": ["rbind", "rw" if writable else "ro"],
    }


def _tmpfs(destination: str, mode: str, size: int = limits.MAX_TMP_BYTES) -> dict[str, Any]:
    return {"destination": destination, "type": "tmpfs", "source": "tmpfs", "options": [f"size={size}", f"mode={mode}"]}


PRIVATE_INSIDE = (sandbox.TMP_INSIDE, sandbox.HOME_INSIDE, "/dev/shm")
"""The bot's private tmpfs mounts: a folder of its own below one is bound from its slim root over them."""


def _kernel_mounts() -> list[dict[str, Any]]:
    """The Sentry's own /proc, /sys and /dev, and the private tmpfs mounts."""
    return [
        {"destination": "/proc", "type": "proc", "source": "proc"},
        {"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "mode=755"]},
        _tmpfs("/dev/shm", "1777"),
        {"destination": "/sys", "type": "sysfs", "source": "sysfs", "options": ["ro", "nosuid", "noexec", "nodev"]},
        _tmpfs(sandbox.TMP_INSIDE, "1777"),
        _tmpfs(sandbox.HOME_INSIDE, "0777"),
    ]


def _writable_mounts(masked: Sequence[str], writable: Sequence[str]) -> list[dict[str, Any]]:
    """A build's folders (read-write: what it writes is its output, so they are bound, not copied), then the
    match's own files hidden where they show them (an empty read-only folder, an unreadable file)."""
    mounts = [_bind(folder, folder, writable=True) for folder in sorted(set(writable))]
    for path in sandbox.hidden_paths(masked, writable):
        if os.path.isdir(path):
            mounts.append({"destination": path, "type": "tmpfs", "source": "tmpfs", "options": ["ro", "size=4096"]})
        elif os.path.exists(path):
            mounts.append(_bind(str(sandbox.unreadable_file()), path))
    return mounts


def _rlimits(memory_bytes: int | None) -> list[dict[str, Any]]:
    """What bot_limits.BotLimits sets on a sandboxed bot with a uid of its own, set by the bot's kernel."""
    values = {
        "RLIMIT_NOFILE": open_files_cap(),
        "RLIMIT_CPU": limits.MAX_CPU_SECONDS,
        "RLIMIT_CORE": 0,
        "RLIMIT_FSIZE": limits.MAX_TMP_BYTES,
        "RLIMIT_NICE": 0,
        "RLIMIT_RTPRIO": 0,
        "RLIMIT_NPROC": limits.MAX_PROCESSES,
    }
    if memory_bytes is not None:
        values["RLIMIT_DATA"] = memory_bytes
    return [{"type": name, "hard": value, "soft": value} for name, value in values.items()]


def bundle_spec(
    command: Sequence[str],
    env: Mapping[str, str],
    *,
    rootfs: Path,
    cwd: str,
    socket: Path | None,
    uid: int,
    masked: Sequence[str] = (),
    writable: Sequence[str] = (),
    covered: Sequence[str] = (),
    memory_bytes: int | None = None,
) -> dict[str, Any]:
    """The OCI runtime spec (config.json) that runs `command` (its program an absolute path) with exactly `env`,
    as `uid` inside, in `cwd`, its root `rootfs` (read-only: the bot's slim root, referee.isolation.kernel_root),
    with its kernel's own /proc, /sys, /dev and private tmpfs mounts, a build's `writable` folders bound (the
    `masked` paths hidden in them), its `covered` folders (below its private mounts: `covered_folders`) bound
    from their copies in `rootfs` over those mounts, and the match's `socket` at sandbox.SOCKET_INSIDE."""
    copies = [_bind(os.path.join(rootfs, folder.lstrip("/")), folder) for folder in covered]
    mounts = [*_kernel_mounts(), *copies, *_writable_mounts(masked, writable)]
    if socket is not None:
        mounts.append(_bind(str(socket), sandbox.SOCKET_INSIDE, writable=True))
    return {
        "ociVersion": "1.0.2",
        "process": {
            "terminal": False,
            "user": {"uid": uid, "gid": uid, "additionalGids": []},
            "args": list(command),
            "env": [f"{name}={value}" for name, value in env.items()],
            "cwd": cwd,
            "noNewPrivileges": True,
            "capabilities": {name: [] for name in ("bounding", "effective", "inheritable", "permitted", "ambient")},
            "rlimits": _rlimits(memory_bytes),
        },
        "root": {"path": str(rootfs), "readonly": True},
        "hostname": sandbox.HOSTNAME,
        "mounts": mounts,
        "linux": {"namespaces": [{"type": name} for name in NAMESPACES], "seccomp": kernel_seccomp()},
    }


def kernel_seccomp() -> dict[str, Any]:
    """The calls the bot's kernel refuses it (EPERM): those through which the host still shows what every bot
    shares, so that no kernel of its own separates it (`SHARED_THROUGH_HOST`)."""
    return {
        "defaultAction": "SCMP_ACT_ALLOW",
        "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_AARCH64"],
        "syscalls": [{"names": list(SHARED_THROUGH_HOST), "action": "SCMP_ACT_ERRNO", "errnoRet": errno.EPERM}],
    }


def runsc_command(runsc: str, bundle: Path, container: str) -> list[str]:
    """The command line that runs the container `container` of `bundle` (its state kept in the bundle)."""
    return [runsc, "--root", str(bundle / "state"), *RUNSC_FLAGS, "run", "--bundle", str(bundle), container]


# One bot's kernel.


_serial = itertools.count(1)


def _new_bundle(spec_of: Any) -> tuple[Path, str]:
    """A bundle folder of its own (0700, root's) holding an empty root folder, the spec `spec_of(rootfs)`
    returns, and the container's name."""
    parent = sandbox.runtime_dir() / KERNELS
    parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    container = f"bot-{os.getpid()}-{next(_serial)}"
    bundle = Path(tempfile.mkdtemp(prefix=f"{container}-", dir=parent))
    rootfs = bundle / "rootfs"
    rootfs.mkdir(mode=0o755)
    (bundle / "config.json").write_text(json.dumps(spec_of(rootfs)))
    return bundle, container


class KernelJail(sandbox.Jail):
    """One bot under a kernel of its own: its bundle, slim root, uid and cgroup, held from `confine` until
    `release`."""

    exempts_wrappers = False
    """The freezer stops every process of the bot: the Sentry runs the bot's code, and the gofer and `runsc run`
    have nothing to do while it is stopped."""

    def __init__(self, bundle: Path | None, lease: uids.UidLease | None, bot_limits: BotLimits) -> None:
        super().__init__([], lease, None, bot_limits)
        self.bundle = bundle
        self.root_bytes = 0
        """The size of the bot's slim root (a tmpfs of its own): memory the referee holds for it while it runs."""
        self.isolation = sandbox.Isolation.KERNEL

    def enter(self) -> None:
        """Runs in the child between fork and exec: join the bot's cgroups, and take a mount namespace of its
        own, which alone keeps the slim root once the referee has let go of it (`started`). The bot's rlimits
        are its kernel's (in the spec): runsc itself runs with the referee's."""
        if self.cgroup is not None:
            self.cgroup.join()
        kernel_root.enter_own_mount_namespace()

    def started(self) -> None:
        """Once `runsc run` runs in its own mount namespace: the slim root leaves the referee's, so it is freed
        when the bot's kernel ends, even if the referee is killed."""
        super().started()
        self._detach()

    def _detach(self) -> None:
        if self.bundle is not None:
            kernel_root.detach(str(self.bundle / "rootfs"))

    def release(self) -> None:
        super().release()
        if self.bundle is not None:
            with contextlib.suppress(OSError):
                self._detach()
            shutil.rmtree(self.bundle, ignore_errors=True)
            self.bundle = None


def confine(
    command: Sequence[str],
    cwd: str | None,
    request: sandbox.SandboxRequest,
    memory_bytes: int | None,
    env: Mapping[str, str],
) -> KernelJail:
    """The kernel of one bot (its program an absolute path) with exactly `env`: a bundle written, its slim root
    copied into a tmpfs of its own (referee.isolation.kernel_root), a uid leased (as root), its cgroup made.
    KernelUnavailable where runsc cannot run; sandbox.SandboxError where this bot's cannot be set up (no cgroup:
    nothing runs at this level without its limits as a whole); kernel_root.SlimRootRefused where its runtime or
    folders cannot be copied (the bot's fault: it does not start)."""
    found = require()
    machine = sandbox.probe()
    if request.own is None:
        command = sandbox.normalised_command(command, cwd)
    where = os.path.abspath(cwd or os.getcwd())
    folders = sandbox.shown_folders(_without_private_words(command, where), cwd, request.own)
    sandbox.check_readable(command, cwd, folders)
    root = slim_root(command, folders, where, request)
    shown_cwd = _holds(where, [*folders, *request.writable])
    covered = covered_folders([*folders, *(() if shown_cwd else (where,))])
    bot_limits = BotLimits(memory_bytes, limits.MAX_CPU_SECONDS, sandboxed=True, own_uid=True)
    jail = KernelJail(None, _lease(), bot_limits)
    try:
        uid = jail.uid if jail.uid is not None else NOBODY
        jail.cgroup = _cgroup(machine, uid, memory_bytes)
        jail.bundle, container = _new_bundle(
            lambda rootfs: bundle_spec(
                command,
                env,
                rootfs=rootfs,
                cwd=where,
                socket=request.socket,
                uid=uid,
                masked=request.masked,
                writable=request.writable,
                covered=covered,
                memory_bytes=memory_bytes,
            )
        )
        jail.root_bytes = _mount_root(root, jail.bundle)
        assert found.runsc is not None
        jail.argv = runsc_command(found.runsc, jail.bundle, container)
    except BaseException:
        jail.release()
        raise
    return jail


def slim_root(
    command: Sequence[str], folders: Sequence[str], cwd: str, request: sandbox.SandboxRequest
) -> kernel_root.KernelRoot:
    """What the bot's kernel shows (kernel_root.KernelRoot.plan): its runtime, and its own folders (those
    sandbox.shown_folders gives but its runtime's, and a build's writable ones, which are bound), and its `cwd`
    (empty where nothing shown holds it). kernel_root.SlimRootRefused (the bot's fault) where it cannot be
    copied."""
    runs_inside = request.own is not None and _inside_own(command, request)
    runtime = set() if runs_inside else set(sandbox.runtime_folders(command[0]))
    own = [
        folder
        for folder in folders
        if folder not in runtime and folder not in request.writable and folder not in PRIVATE_INSIDE
    ]
    root = kernel_root.KernelRoot.plan(command, own, request.masked, organisers=request.own is None)
    if not _holds(cwd, [*folders, *request.writable]):
        root.folders.setdefault(cwd, 0o755)
    return root


def _without_private_words(command: Sequence[str], cwd: str) -> list[str]:
    """`command` less the words after its program that name one of the bot's private mounts (an organiser's
    `/tmp`): the bot gets its own there, so such a word shows nothing of the host's, and taken as a folder it would
    stand, outermost, for every folder below it (a checkout in /tmp, its runtime), which would then be hidden
    under the private mount instead of copied into it."""
    private = set(PRIVATE_INSIDE)
    return [command[0], *(word for word in command[1:] if os.path.join(cwd, word) not in private)]


def _holds(cwd: str, folders: Sequence[str]) -> bool:
    """Whether a folder shown from the host holds `cwd`: a private one (an organiser's word `/tmp`) is the
    bot's own, empty, so a working folder below it (a checkout in /tmp) must still be made."""
    return any(sandbox.within(cwd, folder) for folder in folders if folder not in PRIVATE_INSIDE)


def covered_folders(folders: Sequence[str]) -> list[str]:
    """The folders shown that lie below the bot's private mounts (a bot in /tmp/class/alice, a working folder in
    /tmp): their copies in the slim root are bound over those mounts. A folder that is one of them (an
    organiser's word `/tmp`) is the bot's private one, and not copied."""
    return [folder for folder in folders if any(sandbox.within(folder, private) for private in PRIVATE_INSIDE)
            and folder not in PRIVATE_INSIDE]  # fmt: skip


def _inside_own(command: Sequence[str], request: sandbox.SandboxRequest) -> bool:
    own = [os.path.realpath(folder) for folder in request.own or ()]
    return any(sandbox.within(os.path.realpath(command[0]), folder) for folder in own)


def _mount_root(root: kernel_root.KernelRoot, bundle: Path) -> int:
    """The root copied into a tmpfs at the bundle's root folder, with mount points for the spec's mounts."""
    mounts = json.loads((bundle / "config.json").read_text())["mounts"]
    try:
        return kernel_root.mount_root(root, str(bundle / "rootfs"), mounts)
    except OSError as error:
        raise sandbox.SandboxError(f"a bot's slim root cannot be made: {error}") from None


def _lease() -> uids.UidLease | None:
    try:
        return uids.lease_uid()
    except (uids.NoFreeUid, uids.BadUidRange) as error:
        raise sandbox.SandboxError(str(error)) from None


def _cgroup(machine: sandbox.SandboxProbe, uid: int, memory_bytes: int | None) -> BotCgroup:
    if machine.cgroups.mode is CgroupMode.NONE:
        raise sandbox.SandboxError(f"a bot's kernel needs a cgroup for its limits: {machine.cgroups.reason}")
    try:
        return BotCgroup.create(
            machine.cgroups, f"kernel-{uid}-{os.getpid()}", memory_bytes, limits.MAX_PROCESSES, os.sched_getaffinity(0)
        )
    except CgroupError as error:
        raise sandbox.SandboxError(f"a bot's kernel runs only with its cgroup: {error}") from None


# What this machine allows.


def _version(runsc: str) -> str | None:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        run = subprocess.run([runsc, "--version"], capture_output=True, text=True, timeout=_PROBE_SECONDS)
        first = run.stdout.strip().splitlines()
        return first[0].removeprefix("runsc version ").strip() if first else None
    return None


def _why_it_failed(stderr: str) -> str:
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    return f"runsc cannot start a kernel here: {lines[-1].strip() if lines else 'no message'}"


def _try_kernel(runsc: str) -> str | None:
    """Run `true` under a kernel with the socket bound as a bot's is; the reason it failed, or None."""
    true = shutil.which("true") or "/bin/true"
    with tempfile.TemporaryDirectory(prefix="referee-kernel-probe-") as folder:
        socket = Path(folder, "probe.sock")
        socket.touch()
        try:
            bundle, container = _new_bundle(
                lambda rootfs: bundle_spec([true], {}, rootfs=rootfs, cwd="/", socket=socket, uid=NOBODY)
            )
        except OSError as error:
            return f"the bundle of a kernel cannot be written: {error}"
        try:
            root = kernel_root.KernelRoot.plan([true], (), (), organisers=True)
            kernel_root.mount_root(
                root, str(bundle / "rootfs"), json.loads((bundle / "config.json").read_text())["mounts"]
            )
        except (OSError, kernel_root.SlimRootRefused) as error:
            shutil.rmtree(bundle, ignore_errors=True)
            return f"a bot's slim root cannot be made: {error}"
        try:
            run = subprocess.run(
                runsc_command(runsc, bundle, container),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=_PROBE_SECONDS,
                env={"PATH": os.defpath},
                start_new_session=True,
            )
        except subprocess.TimeoutExpired:
            return f"runsc did not run `true` within {_PROBE_SECONDS:.0f} s (platform {PLATFORM})"
        except (OSError, subprocess.SubprocessError) as error:
            return f"runsc cannot be run: {error}"
        finally:
            kernel_root.detach(str(bundle / "rootfs"))
            shutil.rmtree(bundle, ignore_errors=True)
    return None if run.returncode == 0 else _why_it_failed(run.stderr)


def remove_stale_bundles() -> list[Path]:
    """Remove the bundles of referees that are gone (one killed with SIGKILL cannot remove its own; its kernels
    died with it): those named after a pid that no longer runs. The removed folders."""
    parent = sandbox.runtime_dir() / KERNELS
    removed = []
    for bundle in sorted(parent.glob("bot-*-*")) if parent.is_dir() else ():
        owner = bundle.name.split("-")[1]
        if owner.isdigit() and not os.path.exists(f"/proc/{owner}"):
            with contextlib.suppress(OSError):
                kernel_root.detach(str(bundle / "rootfs"))
            shutil.rmtree(bundle, ignore_errors=True)
            removed.append(bundle)
    return removed


@functools.cache
def probe() -> KernelProbe:
    """Whether bots can get a kernel of their own here: tried once per process (runsc running `true`), then
    cached."""
    runsc = shutil.which("runsc")
    if runsc is None:
        return KernelProbe(f"gVisor's runsc is not installed: {INSTALL}")
    version = _version(runsc)
    if os.geteuid() != 0:
        return KernelProbe(
            f"the kernel level runs only with the referee as root (it runs as uid {os.geteuid()}): each bot's "
            f"kernel gets a leased uid and a cgroup, which take root (runsc --rootless alone would give neither)",
            runsc,
            version,
        )
    machine = sandbox.probe()
    remove_stale_bundles()
    problem = _try_kernel(runsc)
    if problem is None and machine.problem is not None:
        problem = f"a bot's kernel is set up only where the bubblewrap sandbox can be: {machine.problem}"
    elif problem is None and machine.cgroups.mode is CgroupMode.NONE:
        problem = f"a bot's kernel needs cgroups for its limits: {machine.cgroups.reason}"
    if problem is not None:
        _log.warning("no kernel per bot: %s", problem)
    return KernelProbe(problem, runsc, version)


def require() -> KernelProbe:
    """The probe, where runsc runs; KernelUnavailable (why, and what to install) where it does not."""
    found = probe()
    if found.problem is not None:
        raise KernelUnavailable(f"the kernel isolation level needs gVisor, and {found.problem}")
    return found


def report(found: KernelProbe | None = None) -> sandbox.Check:
    """The kernel level for `referee doctor` (not required: the full sandbox is the default level)."""
    found = probe() if found is None else found
    if found.problem is not None:
        return sandbox.Check("kernel per bot (gVisor)", False, found.problem, required=False)
    detail = (
        f"{found.runsc} (version {found.version}, platform {PLATFORM}): a kernel of its own for every bot, over a "
        f"slim root copied into memory at each start (at most {kernel_root.MAX_ROOT_BYTES >> 20} MiB a bot)"
    )
    return sandbox.Check("kernel per bot (gVisor)", True, detail, required=False)

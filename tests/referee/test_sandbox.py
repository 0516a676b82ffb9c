"""The sandbox (referee.isolation.sandbox): the bwrap command line as documented, what a sandboxed bot sees and may do
(its own /proc, its environment only, a uid of its own with no capabilities, a read-only system, no network,
a fresh tmp), bots in C, JavaScript and Python (the heuristics, and an SDK bot in a virtual environment of its
own) playing whole matches in it, and the fallback where it cannot run.

These tests skip where the sandbox cannot run, and fail there instead when REFEREE_REQUIRE_SANDBOX is set (CI).
"""

from __future__ import annotations

import errno
import importlib.metadata
import json
import os
import shlex
import shutil
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
from referee_helpers import match_spec
from sandbox_checks import require_sandbox

from protocol import limits
from referee.botspec import resolve_bot
from referee.isolation import sandbox, seccomp, uids
from referee.isolation.cgroups import CgroupMode
from referee.isolation.process import BotProcess
from referee.match import MatchSpecError, run_match
from referee.records import BotSpec, Limits
from referee.wire.connection import Transport

ROOT = Path(__file__).resolve().parents[2]
ENVIRONMENT = {"REFEREE_ENDPOINT", "REFEREE_TOKEN", "PATH", "HOME", "TMPDIR", "LANG"}


# The command line.


def _command(tmp_path: Path, **changes: object) -> list[str]:
    arguments: dict = {
        "folders": (str(tmp_path / "bot"),),
        "cwd": str(tmp_path / "bot"),
        "socket": tmp_path / "referee.sock",
        "uid": 2_000_000_007,
        "setpriv": "/usr/bin/setpriv",
    }
    return sandbox.sandbox_command("/usr/bin/bwrap", ["/usr/bin/node", "bot.js"], **(arguments | changes))


def _pairs(command: list[str], flag: str) -> list[str]:
    return [command[index + 1] for index, word in enumerate(command) if word == flag]


def test_the_command_line_spells_out_every_namespace_and_the_uid_switch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    command = _command(tmp_path)
    bwrap_part, inside = command[: command.index("--")], command[command.index("--") + 1 :]
    assert bwrap_part[0] == "/usr/bin/bwrap"
    for flag in ("--unshare-pid", "--unshare-ipc", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"):
        assert flag in bwrap_part
    assert "--unshare-all" not in bwrap_part and "--unshare-user" not in bwrap_part and "--share-net" not in bwrap_part
    assert {"--die-with-parent", "--new-session"} <= set(bwrap_part)
    assert _pairs(bwrap_part, "--hostname") == ["bot"]
    assert _pairs(bwrap_part, "--cap-drop") == ["ALL"]
    assert _pairs(bwrap_part, "--cap-add") == ["CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP"]
    assert inside[:5] == ["/usr/bin/setpriv", "--reuid", "2000000007", "--regid", "2000000007"]
    setpriv_end = inside.index("--")
    assert {"--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs"} <= set(inside[:setpriv_end])
    assert inside[setpriv_end + 1 :] == [shutil.which("env") or "/usr/bin/env", "-u", "PWD", "/usr/bin/node", "bot.js"]


def test_the_command_line_shows_the_system_read_only_and_the_bots_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    (tmp_path / "bot" / "replays").mkdir(parents=True)
    command = _command(tmp_path, masked=(str(tmp_path / "bot" / "replays"),))
    for folder in ("/usr", "/etc"):
        index = command.index(folder)
        assert command[index - 1] == "--ro-bind" and command[index + 1] == folder
    for link in ("/bin", "/lib"):
        if os.path.islink(link):
            assert command[command.index(link) - 2] == "--symlink"
    bot = str(tmp_path / "bot")
    assert command[command.index(bot) - 1] == "--ro-bind" and command[command.index(bot) + 1] == bot
    assert command[command.index(f"{bot}/replays") - 1] == "--tmpfs"
    assert command[command.index("--proc") : command.index("--proc") + 2] == ["--proc", "/proc"]
    assert command[command.index("--dev") : command.index("--dev") + 2] == ["--dev", "/dev"]
    tmpfs = _pairs(command, "--tmpfs")
    assert {"/tmp", "/dev/shm", sandbox.HOME_INSIDE} <= set(tmpfs)
    assert _pairs(command, "--size").count(str(limits.MAX_TMP_BYTES)) == 3
    assert _pairs(command, "--bind") == [str(tmp_path / "referee.sock")]
    assert command[command.index(str(tmp_path / "referee.sock")) + 1] == sandbox.SOCKET_INSIDE
    assert _pairs(command, "--chdir") == [bot]
    made = _pairs(command, "--dir")
    assert str(tmp_path) in made and "/run/referee" in made and "/run" in made


def test_the_global_counters_of_proc_are_shown_constant_or_empty(tmp_path: Path) -> None:
    command = _command(tmp_path, memory_bytes=256 * 1024 * 1024)
    binds = [(command[index + 1], command[index + 2]) for index, word in enumerate(command) if word == "--ro-bind"]
    shown = {target: Path(source) for source, target in binds if target.startswith("/proc/")}
    assert {f"/proc/{name}" for name in sandbox.PROC_SHOWN_CONSTANT} <= set(shown)
    assert {f"/proc/{name}" for name in ("vmstat", "locks", "sys/fs/file-nr")} <= set(shown)
    assert shown["/proc/vmstat"].read_text() == ""
    assert "MemTotal:         262144 kB" in shown["/proc/meminfo"].read_text()
    assert shown["/proc/loadavg"].read_text().split()[:3] == ["0.00"] * 3
    assert command.index("--proc") < command.index("/proc/loadavg")
    tmpfs = _pairs(command, "--tmpfs")
    assert "/proc/pressure" in tmpfs or not os.path.isdir("/proc/pressure")
    assert not [path for path in tmpfs if path.startswith("/sys/") and "cpuidle" not in path and "cpufreq" not in path]


def test_without_root_the_bot_keeps_the_organisers_uid_in_a_user_namespace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    command = _command(tmp_path, uid=None)
    assert "--unshare-user" in command and "--cap-add" not in command and "/usr/bin/setpriv" not in command


def test_the_folders_of_a_venv_python_bot(tmp_path: Path) -> None:
    venv = _make_venv(tmp_path / "venv")
    script = tmp_path / "bot" / "bot.py"
    script.parent.mkdir()
    script.write_text("")
    folders = sandbox.program_folders([str(venv / "bin" / "python"), str(script)], None)
    base = Path(os.path.realpath(venv / "bin" / "python")).parent.parent
    assert str(venv) in folders and str(script.parent) in folders

    def shown(path: str) -> bool:
        return path.startswith("/usr/") or any(path == folder or path.startswith(folder + "/") for folder in folders)

    assert shown(str(base)), (base, folders)
    assert all(shown(sdk) for sdk in sandbox.sdk_folders()), folders
    assert not any(folder.startswith(("/usr", "/etc")) for folder in folders)
    assert not any(other != folder and other.startswith(folder + "/") for folder in folders for other in folders)


def test_the_environment_of_a_sandboxed_bot_is_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "organiser's")
    environment = sandbox.bot_environment("token", [("LEVEL", "3"), ("REFEREE_TOKEN", "forged")])
    assert set(environment) == ENVIRONMENT | {"LEVEL"}
    assert environment["REFEREE_TOKEN"] == "token" and environment["REFEREE_ENDPOINT"] == sandbox.ENDPOINT_INSIDE
    assert environment["HOME"] == sandbox.HOME_INSIDE and environment["TMPDIR"] == "/tmp"


def _run_filter(program: bytes, arch: int, number: int, arguments: tuple[int, ...] = ()) -> int:
    """What the classic BPF `program` returns for a call (a small interpreter of the instructions it uses)."""
    instructions = [struct.unpack("=HBBI", program[index : index + 8]) for index in range(0, len(program), 8)]
    data = struct.pack("=iI", number, arch) + struct.pack("=Q", 0) + struct.pack("=6Q", *(arguments + (0,) * 6)[:6])
    accumulator, index = 0, 0
    while True:
        code, if_true, if_false, k = instructions[index]
        if code == 0x06:
            return k
        if code == 0x20:
            (accumulator,) = struct.unpack_from("=I", data, k)
            index += 1
            continue
        taken = {0x15: accumulator == k, 0x35: accumulator >= k, 0x45: bool(accumulator & k)}[code]
        index += 1 + (if_true if taken else if_false)


X86_64, I386, AARCH64, ARM = 0xC000003E, 0x40000003, 0xC00000B7, 0x40000028
ALLOW, REFUSE = 0x7FFF0000, 0x00050000 | errno.EPERM
NO_FAMILY = 0x00050000 | errno.EAFNOSUPPORT
AF_UNIX, AF_INET, AF_INET6, AF_NETLINK, AF_PACKET = 1, 2, 10, 16, 17
SOL_SOCKET, SO_SNDBUF, SO_RCVBUF, SO_PEERCRED, SO_COOKIE, SO_NETNS_COOKIE = 1, 7, 8, 17, 57, 71


@pytest.mark.parametrize(
    ("machine", "arch", "call", "arguments", "expected"),
    [
        ("x86_64", X86_64, 250, (), REFUSE),  # keyctl
        ("x86_64", I386, 288, (), REFUSE),
        ("x86_64", X86_64, 0x40000000 | 1, (), REFUSE),  # any x32 call
        ("x86_64", X86_64, 73, (), REFUSE),  # flock
        ("x86_64", X86_64, 72, (3, 6), REFUSE),  # fcntl F_SETLK
        ("x86_64", X86_64, 72, (3, 37), REFUSE),  # fcntl F_OFD_SETLK
        ("x86_64", X86_64, 72, (3, 5), REFUSE),  # fcntl F_GETLK
        ("x86_64", X86_64, 72, (3, 1024), REFUSE),  # fcntl F_SETLEASE
        ("x86_64", X86_64, 72, (3, 1026), REFUSE),  # fcntl F_NOTIFY
        ("x86_64", X86_64, 72, (3, 3), ALLOW),  # fcntl F_GETFL
        ("x86_64", X86_64, 72, (3, 1030), ALLOW),  # fcntl F_DUPFD_CLOEXEC
        ("x86_64", X86_64, 72, (3, (1 << 32) | 6), REFUSE),  # the kernel reads the command's low 32 bits
        ("x86_64", I386, 221, (3, 13), REFUSE),  # fcntl64 F_SETLK64
        ("x86_64", I386, 221, (3, 1), ALLOW),  # fcntl64 F_GETFD
        ("x86_64", X86_64, 327, (3, 0, 1, 0, 0, 0x8), REFUSE),  # preadv2 RWF_NOWAIT
        ("x86_64", X86_64, 327, (3, 0, 1, 0, 0, 0x1 | 0x8), REFUSE),
        ("x86_64", X86_64, 327, (3, 0, 1, 0, 0, 0x1), ALLOW),  # preadv2 RWF_HIPRI
        ("x86_64", X86_64, 328, (3, 0, 1, 0, 0, 0x8), REFUSE),  # pwritev2
        ("x86_64", I386, 378, (3, 0, 1, 0, 0, 0x8), REFUSE),
        ("x86_64", X86_64, 27, (), REFUSE),  # mincore
        ("x86_64", X86_64, 221, (), REFUSE),  # fadvise64
        ("x86_64", X86_64, 451, (), REFUSE),  # cachestat
        ("x86_64", X86_64, 294, (), REFUSE),  # inotify_init1
        ("x86_64", X86_64, 300, (), REFUSE),  # fanotify_init
        ("x86_64", X86_64, 425, (), REFUSE),  # io_uring_setup
        ("x86_64", X86_64, 99, (), REFUSE),  # sysinfo
        ("x86_64", X86_64, 0, (), ALLOW),  # read
        ("x86_64", X86_64, 56, (), ALLOW),  # clone
        ("x86_64", X86_64, 56, (0x3D0F00,), ALLOW),  # clone of a thread
        ("x86_64", X86_64, 56, (0x10000000 | 17,), REFUSE),  # clone CLONE_NEWUSER
        ("x86_64", X86_64, 435, (), 0x00050000 | errno.ENOSYS),  # clone3: libc falls back to clone
        ("x86_64", X86_64, 272, (), REFUSE),  # unshare
        ("x86_64", X86_64, 165, (), REFUSE),  # mount
        ("x86_64", X86_64, 430, (), REFUSE),  # fsopen
        ("x86_64", X86_64, 137, (), REFUSE),  # statfs
        ("x86_64", X86_64, 138, (), REFUSE),  # fstatfs
        ("x86_64", X86_64, 136, (), REFUSE),  # ustat
        ("x86_64", I386, 269, (), REFUSE),  # fstatfs64
        ("aarch64", AARCH64, 43, (), REFUSE),  # statfs
        ("aarch64", AARCH64, 220, (0x00020000,), REFUSE),  # clone CLONE_NEWNS
        ("x86_64", I386, 3, (), ALLOW),
        ("x86_64", AARCH64, 73, (), ALLOW),  # another machine's ABI is not this filter's
        ("aarch64", AARCH64, 32, (), REFUSE),  # flock
        ("aarch64", AARCH64, 25, (3, 7), REFUSE),  # fcntl F_SETLKW
        ("aarch64", AARCH64, 25, (3, 4), ALLOW),  # fcntl F_SETFL
        ("aarch64", AARCH64, 286, (3, 0, 1, 0, 0, 0x8), REFUSE),  # preadv2
        ("aarch64", ARM, 143, (), REFUSE),  # flock
        ("aarch64", ARM, 221, (3, 38), REFUSE),  # fcntl64 F_OFD_SETLKW
        ("aarch64", AARCH64, 219, (), REFUSE),  # keyctl
        ("aarch64", AARCH64, 63, (), ALLOW),  # read
        ("x86_64", X86_64, 41, (AF_UNIX, 1, 0), ALLOW),  # socket
        ("x86_64", X86_64, 41, (AF_INET, 2, 0), NO_FAMILY),
        ("x86_64", X86_64, 41, (AF_INET6, 1, 0), NO_FAMILY),
        ("x86_64", X86_64, 41, (AF_NETLINK, 3, 4), NO_FAMILY),  # sock_diag
        ("x86_64", X86_64, 41, (AF_PACKET, 3, 0), NO_FAMILY),
        ("x86_64", X86_64, 41, ((1 << 32) | AF_INET, 2, 0), NO_FAMILY),
        ("x86_64", X86_64, 53, (AF_UNIX, 1, 0, 0), ALLOW),  # socketpair
        ("x86_64", X86_64, 53, (AF_INET, 1, 0, 0), NO_FAMILY),
        ("x86_64", I386, 359, (AF_INET, 2, 0), NO_FAMILY),
        ("x86_64", I386, 359, (AF_UNIX, 2, 0), ALLOW),
        ("x86_64", I386, 102, (1, 0), REFUSE),  # socketcall
        ("x86_64", X86_64, 55, (3, SOL_SOCKET, SO_COOKIE, 0, 0), REFUSE),  # getsockopt
        ("x86_64", X86_64, 55, (3, SOL_SOCKET, SO_NETNS_COOKIE, 0, 0), REFUSE),
        ("x86_64", X86_64, 55, (3, SOL_SOCKET, SO_PEERCRED, 0, 0), ALLOW),
        ("x86_64", X86_64, 55, (3, SOL_SOCKET, SO_SNDBUF, 0, 0), ALLOW),
        ("x86_64", X86_64, 54, (3, SOL_SOCKET, SO_SNDBUF, 0, 0), REFUSE),  # setsockopt
        ("x86_64", X86_64, 54, (3, SOL_SOCKET, SO_RCVBUF, 0, 0), REFUSE),
        ("x86_64", X86_64, 54, (3, SOL_SOCKET, 16, 0, 0), ALLOW),  # SO_PASSCRED
        ("x86_64", X86_64, 321, (), REFUSE),  # bpf
        ("aarch64", AARCH64, 198, (AF_INET, 2, 0), NO_FAMILY),
        ("aarch64", AARCH64, 198, (AF_UNIX, 1, 0), ALLOW),
        ("aarch64", AARCH64, 209, (3, SOL_SOCKET, SO_COOKIE, 0, 0), REFUSE),
        ("aarch64", ARM, 281, (AF_INET6, 1, 0), NO_FAMILY),
    ],
)
def test_the_seccomp_filter_refuses_what_it_lists_and_allows_the_rest(
    machine: str, arch: int, call: int, arguments: tuple[int, ...], expected: int
) -> None:
    program = seccomp.filter_program(machine)
    assert program is not None and len(program) % 8 == 0
    assert _run_filter(program, arch, call, arguments) == expected


def test_there_is_no_seccomp_filter_for_other_machines() -> None:
    assert seccomp.filter_program("riscv64") is None


# Uids.


def test_uids_are_leased_once_and_given_back(tmp_path: Path) -> None:
    pool = range(7_000_000, 7_000_002)
    first, second = uids.lease_uid(pool, tmp_path), uids.lease_uid(pool, tmp_path)
    assert {first.uid, second.uid} == set(pool)
    with pytest.raises(uids.NoFreeUid):
        uids.lease_uid(pool, tmp_path)
    first.release()
    again = uids.lease_uid(pool, tmp_path)
    assert again.uid == first.uid
    again.release()
    second.release()


def test_a_uid_leased_by_another_process_is_not_leased_again(tmp_path: Path) -> None:
    holder = (
        "import sys, time\nfrom pathlib import Path\nfrom referee.isolation import uids\n"
        f"lease = uids.lease_uid(range(7_000_000, 7_000_002), Path({str(tmp_path)!r}))\n"
        "print(lease.uid, flush=True)\ntime.sleep(60)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", holder], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        held = int(process.stdout.readline())  # type: ignore[union-attr]
        lease = uids.lease_uid(range(7_000_000, 7_000_002), tmp_path)
        assert lease.uid != held
        lease.release()
    finally:
        process.kill()
        process.wait()
    lease = uids.lease_uid(range(held, held + 1), tmp_path)
    assert lease.uid == held
    lease.release()


@pytest.mark.parametrize("text", ["5", "10-5", "0-4", "a-b"])
def test_a_bad_uid_range_is_refused(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(uids.UID_RANGE_VARIABLE, text)
    with pytest.raises(uids.BadUidRange):
        uids.uid_range()


# What a sandboxed bot sees.

INTROSPECT = r"""
import json, os, resource, socket, sys
facts = {"uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(), "environment": dict(os.environ)}
facts["pids"] = sorted(int(name) for name in os.listdir("/proc") if name.isdigit())
status = dict(line.split(":\t", 1) for line in open("/proc/self/status").read().splitlines() if ":\t" in line)
facts["capabilities"] = [status[key].strip() for key in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")]
facts["no_new_privs"] = status["NoNewPrivs"].strip()
def write(path):
    try:
        with open(path, "w") as file:
            file.write("x")
        return "written"
    except OSError as error:
        return error.errno
targets = json.loads(os.environ.get("TARGETS", "[]"))
facts["writes"] = {path: write(path) for path in targets}
facts["tmp_before"] = sorted(os.listdir("/tmp")), sorted(os.listdir(os.environ["HOME"]))
facts["tmp_write"] = write("/tmp/mine"), write(os.path.join(os.environ["HOME"], "mine"))
facts["visible"] = {path: os.path.exists(path) for path in targets}
facts["devices"] = [line.split(":")[0].strip() for line in open("/proc/net/dev").read().splitlines()[2:]]
try:
    socket.create_connection(("127.0.0.1", int(os.environ["PORT"])), timeout=2).close()
    facts["tcp"] = "connected"
except OSError as error:
    facts["tcp"] = error.errno
facts["nproc"] = resource.getrlimit(resource.RLIMIT_NPROC)
facts["nice"] = resource.getrlimit(resource.RLIMIT_NICE), resource.getrlimit(resource.RLIMIT_RTPRIO)
facts["hostname"] = socket.gethostname()
import ctypes, platform
keyctl = {"x86_64": 250, "aarch64": 219}.get(platform.machine())
if keyctl is not None:
    libc = ctypes.CDLL(None, use_errno=True)
    facts["keyctl"] = libc.syscall(keyctl, 0, -4, 0), ctypes.get_errno()  # KEYCTL_GET_KEYRING_ID of @u
print(json.dumps(facts))
"""


def _run_sandboxed(tmp_path: Path, targets: list[str], env: tuple[tuple[str, str], ...] = ()) -> dict:
    """Run INTROSPECT in a sandbox the way a match does, with the paths it tries to write and see in its
    environment (not on its command line, which would show their folders), and return what it found."""
    workdir = tmp_path / "match"
    workdir.mkdir(exist_ok=True)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(workdir / "referee.sock"))
    sandbox.expose_socket(workdir / "referee.sock")
    log = tmp_path / f"bot-{time.monotonic_ns()}.log"
    request = sandbox.SandboxRequest(workdir / "referee.sock", sandbox.masked_paths([workdir]))
    environment = sandbox.bot_environment("token", (*env, ("TARGETS", json.dumps(targets))))
    process = BotProcess.start(
        [sys.executable, "-c", INTROSPECT], environment, log, 1 << 20, memory_mb=512, sandbox=request
    )
    try:
        deadline = time.monotonic() + 60
        while not process.exited() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert process.describe_exit() == "exited with status 0", log.read_text()
        uid, cgroup = process.uid, process.jail.cgroup if process.jail else None
    finally:
        process.kill()
        listener.close()
        (workdir / "referee.sock").unlink()
    facts = json.loads(log.read_text().splitlines()[-1])
    facts["leased uid"] = uid
    facts["cgroup"] = cgroup
    return facts


@pytest.fixture
def tcp_port() -> int:
    listener = socket.create_server(("127.0.0.1", 0))
    yield listener.getsockname()[1]
    listener.close()


def _shown_in(folder: str) -> list[str]:
    """What a fresh sandbox's `folder` (its private /tmp) may hold already: the mount points of the read-only
    program folders (the project, the interpreters) that live under that path on this machine, as when CI
    clones the project into /tmp."""
    shown = [Path(__file__).resolve().parents[2], Path(sys.prefix), Path(sys.base_prefix)]
    return sorted({path.relative_to(folder).parts[0] for path in shown if path.is_relative_to(folder)})


def test_a_sandboxed_bot_sees_only_its_own_processes_environment_and_folders(tmp_path: Path, tcp_port: int) -> None:
    require_sandbox()
    secret = tmp_path / "store.sqlite"
    secret.write_text("results")
    targets = [str(secret), "/usr/planted", "/etc/planted", str(ROOT / "referee" / "planted"), sys.executable]
    facts = _run_sandboxed(tmp_path, targets, env=(("PORT", str(tcp_port)), ("LEVEL", "3")))

    assert len(facts["pids"]) <= 3, facts["pids"]  # bwrap's init, env/the bot; never the referee's processes
    assert set(facts["environment"]) == ENVIRONMENT | {"PORT", "LEVEL", "TARGETS"}
    assert facts["environment"]["REFEREE_ENDPOINT"] == sandbox.ENDPOINT_INSIDE
    assert facts["visible"][str(secret)] is False
    for planted in targets[1:4]:
        assert facts["writes"][planted] != "written", planted
        assert not Path(planted).exists()
    assert facts["visible"][sys.executable] is True
    assert facts["devices"] == ["lo"]
    assert facts["tcp"] != "connected"
    assert facts["tmp_before"] == [_shown_in("/tmp"), []] and facts["tmp_write"] == ["written", "written"]
    assert facts["hostname"] == "bot"
    assert facts["nice"] == [[0, 0], [0, 0]]
    if sandbox.probe().own_uid:
        assert facts["uid"] == facts["gid"] == facts["leased uid"] in uids.uid_range()
        assert facts["uid"] not in (0, os.getuid()) and facts["groups"] in ([], [facts["gid"]])
        assert facts["capabilities"] == ["0000000000000000"] * 5 and facts["no_new_privs"] == "1"
        assert facts["nproc"] == [limits.MAX_PROCESSES] * 2
    if sandbox.probe().seccomp and "keyctl" in facts:
        assert facts["keyctl"] == [-1, errno.EPERM]
        leased = facts["leased uid"]
        uids.lease_uid(range(leased, leased + 1)).release()  # NoFreeUid while a bot still holds it


def test_every_start_gets_a_fresh_tmp_and_home(tmp_path: Path, tcp_port: int) -> None:
    require_sandbox()
    for _ in range(2):
        facts = _run_sandboxed(tmp_path, [], env=(("PORT", str(tcp_port)),))
        assert facts["tmp_before"] == [_shown_in("/tmp"), []] and facts["tmp_write"] == ["written", "written"]


def test_the_cgroups_of_a_bot_are_removed_when_it_ends(tmp_path: Path, tcp_port: int) -> None:
    require_sandbox()
    if sandbox.probe().cgroups.mode is CgroupMode.NONE:
        pytest.skip(f"no cgroups for bots here: {sandbox.probe().cgroups.reason}")
    facts = _run_sandboxed(tmp_path, [], env=(("PORT", str(tcp_port)),))
    assert facts["cgroup"] is not None and facts["cgroup"].folders
    assert not any(folder.exists() for folder in facts["cgroup"].folders)


# Whole matches.


@pytest.mark.parametrize("game", ["scout", "scauver"])
def test_c_js_and_the_heuristic_play_a_whole_match_in_the_sandbox(game: str, c_bot: Path, js_bot: list[str]) -> None:
    require_sandbox()
    bots = [str(c_bot), shlex.join(js_bot), "heuristic"] + (["random"] if game == "scout" else [])
    config = {"round_cap": 25} if game == "scauver" else {}
    spec = match_spec(game, bots, games=len(bots), seed=3, config=config)
    record = run_match(spec)
    assert all(played.sandboxed for played in record.games)
    for played in record.games:
        assert not played.faults, played.faults
        assert all(timing.decisions > 0 for timing in played.timings)


SDK_BOT = """
import venv_only_marker
from protocol.sdk import run_bot
import random
run_bot(lambda observation, legal: random.choice(legal), name="venv-bot")
"""


def _make_venv(folder: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    return folder


def _install_sdk_into(venv: Path) -> None:
    """The SDK and what it needs, copied into the venv's site-packages (as pip would, without a network), and a
    package only this venv has."""
    (site,) = venv.glob("lib/python*/site-packages")
    for name in ("pyzmq", "msgpack", "msgspec"):
        distribution = importlib.metadata.distribution(name)
        for file in distribution.files or ():
            source = Path(distribution.locate_file(file))
            if source.is_file() and ".." not in file.parts:
                (site / file).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, site / file)
    shutil.copytree(ROOT / "protocol", site / "protocol", ignore=shutil.ignore_patterns("__pycache__"))
    (site / "venv_only_marker").mkdir()
    (site / "venv_only_marker" / "__init__.py").write_text("")


@pytest.fixture(scope="module")
def venv_bot(tmp_path_factory: pytest.TempPathFactory) -> str:
    """`VENV/bin/python bot.py` of an SDK bot whose venv is its own: it imports a package only that venv has."""
    folder = tmp_path_factory.mktemp("venv-bot")
    folder.chmod(0o755)  # pytest's folders are 0700: a bot of another uid could not enter them
    venv = _make_venv(folder / "venv")
    _install_sdk_into(venv)
    (folder / "bot").mkdir()
    (folder / "bot" / "bot.py").write_text(SDK_BOT)
    return shlex.join([str(venv / "bin" / "python"), str(folder / "bot" / "bot.py")])


def test_a_venv_bot_keeps_its_interpreter_as_written(venv_bot: str) -> None:
    spec = resolve_bot(venv_bot, "scout")
    assert spec.command[0] == shlex.split(venv_bot)[0]
    assert os.path.islink(spec.command[0])


@pytest.mark.parametrize("in_sandbox", [True, False], ids=["sandboxed", "unsandboxed"])
def test_an_sdk_bot_in_a_venv_of_its_own_plays(venv_bot: str, in_sandbox: bool) -> None:
    if in_sandbox:
        require_sandbox()
    spec = match_spec("scauver", [venv_bot, "random"], games=2, config={"round_cap": 25}, sandbox=in_sandbox)
    record = run_match(spec)
    assert all(played.sandboxed is in_sandbox for played in record.games)
    for played in record.games:
        assert not played.faults, played.faults
        assert played.timings[played.seats.index("bot")].decisions > 0


# Where the sandbox cannot run, and tcp.


def test_where_the_sandbox_cannot_run_the_bots_play_unsandboxed_and_the_games_say_so() -> None:
    spec = match_spec("scauver", ["random", "random"], games=1, config={"round_cap": 25})
    record = run_match(spec, sandbox_probe=sandbox.SandboxProbe("bwrap is not installed"))
    (played,) = record.games
    assert played.sandboxed is False and not played.faults


def test_tcp_is_refused_under_the_sandbox_with_what_to_do() -> None:
    spec = match_spec("scauver", ["random", "random"])
    with pytest.raises(MatchSpecError, match="--no-sandbox"):
        run_match(spec, transport=Transport.TCP)


def test_a_bots_folder_that_holds_the_matchs_files_does_not_show_them(tmp_path: Path) -> None:
    """A bot kept in the folder of the replays and the store: the folder is shown, the replays and the store's
    bytes are not."""
    require_sandbox()
    folder = tmp_path / "shared"
    (folder / "replays").mkdir(parents=True)
    folder.chmod(0o755)
    (folder / "replays" / "old.json").write_text("{}")
    (folder / "league.sqlite").write_text("results")
    (folder / "bot.py").write_text(
        "import os, sys\n"
        "print(sorted(os.listdir(os.path.dirname(__file__))), os.listdir(sys.argv[1]))\n"
        "try:\n    print(open(sys.argv[2]).read())\nexcept OSError as error:\n    print(type(error).__name__)\n"
    )
    workdir = tmp_path / "match"
    workdir.mkdir()
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(workdir / "referee.sock"))
    hidden = [workdir, folder / "replays", folder / "league.sqlite"]
    request = sandbox.SandboxRequest(workdir / "referee.sock", sandbox.masked_paths(hidden))
    log = tmp_path / "bot.log"
    command = [sys.executable, str(folder / "bot.py"), str(folder / "replays"), str(folder / "league.sqlite")]
    process = BotProcess.start(command, sandbox.bot_environment("t"), log, 1 << 16, sandbox=request)
    try:
        deadline = time.monotonic() + 60
        while not process.exited() and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        process.kill()
        listener.close()
    assert log.read_text().split("\n")[:2] == ["['bot.py', 'league.sqlite', 'replays'] []", "PermissionError"]


def test_a_bot_spec_declares_its_environment(tmp_path: Path) -> None:
    require_sandbox()
    script = tmp_path / "bot"
    script.mkdir()
    script.chmod(0o755)
    (script / "bot.py").write_text("import os\nassert os.environ['LEVEL'] == '3', dict(os.environ)\n")
    spec = BotSpec("bot", (sys.executable, str(script / "bot.py")), env=(("LEVEL", "3"),))
    limits_ = Limits(move_time_ms=400, startup_time_s=5.0)
    (played,) = run_match(match_spec("scauver", [spec, "random"], limits=limits_)).games
    ((fault),) = played.faults
    assert "exited with status 0" in fault.detail  # the assertion held, then the bot left without a hello

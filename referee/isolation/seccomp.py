"""The seccomp filter of a sandboxed bot: it refuses (EPERM) the calls that reach kernel state shared with
other bots or kept past a bot's processes, and every call of the x32 ABI, and allows everything else.

What it closes (`RULES`, the one list of it):
- keyrings (`add_key`, `request_key`, `keyctl`): they belong to a uid, not to a process or a namespace, and the
  persistent one outlives every process of its uid for days, so a bot could leave a note there for the next
  bot given its uid or for its own restart;
- advisory locks, leases and directory notifications on files every bot sees read-only (`flock`; `fcntl` with
  F_GETLK, F_SETLK, F_SETLKW, their 64-bit and OFD forms, F_SETLEASE, F_GETLEASE, F_NOTIFY; every other
  `fcntl` command still works): one bot holds a lock on a file under /usr, another tests it, a bit per file;
- file watches (`inotify_*`, `fanotify_*`): one bot opens a shared file, another is told;
- the page cache as a store (`fadvise64`, which evicts a shared file's pages; `mincore`, `cachestat`, and
  `preadv2`/`pwritev2` with RWF_NOWAIT, which tell whether they are resident): one bot evicts or loads pages,
  another (or its own later process) reads the pattern back;
- `io_uring_*` (its requests are not seen by this filter, so they would bypass all of the above), and
  `perf_event_open` and `sysinfo` (global counters: load, free memory, the machine's process count);
- sockets of any family but AF_UNIX (`socket` and `socketpair` fail with EAFNOSUPPORT; `socketcall`, the
  32-bit multiplexer whose arguments a filter cannot read, wholly): a bot's network namespace has only a
  loopback device, but its UDP and TCP buffers are counted in the machine's /proc/net/sockstat (the third
  audit passed 30-34 of 32-36 symbols through UDP memory), its netlink sockets reach sock_diag (every socket's
  cookie), and a bot needs none of them: the SDKs, the C and the JavaScript bots speak ZeroMQ over ipc, a unix
  socket;
- the socket cookies, a counter of the machine's (`getsockopt` SO_COOKIE and SO_NETNS_COOKIE: a bot that makes
  sockets moves it, another reads how far, 28/28 to 36/36 symbols across freezes), and `bpf`;
- the free space and free inodes of filesystems (`statfs`, `fstatfs`, their 64-bit forms and `ustat`): a bot
  is shown the host's disk read-only (/usr, its own folder), and the referee writes every bot's output to that
  disk, so one bot's output moves what another reads there; a bot's own tmpfs mounts tell nothing it needs;
- namespaces and mounts of its own (`unshare`, `clone` with a CLONE_NEW* flag, `clone3` whose flags a filter
  cannot read, failing with ENOSYS so that libc falls back to `clone`; `mount`, `umount2`, `pivot_root` and the
  new mount calls): in a user namespace of its own a bot could mount, and mount IDs come from counters of the
  machine's (the lowest free one, held while the mount lives; the unique one, never reused), so a bot holding
  mounts moves the IDs of every sandbox started after it; no bot needs them;
- socket buffers larger than the machine's default (`setsockopt` SO_SNDBUF, SO_RCVBUF and their FORCE forms):
  with open files capped (referee.isolation.bot_limits), what a bot's sockets can hold stays bounded, and the
  memory cgroup charges it where there is one.
Container runtimes refuse most of these for the same reasons. The x32 ABI is refused because its calls carry
other numbers (and no bot needs it).

The filter is classic BPF, as bwrap's --seccomp reads it (struct sock_filter, native byte order), written for
the architectures the kernel may run a bot's code in: x86_64 (with i386 and x32) and aarch64 (with arm). On
other machines there is none (`filter_program` returns None) and the sandbox runs without it. Arguments are
checked on their low 32 bits (the kernel reads `fcntl`'s command and `preadv2`'s flags as 32-bit ints).
"""

from __future__ import annotations

import errno
import functools
import operator
import os
import platform
import struct
from collections.abc import Mapping
from dataclasses import dataclass

_LOAD_WORD = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JUMP_EQUAL = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JUMP_AT_LEAST = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JUMP_ANY_BIT = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RETURN = 0x06  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000
_RETURN_ERRNO = 0x00050000  # SECCOMP_RET_ERRNO, with the errno in the low 16 bits
_NUMBER_OFFSET, _ARCH_OFFSET = 0, 4  # in struct seccomp_data
_ARGUMENT_OFFSET = 16  # args[0]; each argument is 8 bytes
_X32_BIT = 0x40000000
_MAX_JUMP = 255

LOCK_COMMANDS = {
    "F_GETLK": 5,
    "F_SETLK": 6,
    "F_SETLKW": 7,
    "F_GETLK64": 12,
    "F_SETLK64": 13,
    "F_SETLKW64": 14,
    "F_OFD_GETLK": 36,
    "F_OFD_SETLK": 37,
    "F_OFD_SETLKW": 38,
    "F_SETLEASE": 1024,
    "F_GETLEASE": 1025,
    "F_NOTIFY": 1026,
}
"""The `fcntl` commands refused (the same numbers in every ABI here)."""
RWF_NOWAIT = 0x00000008
NEW_NAMESPACES = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
"""The `clone` flags refused (its first argument in every ABI here)."""
AF_UNIX = 1
SOCKET_COOKIES = {"SO_COOKIE": 57, "SO_NETNS_COOKIE": 71}
"""The `getsockopt` options refused (at any level: a unix socket has options at SOL_SOCKET only)."""
BUFFER_SIZES = {"SO_SNDBUF": 7, "SO_RCVBUF": 8, "SO_SNDBUFFORCE": 32, "SO_RCVBUFFORCE": 33}
"""The `setsockopt` options refused."""

MOUNT_API = ("open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr")
_MOUNT_API_NUMBERS = dict(zip(MOUNT_API, (428, 429, 430, 431, 432, 433, 442), strict=True))
"""The new mount calls, and clone3, carry the same numbers in every ABI here."""


@dataclass(frozen=True)
class Rule:
    """Refuse the calls named, with `error`: wholly (argument None), or when their `argument` (0-based) equals
    one of `values`, or has any bit of `bits`, or (`only` given) is none of `only`."""

    calls: tuple[str, ...]
    argument: int | None = None
    values: tuple[int, ...] = ()
    bits: int = 0
    only: tuple[int, ...] = ()
    error: int = errno.EPERM


RULES = (
    Rule(("add_key", "request_key", "keyctl")),
    Rule(("flock",)),
    Rule(("fcntl", "fcntl64"), argument=1, values=tuple(LOCK_COMMANDS.values())),
    Rule(("inotify_init", "inotify_init1", "inotify_add_watch", "fanotify_init", "fanotify_mark")),
    Rule(("fadvise64", "fadvise64_64", "arm_fadvise64_64", "mincore", "cachestat")),
    Rule(("preadv2", "pwritev2"), argument=5, bits=RWF_NOWAIT),
    Rule(("io_uring_setup", "io_uring_enter", "io_uring_register")),
    Rule(("perf_event_open", "sysinfo", "bpf", "socketcall")),
    Rule(("socket", "socketpair"), argument=0, only=(AF_UNIX,), error=errno.EAFNOSUPPORT),
    Rule(("getsockopt",), argument=2, values=tuple(SOCKET_COOKIES.values())),
    Rule(("setsockopt",), argument=2, values=tuple(BUFFER_SIZES.values())),
    Rule(("statfs", "fstatfs", "statfs64", "fstatfs64", "ustat")),
    Rule(("unshare", "mount", "umount", "umount2", "pivot_root", *MOUNT_API)),
    Rule(("clone",), argument=0, bits=functools.reduce(operator.or_, NEW_NAMESPACES.values())),
    Rule(("clone3",), error=errno.ENOSYS),
)
"""Everything the filter refuses, besides the x32 ABI: a call an ABI lacks is left out of its part."""


_X86_64 = {
    "add_key": 248, "request_key": 249, "keyctl": 250, "flock": 73, "fcntl": 72, "inotify_init": 253,
    "inotify_init1": 294, "inotify_add_watch": 254, "fanotify_init": 300, "fanotify_mark": 301,
    "fadvise64": 221, "mincore": 27, "cachestat": 451, "preadv2": 327, "pwritev2": 328, "io_uring_setup": 425,
    "io_uring_enter": 426, "io_uring_register": 427, "perf_event_open": 298, "sysinfo": 99, "bpf": 321,
    "socket": 41, "socketpair": 53, "setsockopt": 54, "getsockopt": 55, "ustat": 136, "statfs": 137,
    "fstatfs": 138, "unshare": 272, "mount": 165, "umount2": 166, "pivot_root": 155, "clone": 56, "clone3": 435,
    **_MOUNT_API_NUMBERS,
}  # fmt: skip
_I386 = {
    "add_key": 286, "request_key": 287, "keyctl": 288, "flock": 143, "fcntl": 55, "fcntl64": 221,
    "inotify_init": 291, "inotify_init1": 332, "inotify_add_watch": 292, "fanotify_init": 338,
    "fanotify_mark": 339, "fadvise64": 250, "fadvise64_64": 272, "mincore": 218, "cachestat": 451,
    "preadv2": 378, "pwritev2": 379, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "perf_event_open": 336, "sysinfo": 116, "bpf": 357, "socketcall": 102, "socket": 359, "socketpair": 360,
    "setsockopt": 366, "getsockopt": 365, "ustat": 62, "statfs": 99, "fstatfs": 100, "statfs64": 268,
    "fstatfs64": 269, "unshare": 310, "mount": 21, "umount": 22, "umount2": 52, "pivot_root": 217, "clone": 120,
    "clone3": 435, **_MOUNT_API_NUMBERS,
}  # fmt: skip
_AARCH64 = {
    "add_key": 217, "request_key": 218, "keyctl": 219, "flock": 32, "fcntl": 25, "inotify_init1": 26,
    "inotify_add_watch": 27, "fanotify_init": 262, "fanotify_mark": 263, "fadvise64": 223, "mincore": 232,
    "cachestat": 451, "preadv2": 286, "pwritev2": 287, "io_uring_setup": 425, "io_uring_enter": 426,
    "io_uring_register": 427, "perf_event_open": 241, "sysinfo": 179, "bpf": 280, "socket": 198,
    "socketpair": 199, "setsockopt": 208, "getsockopt": 209, "statfs": 43, "fstatfs": 44, "unshare": 97,
    "mount": 40, "umount2": 39, "pivot_root": 41, "clone": 220, "clone3": 435, **_MOUNT_API_NUMBERS,
}  # fmt: skip
_ARM = {
    "add_key": 309, "request_key": 310, "keyctl": 311, "flock": 143, "fcntl": 55, "fcntl64": 221,
    "inotify_init": 316, "inotify_init1": 360, "inotify_add_watch": 317, "fanotify_init": 367,
    "fanotify_mark": 368, "arm_fadvise64_64": 270, "mincore": 219, "cachestat": 451, "preadv2": 392,
    "pwritev2": 393, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "perf_event_open": 364, "sysinfo": 116, "bpf": 386, "socket": 281, "socketpair": 288, "setsockopt": 294,
    "getsockopt": 295, "ustat": 62, "statfs": 99, "fstatfs": 100, "statfs64": 266, "fstatfs64": 267,
    "unshare": 337, "mount": 21, "umount2": 52, "pivot_root": 218, "clone": 120, "clone3": 435, **_MOUNT_API_NUMBERS,
}  # fmt: skip


@dataclass(frozen=True)
class Abi:
    """One system call ABI: its AUDIT_ARCH value, the numbers of its calls by name, whether x32 calls come
    under it."""

    arch: int
    numbers: Mapping[str, int]
    x32: bool = False

    def refused(self) -> tuple[tuple[int, int], ...]:
        """The numbers of the calls this ABI refuses wholly, each with its errno."""
        wholly = ((call, rule.error) for rule in RULES if rule.argument is None for call in rule.calls)
        return tuple((self.numbers[call], error) for call, error in wholly if call in self.numbers)


ABIS = {
    "x86_64": (Abi(0xC000003E, _X86_64, x32=True), Abi(0x40000003, _I386)),
    "aarch64": (Abi(0xC00000B7, _AARCH64), Abi(0x40000028, _ARM)),
}
"""The ABIs a machine runs (its own first, then its 32-bit one)."""


# A small assembler: instructions whose jumps name labels, resolved into offsets at the end.

_Jump = str | None


@dataclass(frozen=True)
class _Instruction:
    code: int
    k: int
    if_true: _Jump = None
    if_false: _Jump = None


class _Program:
    def __init__(self) -> None:
        self.instructions: list[_Instruction] = []
        self.labels: dict[str, int] = {}

    def add(self, code: int, k: int, if_true: _Jump = None, if_false: _Jump = None) -> None:
        self.instructions.append(_Instruction(code, k, if_true, if_false))

    def label(self, name: str) -> None:
        self.labels[name] = len(self.instructions)

    def _offset(self, index: int, target: _Jump) -> int:
        if target is None:
            return 0
        offset = self.labels[target] - index - 1
        if not 0 <= offset <= _MAX_JUMP:
            raise ValueError(f"a seccomp jump to {target} is out of range ({offset})")
        return offset

    def assemble(self) -> bytes:
        return b"".join(
            struct.pack("=HBBI", i.code, self._offset(n, i.if_true), self._offset(n, i.if_false), i.k)
            for n, i in enumerate(self.instructions)
        )


def _argument_rules(abi: Abi) -> list[tuple[int, Rule]]:
    return [
        (abi.numbers[call], rule)
        for rule in RULES
        if rule.argument is not None
        for call in rule.calls
        if call in abi.numbers
    ]


def _abi_block(program: _Program, abi: Abi, name: str, next_block: str) -> None:
    """Skip to `next_block` unless the call is of this ABI; refuse x32 calls (if `abi.x32`), the calls refused
    wholly, and the calls whose argument a rule refuses; allow the rest."""
    program.add(_JUMP_EQUAL, abi.arch, None, next_block)
    program.add(_LOAD_WORD, _NUMBER_OFFSET)
    if abi.x32:
        program.add(_JUMP_AT_LEAST, _X32_BIT, _refuse(errno.EPERM))
    for number, error in abi.refused():
        program.add(_JUMP_EQUAL, number, _refuse(error))
    checked = _argument_rules(abi)
    for position, (number, _) in enumerate(checked):
        program.add(_JUMP_EQUAL, number, f"{name}-argument-{position}")
    program.add(_RETURN, _ALLOW)
    for position, (_, rule) in enumerate(checked):
        assert rule.argument is not None
        program.label(f"{name}-argument-{position}")
        program.add(_LOAD_WORD, _ARGUMENT_OFFSET + 8 * rule.argument)
        for value in rule.values:
            program.add(_JUMP_EQUAL, value, _refuse(rule.error))
        if rule.bits:
            program.add(_JUMP_ANY_BIT, rule.bits, _refuse(rule.error))
        for value in rule.only:
            program.add(_JUMP_EQUAL, value, "allow")
        program.add(_RETURN, _RETURN_ERRNO | rule.error if rule.only else _ALLOW)


def _refuse(error: int) -> str:
    return f"refuse-{error}"


def filter_program(machine: str | None = None) -> bytes | None:
    """The filter for this machine (or for `machine`, as platform.machine() names it), or None without one."""
    abis = ABIS.get(machine or platform.machine())
    if abis is None:
        return None
    program = _Program()
    program.add(_LOAD_WORD, _ARCH_OFFSET)
    for position, abi in enumerate(abis):
        if position:
            program.label(f"abi-{position}")
        _abi_block(program, abi, f"abi-{position}", f"abi-{position + 1}")
    program.label(f"abi-{len(abis)}")
    program.label("allow")
    program.add(_RETURN, _ALLOW)
    for error in sorted({errno.EPERM, *(rule.error for rule in RULES)}):
        program.label(_refuse(error))
        program.add(_RETURN, _RETURN_ERRNO | error)
    return program.assemble()


_WHAT_BITS = {"preadv2": "with RWF_NOWAIT", "clone": "of new namespaces"}
_WHAT_VALUES = {
    "fcntl": "lock, lease and notify commands",
    "getsockopt": "socket cookies",
    "setsockopt": "buffer sizes",
}


def refused_calls() -> list[str]:
    """What the filter refuses, in words, for `referee doctor`."""
    described = []
    for rule in RULES:
        calls = "/".join(rule.calls)
        if rule.only:
            described.append(f"{calls} of any family but AF_UNIX")
        elif rule.values:
            described.append(f"{calls} {_WHAT_VALUES[rule.calls[0]]}")
        elif rule.bits:
            described.append(f"{calls} {_WHAT_BITS[rule.calls[0]]}")
        else:
            described.append(calls)
    return described


def filter_fd(program: bytes) -> int:
    """A file descriptor (not inherited by default) to read `program` from, at its start, for bwrap
    --seccomp."""
    fd = os.memfd_create("referee-seccomp", os.MFD_CLOEXEC)
    os.write(fd, program)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd

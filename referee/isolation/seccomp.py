"""The seccomp filter of a sandboxed bot: it refuses (EPERM) the kernel's key management calls, `add_key`,
`request_key` and `keyctl`, and every call of the x32 ABI, and allows everything else.

Keyrings are the one store the sandbox's namespaces leave shared: the user and persistent keyrings belong to a
uid, not to a process or a namespace, and the persistent one outlives every process of its uid for days. A bot
could leave a note there for the next bot given its uid, or for its own restart (what it held in an earlier
seat rotation). Container runtimes refuse these calls for the same reason. The x32 ABI is refused because its
calls carry other numbers (and no bot needs it).

The filter is classic BPF, as bwrap's --seccomp reads it (struct sock_filter, native byte order), written for
the architectures the kernel may run a bot's code in: x86_64 (with i386 and x32) and aarch64 (with arm). On
other machines there is none (`filter_program` returns None) and the sandbox runs without it.
"""

from __future__ import annotations

import errno
import os
import platform
import struct
from dataclasses import dataclass

_LOAD_WORD = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JUMP_EQUAL = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JUMP_AT_LEAST = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RETURN = 0x06  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000
_REFUSE = 0x00050000 | errno.EPERM  # SECCOMP_RET_ERRNO
_NUMBER_OFFSET, _ARCH_OFFSET = 0, 4  # in struct seccomp_data
_X32_BIT = 0x40000000


@dataclass(frozen=True)
class Abi:
    """One system call ABI: its AUDIT_ARCH value, the numbers of the calls refused, whether x32 calls come
    under it."""

    arch: int
    refused: tuple[int, ...]
    x32: bool = False


ABIS = {
    "x86_64": (Abi(0xC000003E, (248, 249, 250), x32=True), Abi(0x40000003, (286, 287, 288))),
    "aarch64": (Abi(0xC00000B7, (217, 218, 219)), Abi(0x40000028, (309, 310, 311))),
}
"""add_key, request_key and keyctl in each ABI a machine runs (its own first, then its 32-bit one)."""


def _instruction(code: int, k: int, jump_true: int = 0, jump_false: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jump_true, jump_false, k)


def _abi_block(abi: Abi, refuse_at: int, start: int) -> list[bytes]:
    """The instructions for `abi`, starting at index `start`, with the refusal at index `refuse_at`: skip to
    the next block unless the call is of this ABI, else refuse the calls of `abi.refused` (and x32)."""
    checks = [(_JUMP_AT_LEAST, _X32_BIT)] if abi.x32 else []
    checks += [(_JUMP_EQUAL, number) for number in abi.refused]
    length = 3 + len(checks)
    block = [_instruction(_JUMP_EQUAL, abi.arch, 0, length - 1), _instruction(_LOAD_WORD, _NUMBER_OFFSET)]
    for position, (code, value) in enumerate(checks):
        index = start + 2 + position
        block.append(_instruction(code, value, refuse_at - index - 1, 0))
    return [*block, _instruction(_RETURN, _ALLOW)]


def filter_program(machine: str | None = None) -> bytes | None:
    """The filter for this machine (or for `machine`, as platform.machine() names it), or None without one."""
    abis = ABIS.get(machine or platform.machine())
    if abis is None:
        return None
    sizes = [3 + len(abi.refused) + abi.x32 for abi in abis]
    refuse_at = 1 + sum(sizes) + 1
    program = [_instruction(_LOAD_WORD, _ARCH_OFFSET)]
    for abi in abis:
        program += _abi_block(abi, refuse_at, len(program))
    program += [_instruction(_RETURN, _ALLOW), _instruction(_RETURN, _REFUSE)]
    return b"".join(program)


def filter_fd(program: bytes) -> int:
    """A file descriptor (not inherited by default) to read `program` from, at its start, for bwrap
    --seccomp."""
    fd = os.memfd_create("referee-seccomp", os.MFD_CLOEXEC)
    os.write(fd, program)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd

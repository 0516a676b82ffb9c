"""The root a bot's kernel shows at the kernel level: a slim copy of what its program needs, made fresh in memory
for every bot start and seen by that bot's kernel alone. The one place for its file-set rules.

Why a copy: a bot's kernel (referee.isolation.gvisor) reads what it shows through runsc's gofer from the host's
files, so its cache misses go through the one host page cache: a bot that reads a page of a file another bot
can read makes that page fast for the other (first-touch timing), and for its own next process. Here every
file a bot's kernel can read is a file of a tmpfs mounted for that bot start alone (written by the referee,
so every page is resident from the start and, without swap, stays so): no page of it is shared with another
bot, or with the bot's previous process, and no first read of it is faster than another.

What the root holds (`KernelRoot.plan`), nothing else:
- the program and, through every symlink on the way, what it runs on:
  - an ELF program (C, Node): it, its loader and the shared libraries it needs (`elf_needs`, found in
    `LIBRARY_FOLDERS` only: a submission's binary never names what is copied);
  - the referee's own Python (a `.py` bot runs with it): the interpreter, its libpython, its standard library
    without what no bot runs (`STDLIB_LEFT_OUT`, and optimised byte code), the distributions the SDK needs
    (`SDK_DISTRIBUTION`'s requirements, their tests left out) and the SDK's packages (sandbox.SDK_PACKAGES,
    `SDK_LEFT_OUT` left out); any other Python is refused (`SlimRootRefused`);
- the libraries every ELF file in it needs, and those glibc loads by name (`ALWAYS_LIBRARIES`);
- `ETC_FILES`: what the loader and the resolver read;
- the bot's own folders (sandbox.shown_folders but the runtime's), copied whole: their symlinks are copied as
  symlinks and never followed out (what they point to outside is not there), the match's own files in them
  (sandbox.hidden_paths) left out, an empty folder or a file no one may read in their place;
- for an organiser's bot, the files its command names under the system folders.

At most `MAX_ROOT_BYTES` a bot (`SlimRootRefused` beyond: the bot runs at the full level, or the organiser
slims its folder); the tmpfs is sized to what it holds. Builds' writable folders are not copied (they are the
build's output), and stay bind mounts.
"""

from __future__ import annotations

import ctypes
import errno
import fnmatch
import functools
import importlib.metadata
import os
import re
import stat
import struct
import sys
import sysconfig
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import BinaryIO

from protocol.errors import BotFault
from referee.isolation import sandbox

MAX_ROOT_BYTES = 512 * 1024 * 1024
"""What one bot's root may hold: the built-in bots need 8 (C) to 149 MiB (Python; docs/results.md)."""
_MULTIARCH = getattr(sys.implementation, "_multiarch", "x86_64-linux-gnu")
LIBRARY_FOLDERS = (
    f"/lib/{_MULTIARCH}", f"/usr/lib/{_MULTIARCH}", "/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib",
)  # fmt: skip
"""Where shared libraries are looked for: the loader's default folders (Debian's multiarch ones first)."""
ALWAYS_LIBRARIES = ("libgcc_s.so.1",)
"""Libraries glibc loads by name when a thread is cancelled or exits, which no ELF file names."""
ETC_FILES = (
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/nsswitch.conf", "/etc/passwd", "/etc/group", "/etc/hosts",
    "/etc/host.conf", "/etc/resolv.conf", "/etc/gai.conf", "/etc/localtime",
)  # fmt: skip
"""The loader's cache and what the C library's name services read (users, groups, hosts, the time zone)."""
STDLIB_LEFT_OUT = frozenset(
    {"test", "tests", "idle_test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "site-packages",
     "config-*", "_tkinter.*"}
)  # fmt: skip
"""Names (shell patterns) in the standard library no bot runs (its own tests, the IDE, Tk, pip's bootstrap, the
static library and makefiles for building extensions), and the base installation's own packages (the SDK's
are copied from the referee's environment)."""
SDK_DISTRIBUTION = "card-referee"
"""The distribution whose requirements (no extras) a Python bot gets: the SDK's (pyzmq, msgpack, numpy...)."""
DISTRIBUTION_LEFT_OUT = frozenset({"tests", "test"})
SDK_LEFT_OUT = frozenset({"node_modules", "tests"})
"""In the SDK's packages: the JavaScript bot's modules (a Node bot copies them from its own folder)."""
_OPTIMISED = re.compile(r"\.opt-\d\.pyc$")
_LINK_DEPTH = 40
_ELF_MAGIC = b"\x7fELF"
_PT_INTERP, _PT_DYNAMIC, _PT_LOAD = 3, 2, 1
_DT_NEEDED, _DT_STRTAB = 1, 5


class SlimRootRefused(BotFault, RuntimeError):
    """A bot whose runtime the kernel level cannot copy (another Python than the referee's, a script of another
    language, folders beyond MAX_ROOT_BYTES): says why and what to do. The bot's fault, so its start fails
    (referee.isolation.process.BotStartError) and no one else's: never a wider view instead."""


@dataclass
class KernelRoot:
    """What one bot's root holds: files and folders at their host paths, symlinks with their targets, and the
    paths shown empty (a folder) or unreadable (a file) in place of the match's own files."""

    files: set[str] = field(default_factory=set)
    folders: dict[str, int] = field(default_factory=dict)
    """Folder -> its mode (the host's for a copied tree, 0755 above)."""
    links: dict[str, str] = field(default_factory=dict)
    hidden: set[str] = field(default_factory=set)
    mount_points: set[str] = field(default_factory=set)
    """Empty files for the spec's file mounts to cover (the root is read-only: runsc cannot make them)."""

    @classmethod
    def plan(cls, command: Sequence[str], own: Sequence[str], masked: Sequence[str], organisers: bool) -> KernelRoot:
        """The root of a bot running `command` (its program absolute) with its own folders `own`
        (sandbox.shown_folders less its runtime's). `organisers`: the organiser typed the command, so the
        system files its words name are shown too (a submission's words are arguments only)."""
        root = KernelRoot()
        root.hidden = set(sandbox.hidden_paths(masked, own))
        for folder in own:
            root.add_tree(folder)
        if organisers:
            for word in command[1:]:
                if os.path.isabs(word) and os.path.isfile(word) and _system_path(word):
                    root.add(word)
        root.add_libraries(sorted(root.files))
        root.merge(runtime(command[0]))
        return root

    def merge(self, other: KernelRoot) -> None:
        self.files |= other.files
        self.folders |= {folder: mode for folder, mode in other.folders.items() if folder not in self.folders}
        self.links |= other.links

    def add(self, path: str, depth: int = 0) -> None:
        """`path` and every symlink on the way to it (followed: the kernel follows them), the file or folder
        it names (a folder without its contents)."""
        parts = os.path.abspath(path).strip("/").split("/")
        current = "/"
        for index, part in enumerate(parts):
            step = os.path.join(current, part)
            if os.path.islink(step):
                target = os.readlink(step)
                self.links[step] = target
                if depth < _LINK_DEPTH:
                    self.add(os.path.normpath(os.path.join(current, target, *parts[index + 1 :])), depth + 1)
                return
            current = step
        if os.path.isfile(current):
            self.files.add(current)
        elif os.path.isdir(current):
            self.folders.setdefault(current, 0o755)

    def add_tree(self, top: str, left_out: frozenset[str] = frozenset()) -> None:
        """Every file, folder and symlink under `top` (the folder reached through its symlinks), symlinks
        copied as they are and not followed, `left_out` folder names and the hidden paths skipped."""
        self.add(top)
        top = os.path.realpath(top)
        for folder, subfolders, names in os.walk(top):
            if folder in self.hidden:
                subfolders[:] = []
                continue
            self.folders[folder] = _mode(folder)
            subfolders[:] = [
                name for name in subfolders if not _left_out(name, left_out) and not _linked(folder, name, self)
            ]
            for name in names:
                path = os.path.join(folder, name)
                if _left_out(name, left_out):
                    continue
                if os.path.islink(path):
                    self.links[path] = os.readlink(path)
                elif path not in self.hidden and os.path.isfile(path) and not _OPTIMISED.search(name):
                    self.files.add(path)

    def add_libraries(self, paths: Iterable[str]) -> None:
        """The shared libraries the ELF files among `paths` need, and theirs, and ALWAYS_LIBRARIES."""
        pending = [*paths, *filter(None, (_library(name) for name in ALWAYS_LIBRARIES))]
        seen: set[str] = set()
        while pending:
            path = pending.pop()
            self.add(path)
            real = os.path.realpath(path)
            if real in seen:
                continue
            seen.add(real)
            interpreter, needed = elf_needs(real)
            for found in [interpreter, *map(_library, needed)]:
                if found is not None:
                    pending.append(found)

    def size(self) -> int:
        """The bytes its tmpfs holds: each file rounded up to whole pages, a page for every folder and link."""
        page = os.sysconf("SC_PAGESIZE")
        total = sum(-(-os.path.getsize(path) // page) * page for path in self.files if os.path.exists(path))
        return total + page * (len(self.folders) + len(self.links) + len(self.hidden) + 16)


def _left_out(name: str, patterns: frozenset[str]) -> bool:
    return name in patterns or any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def _mode(path: str) -> int:
    return stat.S_IMODE(os.stat(path).st_mode) & 0o1777


def _linked(folder: str, name: str, root: KernelRoot) -> bool:
    """A subfolder that is a symlink: copied as a symlink, not walked."""
    path = os.path.join(folder, name)
    if os.path.islink(path):
        root.links[path] = os.readlink(path)
        return True
    return False


def _system_path(path: str) -> bool:
    return any(sandbox.within(path, folder) for folder in sandbox.SYSTEM_FOLDERS)


@functools.cache
def _library(name: str) -> str | None:
    """Where the loader would find the library `name` in LIBRARY_FOLDERS (a name with a slash: nowhere)."""
    if "/" in name:
        return None
    for folder in LIBRARY_FOLDERS:
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return path
    return None


def elf_needs(path: str) -> tuple[str | None, tuple[str, ...]]:
    """The loader (PT_INTERP, only if in LIBRARY_FOLDERS) and the libraries (DT_NEEDED) of the 64-bit
    little-endian ELF file at `path`; (None, ()) for anything else. Read, never run: a submission's binary
    cannot make the referee run it (as `ldd` would)."""
    try:
        with open(path, "rb") as file:
            data = file.read(64)
            if not (data[:4] == _ELF_MAGIC and len(data) == 64 and data[4] == 2 and data[5] == 1):
                return None, ()
            return _read_elf(file, data)
    except (OSError, struct.error, ValueError, IndexError, ZeroDivisionError):
        return None, ()


def _read_elf(file: BinaryIO, header: bytes) -> tuple[str | None, tuple[str, ...]]:
    phoff, phentsize, phnum = struct.unpack_from("<Q", header, 32)[0], *struct.unpack_from("<HH", header, 54)
    file.seek(phoff)
    table = file.read(phentsize * min(phnum, 256))
    loads, interpreter, dynamic = [], None, None
    for index in range(len(table) // phentsize):
        kind, _flags, offset, vaddr, _paddr, filesz = struct.unpack_from("<IIQQQQ", table, index * phentsize)
        if kind == _PT_LOAD:
            loads.append((vaddr, offset, filesz))
        elif kind == _PT_INTERP:
            file.seek(offset)
            interpreter = file.read(min(filesz, 4096)).rstrip(b"\0").decode("utf-8", "replace")
        elif kind == _PT_DYNAMIC:
            dynamic = (offset, min(filesz, 1 << 20))
    loader = interpreter if interpreter and any(_within_real(interpreter, f) for f in LIBRARY_FOLDERS) else None
    if dynamic is None:
        return loader, ()
    file.seek(dynamic[0])
    entries = file.read(dynamic[1])
    tags = [struct.unpack_from("<qQ", entries, at) for at in range(0, len(entries) - 15, 16)]
    strtab = next((value for tag, value in tags if tag == _DT_STRTAB), None)
    base = next((offset + strtab - vaddr for vaddr, offset, size in loads if strtab is not None
                 and vaddr <= strtab < vaddr + size), None)  # fmt: skip
    if base is None:
        return loader, ()
    needed = []
    for tag, value in tags:
        if tag == _DT_NEEDED:
            file.seek(base + value)
            needed.append(file.read(256).split(b"\0", 1)[0].decode("utf-8", "replace"))
    return loader, tuple(needed)


def _within_real(path: str, folder: str) -> bool:
    return sandbox.within(os.path.normpath(path), folder) or sandbox.within(os.path.realpath(path), folder)


# The runtimes.


def runtime(program: str) -> KernelRoot:
    """What `program` runs on (see the module's docstring): SlimRootRefused for a runtime it cannot copy."""
    if _is_referees_python(program):
        return _python_runtime(program)
    if _is_elf(program):
        return _elf_runtime(program)
    raise SlimRootRefused(
        f"the kernel level copies a bot's runtime into memory for each start, and knows how for ELF programs "
        f"(C, Node) and the referee's own Python; {program} is neither: run its script with "
        f"one of them (a .py bot runs with the referee's Python), or play it at the full level"
    )


def _is_elf(program: str) -> bool:
    try:
        with open(os.path.realpath(program), "rb") as file:
            return file.read(4) == _ELF_MAGIC
    except OSError:
        return False


def _is_referees_python(program: str) -> bool:
    ours = {os.path.realpath(sys.executable), os.path.realpath(getattr(sys, "_base_executable", sys.executable))}
    return os.path.realpath(program) in ours


@functools.cache
def _elf_runtime(program: str) -> KernelRoot:
    root = KernelRoot()
    root.add(program)
    for path in ETC_FILES:
        root.add(path)
    root.add_libraries([program])
    return root


@functools.cache
def _python_runtime(program: str) -> KernelRoot:
    root = _elf_runtime(program)
    root = KernelRoot(set(root.files), dict(root.folders), dict(root.links))
    for name in ("pyvenv.cfg",):
        if os.path.isfile(os.path.join(sys.prefix, name)):
            root.add(os.path.join(sys.prefix, name))
    library = sysconfig.get_config_var("INSTSONAME")
    if library and os.path.isfile(os.path.join(sysconfig.get_config_var("LIBDIR") or "", library)):
        root.add(os.path.join(sysconfig.get_config_var("LIBDIR"), library))
    root.add_tree(sysconfig.get_paths()["stdlib"], STDLIB_LEFT_OUT)
    root.add(sysconfig.get_paths()["purelib"])
    for distribution in _sdk_distributions():
        for located in (distribution.locate_file(name) for name in distribution.files or ()):
            path = str(located)
            left_out = DISTRIBUTION_LEFT_OUT & set(path.split(os.sep)) or _OPTIMISED.search(path)
            if os.path.isfile(path) and not left_out:
                root.add(path)
    for folder in sandbox.sdk_folders():
        root.add_tree(folder, SDK_LEFT_OUT)
    root.add_libraries(sorted(root.files))
    return root


def _sdk_distributions() -> list[importlib.metadata.Distribution]:
    """SDK_DISTRIBUTION and, transitively, what it requires without extras or markers, as installed for the
    interpreter (its site-packages only: a source tree on the search path, as under pytest, can hold an egg-info
    of the same name whose file list lacks the installed import hooks)."""
    paths = sysconfig.get_paths()
    installed = list(dict.fromkeys((paths["purelib"], paths["platlib"])))
    found: dict[str, importlib.metadata.Distribution] = {}
    pending = [SDK_DISTRIBUTION]
    while pending:
        name = pending.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in found:
            continue
        distribution = next(iter(importlib.metadata.distributions(name=name, path=installed)), None)
        if distribution is None:
            continue
        found[key] = distribution
        for requirement in distribution.requires or ():
            if ";" not in requirement:
                match = re.match(r"[A-Za-z0-9._-]+", requirement)
                if match:
                    pending.append(match.group(0))
    return list(found.values())


# The copy.


def populate(root: KernelRoot, target: str) -> None:
    """Copy `root` into the folder `target` (a fresh tmpfs), each path under `target` at its host path."""
    for folder in sorted(root.folders):
        _make_folder(target, folder, root.folders[folder])
    for path in sorted(root.files):
        _make_parents(target, path)
        _copy(path, _inside(target, path))
    for path, link in sorted(root.links.items()):
        _make_parents(target, path)
        if not os.path.lexists(_inside(target, path)):
            os.symlink(link, _inside(target, path))
    for path in sorted(root.mount_points):
        _make_parents(target, path)
        os.close(os.open(_inside(target, path), os.O_CREAT | os.O_WRONLY, 0o644))
    for path in sorted(root.hidden):
        inside = _inside(target, path)
        _make_parents(target, path)
        if os.path.isdir(path):
            os.makedirs(inside, mode=0o555, exist_ok=True)
        elif not os.path.lexists(inside):
            os.close(os.open(inside, os.O_CREAT | os.O_WRONLY, 0))


def _copy(path: str, inside: str) -> None:
    """`path`'s bytes and permissions into the new file `inside`, in the kernel (sendfile)."""
    source = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        status = os.fstat(source)
        copy = os.open(inside, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            left = status.st_size
            while left > 0:
                sent = os.sendfile(copy, source, None, min(left, 1 << 30))
                if sent == 0:
                    break
                left -= sent
            os.fchmod(copy, stat.S_IMODE(status.st_mode) & 0o777)
        finally:
            os.close(copy)
    finally:
        os.close(source)


def _inside(target: str, path: str) -> str:
    return os.path.join(target, path.lstrip("/"))


def _make_parents(target: str, path: str) -> None:
    parent = os.path.dirname(path)
    if not os.path.isdir(_inside(target, parent)):
        _make_folder(target, parent, 0o755)


def _make_folder(target: str, folder: str, mode: int) -> None:
    inside = _inside(target, folder)
    if not os.path.isdir(inside):
        _make_parents(target, folder)
        os.mkdir(inside)
    os.chmod(inside, mode)


# The tmpfs: mounted in the referee's mount namespace only until the bot's kernel has its own.

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_NOATIME, MS_REC, MS_PRIVATE = 1, 2, 4, 32, 1024, 16384, 1 << 18
MNT_DETACH = 2
CLONE_NEWNS = 0x00020000
_TMPFS_FLAGS = MS_NOSUID | MS_NODEV | MS_NOATIME


@functools.cache
def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p)
    libc.umount2.argtypes = (ctypes.c_char_p, ctypes.c_int)
    libc.unshare.argtypes = (ctypes.c_int,)
    return libc


def _check(result: int, what: str) -> None:
    if result != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"{what}: {os.strerror(number)}")


def _mount(source: str | None, target: str, kind: str | None, flags: int, data: str | None = None) -> None:
    def encode(text: str | None) -> bytes | None:
        return None if text is None else os.fsencode(text)

    _check(_libc().mount(encode(source), encode(target), encode(kind), flags, encode(data)), f"mount {target}")


def mount_root(root: KernelRoot, target: str, mounts: Sequence[dict[str, object]] = ()) -> int:
    """A tmpfs at `target` sized to `root` (SlimRootRefused beyond MAX_ROOT_BYTES), `root` copied into it, then
    made read-only, with a mount point for each of the spec's `mounts` (an OCI spec's list). Its size in
    bytes."""
    for mount in mounts:
        destination, source = str(mount["destination"]), str(mount.get("source"))
        if mount.get("type") == "bind" and os.path.exists(source) and not os.path.isdir(source):
            root.mount_points.add(destination)
        else:
            root.folders.setdefault(destination, 0o755)
    size = root.size()
    if size > MAX_ROOT_BYTES:
        raise SlimRootRefused(
            f"what this bot's kernel would show comes to {size // (1 << 20)} MiB, more than the kernel level copies "
            f"for a bot ({MAX_ROOT_BYTES // (1 << 20)} MiB): slim the bot's folder, or play it at the full level"
        )
    _mount("tmpfs", target, "tmpfs", _TMPFS_FLAGS, f"size={size},mode=0755,nr_inodes={size // 1024 + 1024}")
    try:
        populate(root, target)
        _mount(None, target, None, MS_REMOUNT | MS_RDONLY | _TMPFS_FLAGS)
    except BaseException:
        detach(target)
        raise
    return size


def detach(target: str) -> None:
    """Unmount `target` from this mount namespace (lazily: a bot's kernel that has its own copy keeps it until
    it ends); nothing if it is not mounted."""
    if _libc().umount2(os.fsencode(target), MNT_DETACH) != 0 and ctypes.get_errno() not in (errno.EINVAL, errno.ENOENT):
        number = ctypes.get_errno()
        raise OSError(number, f"umount {target}: {os.strerror(number)}")


def enter_own_mount_namespace() -> None:
    """In the child that becomes `runsc run`, between fork and exec: a mount namespace of its own, whose mounts
    propagate nowhere, so the root's tmpfs lives exactly as long as the bot's kernel (runsc, its gofer and
    Sentry), whatever happens to the referee."""
    _check(_libc().unshare(CLONE_NEWNS), "unshare")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)

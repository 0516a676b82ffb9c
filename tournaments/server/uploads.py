"""A student's upload unpacked into a fresh folder, or refused with a precise reason.

An upload is a zip, a tar.gz, or several plain files (a browser's multi-file or folder pick). Nothing it holds
is trusted: every name is checked before anything is written (no absolute path, no `..`, no NUL or control
character, no duplicate, not deeper than the cap), only regular files and folders are made (a symbolic or hard
link, a device or a named pipe refuses the whole upload), and every size is counted as it is read, not as the
archive declares it, so a zip bomb stops at the cap whatever its headers say. Files are created with O_EXCL and
O_NOFOLLOW inside a folder this module made, so even a check missed here could not write outside it.

A refusal is data: `UploadRefused.cause` is a `Refusal` (its value for machines, its `meaning` for people) and
the message names the entry. On refusal the partial folder is removed.

`submission_root` then checks the folder is a submission by the league's rules
(tournaments.league.submissions): a valid bot.toml, or a bot program found in it, or a build to make one.
"""

from __future__ import annotations

import enum
import gzip
import io
import os
import shutil
import stat
import tarfile
import unicodedata
import zipfile
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from protocol.errors import BadInput
from tournaments.league.folder_problems import MANIFEST, folder_problem
from tournaments.league.submissions import load_submission

CHUNK = 65536
CENTRAL_HEADER = b"PK\x01\x02"


class Refusal(enum.StrEnum):
    """Why an upload was refused: the value is what the API returns, `meaning` a phrase for people."""

    UPLOAD_TOO_LARGE = "upload-too-large"
    TOTAL_TOO_LARGE = "total-too-large"
    FILE_TOO_LARGE = "file-too-large"
    TOO_MANY_FILES = "too-many-files"
    TOO_DEEP = "too-deep"
    COMPRESSION_RATIO = "compression-ratio"
    SIZE_MISMATCH = "size-mismatch"
    ABSOLUTE_PATH = "absolute-path"
    TRAVERSAL = "traversal"
    LINK = "link"
    SPECIAL_FILE = "special-file"
    BAD_NAME = "bad-name"
    DUPLICATE = "duplicate"
    NOT_AN_ARCHIVE = "not-an-archive"
    EMPTY = "empty"
    NOT_A_SUBMISSION = "not-a-submission"

    @property
    def meaning(self) -> str:
        return _MEANINGS[self]


_MEANINGS = {
    Refusal.UPLOAD_TOO_LARGE: "the upload itself is larger than the cap",
    Refusal.TOTAL_TOO_LARGE: "its files together are larger than the cap",
    Refusal.FILE_TOO_LARGE: "a file is larger than the cap",
    Refusal.TOO_MANY_FILES: "it holds more entries than the cap",
    Refusal.TOO_DEEP: "a path has more folders than the cap",
    Refusal.COMPRESSION_RATIO: "it unpacks to far more than its own size (a zip bomb)",
    Refusal.SIZE_MISMATCH: "an entry's content does not match its declared size or checksum",
    Refusal.ABSOLUTE_PATH: "a path is absolute",
    Refusal.TRAVERSAL: "a path climbs out of the folder (..)",
    Refusal.LINK: "it holds a symbolic or hard link",
    Refusal.SPECIAL_FILE: "it holds a device, a named pipe or another special file",
    Refusal.BAD_NAME: "a name is empty, too long, or has a NUL, control or invisible character",
    Refusal.DUPLICATE: "two entries have one path",
    Refusal.NOT_AN_ARCHIVE: "it is not a zip or tar.gz that can be read",
    Refusal.EMPTY: "it holds no file",
    Refusal.NOT_A_SUBMISSION: f"it holds no {MANIFEST} and no bot program",
}


class UploadRefused(BadInput):
    """An upload this server will not unpack: `cause` says why as data, the message names the entry."""

    def __init__(self, cause: Refusal, detail: str) -> None:
        super().__init__(f"{cause.meaning}: {detail}")
        self.cause = cause
        self.detail = detail


@dataclass(frozen=True)
class Limits:
    """The caps on one upload. The defaults fit a student's bot with its sources and a small model."""

    upload_bytes: int = 32 * 2**20
    total_bytes: int = 64 * 2**20
    file_bytes: int = 16 * 2**20
    files: int = 2000
    depth: int = 12
    name_bytes: int = 255
    ratio: int = 100
    """Unpacked bytes per upload byte at most, once the unpacked size passes `ratio_floor`."""
    ratio_floor: int = 2**20


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class Part:
    """One uploaded file: the name the client gave (it may hold folders, as a browser's folder pick does)."""

    name: str
    stream: BinaryIO


def unpack_upload(parts: Sequence[Part], destination: Path, limits: Limits = DEFAULT_LIMITS) -> Path:
    """Unpack `parts` into `destination` (made here; it must not exist): one zip or tar.gz part is unpacked,
    anything else is taken as plain files. Returns `destination`; UploadRefused (and nothing left) otherwise."""
    destination.mkdir(mode=0o755)
    try:
        if len(parts) == 1 and _archive_kind(parts[0].stream) is not None:
            _unpack_archive(parts[0].stream, destination, limits)
        else:
            _write_files(parts, destination, limits)
    except BaseException:
        shutil.rmtree(destination, ignore_errors=True)
        raise
    return destination


def submission_root(folder: Path) -> Path:
    """The submission in an unpacked `folder`: the folder itself, or its one subfolder when that is all it holds
    (an archive of a folder). UploadRefused(NOT_A_SUBMISSION) when it is none by the league's rules."""
    entries = list(folder.iterdir())
    if not entries:
        raise UploadRefused(Refusal.EMPTY, "the upload holds no file")
    root = entries[0] if len(entries) == 1 and entries[0].is_dir() else folder
    submission = load_submission(root)
    if submission.problem is not None:
        raise UploadRefused(Refusal.NOT_A_SUBMISSION, submission.problem)
    if submission.command is None and submission.build is None:
        raise UploadRefused(Refusal.NOT_A_SUBMISSION, folder_problem(root).message)
    return root


class _Archive(enum.Enum):
    ZIP = b"PK\x03\x04"
    GZIP = b"\x1f\x8b"


def _archive_kind(stream: BinaryIO) -> _Archive | None:
    start = stream.read(4)
    stream.seek(0)
    return next((kind for kind in _Archive if start.startswith(kind.value)), None)


def _upload_size(stream: BinaryIO, limits: Limits) -> int:
    size = stream.seek(0, io.SEEK_END)
    stream.seek(0)
    if size > limits.upload_bytes:
        raise UploadRefused(Refusal.UPLOAD_TOO_LARGE, f"{size} bytes (the cap is {limits.upload_bytes})")
    return size


def _unpack_archive(stream: BinaryIO, destination: Path, limits: Limits) -> None:
    size = _upload_size(stream, limits)
    writer = _Writer(destination, limits, size)
    if _archive_kind(stream) is _Archive.ZIP:
        _unpack_zip(stream, writer)
    else:
        _unpack_tar(stream, writer)
    writer.finish()


def _write_files(parts: Sequence[Part], destination: Path, limits: Limits) -> None:
    total = sum(_upload_size(part.stream, limits) for part in parts)
    if total > limits.upload_bytes:
        raise UploadRefused(Refusal.UPLOAD_TOO_LARGE, f"{total} bytes (the cap is {limits.upload_bytes})")
    writer = _Writer(destination, limits, total)
    for part in parts:
        writer.file(part.name, _chunks(part.stream), executable=False)
    writer.finish()


def _chunks(stream: BinaryIO) -> Iterator[bytes]:
    while chunk := stream.read(CHUNK):
        yield chunk


def _central_entries(stream: BinaryIO) -> int:
    """How many central-directory headers the zip's central directory holds at most (their signatures counted in
    its bytes), read before zipfile builds an object for each: 300,000 empty entries in a 28 MB zip cost zipfile
    180 MB and a second and a half before the cap on files could refuse them. 0 when there is no end record (zipfile
    then refuses the upload itself)."""
    end = zipfile._EndRecData(stream)  # type: ignore[attr-defined]  # the stdlib's own reader of the end record
    stream.seek(0)
    if end is None:
        return 0
    location, size = end[zipfile._ECD_LOCATION], end[zipfile._ECD_SIZE]  # type: ignore[attr-defined]
    zip64 = zipfile.sizeEndCentDir64 + zipfile.sizeEndCentDir64Locator  # type: ignore[attr-defined]
    start = max(0, location - size - zip64)
    stream.seek(start)
    count = stream.read(location - start).count(CENTRAL_HEADER)
    stream.seek(0)
    return count


def _unpack_zip(stream: BinaryIO, writer: _Writer) -> None:
    try:
        writer.count(_central_entries(stream))
        archive = zipfile.ZipFile(stream)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as error:
        raise UploadRefused(Refusal.NOT_AN_ARCHIVE, f"not a readable zip ({error})") from None
    with archive:
        entries = archive.infolist()
        writer.count(len(entries))
        for info in entries:
            writer.declare(info.filename, info.file_size)
        for info in entries:
            mode = info.external_attr >> 16
            if info.is_dir():
                writer.folder(info.filename)
            elif stat.S_IFMT(mode) not in (0, stat.S_IFREG):
                raise _type_refusal(info.filename, mode)
            else:
                writer.file(info.filename, _zip_chunks(archive, info), executable=bool(mode & 0o100))


def _zip_chunks(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> Iterator[bytes]:
    try:
        with archive.open(info) as handle:
            yield from _chunks(handle)  # type: ignore[arg-type]
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as error:
        # zipfile raises NotImplementedError for a compression method it lacks: the upload's fault, refused.
        raise UploadRefused(Refusal.SIZE_MISMATCH, f"{info.filename!r} ({error})") from None


def _type_refusal(name: str, mode: int) -> UploadRefused:
    if stat.S_ISLNK(mode):
        return UploadRefused(Refusal.LINK, f"{name!r} is a symbolic link")
    return UploadRefused(Refusal.SPECIAL_FILE, f"{name!r} is not a regular file or folder")


def _unpack_tar(stream: BinaryIO, writer: _Writer) -> None:
    counted = _CountingReader(gzip.GzipFile(fileobj=stream, mode="rb"), writer)
    try:
        with tarfile.open(fileobj=counted, mode="r|") as archive:  # type: ignore[call-overload]
            for member in archive:
                _tar_member(archive, member, writer)
    except (tarfile.TarError, OSError, EOFError, zlib.error) as error:
        raise UploadRefused(Refusal.NOT_AN_ARCHIVE, f"not a readable tar.gz ({error})") from None
    except RecursionError:
        # tarfile reads a chain of GNU long-name or pax headers by recursion, one call per header
        raise UploadRefused(Refusal.NOT_AN_ARCHIVE, "not a readable tar.gz (a chain of too many headers)") from None


def _tar_member(archive: tarfile.TarFile, member: tarfile.TarInfo, writer: _Writer) -> None:
    writer.count(writer.entries + 1)
    if member.issym() or member.islnk():
        kind = "symbolic" if member.issym() else "hard"
        raise UploadRefused(Refusal.LINK, f"{member.name!r} is a {kind} link to {member.linkname!r}")
    if member.isdir():
        writer.folder(member.name)
    elif not member.isreg():
        raise UploadRefused(Refusal.SPECIAL_FILE, f"{member.name!r} is not a regular file or folder")
    else:
        writer.declare(member.name, member.size)
        handle = archive.extractfile(member)
        assert handle is not None  # a regular member always has its content
        writer.file(member.name, _chunks(handle), executable=bool(member.mode & 0o100))  # type: ignore[arg-type]


class _CountingReader(io.RawIOBase):
    """A decompressed stream that refuses once it yields more than the caps allow (a gzip bomb), counting
    tar's headers and padding (a 512-byte block per entry, and the end blocks) as allowed overhead."""

    def __init__(self, inner: io.BufferedIOBase, writer: _Writer) -> None:
        self.inner = inner
        self.writer = writer
        self.read_bytes = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self.inner.read(len(buffer))
        self.read_bytes += len(data)
        limits = self.writer.limits
        allowed = limits.total_bytes + (limits.files + 2) * 2 * tarfile.BLOCKSIZE + tarfile.RECORDSIZE
        if self.read_bytes > allowed:
            raise UploadRefused(Refusal.TOTAL_TOO_LARGE, f"the archive unpacks past {limits.total_bytes} bytes")
        self.writer.check_ratio(self.read_bytes)
        buffer[: len(data)] = data
        return len(data)


class _Writer:
    """Writes checked entries under `root`, counting what it writes against the caps."""

    def __init__(self, root: Path, limits: Limits, upload_size: int) -> None:
        self.root = root
        self.limits = limits
        self.upload_size = max(upload_size, 1)
        self.entries = 0
        self.written = 0
        self.declared = 0
        self.paths: dict[PurePosixPath, bool] = {}
        """Every path made so far: True for a folder (made or implied by a file under it), False for a file."""

    def count(self, entries: int) -> None:
        self.entries = entries
        if entries > self.limits.files:
            raise UploadRefused(Refusal.TOO_MANY_FILES, f"{entries} or more entries (the cap is {self.limits.files})")

    def declare(self, name: str, size: int) -> None:
        if size > self.limits.file_bytes:
            raise UploadRefused(
                Refusal.FILE_TOO_LARGE, f"{name!r} declares {size} bytes (the cap is {self.limits.file_bytes})"
            )
        self.declared += size
        if self.declared > self.limits.total_bytes:
            raise UploadRefused(
                Refusal.TOTAL_TOO_LARGE,
                f"its files declare {self.declared} bytes or more (the cap is {self.limits.total_bytes})",
            )
        self.check_ratio(self.declared)

    def check_ratio(self, unpacked: int) -> None:
        if unpacked > self.limits.ratio_floor and unpacked > self.limits.ratio * self.upload_size:
            raise UploadRefused(
                Refusal.COMPRESSION_RATIO,
                f"{self.upload_size} bytes unpack to {unpacked} or more "
                f"(at most {self.limits.ratio} times as much is allowed)",
            )

    def folder(self, name: str) -> None:
        path = self._claim(name, folder=True)
        if path is not None:
            (self.root / path).mkdir(mode=0o755, parents=True, exist_ok=True)

    def file(self, name: str, chunks: Iterable[bytes], executable: bool) -> None:
        path = self._claim(name, folder=False)
        if path is None:
            raise UploadRefused(Refusal.BAD_NAME, f"{name!r} names no file")
        target = self.root / path
        target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        size = 0
        with os.fdopen(os.open(target, flags, 0o755 if executable else 0o644), "wb") as handle:
            for chunk in chunks:
                size += len(chunk)
                self.written += len(chunk)
                self._check_written(name, size)
                handle.write(chunk)

    def _check_written(self, name: str, size: int) -> None:
        if size > self.limits.file_bytes:
            raise UploadRefused(Refusal.FILE_TOO_LARGE, f"{name!r} is larger than {self.limits.file_bytes} bytes")
        if self.written > self.limits.total_bytes:
            raise UploadRefused(Refusal.TOTAL_TOO_LARGE, f"its files pass {self.limits.total_bytes} bytes")
        self.check_ratio(self.written)

    def finish(self) -> None:
        if not any(not is_folder for is_folder in self.paths.values()):
            raise UploadRefused(Refusal.EMPTY, "the upload holds no file")

    def _claim(self, name: str, folder: bool) -> PurePosixPath | None:
        """The checked relative path for `name` (None for the root itself), recorded so no other entry takes it."""
        path = checked_path(name, self.limits)
        if path is None:
            return None
        for parent in reversed(path.parents[:-1]):
            if self.paths.setdefault(parent, True) is False:
                raise UploadRefused(Refusal.DUPLICATE, f"{name!r} is under {str(parent)!r}, which is a file")
        known = self.paths.get(path)
        if known is not None and not (known and folder):
            raise UploadRefused(Refusal.DUPLICATE, f"{name!r} appears twice")
        self.paths[path] = folder
        if len(self.paths) > self.limits.files:
            raise UploadRefused(Refusal.TOO_MANY_FILES, f"more than {self.limits.files} files and folders")
        return path


def checked_path(name: str, limits: Limits = DEFAULT_LIMITS) -> PurePosixPath | None:
    """`name` as a path relative to the upload's folder (None: the folder itself), or UploadRefused saying why it
    cannot be one. Backslashes count as separators, as Windows zip tools write them."""
    if not name or any(_bad_character(character) for character in name):
        raise UploadRefused(Refusal.BAD_NAME, f"{name!r} is empty or has a NUL, control or invisible character")
    unified = name.replace("\\", "/")
    if unified.startswith("/") or (len(unified) > 1 and unified[1] == ":"):
        raise UploadRefused(Refusal.ABSOLUTE_PATH, f"{name!r}")
    parts = [part for part in unified.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise UploadRefused(Refusal.TRAVERSAL, f"{name!r}")
    if len(parts) > limits.depth:
        raise UploadRefused(Refusal.TOO_DEEP, f"{name!r} is {len(parts)} deep (the cap is {limits.depth})")
    if any(len(part.encode()) > limits.name_bytes for part in parts):
        raise UploadRefused(Refusal.BAD_NAME, f"{name!r} has a name longer than {limits.name_bytes} bytes")
    return PurePosixPath(*parts) if parts else None


def _bad_character(character: str) -> bool:
    """NUL, control, format (invisible, bidirectional), surrogate and unassigned characters."""
    return unicodedata.category(character)[0] == "C"

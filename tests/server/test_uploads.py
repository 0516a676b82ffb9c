"""Hostile uploads are refused with their cause, and nothing of them is left; honest ones unpack whole.

Every archive is made here, in the test, by the standard library (a zip's or tar's headers set by hand where an
honest tool would not write them)."""

from __future__ import annotations

import io
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest
from served import zip_of

from tournaments.server.uploads import (
    DEFAULT_LIMITS,
    Limits,
    Part,
    Refusal,
    UploadRefused,
    submission_root,
    unpack_upload,
)

BOT = b"from bots.python.random_bot import main\nmain()\n"


def tar_of(members: list[tuple[tarfile.TarInfo, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for info, content in members:
            info.size = len(content) if info.isreg() else 0
            archive.addfile(info, io.BytesIO(content) if info.isreg() else None)
    return buffer.getvalue()


def member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "", mode: int = 0o644) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    info.mode = mode
    return info


def unpack(tmp_path: Path, data: bytes, limits: Limits = DEFAULT_LIMITS, name: str = "upload") -> Path:
    return unpack_upload([Part(name, io.BytesIO(data))], tmp_path / "out", limits)


def refused(tmp_path: Path, data: bytes, limits: Limits = DEFAULT_LIMITS) -> UploadRefused:
    with pytest.raises(UploadRefused) as caught:
        unpack(tmp_path, data, limits)
    assert not (tmp_path / "out").exists(), "a refused upload leaves nothing behind"
    return caught.value


def test_an_honest_zip_unpacks_with_its_folders_and_executable_bit(tmp_path: Path) -> None:
    data = zip_of(
        {"mybot/bot.py": BOT, "mybot/lib/util.py": b"X = 1\n", "mybot/run": b"#!/bin/sh\n"},
        {"mybot/run": stat.S_IFREG | 0o755, "mybot/bot.py": stat.S_IFREG | 0o644},
    )
    folder = unpack(tmp_path, data)
    assert (folder / "mybot" / "lib" / "util.py").read_bytes() == b"X = 1\n"
    assert (folder / "mybot" / "run").stat().st_mode & 0o100
    assert not (folder / "mybot" / "bot.py").stat().st_mode & 0o100
    assert submission_root(folder) == folder / "mybot"


def test_an_honest_tar_gz_unpacks(tmp_path: Path) -> None:
    data = tar_of(
        [(member("src", tarfile.DIRTYPE, mode=0o755), b""), (member("bot.py"), BOT), (member("src/a.py"), b"A = 2\n")]
    )
    folder = unpack(tmp_path, data)
    assert (folder / "bot.py").read_bytes() == BOT
    assert (folder / "src" / "a.py").read_bytes() == b"A = 2\n"
    assert submission_root(folder) == folder


def test_plain_files_unpack_with_the_folders_their_names_give(tmp_path: Path) -> None:
    parts = [Part("bot.py", io.BytesIO(BOT)), Part("lib/helper.py", io.BytesIO(b"H = 3\n"))]
    folder = unpack_upload(parts, tmp_path / "out")
    assert (folder / "lib" / "helper.py").read_bytes() == b"H = 3\n"
    assert submission_root(folder) == folder


def test_a_zip_bomb_is_refused_by_its_ratio_before_it_fills_the_disk(tmp_path: Path) -> None:
    data = zip_of({"bot.py": BOT, "zeros.bin": bytes(15 * 2**20)})
    assert len(data) < 50_000
    error = refused(tmp_path, data)
    assert error.cause is Refusal.COMPRESSION_RATIO


def test_a_zip_that_lies_about_its_size_is_refused_as_it_is_read(tmp_path: Path) -> None:
    data = bytearray(zip_of({"bot.py": BOT, "big.bin": bytes(600_000)}))
    honest = (600_000).to_bytes(4, "little")
    tiny = (10).to_bytes(4, "little")
    assert data.count(honest) == 2  # the local header and the central directory's entry
    data = data.replace(honest, tiny)
    error = refused(tmp_path, bytes(data), Limits(file_bytes=1000))
    assert error.cause is Refusal.SIZE_MISMATCH
    assert "big.bin" in str(error)


def test_a_gzip_bomb_in_a_tar_is_refused_as_it_is_read(tmp_path: Path) -> None:
    data = tar_of([(member("bot.py"), BOT), (member("zeros.bin"), bytes(12 * 2**20))])
    error = refused(tmp_path, data)
    assert error.cause is Refusal.COMPRESSION_RATIO


@pytest.mark.parametrize("name", ["../evil.py", "a/../../evil.py", "..\\evil.py", "a/b/../../../x"])
def test_traversal_is_refused_in_a_zip(tmp_path: Path, name: str) -> None:
    error = refused(tmp_path, zip_of({"bot.py": BOT, name: b"x"}))
    assert error.cause is Refusal.TRAVERSAL
    assert not (tmp_path / "evil.py").exists()


def test_traversal_is_refused_in_a_tar(tmp_path: Path) -> None:
    error = refused(tmp_path, tar_of([(member("bot.py"), BOT), (member("../../evil.py"), b"x")]))
    assert error.cause is Refusal.TRAVERSAL
    assert not (tmp_path / "evil.py").exists()


@pytest.mark.parametrize("name", ["/etc/cron.d/evil", "C:/evil.py", "\\\\server\\share\\x"])
def test_absolute_paths_are_refused(tmp_path: Path, name: str) -> None:
    assert refused(tmp_path, zip_of({"bot.py": BOT, name: b"x"})).cause is Refusal.ABSOLUTE_PATH


def test_a_symlink_to_etc_is_refused_in_a_tar(tmp_path: Path) -> None:
    data = tar_of([(member("bot.py"), BOT), (member("passwd", tarfile.SYMTYPE, "/etc/passwd"), b"")])
    error = refused(tmp_path, data)
    assert error.cause is Refusal.LINK
    assert "/etc/passwd" in str(error)


def test_a_symlink_to_etc_is_refused_in_a_zip(tmp_path: Path) -> None:
    data = zip_of({"bot.py": BOT, "etc": b"/etc"}, {"etc": stat.S_IFLNK | 0o777})
    assert refused(tmp_path, data).cause is Refusal.LINK


def test_a_hard_link_is_refused(tmp_path: Path) -> None:
    data = tar_of([(member("bot.py"), BOT), (member("shadow", tarfile.LNKTYPE, "/etc/shadow"), b"")])
    assert refused(tmp_path, data).cause is Refusal.LINK


@pytest.mark.parametrize("kind", [tarfile.CHRTYPE, tarfile.BLKTYPE, tarfile.FIFOTYPE])
def test_devices_and_fifos_are_refused(tmp_path: Path, kind: bytes) -> None:
    data = tar_of([(member("bot.py"), BOT), (member("dev", kind), b"")])
    assert refused(tmp_path, data).cause is Refusal.SPECIAL_FILE


def test_a_fifo_in_a_zip_is_refused(tmp_path: Path) -> None:
    data = zip_of({"bot.py": BOT, "pipe": b""}, {"pipe": stat.S_IFIFO | 0o644})
    assert refused(tmp_path, data).cause is Refusal.SPECIAL_FILE


@pytest.mark.parametrize("name", ["a\x00b.py", "bell\x07.py", "new\nline.py", "rtl\u202etxt.py", "del\x7f"])
def test_names_with_nul_control_or_invisible_characters_are_refused(tmp_path: Path, name: str) -> None:
    if "\x00" in name:  # tar cannot carry a NUL in a name; a browser's file name can
        error = refused_files(tmp_path, [("bot.py", BOT), (name, b"x")])
    else:
        error = refused(tmp_path, tar_of([(member("bot.py"), BOT), (member(name), b"x")]))
    assert error.cause is Refusal.BAD_NAME


def refused_files(tmp_path: Path, files: list[tuple[str, bytes]], limits: Limits = DEFAULT_LIMITS) -> UploadRefused:
    with pytest.raises(UploadRefused) as caught:
        unpack_upload([Part(name, io.BytesIO(content)) for name, content in files], tmp_path / "out", limits)
    assert not (tmp_path / "out").exists()
    return caught.value


def test_duplicate_names_are_refused(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive, pytest.warns(UserWarning, match="Duplicate name"):
        archive.writestr("bot.py", BOT)
        archive.writestr("bot.py", b"import os\n")
    assert refused(tmp_path, buffer.getvalue()).cause is Refusal.DUPLICATE


def test_a_file_and_a_folder_of_one_name_are_refused(tmp_path: Path) -> None:
    assert refused_files(tmp_path, [("lib", b"x"), ("lib/a.py", b"y")]).cause is Refusal.DUPLICATE
    assert refused_files(tmp_path, [("bot.py", b"x"), ("./bot.py", b"y")]).cause is Refusal.DUPLICATE


def test_a_hundred_thousand_files_are_refused_before_any_is_written(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for index in range(100_000):
            archive.writestr(f"f{index}", b"")
    error = refused(tmp_path, buffer.getvalue(), Limits(upload_bytes=64 * 2**20))
    assert error.cause is Refusal.TOO_MANY_FILES
    assert "100000" in str(error)


def test_many_files_in_a_tar_stop_at_the_cap(tmp_path: Path) -> None:
    data = tar_of([(member(f"f{index}"), b"") for index in range(30)])
    assert refused(tmp_path, data, Limits(files=20)).cause is Refusal.TOO_MANY_FILES


def test_the_upload_size_cap(tmp_path: Path) -> None:
    data = zip_of({"bot.py": BOT})
    assert refused(tmp_path, data, Limits(upload_bytes=len(data) - 1)).cause is Refusal.UPLOAD_TOO_LARGE
    assert unpack(tmp_path, data, Limits(upload_bytes=len(data))).is_dir()


def test_the_upload_size_cap_on_plain_files(tmp_path: Path) -> None:
    files = [("bot.py", BOT), ("b", bytes(100))]
    assert refused_files(tmp_path, files, Limits(upload_bytes=len(BOT) + 99)).cause is Refusal.UPLOAD_TOO_LARGE


def test_the_per_file_cap_counts_declared_and_actual_bytes(tmp_path: Path) -> None:
    data = zip_of({"bot.py": BOT, "data.bin": bytes(1001)})
    assert refused(tmp_path, data, Limits(file_bytes=1000)).cause is Refusal.FILE_TOO_LARGE
    assert (
        refused_files(tmp_path, [("bot.py", BOT), ("d", bytes(1001))], Limits(file_bytes=1000)).cause
        is Refusal.FILE_TOO_LARGE
    )
    assert unpack(tmp_path, data, Limits(file_bytes=1001)).is_dir()


def test_the_total_cap(tmp_path: Path) -> None:
    entries = {"bot.py": BOT, "a": bytes(600), "b": bytes(600)}
    limits = Limits(total_bytes=len(BOT) + 1199)
    assert refused(tmp_path, zip_of(entries), limits).cause is Refusal.TOTAL_TOO_LARGE
    tarred = tar_of([(member(name), content) for name, content in entries.items()])
    assert refused(tmp_path, tarred, limits).cause is Refusal.TOTAL_TOO_LARGE
    assert refused_files(tmp_path, list(entries.items()), limits).cause is Refusal.TOTAL_TOO_LARGE


def test_the_depth_cap(tmp_path: Path) -> None:
    deep = "/".join(["d"] * 12) + "/x.py"
    assert refused(tmp_path, zip_of({"bot.py": BOT, deep: b""}), Limits(depth=12)).cause is Refusal.TOO_DEEP
    assert unpack(tmp_path, zip_of({"bot.py": BOT, deep: b""}), Limits(depth=13)).is_dir()


def test_the_name_length_cap(tmp_path: Path) -> None:
    assert refused_files(tmp_path, [("n" * 256, b"")]).cause is Refusal.BAD_NAME


def test_an_archive_that_cannot_be_read(tmp_path: Path) -> None:
    assert refused(tmp_path, b"PK\x03\x04 not really a zip").cause is Refusal.NOT_AN_ARCHIVE
    assert refused(tmp_path, b"\x1f\x8b not really gzip").cause is Refusal.NOT_AN_ARCHIVE


def test_an_empty_upload(tmp_path: Path) -> None:
    assert refused(tmp_path, tar_of([(member("only", tarfile.DIRTYPE), b"")])).cause is Refusal.EMPTY


def test_a_folder_without_a_bot_is_not_a_submission(tmp_path: Path) -> None:
    folder = unpack(tmp_path, zip_of({"notes.txt": b"hello"}))
    with pytest.raises(UploadRefused) as caught:
        submission_root(folder)
    assert caught.value.cause is Refusal.NOT_A_SUBMISSION
    assert str(tmp_path) not in str(caught.value), "a refusal never shows the server's folders"


def test_a_bot_toml_that_is_not_valid_is_not_a_submission(tmp_path: Path) -> None:
    folder = unpack(tmp_path, zip_of({"bot.py": BOT, "bot.toml": b"colour = 'blue'\n"}))
    with pytest.raises(UploadRefused) as caught:
        submission_root(folder)
    assert caught.value.cause is Refusal.NOT_A_SUBMISSION
    assert "colour" in str(caught.value)


def test_a_bot_toml_with_a_build_is_a_submission(tmp_path: Path) -> None:
    folder = unpack(tmp_path, zip_of({"bot.toml": b'build = "make"\ncommand = "./bot"\n', "Makefile": b"all:\n"}))
    assert submission_root(folder) == folder


def test_every_refusal_has_a_meaning() -> None:
    assert all(cause.meaning for cause in Refusal)

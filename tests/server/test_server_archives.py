"""Archives through the submission API, as a student's browser or `referee submit` sends them: an honest zip and
tar.gz become versions; the hostile archives of the issue's list (a zip bomb, path traversal, a symlink to /etc,
100,000 files) are refused with 422, their cause and a reason a student can act on, and make no version."""

from __future__ import annotations

import io
import stat
import tarfile
import zipfile

import pytest
from served import Served, zip_of

BOT = b"from bots.python.random_bot import main\nmain()\n"


def tar_of(entries: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, content in entries.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            archive.addfile(info, io.BytesIO(content))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            archive.addfile(info)
    return buffer.getvalue()


def many_files(count: int) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("bot.py", BOT)
        for index in range(count):
            archive.writestr(f"f{index}", b"")
    return buffer.getvalue()


def post(served: Served, name: str, data: bytes) -> tuple[int, dict[str, object]]:
    answer = served.client.post(
        "/api/submissions",
        files={"files": (name, data)},
        headers={"Authorization": f"Bearer {served.students['ann']}"},
    )
    return answer.status_code, answer.json()


def versions(served: Served) -> list[object]:
    answer = served.client.get(
        "/api/students/ann/versions", headers={"Authorization": f"Bearer {served.students['ann']}"}
    )
    return list(answer.json())


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("bot.zip", zip_of({"mybot/bot.py": BOT})),
        ("bot.tar.gz", tar_of({"mybot/bot.py": BOT})),
    ],
)
def test_an_honest_zip_or_tar_gz_becomes_a_version(served: Served, name: str, data: bytes) -> None:
    status, body = post(served, name, data)
    assert status == 201, body
    assert body["status"] == "checking"
    assert [version["id"] for version in versions(served)] == [body["id"]]  # type: ignore[index]


@pytest.mark.parametrize(
    ("data", "cause", "named"),
    [
        (zip_of({"bot.py": BOT, "zeros.bin": bytes(15 * 2**20)}), "compression-ratio", "a zip bomb"),
        (zip_of({"bot.py": BOT, "../../outside.py": b"x"}), "traversal", "outside.py"),
        (tar_of({"bot.py": BOT}, {"passwd": "/etc/passwd"}), "link", "/etc/passwd"),
        (zip_of({"bot.py": BOT, "etc": b"/etc"}, {"etc": stat.S_IFLNK | 0o777}), "link", "etc"),
        (many_files(100_000), "too-many-files", "the cap is 2000"),
    ],
    ids=["zip-bomb", "traversal", "symlink-tar", "symlink-zip", "100k-files"],
)
def test_a_hostile_archive_is_refused_with_its_reason_and_makes_no_version(
    served: Served, data: bytes, cause: str, named: str
) -> None:
    status, body = post(served, "upload", data)
    assert status == 422, body
    assert body["error"] == "upload-refused" and body["cause"] == cause
    assert named in str(body["message"])
    assert versions(served) == []

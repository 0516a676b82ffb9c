"""Red team (issue 31): upload edges not in test_uploads.py / test_server_archives.py."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from served import Served

from tournaments.server import uploads


def many_empty_entries(count: int) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for index in range(count):
            archive.writestr(f"{index:x}", b"")
    return buffer.getvalue()


def test_a_zip_of_too_many_entries_is_refused_before_zipfile_reads_its_directory(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    """zipfile makes an object per central-directory entry before the cap on files could count them (300,000
    empty entries in 28 MB: 180 MB and 1.4 s per upload). Now the entries are counted in the directory's bytes
    first: zipfile is never asked to open such a zip."""
    data = many_empty_entries(uploads.DEFAULT_LIMITS.files * 10)

    def opened(*_: object, **__: object) -> None:
        raise AssertionError("zipfile.ZipFile was asked to read the whole directory")

    monkeypatch.setattr(uploads.zipfile, "ZipFile", opened)
    answer = served.client.post(
        "/api/submissions",
        files={"files": ("bot.zip", data)},
        headers={"Authorization": f"Bearer {served.students['ann']}"},
    )
    assert answer.status_code == 422, answer.text
    assert answer.json()["cause"] == "too-many-files"


def test_a_zip_at_the_cap_still_unpacks_even_with_the_signature_in_its_files(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("bot.py", b"MOVE = 0\n")
        for index in range(uploads.DEFAULT_LIMITS.files - 2):  # with bot.py and the folder data/: the cap
            archive.writestr(f"data/{index}.txt", b"PK\x01\x02 is only content here\n")
    buffer.seek(0)
    folder = uploads.unpack_upload([uploads.Part("bot.zip", buffer)], tmp_path / "u")
    assert len(list((folder / "data").iterdir())) == uploads.DEFAULT_LIMITS.files - 2

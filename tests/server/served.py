"""What the `served` fixture gives: a real ladder, the app over it in a test client, and the ladder's tokens; and
the small requests and archives the server's tests share."""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass

from fastapi.testclient import TestClient

from tournaments.ladder import Ladder


@dataclass
class Served:
    ladder: Ladder
    client: TestClient
    admin: str
    worker: str
    students: dict[str, str]


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def submit(served: Served, student: str, move: int) -> str:
    """Hand in a one-file bot for `student` (its source names the student and `move`); the version's id."""
    source = f"# the bot of {student}\nMOVE = {move}\n".encode()
    answer = served.client.post(
        "/api/submissions", files={"files": ("bot.py", source)}, headers=bearer(served.students[student])
    )
    assert answer.status_code == 201, answer.text
    return str(answer.json()["id"])


def zip_of(entries: dict[str, bytes], modes: dict[str, int] | None = None) -> bytes:
    """A zip archive of `entries` (name: content), with the Unix modes of `modes` where given."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in entries.items():
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            if modes and name in modes:
                info.external_attr = modes[name] << 16
            archive.writestr(info, content)
    return buffer.getvalue()

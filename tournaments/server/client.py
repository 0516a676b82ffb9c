"""A client of a ladder server's API, on the standard library alone (urllib): what `referee submit` and
`referee worker` call, so neither needs the web stack on a student's or a lab machine.

The server's refusals come back as `ServerRefused` (a BadInput carrying the status, the API's `error` word and
its message); a server that cannot be reached (refused connection, a timeout, a 502 from a proxy while it
restarts) as `ServerUnreachable`, which a worker waits out and a student is told about.
"""

from __future__ import annotations

import io
import json
import secrets
import tarfile
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protocol.errors import BadInput, EnvironmentProblem
from tournaments.league.submissions import folder_files

UNREACHABLE_STATUSES = frozenset({502, 503, 504})
TIMEOUT = 60.0


class ServerRefused(BadInput):
    """The server answered with a refusal (a 4xx or a 500): `status`, `error` (the API's word), the message."""

    def __init__(self, status: int, error: str, message: str, body: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.error = error
        self.body = dict(body or {})


class ServerUnreachable(EnvironmentProblem):
    """No answer from the server (down, restarting, or the network)."""


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes
    content_type: str

    def json(self) -> Any:
        return json.loads(self.body)


class LadderClient:
    def __init__(self, server: str, token: str | None, timeout: float = TIMEOUT) -> None:
        self.server = server.rstrip("/")
        self.token = token
        self.timeout = timeout

    def request(self, method: str, path: str, body: bytes | None = None, content_type: str | None = None) -> Answer:
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if content_type:
            headers["Content-Type"] = content_type
        request = urllib.request.Request(self.server + path, data=body, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return Answer(response.status, response.read(), response.headers.get("Content-Type", ""))
        except urllib.error.HTTPError as error:
            raise _refusal(error) from None
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise ServerUnreachable(f"cannot reach {self.server}: {reason}") from None

    def post_json(self, path: str, data: Any) -> Answer:
        return self.request("POST", path, json.dumps(data).encode(), "application/json")

    def health(self) -> dict[str, Any]:
        return self.request("GET", "/api/health").json()  # type: ignore[no-any-return]

    def submit(self, folder: Path) -> dict[str, Any]:
        """Upload `folder` as one tar.gz; the version the server made of it."""
        body, content_type = multipart({"files": ("submission.tar.gz", pack_submission(folder))})
        return self.request("POST", "/api/submissions", body, content_type).json()  # type: ignore[no-any-return]

    def version(self, version_id: str) -> dict[str, Any]:
        return self.request("GET", f"/api/submissions/{version_id}").json()  # type: ignore[no-any-return]

    def claim(self, worker: str, hosts_remote: bool = False) -> dict[str, Any] | None:
        answer = self.post_json("/api/jobs/claim", {"worker": worker, "hosts_remote": hosts_remote})
        return None if answer.status == 204 else answer.json()

    def register_key(self, public_key: str) -> dict[str, Any]:
        """Register (or replace) the asker's CURVE public key; their remote seat as the server answers it."""
        body = json.dumps({"public_key": public_key}).encode()
        return self.request("PUT", "/api/key", body, "application/json").json()  # type: ignore[no-any-return]

    def remote_seat(self) -> dict[str, Any]:
        return self.request("GET", "/api/key").json()  # type: ignore[no-any-return]

    def report(self, job_id: str, result: Mapping[str, Any]) -> None:
        self.post_json(f"/api/jobs/{job_id}/result", result)

    def archive(self, digest: str) -> bytes:
        return self.request("GET", f"/api/versions/{digest}/archive").body


def _refusal(error: urllib.error.HTTPError) -> ServerRefused | ServerUnreachable:
    if error.code in UNREACHABLE_STATUSES:
        return ServerUnreachable(f"the server answered {error.code} ({error.reason})")
    raw = error.read()
    try:
        body = json.loads(raw)
    except ValueError:
        body = {}
    if not isinstance(body, dict):
        body = {}
    message = str(body.get("message") or body.get("detail") or error.reason or f"HTTP {error.code}")
    return ServerRefused(error.code, str(body.get("error", "")), message, body)


def pack_submission(folder: Path) -> bytes:
    """`folder`'s files (what a league's identity counts: no version control, caches or logs) as a tar.gz, named
    relative to it; symbolic links and special files are left out, as the server would refuse them."""
    if not folder.is_dir():
        raise BadInput(f"{folder} is not a folder")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path in folder_files(folder):
            if path.is_file() and not path.is_symlink():
                archive.add(path, arcname=path.relative_to(folder).as_posix(), recursive=False)
    return buffer.getvalue()


def multipart(files: Mapping[str, tuple[str, bytes]]) -> tuple[bytes, str]:
    """A multipart/form-data body of `files` (field -> (file name, content)) and its content type."""
    boundary = "referee-" + secrets.token_hex(16)
    chunks = []
    for field, (name, content) in files.items():
        chunks.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{field}"; filename="{name}"\r\n'
            f"Content-Type: application/octet-stream\r\n\r\n".encode()
        )
        chunks += [content, b"\r\n"]
    chunks.append(f"--{boundary}--\r\n".encode())
    return b"".join(chunks), f"multipart/form-data; boundary={boundary}"

"""What a student's client is told when the ladder says no to a good upload: over the quota, 429 with the time the
next slot opens (the body's `next_slot` and message, and Retry-After); after the deadline under the refuse policy,
409. Neither makes a version."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from served import Served

from tournaments.ladder import init_ladder, open_ladder
from tournaments.server.app import create_app
from tournaments.server.edge import Settings

BOT = (Path(__file__).resolve().parents[1] / "fixtures" / "class" / "first_move" / "bot.py").read_text()


@pytest.fixture
def strict(tmp_path: Path) -> Iterator[Served]:
    """A ladder whose students may submit once an hour."""
    created = init_ladder(tmp_path / "ladder", "scout", 3, ["heuristic"])
    path = created.folder / "ladder.toml"
    path.write_text(path.read_text().replace("quota_per_hour = 6", "quota_per_hour = 1"))
    with open_ladder(created.folder) as ladder:
        students = ladder.invite(["ann", "bob"])
        with TestClient(create_app(ladder, Settings(scratch=tmp_path)), base_url="http://127.0.0.1") as client:
            yield Served(ladder, client, created.admin_token, created.worker_token, students)


def upload(served: Served, student: str, move: int) -> tuple[int, dict[str, object], dict[str, str]]:
    source = BOT.replace("legal_actions[0]", f"legal_actions[{move} % len(legal_actions)]").encode()
    answer = served.client.post(
        "/api/submissions",
        files={"files": ("bot.py", source)},
        headers={"Authorization": f"Bearer {served.students[student]}"},
    )
    return answer.status_code, answer.json(), dict(answer.headers)


def versions(served: Served, student: str) -> list[object]:
    answer = served.client.get(
        f"/api/students/{student}/versions", headers={"Authorization": f"Bearer {served.students[student]}"}
    )
    assert answer.status_code == 200
    return list(answer.json())


def test_over_the_quota_is_429_saying_when_the_next_slot_opens(strict: Served) -> None:
    status, first, _ = upload(strict, "ann", 0)
    assert status == 201
    status, body, headers = upload(strict, "ann", 1)
    assert status == 429
    assert body["error"] == "quota"
    next_slot = datetime.fromisoformat(str(body["next_slot"]))
    assert (next_slot - datetime.fromisoformat(str(first["created"]))).total_seconds() == 3600
    assert next_slot.strftime("%H:%M:%S") in str(body["message"])
    assert 1 <= int(headers["retry-after"]) <= 3600
    assert len(versions(strict, "ann")) == 1
    assert upload(strict, "bob", 1)[0] == 201, "the quota is per student"


def test_after_the_deadline_a_late_upload_is_409_and_makes_no_version(strict: Served) -> None:
    assert upload(strict, "ann", 0)[0] == 201
    strict.ladder.deadline_snapshot()
    status, body, _ = upload(strict, "bob", 1)
    assert status == 409
    assert body["error"] == "frozen"
    assert versions(strict, "bob") == []

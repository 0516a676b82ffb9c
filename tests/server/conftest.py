"""A real ladder (tournaments.ladder: init_ladder, invite) served in-process by the real app, for the edge tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the server extra is not installed (pip install -e '.[server]')")

from fastapi.testclient import TestClient  # noqa: E402
from served import Served  # noqa: E402

from tournaments.ladder import init_ladder, open_ladder  # noqa: E402
from tournaments.server.app import create_app  # noqa: E402
from tournaments.server.edge import Settings  # noqa: E402


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    created = init_ladder(tmp_path / "ladder", "scout", 3, ["heuristic"])
    with open_ladder(created.folder) as ladder:
        students = ladder.invite(["ann", "bob"])
        app = create_app(ladder, Settings(scratch=tmp_path))
        with TestClient(app, base_url="http://127.0.0.1") as client:
            yield Served(ladder, client, created.admin_token, created.worker_token, students)

"""A real ladder (tournaments.ladder: init_ladder, invite) served in-process by the real app, for the edge tests."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the server extra is not installed (pip install -e '.[server]')")

from fastapi.testclient import TestClient  # noqa: E402
from playwright.sync_api import BrowserContext  # noqa: E402
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


sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pages"))  # browsing.py: how the suite drives chromium


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any], browser_name: str) -> dict[str, Any]:
    """Debian's chromium with the suite's flags (tests/pages/conftest.py says why), for the end-to-end tests."""
    from browsing import CHROMIUM, CHROMIUM_ARGS

    if browser_name != "chromium":
        pytest.skip(f"the end-to-end tests drive Debian's chromium, not {browser_name}")
    if not CHROMIUM.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{CHROMIUM} is not installed (.ci/run installs Debian's chromium package)")
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)")
    return {**browser_type_launch_args, "executable_path": str(CHROMIUM), "args": list(CHROMIUM_ARGS)}


@pytest.fixture
def context(context: BrowserContext) -> BrowserContext:
    from browsing import TIMEOUT_MS

    context.set_default_timeout(TIMEOUT_MS)
    return context


@pytest.fixture(scope="session")
def screenshot_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """$REFEREE_SCREENSHOT_DIR if set (CI keeps it), else a temporary folder."""
    configured = os.environ.get("REFEREE_SCREENSHOT_DIR")
    folder = Path(configured) if configured else tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def pid_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory where fixture bots record their pids (and their children's); see tests/fixtures/bots/_raw.py."""
    directory = tmp_path / "pids"
    directory.mkdir()
    monkeypatch.setenv("FIXTURE_PID_DIR", str(directory))
    return directory

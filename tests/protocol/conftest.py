"""The scripted fake referee (fake_referee.py) as a fixture, bound to a fresh ipc endpoint per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_referee import FakeReferee


@pytest.fixture
def referee(tmp_path: Path) -> Iterator[FakeReferee]:
    fake = FakeReferee(f"ipc://{tmp_path}/referee.ipc")
    yield fake
    fake.close()

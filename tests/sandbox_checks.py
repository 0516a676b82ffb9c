"""What tests of every package need to know of the sandbox here: whether it runs, and the rule that CI
(REFEREE_REQUIRE_SANDBOX set, bubblewrap installed, tests run as root) fails where elsewhere a test skips."""

from __future__ import annotations

import os

import pytest

from referee.isolation import sandbox

REQUIRE_SANDBOX = "REFEREE_REQUIRE_SANDBOX"


def require_sandbox() -> None:
    """Skip the test unless bots can run in the sandbox here; fail instead if REFEREE_REQUIRE_SANDBOX is set (a
    skip there would hide a sandbox that stopped working)."""
    problem = sandbox.probe().problem
    if problem is None:
        return
    if os.environ.get(REQUIRE_SANDBOX):
        pytest.fail(f"{REQUIRE_SANDBOX} is set but the sandbox cannot run: {problem}")
    pytest.skip(f"the sandbox cannot run here: {problem}")

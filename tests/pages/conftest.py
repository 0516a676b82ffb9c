"""Fixtures of the page tests: the replays they render, the browser (pytest-playwright's `browser`, `context`
and `page`, set up here) and the folder of the screenshots, printed at the end of the run (with the measured page
sizes and load times).

The browser is Debian's /usr/bin/chromium (installed by .ci/run), driven by Playwright; without it the browser
tests skip, except in CI (CI=true), where they fail. A test's `page` is a desktop screen (1280 x 1000) in a fresh
context (its own cookies and storage), or a phone's under `browsing.at_phone_size`; `page_log` collects its
console errors and requests. Screenshots go to $REFEREE_SCREENSHOT_DIR if set, else to a temporary folder.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from browsing import CHROMIUM, CHROMIUM_ARGS, DESKTOP, TIMEOUT_MS, PageLog
from click.testing import CliRunner
from page_figures import FIGURES
from playwright.sync_api import BrowserContext
from replays import self_play

from tournaments.cli import main
from tournaments.pages.writer import write_replay_page

SCOUT_FAULTS = {20: ("illegal_action", "cards 9..11 are not in a hand of 9 cards")}
SCAUVER_FAULTS = {
    40: ("timeout", "no reply within 1000 ms (time bank 0 ms)"),
    400: ("protocol_error", "a message of 2000000 bytes is over the limit of 1048576"),
}
SCAUVER_LONG_SEED = 16
"""Four random seats of this seed play Scauver up to the round cap (200 rounds): as long as a game gets."""


@pytest.fixture(scope="session")
def scout_replay() -> dict[str, Any]:
    """A 5-seat SCOUT game, heuristics against random bots, with one fault."""
    return self_play("scout", ["heuristic", "random", "heuristic", "random", "random"], seed=5, faults=SCOUT_FAULTS)


@pytest.fixture(scope="session")
def scauver_replay() -> dict[str, Any]:
    """A 4-seat Scauver game that runs to the round cap, with a timeout and a protocol error."""
    return self_play("scauver", ["random"] * 4, seed=SCAUVER_LONG_SEED, faults=SCAUVER_FAULTS)


@pytest.fixture(scope="session")
def pages_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pages")


@pytest.fixture(scope="session")
def scout_page(scout_replay: dict[str, Any], pages_dir: Path) -> Path:
    return write_replay_page(scout_replay, pages_dir / "scout-5.html")


@pytest.fixture(scope="session")
def scauver_page(scauver_replay: dict[str, Any], pages_dir: Path) -> Path:
    return write_replay_page(scauver_replay, pages_dir / "scauver-4.html")


@pytest.fixture(scope="session")
def played_league(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small SCOUT league played by real bot processes (a heuristic, a random and an illegal-action bot, one
    table of 3, three games) with --replay-format html: the league file, beside its store and replays/."""
    folder = tmp_path_factory.mktemp("league")
    illegal = Path(__file__).resolve().parent.parent / "fixtures" / "bots" / "illegal_action.py"
    league = folder / "demo.toml"
    league.write_text(
        'game = "scout"\nplayers = 3\nseed = 3\ndeals_per_match = 2\nreplay_dir = "replays"\n'
        "[limits]\nmove_time_ms = 2000\nstartup_time_s = 20\n"
        '[[bots]]\nname = "heuristic"\ncommand = "heuristic"\n'
        '[[bots]]\nname = "random"\ncommand = "random"\n'
        f'[[bots]]\nname = "illegal"\ncommand = "{illegal}"\n'
    )
    result = CliRunner().invoke(
        main, ["tournament", "run", str(league), "-j", "1", "--bootstrap", "0", "--replay-format", "html"]
    )
    assert result.exit_code == 0, result.output
    return league


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any], browser_name: str) -> dict[str, Any]:
    """pytest-playwright's launch options (--headed, --slowmo) with Debian's chromium and its flags."""
    if browser_name != "chromium":
        pytest.skip(f"the page tests drive Debian's chromium, not {browser_name}")
    if not CHROMIUM.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{CHROMIUM} is not installed (.ci/run installs Debian's chromium package)")
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)")
    return {**browser_type_launch_args, "executable_path": str(CHROMIUM), "args": list(CHROMIUM_ARGS)}


@pytest.fixture(scope="session")
def base_url() -> None:
    """The pages under test are files, opened by their file:// address (a test of a served page gives its
    context the server's address)."""
    return None


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict[str, Any]) -> dict[str, Any]:
    return {**browser_context_args, "viewport": DESKTOP, "device_scale_factor": 1}


@pytest.fixture
def context(context: BrowserContext) -> BrowserContext:
    context.set_default_timeout(TIMEOUT_MS)
    return context


@pytest.fixture
def page_log(context: BrowserContext) -> PageLog:
    return PageLog(context)


@pytest.fixture(scope="session")
def screenshot_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    configured = os.environ.get("REFEREE_SCREENSHOT_DIR")
    folder = Path(configured) if configured else tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    FIGURES.append(f"screenshots of the pages: {folder}")
    return folder


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if FIGURES:
        terminalreporter.section("pages")
        for line in FIGURES:
            terminalreporter.write_line(line)

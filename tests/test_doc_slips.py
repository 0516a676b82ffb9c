"""The docs and the commands say the same thing: one source for what --memory means, the league file's limit
keys in the docs' example, no help text sending people to a README section, every docs page the code names
there, the human seat counting games from 0 like everything else."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import click
from click.testing import CliRunner

from protocol import limits
from protocol.sdk import GameStart
from tournaments.cli import main
from tournaments.league import keys

ROOT = Path(__file__).resolve().parents[1]
LEAGUE_FILE_PAGE = ROOT / "docs" / "reference" / "league-file.md"
SOURCE_FOLDERS = ("referee", "tournaments", "protocol", "bots")


def _words(text: str) -> str:
    return " ".join(text.split())


def _hook() -> ModuleType:
    """docs/hooks/generated.py, the mkdocs hook that builds the reference tables (it needs no mkdocs)."""
    spec = importlib.util.spec_from_file_location("docs_hook_generated", ROOT / "docs" / "hooks" / "generated.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_memory_means_the_same_in_the_help_and_the_docs() -> None:
    help_text = CliRunner().invoke(main, ["play", "--help"], terminal_width=1000).stdout
    assert _words(limits.MEMORY_LIMIT_MEANING) in _words(help_text)
    page = _hook().expand(LEAGUE_FILE_PAGE.read_text(), "reference/league-file.md")
    assert _words(limits.MEMORY_LIMIT_MEANING) in _words(page)


def test_every_limit_key_of_a_league_file_is_in_the_docs_example() -> None:
    from tournaments.league.league_file import _LIMIT_KEYS

    block = re.search(r"^\[limits\].*?\n\n", LEAGUE_FILE_PAGE.read_text(), re.DOTALL | re.MULTILINE)
    assert block is not None
    for key in _LIMIT_KEYS:
        assert re.search(rf"^{key} = ", block.group(0), re.MULTILINE), key


def test_the_documented_defaults_are_the_code_s() -> None:
    from referee.records import Limits
    from tournaments.ratings import settling

    documented = {key.name: key.default for key in (*keys.LEAGUE_KEYS, *keys.LIMIT_KEYS)}
    defaults = Limits()
    for name in ("move_time_ms", "startup_time_s", "time_bank_ms", "memory_mb", "fault_budget"):
        assert documented[name] == str(getattr(defaults, name)), name
    assert float(documented["settle_los"]) == settling.DEFAULT_LEVEL
    assert float(documented["resolution"]) == settling.DEFAULT_RESOLUTION
    assert int(documented["min_games"]) == settling.DEFAULT_MIN_GAMES


def _help_texts(command: click.Command) -> list[str]:
    texts = [command.help or "", *(getattr(param, "help", None) or "" for param in command.params)]
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            texts += _help_texts(sub)
    return texts


def test_no_help_text_points_at_a_readme_section() -> None:
    for text in _help_texts(main):
        assert not re.search(r"README(?:[:,]|'s| \"| section)", text), text


def test_every_docs_page_the_code_names_exists() -> None:
    named = {
        (path, page)
        for folder in SOURCE_FOLDERS
        for path in (ROOT / folder).rglob("*")
        if path.suffix in (".py", ".md") and path.is_file()
        for page in re.findall(r"\bdocs/[\w/.-]+\.md", path.read_text())
    }
    assert named
    for path, page in named:
        assert (ROOT / page).is_file(), f"{path.relative_to(ROOT)} names {page}, which does not exist"


class _Screen:
    def __init__(self) -> None:
        self.shown: list[str] = []

    def show(self, lines: list[str], clear: bool = False) -> None:
        self.shown += lines


def test_the_human_seat_counts_games_from_0() -> None:
    from bots.python.human.seat import HumanSeat

    screen = _Screen()
    seat = HumanSeat(screen)  # type: ignore[arg-type]
    seat.on_game_start(GameStart("scout", seat=1, players=2, config={}, match_id="m", game_index=0))
    assert "SCOUT, game 0: you are seat 1 of 2" in screen.shown[0]
    seat.on_game_start(GameStart("scout", seat=0, players=2, config={}, match_id="m", game_index=1))
    assert "game 1: you are seat 0" in screen.shown[-1]

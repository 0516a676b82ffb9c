"""The docs and the commands say the same thing: one source for what --memory means, the league file's limit
keys in the README, the human seat counting games from 0 like everything else."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from protocol import limits
from protocol.sdk import GameStart
from tournaments.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _words(text: str) -> str:
    return " ".join(text.split())


def test_memory_means_the_same_in_the_help_and_the_readme() -> None:
    help_text = CliRunner().invoke(main, ["play", "--help"], terminal_width=1000).stdout
    assert _words(limits.MEMORY_LIMIT_MEANING) in _words(help_text)
    assert _words(limits.MEMORY_LIMIT_MEANING) in _words(README)


def test_every_limit_key_of_a_league_file_is_in_the_readme() -> None:
    from tournaments.league.league_file import _LIMIT_KEYS

    block = re.search(r"\[limits\].*?\n\n", README, re.DOTALL)
    assert block is not None
    for key in _LIMIT_KEYS:
        assert re.search(rf"^{key} = ", block.group(0), re.MULTILINE), key


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

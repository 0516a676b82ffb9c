"""The human seat: `referee play GAME human ...` played to the end in a real terminal (tmux), Ctrl-C, and the
command's refusals where no terminal is."""

from __future__ import annotations

import re
import shlex
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from tmux_screen import EXITED, TMUX, ScreenTimeout, TmuxScreen

from referee.botspec import UnknownBot, resolve_bot
from referee.isolation.process import live_processes
from tournaments.cli import main

REFEREE = str(Path(sys.executable).parent / "referee")
PROMPT = re.compile(r"your decision (\d+)\)[\s\S]*Your move, 1 to (\d+) \(Ctrl-C stops the match\):$")
GAME_OVER = re.compile(r"Game over: you ranked (\d) of 2\. Scores: .*\.")
LONGEST_GAME = 400
"""More decisions than the human seat makes in any game here (SCOUT: about 20; Scauver as started here: 60)."""

needs_tmux = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")


def _play_command(game: str, *options: str) -> str:
    one_game = ["--seed", "1", "--games", "1"]
    return shlex.join([REFEREE, "play", game, "human", "random", *one_game, "--log-dir", "logs", *options])


def _next_prompt(screen: TmuxScreen, after: int, timeout_s: float = 60.0) -> re.Match[str] | None:
    """The prompt of the next decision after decision `after`, or None once the command has exited."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        text = screen.text()
        prompt = PROMPT.search(text)
        if prompt is not None and int(prompt.group(1)) > after:
            return prompt
        if EXITED in text:
            return None
        time.sleep(0.05)
    raise ScreenTimeout(f"no decision after {after} within {timeout_s} s; the screen:\n{screen.text()}")


def _answer_every_decision(screen: TmuxScreen, first: int) -> int:
    """Choose move 1 at every decision from decision `first` on, until the command exits; returns how many."""
    decision = first - 1
    for _ in range(LONGEST_GAME):
        prompt = _next_prompt(screen, decision)
        if prompt is None:
            return decision
        decision = int(prompt.group(1))
        screen.type("1")
    raise AssertionError(f"the game went on past {LONGEST_GAME} decisions")


def _check_the_end(screen: TmuxScreen, tmp_path: Path) -> None:
    assert screen.exit_status() == 0
    text = screen.text()
    over = GAME_OVER.search(text)
    assert over is not None, text
    table_row = re.search(r"^\s*\d+\s+human\s+(\d+)\s+-?\d+\s+\d+", text, re.MULTILINE)
    assert table_row is not None, text
    assert table_row.group(1) == over.group(1), "the referee's table and the human seat disagree on the rank"
    assert "bot logs in" in text and (tmp_path / "logs" / "human.log").is_file()


@needs_tmux
def test_a_person_plays_scout_to_the_end_of_a_game(tmp_path: Path) -> None:
    with TmuxScreen(tmp_path, _play_command("scout")) as screen:
        first = screen.wait_for(PROMPT.pattern)
        text = screen.text()
        hand = re.search(r"Your hand, left to right \((\d+) cards, the number in use first\):\n.*\n(.*)", text)
        assert hand is not None, text
        assert len(re.findall(r"\b\d+/\d+\b", hand.group(2))) == int(hand.group(1))
        assert re.search(r"^> 0 \(you\)\s+11\s+0\s+3\s+0\s+unused$", text, re.MULTILINE), text
        assert "Active set: none yet" in text
        assert "1) keep the hand as dealt" in text and "2) turn the hand around: " in text
        screen.type("x")
        screen.wait_for(r"'x' is not a move: type a number from 1 to 2, then Enter\.\nYour move, 1 to 2 .*:$")
        screen.type("3")
        screen.wait_for(r"'3' is not a move: type a number from 1 to 2, then Enter\.\nYour move, 1 to 2 .*:$")
        decisions = _answer_every_decision(screen, int(first.group(1)))
        assert decisions >= 5
        _check_the_end(screen, tmp_path)


@needs_tmux
def test_a_person_plays_scauver_to_the_end_of_a_game(tmp_path: Path) -> None:
    command = _play_command("scauver", "--option", "starting_chips=6", "--option", "round_cap=5")
    with TmuxScreen(tmp_path, command) as screen:
        first = screen.wait_for(PROMPT.pattern)
        text = screen.text()
        assert re.search(r"^Your hand: ([A2-7JQK][SHDC]\(\d+\) ?){5}$", text, re.MULTILINE), text
        assert "Round 1: set up your field" in text and "LLL LLR LRL LRR RLL RLR RRL RRR" in text
        assert len(re.findall(r"^  ([A2-7JQK][SHDC] ){3}(\s+\d+){8}$", text, re.MULTILINE)) == 10, text
        _answer_every_decision(screen, int(first.group(1)))
        _check_the_end(screen, tmp_path)


@needs_tmux
def test_ctrl_c_stops_the_match_and_leaves_no_process(tmp_path: Path) -> None:
    with TmuxScreen(tmp_path, _play_command("scout")) as screen:
        screen.wait_for(PROMPT.pattern)
        tty = screen.tty()
        screen.press("C-c")
        assert screen.exit_status() == 130
        assert "Stopped after 0 of 1 game(s); the bots are stopped." in screen.text()
        assert not [process.pid for process in live_processes() if f"--tty {tty} " in _command_line(process.pid)]


def _command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def test_the_human_seat_needs_a_terminal() -> None:
    result = CliRunner().invoke(main, ["play", "scout", "human", "random"])
    assert result.exit_code == 2
    assert "the human seat is played at a terminal: run referee play in one" in result.output


def test_one_human_seat_per_match() -> None:
    result = CliRunner().invoke(main, ["play", "scout", "human", "human", "random"])
    assert result.exit_code == 2
    assert "one human seat per match: 2 would share one terminal" in result.output


def test_a_human_seat_is_untimed_and_only_where_there_is_a_terminal() -> None:
    spec = resolve_bot("human", "scout", terminal="/dev/pts/7")
    assert spec.timed is False and spec.command[-2:] == ("--tty", "/dev/pts/7")
    with pytest.raises(UnknownBot, match="a seat for a person at a terminal"):
        resolve_bot("human", "scout")

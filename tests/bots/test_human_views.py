"""The human seat's screens: every decision of random games shown, every move told apart and described truly,
and the terminal's numbered choice (on a pseudo-terminal)."""

from __future__ import annotations

import os
import random
import re
import select
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from bots.python.human.scauver_view import ScauverView
from bots.python.human.scout_view import ScoutView, card
from bots.python.human.seat import VIEWS
from bots.python.human.terminal import LeftTheGame, Terminal, TerminalUnavailable
from bots.python.human.views import columns
from referee.games import GameState, load_game


def decisions(game: str, players: int, seed: int) -> Iterator[tuple[GameState, int]]:
    """Every decision of a random game: the state (before the decision) and the seat that makes it."""
    state = load_game(game).new_game(players=players, seed=seed)
    chooser = random.Random(seed)
    while not state.is_over():
        seat = state.to_move()[0]
        yield state, seat
        state.apply(seat, chooser.choice(state.legal_actions(seat)))


@pytest.mark.parametrize("game, players", [("scout", 2), ("scout", 3), ("scout", 5), ("scauver", 2), ("scauver", 4)])
def test_every_decision_is_shown_with_moves_a_person_can_tell_apart(game: str, players: int) -> None:
    view = VIEWS[game]
    for state, seat in decisions(game, players, seed=players):
        observation = state.observation(seat)
        board = "\n".join(view.board(observation))
        assert "(you)" in board
        moves = [view.move(action, observation) for action in state.legal_actions(seat)]
        assert len(set(moves)) == len(moves), moves


def test_a_scout_hand_shows_both_numbers_of_each_card_the_upright_one_first() -> None:
    state, seat = next(decisions("scout", 3, seed=1))
    hand = state.observation(seat)["hand"]
    lines = ScoutView().board(state.observation(seat))
    assert lines[-1].split() == [f"{top}/{bottom}" for top, bottom in hand]
    assert lines[-2].split() == [f"#{position}" for position in range(1, len(hand) + 1)]


def test_a_scout_move_names_the_cards_it_shows_and_where_a_scouted_card_lands() -> None:
    view = ScoutView()
    seen = {"show": 0, "scout": 0}
    for state, seat in decisions("scout", 2, seed=7):
        observation = state.observation(seat)
        hand = observation["hand"]
        for action in state.legal_actions(seat):
            text = view.move(action, observation)
            if action["kind"] == "show":
                shown = hand[action["start"] : action["start"] + action["length"]]
                assert text.endswith(": " + " ".join(card(pair) for pair in shown))
                seen["show"] += 1
            elif action["kind"] == "scout":
                after = state.clone()
                after.apply(seat, action)
                inserted = after.observation(seat)["hand"][action["insert"]]
                assert f" {card(inserted)} " in text, (text, inserted)
                assert _landing(text, action["insert"], len(hand))
                seen["scout"] += 1
    assert seen["show"] and seen["scout"]


def _landing(text: str, insert: int, hand_size: int) -> bool:
    """The move's words put the card at hand index `insert` (positions #1.. on the screen)."""
    if insert == 0:
        return text.endswith("before #1")
    if insert == hand_size:
        return text.endswith(f"after #{hand_size}")
    return text.endswith(f"between #{insert} and #{insert + 1}")


def test_scauver_shows_cards_by_id_with_the_flank_sums() -> None:
    for state, seat in decisions("scauver", 2, seed=3):
        observation = state.observation(seat)
        if observation["phase"] == "bet" and observation["fields"][seat]["left"]:
            break
    board = ScauverView().board(observation)
    for card_id in observation["hand"]:
        assert re.search(rf"\b{card_id}\(\d+\)", board[-1])
    left = observation["fields"][seat]["left"]
    assert " ".join(left) + " =" in "\n".join(board)


def test_moves_fill_columns_down_then_across_within_the_width() -> None:
    entries = [f"{number}) move" for number in range(1, 8)]
    lines = columns(entries, width=40)
    assert all(len(line) <= 40 for line in lines)
    assert [line.split()[0] for line in lines] == ["1)", "2)", "3)"]
    assert lines[0].split()[2] == "4)"


@pytest.fixture
def pty() -> Iterator[tuple[int, Terminal]]:
    """A pseudo-terminal: the test writes what the person types on the master side."""
    master, slave = os.openpty()
    terminal = Terminal(os.ttyname(slave))
    yield master, terminal
    terminal.close()
    os.close(slave)
    os.close(master)


def _typed(master: int, keys: bytes) -> None:
    os.write(master, keys)


def _screen_until(master: int, text: str, count: int, timeout_s: float = 30.0) -> str:
    """What the terminal showed, read until `text` appeared `count` times (or the generous timeout)."""
    output = ""
    deadline = time.monotonic() + timeout_s
    while output.count(text) < count and time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], deadline - time.monotonic())
        if ready:
            output += os.read(master, 65536).decode()
    return output


def test_a_choice_is_asked_again_until_it_is_a_move_number(pty: tuple[int, Terminal]) -> None:
    master, terminal = pty
    _typed(master, b"abc\n0\n4\n\n3\n")
    assert terminal.choose("move? ", 3) == 2
    screen = _screen_until(master, "move? ", 5)
    for wrong in ("'abc'", "'0'", "'4'", "''"):
        assert f"{wrong} is not a move: type a number from 1 to 3, then Enter." in screen
    assert screen.count("move? ") == 5


def test_the_end_of_the_input_leaves_the_game(pty: tuple[int, Terminal]) -> None:
    master, terminal = pty
    _typed(master, b"\x04")
    with pytest.raises(LeftTheGame):
        terminal.choose("move? ", 3)


def test_a_path_that_is_no_terminal_is_refused(tmp_path: Any) -> None:
    plain = tmp_path / "file"
    plain.write_text("")
    with pytest.raises(TerminalUnavailable, match="is not a terminal"):
        Terminal(str(plain))
    with pytest.raises(TerminalUnavailable, match="cannot open"):
        Terminal(str(tmp_path / "missing"))


def _menu_numbers(lines: list[str], header_mark: str) -> list[int]:
    """The move numbers a menu shows: its `N) words` entries and the cells of its grids."""
    entries = re.findall(r"(?:^|(?<=\s))(\d+)\) ", "\n".join(lines), re.MULTILINE)
    return [int(number) for number in entries] + [cell.number for cell in _grid_cells(lines, header_mark)]


@dataclass(frozen=True)
class Cell:
    section: str
    """The line above the grid."""
    row: str
    column: str
    number: int


def _grid_cells(lines: list[str], header_mark: str) -> list[Cell]:
    """Every cell of every grid whose header line holds `header_mark`."""
    cells = []
    section, header, width = "", [], 0
    for line in lines:
        if not line.startswith(" "):
            section, header = line, []
        elif header_mark in line.split():
            header = [(match.group(), match.end()) for match in re.finditer(r"\S+", line)]
            width = min(end - start for (_, start), (_, end) in zip([("", 0), *header[:-1]], header, strict=True))
        elif header:
            row = line[: header[0][1] - width].strip()
            for column, end in header:
                text = line[end - width : end].strip()
                if text:
                    cells.append(Cell(section, row, column, int(text)))
    return cells


GRID_HEADERS = {"scout": "#1", "scauver": "LLL"}


@pytest.mark.parametrize("game, players", [("scout", 2), ("scout", 4), ("scauver", 2), ("scauver", 3)])
@pytest.mark.parametrize("width", [80, 200])
def test_a_menu_numbers_every_move_once(game: str, players: int, width: int) -> None:
    view = VIEWS[game]
    for state, seat in decisions(game, players, seed=players + width):
        legal = state.legal_actions(seat)
        lines = view.menu(legal, state.observation(seat), width)
        assert sorted(_menu_numbers(lines, GRID_HEADERS[game])) == list(range(1, len(legal) + 1))
        assert all(len(line) <= width for line in lines), lines


def test_a_scout_grid_cell_is_the_scout_its_row_and_column_say() -> None:
    view, checked = ScoutView(), 0
    for state, seat in decisions("scout", 2, seed=3):
        observation, legal = state.observation(seat), state.legal_actions(seat)
        for cell in _grid_cells(view.menu(legal, observation, 200), "#1"):
            action = legal[cell.number - 1]
            end, shown = cell.row.split()[:2]
            taken = observation["active_set"][0 if end == "left" else -1]
            assert action["kind"] == "scout" and (action["end"], action["insert"]) == (end, int(cell.column[1:]) - 1)
            assert action["flip"] == cell.row.endswith("(turned)")
            assert shown == card(taken[::-1] if action["flip"] else taken)
            assert action["and_show"] == cell.section.startswith("Scout & Show")
            checked += 1
    assert checked > 100


def test_a_scauver_setup_grid_cell_is_the_setup_its_row_and_column_say() -> None:
    state, seat = next(decisions("scauver", 2, seed=5))
    legal = state.legal_actions(seat)
    cells = _grid_cells(ScauverView().menu(legal, state.observation(seat), 80), "LLL")
    assert sorted(cell.number for cell in cells) == list(range(1, 81)) and len(legal) == 80
    for cell in cells:
        chosen = cell.row.split()
        action = legal[cell.number - 1]
        assert action["left"] == [card for card, flank in zip(chosen, cell.column, strict=True) if flank == "L"]
        assert action["right"] == [card for card, flank in zip(chosen, cell.column, strict=True) if flank == "R"]


def test_a_menu_too_wide_for_the_terminal_lists_the_moves_instead() -> None:
    for state, seat in decisions("scauver", 2, seed=5):
        lines = ScauverView().menu(state.legal_actions(seat), state.observation(seat), 40)
        assert lines[0].startswith("1) ") and "LLL" not in "\n".join(lines)
        break

"""Copies: winnowed fingerprints that ignore names, comments and layout, and the pairs flagged from them and
from identical digests; the same actions in the positions two students were shown (games the engine plays
here, recorded as the referee records them); the peer tables that seat students together."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from referee.games import load_game
from tournaments.classroom.copies import CopyKind, identical_programs, position_key, same_actions, similar_code
from tournaments.classroom.winnow import K, W, fingerprints, similarity, tokens, winnow
from tournaments.league.schedule import peer_tables

ORIGINAL = '''
def best_show(legal_actions):
    """The longest show."""
    shows = [action for action in legal_actions if action["kind"] == "show"]
    if not shows:
        return legal_actions[0]
    return max(shows, key=lambda action: (action["length"], -action["start"]))  # widest first


def choose(observation, legal_actions):
    for action in legal_actions:
        if action["kind"] == "orient" and not action["flip"]:
            return action
    return best_show(legal_actions)
'''

RENAMED = """
# my own work
def pick(moves):
    sets = [m for m in moves if m["kind"] == "show"]
    if not sets:
        return moves[0]
    return max(sets,
               key=lambda m: (m["length"], -m["start"]))


def decide(obs, moves):
    for m in moves:
        if m["kind"] == "orient" and not m["flip"]:
            return m
    return pick(moves)
"""

OTHER = """
import random

def choose(observation, legal_actions):
    scouts = [action for action in legal_actions if action["kind"] == "scout"]
    random.shuffle(scouts)
    while scouts and scouts[-1]["and_show"]:
        scouts.pop()
    return scouts[-1] if scouts else random.choice(legal_actions)
"""


def test_names_comments_docstrings_and_layout_do_not_change_the_tokens() -> None:
    assert tokens(ORIGINAL, ".py") == tokens(RENAMED, ".py")
    assert tokens("int x = 3; // three\n/* note */", ".c") == ["int", "v", "=", "0", ";"]
    assert tokens("let s = 'a' + `b`;", ".js") == ["let", "v", "=", '"', "+", '"', ";"]
    assert fingerprints(ORIGINAL, ".py") == fingerprints(RENAMED, ".py")
    assert similarity(fingerprints(ORIGINAL, ".py"), fingerprints(OTHER, ".py")) < 0.3


def test_winnowing_keeps_the_minimum_of_every_window() -> None:
    hashes = [77, 74, 42, 17, 98, 50, 17, 98, 8, 88, 67, 39, 77, 74, 42, 17, 98]
    assert winnow(hashes, 4) == {17, 8, 39}
    assert winnow([5, 3], 4) == {5, 3}
    assert (K, W) == (8, 8)


def test_a_long_enough_shared_run_is_always_found() -> None:
    shared = " ".join(f"a{i} = b{i} + {i} * (c{i} - d);" for i in range(3))
    first = "def f(x):\n    return [x, x, x]\n" + shared
    second = "while True:\n    break\n" + shared + "\nprint('done')"
    assert len(tokens(shared, ".py")) >= W + K - 1
    assert fingerprints(first, ".py") & fingerprints(second, ".py")


def _folder(base: Path, name: str, text: str) -> Path:
    folder = base / name
    folder.mkdir()
    (folder / "bot.py").write_text(text)
    (folder / "notes.txt").write_text(ORIGINAL)
    return folder


def test_similar_code_flags_the_renamed_copy_only(tmp_path: Path) -> None:
    texts = {"ann": ORIGINAL, "bo": RENAMED, "cy": OTHER}
    folders = {name: _folder(tmp_path, name, text) for name, text in texts.items()}
    (flag,) = similar_code(folders)
    assert flag.kind is CopyKind.SIMILAR and flag.bots == ("ann", "bo") and flag.figure == 1.0
    assert "code fingerprints in common (100%" in flag.detail


def test_code_every_folder_shares_is_base_code(tmp_path: Path) -> None:
    folders = {f"s{index}": _folder(tmp_path, f"s{index}", ORIGINAL + f"\nx = {index}\n") for index in range(6)}
    assert similar_code(folders) == []


def test_identical_digests_are_flagged_pair_by_pair() -> None:
    flags = identical_programs({"ann": "tree:1", "bo": "tree:2", "cy": "tree:1", "di": "tree:1"})
    assert [flag.bots for flag in flags] == [("ann", "cy"), ("ann", "di"), ("cy", "di")]
    assert all(flag.kind is CopyKind.IDENTICAL and flag.figure == 1.0 for flag in flags)


Policy = Callable[[Sequence[Any], int], Any]


def _middle(legal: Sequence[Any], seat: int) -> Any:
    return legal[len(legal) // 2]


def _later(legal: Sequence[Any], seat: int) -> Any:
    return legal[(2 * len(legal)) // 3]


def _replay(seed: int, seats: Sequence[tuple[str, Policy]]) -> dict[str, Any]:
    """A replay as the referee records it, played by the engine with each seat's policy."""
    state = load_game("scout").new_game(len(seats), seed)
    actions = []
    while not state.is_over():
        seat = state.to_move()[0]
        action = seats[seat][1](state.legal_actions_view(seat), seat)
        actions.append({"seat": seat, "by": "bot", "action": action})
        state.apply(seat, action)
    return {
        "seats": [{"bot": name} for name, _ in seats],
        "players": len(seats),
        "seed": seed,
        "config": {},
        "deal": state.dealt,
        "actions": actions,
    }


def _match(seed: int, first: tuple[str, Policy], second: tuple[str, Policy], deals: int) -> list[dict[str, Any]]:
    """A match's games: each deal from both seats (rotation 0, then 1)."""
    return [_replay(seed + deal, seats) for deal in range(deals) for seats in ((first, second), (second, first))]


def test_copies_at_one_table_meet_every_position_of_each_other() -> None:
    copies = _match(11, ("ann", _middle), ("bo", _middle), deals=2)
    (flag,) = same_actions(copies, {"ann", "bo"}, "scout")
    assert flag.kind is CopyKind.ACTIONS and flag.bots == ("ann", "bo") and flag.figure == 1.0
    assert "standard deviations above it" in flag.detail
    honest = _match(11, ("ann", _middle), ("cy", _later), deals=2)
    assert same_actions(honest, {"ann", "cy"}, "scout") == []


def test_positions_are_what_the_bot_was_shown_not_the_deal_or_the_seat() -> None:
    # The same program in two matches, each with deals of its own, never meets the other's positions; the
    # key is the observation and the legal actions, whatever order the observation's fields come in.
    apart = [*_match(21, ("ann", _middle), ("rand", _later), 2), *_match(31, ("bo", _middle), ("rand", _later), 2)]
    assert same_actions(apart, {"ann", "bo"}, "scout") == []
    state = load_game("scout").new_game(2, 5)
    observation, legal = state.observation(0), state.legal_actions_view(0)
    assert position_key(observation, legal) == position_key(dict(reversed(observation.items())), list(legal))
    assert position_key(observation, legal) != position_key(state.observation(1), state.legal_actions_view(1))


def test_an_unreadable_replay_is_left_out() -> None:
    games = _match(11, ("ann", _middle), ("bo", _middle), deals=2)
    broken = {**games[0], "actions": [{"seat": 0, "by": "bot", "action": {"kind": "nonsense"}}]}
    assert [flag.bots for flag in same_actions([broken, *games], {"ann", "bo"}, "scout")] == [("ann", "bo")]


def test_peers_seat_every_student_at_two_tables_of_students() -> None:
    students = [f"s{index}" for index in range(7)]
    tables = peer_tables(students, 2, 1, random.Random(3))
    assert len(tables) == 7 and len(set(tables)) == 7
    assert all(sum(name in table for table in tables) == 2 for name in students)
    assert len(peer_tables(students, 2, 3, random.Random(3))) == 21
    assert peer_tables(students, 2, 0, random.Random(3)) == []

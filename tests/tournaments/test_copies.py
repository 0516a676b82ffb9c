"""Copies: winnowed fingerprints that ignore names, comments and layout, and the pairs flagged from them and
from identical digests."""

from __future__ import annotations

from pathlib import Path

from tournaments.classroom.copies import CopyKind, identical_programs, similar_code
from tournaments.classroom.winnow import K, W, fingerprints, similarity, tokens, winnow

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

"""Copies: winnowed fingerprints that ignore names, comments and layout; what of a folder is compared (every
text file, not dependencies or binaries) and the base code removed; the leads from code, from identical digests
and from the answers to the position bank, whose known choices explain agreement; the peer tables that seat
students together."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from referee.botspec import resolve_bot
from referee.games import load_game
from referee.records import Limits
from tournaments.classroom.base_code import LeftOut, base_prints, folder_prints, given_prints
from tournaments.classroom.choices import is_lead, pair_tallies
from tournaments.classroom.copies import CopyKind, identical_programs, similar_code
from tournaments.classroom.position_bank import (
    Bank,
    KnownStrategy,
    Position,
    ask_bank,
    candidate_positions,
    known_choices,
    make_bank,
    tutorial_strategy,
)
from tournaments.classroom.scaffold import Language, new_bot
from tournaments.classroom.winnow import K, W, fingerprints, similarity, tokens, winnow
from tournaments.league.league_file import CopySettings, LeagueFileError, load_league
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


HANDOUT = """
def hand_value(hand):
    total = 0
    for top, bottom in hand:
        total += top * 2 + (bottom if bottom > top else 0)
    return total


def longest(actions):
    return max((a for a in actions if a["kind"] == "show"), key=lambda a: a["length"], default=None)
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
    """A folder whose bot.py is `text`, beside handout.txt, which every folder has (HANDOUT)."""
    folder = base / name
    folder.mkdir()
    (folder / "bot.py").write_text(text)
    (folder / "handout.txt").write_text(HANDOUT)
    return folder


def _prints(folders: dict[str, Path]):
    return {name: folder_prints(folder) for name, folder in folders.items()}


def test_similar_code_flags_the_renamed_copy_only(tmp_path: Path) -> None:
    texts = {"ann": ORIGINAL, "bo": RENAMED, "cy": OTHER}
    folders = {name: _folder(tmp_path, name, text) for name, text in texts.items()}
    (unbased,), _ = similar_code(_prints(folders))
    assert "in ann: bot.py, handout.txt; bo: bot.py, handout.txt" in unbased.detail
    (flag,), kept = similar_code(_prints(folders), base_prints((tmp_path / "ann" / "handout.txt",)))
    assert flag.kind is CopyKind.SIMILAR and flag.bots == ("ann", "bo") and flag.figure == 1.0
    assert f"shares {len(kept['ann'])} of {len(kept['ann'])} fingerprints after the base code is removed" in flag.detail
    assert "in ann: bot.py; bo: bot.py" in flag.detail


def test_code_every_folder_shares_is_left_out(tmp_path: Path) -> None:
    folders = {f"s{index}": _folder(tmp_path, f"s{index}", ORIGINAL + f"\nx = {index}\n") for index in range(6)}
    assert similar_code(_prints(folders))[0] == []


def test_the_scaffold_of_a_language_few_students_use_is_base_code(tmp_path: Path) -> None:
    # Three C students of a class, each the scaffold with a line of their own: no lead, however few share it.
    folders = {}
    for index in range(3):
        folder = new_bot(tmp_path / f"c{index}", Language.C, "scout").directory
        source = folder / "bot.c"
        source.write_text(source.read_text().replace("(void)observation;", f"(void)observation; srand({index});"))
        folders[f"c{index}"] = folder
    found = _prints(folders)
    assert all(found[name].all for name in folders)
    flags, kept = similar_code(found, base_prints())
    assert flags == [] and all(len(kept[name]) < 10 for name in folders)
    assert similar_code(found)[0], "without the base code removed the scaffold's code is a lead"


def test_every_text_file_is_compared_but_dependencies_and_binaries_are_not(tmp_path: Path) -> None:
    folder = tmp_path / "sub"
    (folder / "node_modules" / "pkg").mkdir(parents=True)
    (folder / "node_modules" / "pkg" / "index.js").write_text(ORIGINAL)
    (folder / "env" / "lib").mkdir(parents=True)
    (folder / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    (folder / "env" / "lib" / "lib.py").write_text(ORIGINAL)
    (folder / "package-lock.json").write_text('{"lockfileVersion": 3}')
    (folder / "bot").write_bytes(b"\x7fELF\0\0" + ORIGINAL.encode())
    (folder / "notes.log").write_text(RENAMED)
    (folder / "README").write_text("Some words, and more words (with a bracket).\n" * 20)
    found = folder_prints(folder)
    assert sorted(found.files) == ["README", "notes.log"]
    assert found.files["notes.log"] >= fingerprints(ORIGINAL, ".py")
    assert len(found.files["README"]) <= 2, "prose is not code: next to no fingerprints"
    assert found.left_out == {LeftOut.DEPENDENCIES: 3, LeftOut.NOT_TEXT: 1}
    assert "left out: 3 dependencies, 1 not text" in found.summary()


def test_code_in_a_file_of_no_language_is_read_with_either_kind_of_comment() -> None:
    c_code = "int f(int a) { return a * (a + 1) / 2; } // sum\nint g(int b) { return f(b) - f(b - 1); }\n"
    assert fingerprints(c_code, ".c") <= fingerprints(c_code, ".log")
    assert fingerprints(ORIGINAL, ".py") <= fingerprints(ORIGINAL, ".txt")


def test_the_given_code_holds_every_scaffold_and_the_tutorial(tmp_path: Path) -> None:
    given = given_prints()
    for language in Language:
        scaffold = new_bot(tmp_path / language.value, language, "scauver", name="someone").directory
        assert folder_prints(scaffold).all <= given, language
    tutorial = Path(__file__).resolve().parents[2] / "tournaments" / "classroom" / "given" / "scout_tutorial.py"
    assert fingerprints(tutorial.read_text(), ".py") <= given


def test_identical_digests_are_flagged_pair_by_pair() -> None:
    flags = identical_programs({"ann": "tree:1", "bo": "tree:2", "cy": "tree:1", "di": "tree:1"})
    assert [flag.bots for flag in flags] == [("ann", "cy"), ("ann", "di"), ("cy", "di")]
    assert all(flag.kind is CopyKind.IDENTICAL and flag.figure == 1.0 for flag in flags)


def test_two_unchanged_scaffolds_are_the_same_program_and_no_lead() -> None:
    digests = {"ann": "tree:1", "bo": "tree:1", "cy": "tree:2", "di": "tree:2"}
    kept = {"ann": frozenset(), "bo": frozenset(), "cy": frozenset({1, 2}), "di": frozenset({1, 2})}
    assert [flag.bots for flag in identical_programs(digests, kept)] == [("cy", "di")]


# The position bank.


def test_the_bank_s_positions_are_seeded_and_the_known_choices_named() -> None:
    first = candidate_positions("scout", 3, {}, seed=4, count=30)
    assert first == candidate_positions("scout", 3, {}, seed=4, count=30)
    assert first != candidate_positions("scout", 3, {}, seed=5, count=30)
    assert all(len(position.legal) >= 2 and position.players == 3 for position in first)
    tutorial = tutorial_strategy("scout")
    assert tutorial is not None and tutorial_strategy("scauver") is None
    for position in first:
        known = known_choices("scout", position)
        assert known[KnownStrategy.FIRST] == 0 and known[KnownStrategy.LAST] == len(position.legal) - 1
        chosen = tutorial(dict(position.observation), list(position.legal))
        assert position.legal[known[KnownStrategy.TUTORIAL]] == chosen


def _bank(positions: int, choices: int = 10) -> Bank:
    legal = tuple({"kind": "pick", "card": card} for card in range(choices))
    return Bank("scout", {}, tuple(Position(2, 0, {}, legal, {}, known=(0, 1)) for _ in range(positions)))


def test_agreeing_on_known_choices_is_no_lead_and_copies_are() -> None:
    rng = random.Random(5)
    bank = _bank(100)
    answers: dict[str, list[int | None]] = {f"s{index}": [rng.randrange(10) for _ in range(100)] for index in range(10)}
    answers["tutorial_a"] = [0] * 100
    answers["tutorial_b"] = [0] * 100
    original = [rng.randrange(2, 10) for _ in range(100)]
    answers["copy_a"] = original
    answers["copy_b"] = [choice if index % 4 else (choice + 1) % 10 for index, choice in enumerate(original)]
    answers["s0"][:50] = [None] * 50
    tallies = {tally.pair: tally for tally in pair_tallies(bank, answers)}
    leads = [pair for pair, tally in tallies.items() if is_lead(tally, len(tallies))]
    assert leads == [("copy_a", "copy_b")]
    assert tallies[("tutorial_a", "tutorial_b")].counted == 0
    copies = tallies[("copy_a", "copy_b")]
    assert copies.counted == 100 and copies.agreed >= 70 and copies.p_value < 1e-30
    assert tallies[("s0", "s1")].counted <= 50


def test_peers_seat_every_student_at_two_tables_of_students() -> None:
    students = [f"s{index}" for index in range(7)]
    tables = peer_tables(students, 2, 1, random.Random(3))
    assert len(tables) == 7 and len(set(tables)) == 7
    assert all(sum(name in table for table in tables) == 2 for name in students)
    assert len(peer_tables(students, 2, 3, random.Random(3))) == 21
    assert peer_tables(students, 2, 0, random.Random(3)) == []


CLASS = Path(__file__).resolve().parents[1] / "fixtures" / "class"


def test_every_bot_is_asked_the_same_positions_in_a_session_of_its_own(tmp_path: Path) -> None:
    config = load_game("scout").resolve_config({})
    bank = Bank("scout", config, tuple(candidate_positions("scout", 2, config, seed=3, count=12)))
    heuristic = resolve_bot("heuristic", "scout")
    answers = ask_bank(heuristic, bank, Limits(move_time_ms=5000, startup_time_s=30), log_dir=tmp_path)
    assert all(answer is not None for answer in answers)
    assert answers == ask_bank(heuristic, bank, Limits(move_time_ms=5000, startup_time_s=30))
    assert [path.name for path in tmp_path.iterdir()] == [f"{heuristic.name}.log"]
    hung = resolve_bot(str(CLASS / "timeout" / "bot.py"), "scout")
    assert ask_bank(hung, bank, Limits(move_time_ms=200, startup_time_s=30)) == (None,) * 12
    crashing = resolve_bot(str(CLASS / "crash_at_start" / "bot.py"), "scout")
    assert ask_bank(crashing, bank, Limits(startup_time_s=30)) == (None,) * 12


def test_the_league_file_names_the_base_code_and_the_bank(tmp_path: Path) -> None:
    head = 'game = "scout"\nplayers = 2\nseed = 3\n[[bots]]\nname = "a"\ncommand = "random"\n'
    head += '[[bots]]\nname = "b"\ncommand = "random"\n'
    path = tmp_path / "class.toml"
    path.write_text(head)
    assert load_league(path).copies == CopySettings()
    (tmp_path / "handout").mkdir()
    path.write_text(head + '[copies]\nbase = ["handout"]\nbank = 50\nbank_seed = 9\n')
    assert load_league(path).copies == CopySettings((tmp_path / "handout",), 50, 9)
    path.write_text(head + '[copies]\nbase = ["missing"]\n')
    with pytest.raises(LeagueFileError, match=r"key 'copies.base': .*missing' does not exist"):
        load_league(path)
    path.write_text(head + "[copies]\nbanks = 3\n")
    with pytest.raises(LeagueFileError, match=r"key 'copies.banks': is not a league setting"):
        load_league(path)


def test_the_bank_leaves_out_positions_where_the_references_and_the_tutorial_agree() -> None:
    config = load_game("scout").resolve_config({})
    heuristic = resolve_bot("heuristic", "scout")
    limits = Limits(move_time_ms=5000, startup_time_s=30)
    bank = make_bank("scout", 2, config, seed=2, size=15, references={"heuristic": heuristic}, limits=limits)
    assert len(bank.positions) == 15
    answers = ask_bank(heuristic, bank, limits)
    for position, answer in zip(bank.positions, answers, strict=True):
        known = known_choices("scout", position)
        assert answer in position.known and set(known.values()) <= set(position.known)
        assert answer != known[KnownStrategy.TUTORIAL], "where the heuristic and the tutorial agree: left out"

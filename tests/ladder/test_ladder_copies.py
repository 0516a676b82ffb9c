"""The staff's copies report on a ladder: the class copies check's code measures over each student's current
accepted version, with the base code (every scaffold, the ladder file's `[copies] base`) removed; leads, never
verdicts; staff only."""

from __future__ import annotations

from pathlib import Path

import pytest
from ladder_helpers import Made, pass_checks, students

from tournaments.classroom.copies import CopyKind
from tournaments.classroom.scaffold import Language, new_bot
from tournaments.ladder import Forbidden, open_ladder

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

SCOUTING = """
import random

def choose(observation, legal_actions):
    scouts = [action for action in legal_actions if action["kind"] == "scout"]
    random.shuffle(scouts)
    while scouts and scouts[-1]["and_show"]:
        scouts.pop()
    return scouts[-1] if scouts else random.choice(legal_actions)
"""

COUNTING = """
def choose(observation, legal_actions):
    hand = observation.get("hand", [])
    weights = {}
    for index, card in enumerate(hand):
        weights[index] = sum(card) * (index + 1) % 7
    ranked = sorted(legal_actions, key=lambda a: weights.get(a.get("start", 0), 0) - a.get("length", 0) * 3)
    return ranked[len(ranked) // 2]
"""

HANDOUT = """
def hand_value(hand):
    total = 0
    for top, bottom in hand:
        total += top * 2 + (bottom if bottom > top else 0)
    return total


def longest(actions):
    return max((a for a in actions if a["kind"] == "show"), key=lambda a: a["length"], default=None)


def widest(actions):
    best = None
    for a in actions:
        if a["kind"] == "show" and (best is None or a["length"] * 9 - a["start"] > best["length"] * 9 - best["start"]):
            best = a
    return best


def scouts_worth_taking(observation, actions):
    table = observation.get("table", [])
    edges = [table[0], table[-1]] if table else []
    wanted = []
    for a in actions:
        if a["kind"] == "scout" and edges:
            card = edges[0] if a.get("from_left") else edges[-1]
            if max(card) >= 8 or abs(card[0] - card[1]) <= 1:
                wanted.append((max(card), a))
    wanted.sort(key=lambda pair: -pair[0])
    return [a for _, a in wanted]
"""


def scaffolded(root: Path, name: str, strategy: str, handout: bool = False) -> Path:
    """The Python scaffold of `referee new-bot` with the student's own strategy.py beside it."""
    folder = new_bot(root / name, Language.PYTHON, "scout").directory
    (folder / "strategy.py").write_text(strategy)
    if handout:
        (folder / "handout.py").write_text(HANDOUT)
    return folder


def submitted(made: Made, tmp_path: Path, texts: dict[str, str], handout: bool = False) -> dict[str, str]:
    """Each student's version of their text, accepted; student -> version id."""
    who = students(made, *texts)
    ids = {
        name: made.ladder.submit(who[name], scaffolded(tmp_path / "src", name, text, handout)).id
        for name, text in texts.items()
    }
    pass_checks(made)
    return ids


def test_the_same_code_renamed_is_a_lead_and_own_strategies_on_one_scaffold_are_not(made: Made, tmp_path: Path) -> None:
    ids = submitted(made, tmp_path, {"ann": ORIGINAL, "bo": RENAMED, "cy": SCOUTING, "dee": COUNTING})
    staff = made.ladder.authenticate(made.created.admin_token)
    report = made.ladder.copies(staff)
    (lead,) = report.leads
    assert lead.kind is CopyKind.SIMILAR and lead.students == ("ann", "bo")
    assert lead.versions == (ids["ann"], ids["bo"]) and lead.share == 1.0
    assert lead.files == (("strategy.py",), ("strategy.py",))
    assert "fingerprints after the base code is removed" in lead.reason and "copy" not in lead.reason
    assert len([line for line in report.compared if line.startswith("  ")]) == 4
    assert made.ladder.copies(staff) is report, "nothing changed: the kept report"


def test_a_student_gets_the_staff_only_refusal(made: Made, tmp_path: Path) -> None:
    submitted(made, tmp_path, {"ann": ORIGINAL, "bo": RENAMED})
    ann = made.ladder.authenticate(made.ladder.invite(["ann"])["ann"])
    with pytest.raises(Forbidden) as copies_refusal:
        made.ladder.copies(ann)
    with pytest.raises(Forbidden) as roster_refusal:
        made.ladder.roster(ann)
    assert str(copies_refusal.value) == str(roster_refusal.value)


def test_a_new_accepted_version_is_compared_and_the_ladder_file_s_base_is_left_out(made: Made, tmp_path: Path) -> None:
    submitted(made, tmp_path, {"cy": SCOUTING, "dee": COUNTING}, handout=True)
    staff = made.ladder.authenticate(made.created.admin_token)
    (lead,) = made.ladder.copies(staff).leads
    assert lead.students == ("cy", "dee") and all("handout.py" in files for files in lead.files)
    (made.folder / "handout.py").write_text(HANDOUT)
    with (made.folder / "ladder.toml").open("a") as file:
        file.write('\n[copies]\nbase = ["handout.py"]\n')
    with open_ladder(made.folder, made.db_url) as reopened:
        report = reopened.copies(reopened.authenticate(made.created.admin_token))
        assert report.leads == () and "handout.py" in report.compared[0]
        cy = reopened.authenticate(reopened.invite(["cy"])["cy"])
        reopened.submit(cy, scaffolded(tmp_path / "again", "cy", COUNTING, handout=True))
        pass_checks(Made(made.folder, made.created, reopened, made.db_url))
        (copied,) = reopened.copies(reopened.authenticate(made.created.admin_token)).leads
        assert copied.students == ("cy", "dee") and copied.files == (("strategy.py",), ("strategy.py",))


def test_the_same_folder_is_an_identical_program_and_an_unchanged_scaffold_is_no_lead(
    made: Made, tmp_path: Path
) -> None:
    who = students(made, "ann", "bo", "cy", "dee")
    same = scaffolded(tmp_path / "src", "shared", ORIGINAL)
    bare = new_bot(tmp_path / "src" / "bare", Language.PYTHON, "scout").directory
    for name, folder in (("ann", same), ("bo", same), ("cy", bare), ("dee", bare)):
        made.ladder.submit(who[name], folder)
    pass_checks(made)
    (lead,) = made.ladder.copies(made.ladder.authenticate(made.created.admin_token)).leads
    assert lead.kind is CopyKind.IDENTICAL and lead.students == ("ann", "bo") and lead.share == 1.0
    assert "strategy.py" in lead.files[0] and lead.files[0] == lead.files[1]
    assert "the same program" in lead.reason

"""The copies check on a class like issue 30's (tests/tournaments/copies_class.py: 26 submissions, mostly
scaffold-derived Python, 3 C built as the docs say, 3 JS with node_modules installed, stdio and shell, two
honest students on the tutorial's strategy, two pairs of copies, one hidden in a .log with ties broken the
other way): both pairs named, no honest student named, with two seeds of the position bank; every student
answers the bank in its sandbox."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from copies_class import COPIES, make_class

from tournaments.classroom.copies import CopyKind, ask_class, copy_report
from tournaments.league.league_file import load_league

pytestmark = [
    pytest.mark.timeout(600),
    pytest.mark.skipif(
        not (Path(__file__).resolve().parents[2] / "bots" / "js" / "node_modules").is_dir()
        or shutil.which("node") is None
        or shutil.which("make") is None,
        reason="needs node with bots/js/node_modules (npm ci --prefix bots/js) and make",
    ),
]

LEAGUE = """
game = "scout"
players = 2
seed = {seed}
schedule = "baselines"

[limits]
move_time_ms = 1000
startup_time_s = 30

[copies]
bank = 120

[[bots]]
name = "random"
command = "random"
baseline = true

[[bots]]
name = "heuristic"
command = "heuristic"
baseline = true

[[bots]]
each = "submissions/*"
"""


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    folder = tmp_path_factory.mktemp("course")
    return folder, make_class(folder / "submissions")


@pytest.mark.parametrize("seed", [1, 2])
def test_both_pairs_of_copies_and_no_honest_student_are_named(course: tuple[Path, list[str]], seed: int) -> None:
    folder, students = course
    assert len(students) == 26
    path = folder / f"class{seed}.toml"
    path.write_text(LEAGUE.format(seed=seed))
    league = load_league(path)
    asked: dict[str, int] = {}
    answers = ask_class(league, on_asked=lambda bot, answered: asked.__setitem__(bot, answered))
    assert sorted(answers) == students
    assert all(answered == 120 for answered in asked.values()), asked
    report = copy_report(league)
    named = {flag.bots for flag in report.flags}
    assert named == COPIES, report.flags
    by_kind = {(flag.kind, flag.bots) for flag in report.flags}
    assert (CopyKind.SIMILAR, ("alice", "bob")) in by_kind
    hidden = next(flag for flag in report.flags if (flag.kind, flag.bots) == (CopyKind.SIMILAR, ("carol", "dave")))
    assert "after the base code is removed" in hidden.detail and "dave: notes.log" in hidden.detail
    assert (CopyKind.CHOICES, ("alice", "bob")) in by_kind
    compared = "\n".join(report.compared)
    assert "js_plain: 3 text file(s)" in compared and "left out: 1 dependencies" in compared
    assert "c_half: 3 text file(s) (Makefile, README.md, bot.c); left out: 2 not text" in compared
    assert "26 student(s) answered the same 120 positions" in compared
    again = copy_report(league)
    assert again == report

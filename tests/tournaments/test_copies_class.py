"""The copies check on a class like issue 30's (tests/tournaments/copies_class.py: 26 submissions, mostly
scaffold-derived Python, 3 C built as the docs say, 3 JS with node_modules installed, stdio and shell, two
honest students on the tutorial's strategy, two pairs of copies, one hidden in a .log with ties broken the
other way): both pairs named, no honest student named, with two seeds of the position bank; every student
answers the bank in its sandbox. Then the same with the how-to's league file as written (its default bank),
through `referee tournament copies`, in three more runs; and with the commonest mistakes and unchanged scaffolds
handed in twice added (broken folders answer nothing, base code alone is no lead)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from copies_class import COPIES, make_class

from tournaments.classroom.copies import CopyKind, ask_class, copy_report
from tournaments.classroom.position_bank import DEFAULT_BANK
from tournaments.classroom.scaffold import Language, new_bot
from tournaments.cli import main
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


def documented_league() -> str:
    """The first TOML block of docs/how-to/grade-a-class.md, as a teacher copies it: no [copies] table, so the
    bank's default size and the league's own limits."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "how-to" / "grade-a-class.md").read_text()
    found = re.search(r"```toml\n(.*?)```", text, re.S)
    assert found is not None and "[copies]" not in found.group(1)
    return found.group(1)


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_the_documented_league_file_names_both_pairs_and_no_honest_student(
    course: tuple[Path, list[str]], seed: int
) -> None:
    """What a teacher following the how-to runs: its league file as written (only the seed changed, so each run
    has another bank), `referee tournament copies`, then the report's copies column."""
    folder, students = course
    text = documented_league()
    assert "seed = 1\n" in text
    path = folder / f"documented{seed}.toml"
    path.write_text(text.replace("seed = 1\n", f"seed = {seed}\n"))
    printed = CliRunner().invoke(main, ["tournament", "copies", str(path)])
    assert printed.exit_code == 0, printed.output
    league = load_league(path)
    answers = ask_class(league)
    assert sorted(answers) == students
    assert all(sum(answer is not None for answer in found) == DEFAULT_BANK for found in answers.values())
    report = copy_report(league)
    assert {flag.bots for flag in report.flags} == COPIES, report.flags
    assert {(CopyKind.SIMILAR, ("alice", "bob")), (CopyKind.SIMILAR, ("carol", "dave"))} <= {
        (flag.kind, flag.bots) for flag in report.flags
    }
    assert f"26 student(s) answered the same {DEFAULT_BANK} positions" in "\n".join(report.compared)
    leads = printed.stdout.split("lead(s), to look into (not verdicts):\n", 1)[1].splitlines()
    said = {tuple(line.removeprefix("- ").split(":", 1)[0].split(" and ")) for line in leads}
    assert said == COPIES, printed.stdout


def _handed_in(source: Path, target: Path) -> None:
    """`source` copied to `target`, as hard links where the file system allows (node_modules is 40 MB)."""
    try:
        shutil.copytree(source, target, symlinks=True, copy_function=os.link)
    except OSError:
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(source, target, symlinks=True)


def test_the_commonest_mistakes_and_scaffolds_handed_in_twice_are_no_lead(
    course: tuple[Path, list[str]], tmp_path: Path
) -> None:
    """The class with nine more students: the commonest mistakes twice each (the scaffold's bot.py named Bot.py, a
    JS scaffold without node_modules, the scaffold one folder down), the C scaffold built and handed in once more,
    the JS scaffold with node_modules once more, the Python scaffold a third time. Broken students answer nothing
    and unchanged scaffolds are the same program, made of base code: no lead among them."""
    folder, students = course
    submissions = tmp_path / "submissions"
    _handed_in(folder / "submissions", submissions)
    for name in ("case_one", "case_two"):
        new_bot(submissions / name, Language.PYTHON, "scout")
        (submissions / name / "bot.py").rename(submissions / name / "Bot.py")
    for name in ("bare_js_one", "bare_js_two"):
        new_bot(submissions / name, Language.JS, "scout")
    for name in ("down_one", "down_two"):
        new_bot(submissions / name / "mybot", Language.PYTHON, "scout")
    for source, again in (("c_plain", "c_plain_too"), ("js_plain", "js_plain_too"), ("plain_one", "plain_three")):
        _handed_in(submissions / source, submissions / again)
    path = tmp_path / "class.toml"
    path.write_text(documented_league())
    printed = CliRunner().invoke(main, ["tournament", "copies", str(path)])
    assert printed.exit_code == 0, printed.output
    league = load_league(path)
    assert len([bot for bot in league.bots if not bot.baseline]) == len(students) + 9
    broken = {"case_one", "case_two", "bare_js_one", "bare_js_two", "down_one", "down_two"}
    answers = ask_class(league)
    assert all(all(answer is None for answer in answers[name]) for name in broken)
    assert all(
        sum(answer is not None for answer in answers[name]) == DEFAULT_BANK for name in ("c_plain_too", "js_plain_too")
    )
    assert {flag.bots for flag in copy_report(league).flags} == COPIES

"""A class's pages in headless Chromium: the leaderboard to publish (pseudonyms, no student's name, baselines
apart), a student's page (faults collapsed, a link to the step that caused the first, results against each
baseline, links to logs and replays) and the teacher's (copies). Screenshots of the three go to the folder the
run prints."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from browsing import PageLog, assert_clean, opened, wait_until
from click.testing import CliRunner
from playwright.sync_api import Page

from tournaments.cli import main

pytestmark = pytest.mark.timeout(300)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
STUDENTS = ("first_move", "crash_mid_game", "greedy", "greedy_renamed")
LEAGUE = """
game = "scout"
players = 2
seed = 4
deals_per_match = 1
schedule = "baselines"
replay_dir = "replays"

[limits]
move_time_ms = 1000
startup_time_s = 20

[marks]
random = [[0.5, 40]]
heuristic = [[0.5, 70]]

[pseudonyms]
greedy = "Blue Heron"
crash_mid_game = "Red Fox"

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
def pages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("class-pages")
    for name in STUDENTS:
        source = FIXTURES / "class" / name
        shutil.copytree(source if source.is_dir() else FIXTURES / "class_folders" / name, folder / "submissions" / name)
    league = folder / "class.toml"
    league.write_text(LEAGUE)
    runner = CliRunner()
    run = runner.invoke(
        main, ["tournament", "run", str(league), "-j", "2", "--bootstrap", "0", "--replay-format", "both"]
    )
    assert run.exit_code == 0, run.output
    written = runner.invoke(
        main, ["tournament", "report", str(league), "--format", "pages", "-o", str(folder / "pages")]
    )
    assert written.exit_code == 0, written.output
    assert "4 student pages" in written.output
    return folder / "pages"


def _texts(page: Page, selector: str) -> list[str]:
    return page.evaluate(f"[...document.querySelectorAll({selector!r})].map((cell) => cell.textContent)")


def test_the_leaderboard_shows_pseudonyms_and_no_names(
    page: Page, page_log: PageLog, pages: Path, screenshot_dir: Path
) -> None:
    opened(page, pages / "leaderboard.html", "class leaderboard")
    names = _texts(page, "table.leaderboard td.bot")
    assert "Blue Heron" in names and "Red Fox" in names and len(names) == len(STUDENTS)
    assert {name for name in names if name.startswith("student ")} and len(set(names)) == len(names)
    text = page.evaluate("document.body.innerText")
    assert not any(student in text for student in STUDENTS)
    assert sorted(_texts(page, "table.baselines td.bot")) == ["heuristic", "random"]
    assert page.evaluate("[...document.querySelectorAll('table.leaderboard tr[data-place]')].length") == 4
    assert len(_texts(page, "table.leaderboard td.mark")) == 4
    page.screenshot(path=screenshot_dir / "class-leaderboard.png")
    assert_clean(page, page_log)


def test_a_student_page_leads_to_the_step_that_caused_a_fault(
    page: Page, page_log: PageLog, pages: Path, screenshot_dir: Path
) -> None:
    opened(page, pages / "students" / "crash_mid_game.html", "student page")
    kinds = _texts(page, "table.faults tr.fault td:first-child")
    counts = _texts(page, "table.faults tr.fault td:nth-child(2)")
    assert kinds == ["crash"] and counts == ["4×"]
    quoted = page.evaluate("document.querySelector('table.faults pre').textContent")
    assert "IndexError" in quoted and 'File "bot.py"' in quoted
    assert str(pages.parent) not in page.evaluate("document.body.innerText"), "a machine path reached the student"
    assert sorted(_texts(page, "table.against td.bot")) == ["heuristic", "random"]
    assert len(_texts(page, "#logs li a")) == 2 and len(_texts(page, "table.games tbody tr")) == 4
    page.screenshot(path=screenshot_dir / "class-student.png")
    assert_clean(page, page_log)
    link = page.evaluate("document.querySelector('table.faults a').getAttribute('href')")
    step = int(link.split("#step=")[1].split("&")[0])
    page.click("table.faults a")
    wait_until(page, "document.documentElement?.dataset.ready === '1' && location.pathname.includes('replays')")
    wait_until(page, f"document.documentElement.dataset.step === '{step}'")


def test_the_teacher_sees_names_and_copies(page: Page, page_log: PageLog, pages: Path, screenshot_dir: Path) -> None:
    opened(page, pages / "teacher.html", "teacher page")
    assert sorted(_texts(page, "table.teacher td.bot")) == sorted(STUDENTS)
    copies = _texts(page, "table.copies td.bot")
    assert "greedy and greedy_renamed" in copies
    page.screenshot(path=screenshot_dir / "class-teacher.png")
    assert_clean(page, page_log)
    page.click("table.teacher td.bot a")
    wait_until(page, "location.pathname.includes('/students/') && document.documentElement?.dataset.ready === '1'")

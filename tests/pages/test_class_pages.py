"""A class's pages in headless Chromium: the leaderboard to publish (pseudonyms, no student's name, ordered by the
figure it shows, baselines apart), a student's folder (its page: faults collapsed, a link to the step that caused
the first, results against each baseline, its logs and replays; opened alone, copied away from the class, it
names no classmate, holds no classmate's log and links nowhere outside itself) and the teacher's (copies); each
fits a phone's 390 px. Screenshots go to the folder the run prints."""

from __future__ import annotations

import json
import re
import shutil
from html import unescape
from pathlib import Path

import pytest
from browsing import PageLog, assert_clean, at_phone_size, opened, wait_until
from click.testing import CliRunner
from playwright.sync_api import Page

from tournaments.cli import main
from tournaments.pages.replay_source import load_replay

pytestmark = pytest.mark.timeout(300)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
STUDENTS = ("first_move", "crash_mid_game", "greedy", "greedy_renamed")
LEAGUE = """
game = "scout"
players = 2
seed = 4
deals_per_match = 1
schedule = "baselines"
peers = 1
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
    hashed = [name for name in names if name not in ("Blue Heron", "Red Fox")]
    assert all(re.fullmatch(r"[A-Z][a-z]+ [A-Z][a-z]+ \d\d", name) for name in hashed) and len(set(names)) == 4
    figures = [float(cell.split("%")[0]) for cell in _texts(page, "table.leaderboard td.figure")]
    assert figures == sorted(figures, reverse=True) and len(_texts(page, "td.figure small.interval")) == 4
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
    opened(page, pages / "students" / "crash_mid_game" / "index.html", "student page")
    kinds = _texts(page, "table.faults tr.fault td:first-child")
    counts = _texts(page, "table.faults tr.fault td:nth-child(2)")
    assert kinds == ["crash"] and counts == ["8×"]
    quoted = page.evaluate("document.querySelector('table.faults pre').textContent")
    assert "IndexError" in quoted and 'File "bot.py"' in quoted
    assert str(pages.parent) not in page.evaluate("document.body.innerText"), "a machine path reached the student"
    assert sorted(_texts(page, "table.against td.bot")) == ["heuristic", "random"]
    assert len(_texts(page, "#logs li a")) == 4 and len(_texts(page, "table.games tbody tr")) == 8
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


LINKS = "[...document.querySelectorAll('[href], [src]')].map((node) => node.getAttribute('href') ?? node.src)"


def _alone(pages: Path, student: str, tmp_path: Path) -> Path:
    """The student's folder copied alone into a fresh folder, as a student would be handed it."""
    return Path(shutil.copytree(pages / "students" / student, tmp_path / "handed" / student))


def _stays_inside(folder: Path, page: Path, link: str) -> bool:
    if re.match(r"[a-z][a-z0-9+.-]*:", link, re.I) or link.startswith(("/", "//")):
        return False
    target = (page.parent / link.split("#")[0]).resolve()
    return target.is_relative_to(folder.resolve()) and target.exists()


def _classmates(student: str) -> list[str]:
    """The classmates' names that the student's own name does not contain (greedy is in greedy_renamed)."""
    return [other for other in STUDENTS if other != student and other not in student]


def _others_logs(pages: Path, student: str) -> list[str]:
    logs = pages.parent / "class.logs"
    return [
        text
        for other in STUDENTS
        if other != student
        for log in logs.glob(f"*/{other}.log")
        if (text := log.read_text(errors="replace").strip())
    ]


@pytest.mark.parametrize("student", STUDENTS)
def test_a_student_folder_holds_only_its_own(pages: Path, student: str, tmp_path: Path) -> None:
    """Every file of the folder, replays unpacked: no classmate's name, no classmate's log, no link outside."""
    folder = _alone(pages, student, tmp_path)
    replays = sorted((folder / "replays").glob("*.html"))
    assert len(replays) == 8 and len(list((folder / "logs").glob("*.log"))) == 4
    texts = [path.read_text(errors="replace") for path in folder.rglob("*") if path.is_file()]
    texts += [json.dumps(load_replay(path)) for path in replays]
    seen_classmates = set()
    for path in replays:
        seats = [seat["bot"] for seat in load_replay(path)["seats"]]
        assert student in seats
        seen_classmates |= set(seats) - {student, "random", "heuristic"}
    assert len(seen_classmates) == 2, "the student met no classmate: the test shows nothing"
    for name in _classmates(student):
        assert not any(name in text for text in texts), name
    for log in _others_logs(pages, student):
        assert not any(log in text for text in texts)
    for path in [folder / "index.html", *replays]:
        links = re.findall(r'(?:href|src)="([^"]*)"', path.read_text())
        assert all(_stays_inside(folder, path, unescape(link)) for link in links), links


def test_a_student_folder_opened_alone(
    page: Page, page_log: PageLog, pages: Path, tmp_path: Path, screenshot_dir: Path
) -> None:
    folder = _alone(pages, "first_move", tmp_path)
    opened(page, folder / "index.html", "a student's folder, alone")
    text = page.evaluate("document.documentElement.outerHTML")
    assert not any(name in text for name in _classmates("first_move"))
    links = page.evaluate(LINKS)
    assert len(links) >= 8 + 4 and all(_stays_inside(folder, folder / "index.html", link) for link in links), links
    opponents = _texts(page, "table.games td:nth-child(2)")
    classmates = {name for name in opponents if name not in ("random", "heuristic")}
    assert len(classmates) == 2 and all(
        re.fullmatch(r"[A-Z][a-z]+ [A-Z][a-z]+ \d\d|Blue Heron|Red Fox", name) for name in classmates
    )
    assert_clean(page, page_log)
    row = next(index for index, name in enumerate(opponents) if name in classmates)
    page.click(f"table.games tbody tr:nth-child({row + 1}) a")
    wait_until(page, "document.documentElement?.dataset.ready === '1' && location.pathname.includes('/replays/')")
    shown = page.evaluate("document.body.innerText")
    assert any(name in shown for name in classmates)
    assert not any(name in page.evaluate("document.documentElement.outerHTML") for name in _classmates("first_move"))
    page.screenshot(path=screenshot_dir / "class-student-replay.png")
    assert not any(
        link and not _stays_inside(folder, Path(page.url.split("#")[0][7:]), link) for link in page.evaluate(LINKS)
    )
    assert_clean(page, page_log)


CUT_OFF = """() => [...document.body.querySelectorAll('*')].filter((node) => {
    const box = node.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) return false;
    const clipped = getComputedStyle(node).overflowX !== 'visible' && node.scrollWidth > node.clientWidth + 1;
    return box.left < -1 || box.right > innerWidth + 1 || clipped;
}).map((node) => `${node.tagName}.${node.className}: ${node.textContent.slice(0, 60)}`)"""
"""Every element drawn that reaches past the screen's edges, or whose content is cut off by its own box (a table
in a box that scrolls sideways shows only its first columns: the phone's reader never sees the rest)."""
UNLABELLED = """[...document.querySelectorAll('div.scroll > table > tbody td:not(.bot)')]
    .filter((cell) => {
        const heading = cell.closest('table').tHead.rows[0].cells[cell.cellIndex];
        return cell.textContent.trim() !== heading.textContent.trim();
    })
    .filter((cell) => !cell.dataset.label || !getComputedStyle(cell, '::before').content.includes(cell.dataset.label))
    .map((cell) => cell.textContent)"""
"""Every table cell not labelled with its column's heading on the phone's screen (but a cell that says its
heading already, such as a "replay" link under "replay")."""


@at_phone_size
@pytest.mark.parametrize(
    "which",
    ["leaderboard.html", "teacher.html", *(f"students/{student}/index.html" for student in STUDENTS)],
)
def test_the_class_pages_fit_a_phone(
    page: Page, page_log: PageLog, pages: Path, which: str, screenshot_dir: Path
) -> None:
    """Nothing of a class page is cut off at 390 px: its tables stack, a row to a card, each cell under its
    column's heading (they scrolled sideways in boxes of their own, which showed a phone the first columns)."""
    opened(page, pages / which, f"class page at 390 px: {which}")
    assert page.evaluate("innerWidth") == 390
    width = page.evaluate("document.scrollingElement.scrollWidth")
    assert width <= 390, f"{which} is {width} px wide"
    assert page.evaluate(CUT_OFF) == []
    assert page.evaluate("document.querySelectorAll('div.scroll > table > tbody td').length") >= 4
    assert page.evaluate(UNLABELLED) == []
    page.screenshot(path=screenshot_dir / f"class-phone-{which.replace('/', '-')}.png", full_page=True)
    assert_clean(page, page_log)


@at_phone_size
def test_a_replay_in_a_student_folder_fits_a_phone(
    page: Page, page_log: PageLog, pages: Path, tmp_path: Path, screenshot_dir: Path
) -> None:
    """The seats table of a replay page scrolled sideways in a box of its own: a phone saw the seat, the bot and
    the rank, and the decisions, times and faults were cut off. It stacks as the class tables do."""
    folder = _alone(pages, "crash_mid_game", tmp_path)
    replay = sorted((folder / "replays").glob("*.html"))[0]
    opened(page, replay, "a student's replay at 390 px")
    assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
    assert page.evaluate(CUT_OFF) == []
    labels = page.evaluate(
        "[...document.querySelectorAll('table.seats td[data-label]')].map((cell) => cell.dataset.label)"
    )
    assert labels.count("faults") == 2 and labels.count("decisions") == 2
    page.screenshot(path=screenshot_dir / "class-phone-student-replay.png")
    assert_clean(page, page_log)

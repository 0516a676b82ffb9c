"""The copies report on the staff page and at GET /api/copies: staff see the leads (escaped), a student's token
gets the staff-only refusal. What makes a lead is the ladder library's tests' business (tests/ladder)."""

from __future__ import annotations

import re
from pathlib import Path

from browsing import PHONE, at_phone_size
from playwright.sync_api import Page
from served import Served, bearer

from tournaments.ladder import JobKind, JobResult

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
def pick(moves):
    sets = [m for m in moves if m["kind"] == "show"]
    if not sets:
        return moves[0]
    return max(sets, key=lambda m: (m["length"], -m["start"]))


def decide(obs, moves):
    for m in moves:
        if m["kind"] == "orient" and not m["flip"]:
            return m
    return pick(moves)
"""

ODD_NAME = "<em>strategy.py"
LONG_NAME = "my_own_strategy_for_the_scout_ladder_with_no_space_in_its_long_name_at_all.py"
STYLESHEET = Path(__file__).resolve().parents[2] / "tournaments" / "server" / "static" / "ladder.css"


def accepted_copies(served: Served, tmp_path: Path, file_name: str = ODD_NAME) -> None:
    """ann and bob submit the same code renamed, in a file named `file_name`; their checks pass."""
    for name, text in (("ann", ORIGINAL), ("bob", RENAMED)):
        folder = tmp_path / "src" / name
        folder.mkdir(parents=True)
        (folder / file_name).write_text(text)
        served.ladder.submit(served.ladder.authenticate(served.students[name]), folder)
    worker = served.ladder.authenticate(served.worker)
    while (job := served.ladder.claim(worker, "checker")) is not None:
        if job.kind is JobKind.CHECK:
            served.ladder.report(worker, job.id, JobResult(JobKind.CHECK, {"passed": True, "verdict": "ok"}))


def test_the_staff_page_shows_the_possible_copies_escaped(served: Served, tmp_path: Path) -> None:
    accepted_copies(served, tmp_path)
    page = served.client.get("/staff", headers=bearer(served.admin))
    assert page.status_code == 200
    section = re.search(r'<section id="copies">(.*?)</section>', page.text, re.S)
    assert section is not None
    assert "<strong>ann</strong> and <strong>bob</strong>" in section.group(1)
    assert "similar code, 100% shared" in section.group(1)
    assert "&lt;em&gt;strategy.py" in section.group(1) and ODD_NAME not in section.group(1)
    assert "fingerprints after the base code is removed" in section.group(1)


def test_the_api_gives_staff_the_leads_and_a_student_the_refusal(served: Served, tmp_path: Path) -> None:
    accepted_copies(served, tmp_path)
    answer = served.client.get("/api/copies", headers=bearer(served.admin))
    assert answer.status_code == 200
    (lead,) = answer.json()["leads"]
    assert lead["students"] == ["ann", "bob"] and lead["files"] == [[ODD_NAME], [ODD_NAME]]
    refused = served.client.get("/api/copies", headers=bearer(served.students["ann"]))
    assert refused.status_code == 403 and refused.json() == {"error": "forbidden", "message": "a student may not staff"}
    assert "leads" not in refused.text


@at_phone_size
def test_the_copies_section_fits_a_phone(served: Served, tmp_path: Path, page: Page, screenshot_dir: Path) -> None:
    accepted_copies(served, tmp_path, LONG_NAME)
    html = served.client.get("/staff", headers=bearer(served.admin)).text
    assert LONG_NAME in html
    page.set_content(html.replace('<link rel="stylesheet" href="/static/ladder.css">', ""))
    page.add_style_tag(content=STYLESHEET.read_text())
    assert page.evaluate("innerWidth") == PHONE["width"]
    assert page.locator("#copies li").count() == 1
    width = page.evaluate("document.scrollingElement.scrollWidth")
    assert width <= PHONE["width"], f"the staff page is {width} px wide"
    page.screenshot(path=screenshot_dir / "ladder-staff-copies-phone.png", full_page=True)

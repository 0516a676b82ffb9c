"""The pages in headless Chromium, checked as a person would: nothing goes wrong in the console, nothing is
fetched, the first hand is drawn and visible, stepping (keys, buttons, the timeline's marks, play) changes the
board, a seat's view shows that seat's hand and none of the cards hidden from it, and the report shows every
bot. A screenshot of each page at a mid-game step goes to the folder printed at the end of the run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from browsing import PageLog, assert_clean, opened, wait_until
from playwright.sync_api import Page

from tournaments.pages.scout import card_text
from tournaments.pages.timeline import replay_steps

pytestmark = pytest.mark.timeout(240)

VISIBLE_FACES = """(selector) => [...document.querySelectorAll(selector + ' [data-card]')].map((card) => {
  const box = card.getBoundingClientRect();
  const style = getComputedStyle(card);
  const shown = box.width > 10 && box.height > 10 && box.right <= innerWidth && box.bottom > 0 && box.top < innerHeight
    && style.visibility === 'visible' && Number(style.opacity) > 0.5;
  return shown ? card.dataset.card : '(hidden) ' + card.dataset.card;
})"""


def faces(page: Page, selector: str) -> list[str]:
    return list(page.evaluate(f"({VISIBLE_FACES})({json.dumps(selector)})"))


def board(page: Page) -> str:
    return str(page.evaluate("document.getElementById('board').innerHTML"))


def step_of(page: Page) -> int:
    return int(page.evaluate("document.documentElement.dataset.step"))


def go(page: Page, step: int, view: str) -> None:
    page.evaluate(f"location.hash = 'step={step}&view={view}'")
    wait_until(
        page,
        f"document.documentElement.dataset.step === '{step}' && document.documentElement.dataset.view === '{view}'",
    )


def assert_same_observations(page: Page, replay: dict[str, Any], steps: list[int]) -> None:
    """The page's script rebuilds exactly the observations the engine gives (checked at a few steps)."""
    by_step = {step.index: step.observations for step in replay_steps(replay) if step.index in steps}
    for step in steps:
        for seat in range(replay["players"]):
            shown = page.evaluate(f"JSON.stringify(RefereeViewer.viewer.observation({seat}, {step}))")
            assert json.loads(shown) == json.loads(json.dumps(by_step[step][seat])), (step, seat)


def test_scout_page(
    page: Page, page_log: PageLog, scout_replay: dict[str, Any], scout_page: Path, screenshot_dir: Path
) -> None:
    opened(page, scout_page, "SCOUT page, 5 seats")
    steps = list(replay_steps(scout_replay))
    first_hand = [card_text(card) for card in steps[0].observations[0]["hand"]]
    assert faces(page, '[data-hand="0"]') == first_hand
    before = board(page)
    page.keyboard.press("ArrowRight")
    assert step_of(page) == 1 and board(page) != before
    page.click("#forward")
    assert step_of(page) == 2
    wait_until(page, "location.hash === '#step=2&view=full'", timeout_ms=10_000)
    page.keyboard.press("PageDown")
    assert step_of(page) == next(step.index for step in steps if step.observations[0]["round"] == 2)
    page.keyboard.press("Home")
    assert step_of(page) == 0

    middle = len(steps) // 2
    go(page, middle, "1")
    seen = steps[middle].observations[1]
    assert faces(page, '[data-hand="1"]') == [card_text(card) for card in seen["hand"]]
    for other in (0, 2, 3, 4):
        assert faces(page, f'[data-hand="{other}"]') == []
        assert (
            page.evaluate(f"document.querySelectorAll('[data-hand=\"{other}\"] .back').length")
            == seen["hand_sizes"][other]
        )
    public = {card_text(card) for card in seen["hand"] + seen["active_set"]}
    assert set(faces(page, "#board")) <= public
    assert_same_observations(page, scout_replay, [0, middle, len(steps) - 1])

    go(page, middle, "full")
    page.screenshot(path=screenshot_dir / "replay-scout.png")
    assert_clean(page, page_log)


def test_scauver_page(
    page: Page, page_log: PageLog, scauver_replay: dict[str, Any], scauver_page: Path, screenshot_dir: Path
) -> None:
    opened(page, scauver_page, "Scauver page, 4 seats, 200 rounds")
    steps = list(replay_steps(scauver_replay))
    assert faces(page, '[data-hand="0"]') == steps[0].observations[0]["hand"]

    marks = page.evaluate("[...document.querySelectorAll('.fault-mark')].map((mark) => Number(mark.dataset.step))")
    assert marks == [fault["before_action"] + 1 for fault in scauver_replay["faults"]]
    page.click(".fault-mark")
    assert step_of(page) == marks[0]
    assert "no reply within 1000 ms" in page.evaluate("document.querySelector('.caption-fault').textContent")

    page.evaluate("(() => { const speed = document.getElementById('speed'); speed.value = '100'; })()")
    page.click("#play")
    wait_until(page, f"Number(document.documentElement.dataset.step) >= {marks[0] + 20}")
    page.keyboard.press("Space")
    stopped = step_of(page)
    page.wait_for_timeout(100)
    assert step_of(page) == stopped

    middle = next(
        step.index for step in steps if step.index > len(steps) // 2 and step.observations[2]["phase"] == "place"
    )
    go(page, middle, "2")
    seen = steps[middle].observations[2]
    assert faces(page, '[data-hand="2"]') == seen["hand"]
    public = set(seen["hand"])
    for field in seen["fields"] + (seen["last_round"]["fields"] if seen["last_round"] else []):
        public |= set(field["left"]) | set(field["right"])
    for other in (0, 1, 3):
        assert faces(page, f'[data-hand="{other}"]') == []
    assert set(faces(page, "#board")) <= public
    assert_same_observations(page, scauver_replay, [0, middle, len(steps) - 1])

    go(page, middle, "full")
    page.screenshot(path=screenshot_dir / "replay-scauver.png")
    assert_clean(page, page_log)


def test_report_page_shows_every_bot_and_opens_the_replays(
    page: Page, page_log: PageLog, played_league: Path, screenshot_dir: Path, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from tournaments.cli import main

    report = played_league.parent / "report.html"
    result = CliRunner().invoke(
        main, ["tournament", "report", str(played_league), "-o", str(report), "--bootstrap", "50"]
    )
    assert result.exit_code == 0, result.output
    opened(page, report, "league report")
    bots = page.evaluate("[...document.querySelectorAll('table.elo tbody tr')].map((row) => row.dataset.bot)")
    assert sorted(bots) == ["heuristic", "illegal", "random"]
    assert page.evaluate("document.querySelectorAll('svg.interval-bar circle.rating').length") == 3
    assert page.evaluate("document.querySelectorAll('table.crosstable td.heat').length") == 6
    names = page.evaluate(
        "[...document.querySelectorAll('table.elo td.bot')]"
        ".map((cell) => cell.getBoundingClientRect().width > 0 && cell.textContent)"
    )
    assert sorted(names) == ["heuristic", "illegal", "random"]
    page.screenshot(path=screenshot_dir / "report.png")
    assert_clean(page, page_log)

    page.click("table.games a")
    replay_opened = "location.pathname.endsWith('.html') && !location.pathname.endsWith('report.html')"
    wait_until(page, f"{replay_opened} && document.documentElement?.dataset.ready === '1'")
    assert page.evaluate("document.querySelectorAll('[data-hand] [data-card]').length") > 0
    assert_clean(page, page_log)

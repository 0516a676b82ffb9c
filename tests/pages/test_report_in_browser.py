"""The report of a large league in headless Chromium (30 bots, 500 games, made up): the crosstable names its bots
in rows and columns and keeps the names in view while it scrolls, a cell lists that pair's games, the games table
sorts by a column and filters by a pair, "/" and Escape work after a control was used, the page fits a phone,
and every text on it (and on a replay page) reads at a contrast of at least 4.5:1 and at 11 px or more."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from browsing import PHONE, PageLog, assert_clean, at_phone_size, open_page, wait_until
from playwright.sync_api import Page

from tournaments.league.store import BotTiming, StoredFault
from tournaments.league_report import BotActivity, GameEntry, LeagueReport
from tournaments.pages.report_page import render_report_page
from tournaments.ratings.elo import rate

pytestmark = pytest.mark.timeout(240)
at_1280_by_900 = pytest.mark.browser_context_args(viewport={"width": 1280, "height": 900})

BOTS = [f"student{number:02d}" for number in range(30)]

CONTRAST = """(() => {
  const parse = (colour) => { const m = colour.match(/[\\d.]+/g).map(Number); return m.length > 3 ? m : [...m, 1]; };
  const lum = ([r, g, b]) => { const f = (c) => (c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const background = (node) => {
    for (; node && node.nodeType === 1; node = node.parentElement) {
      const style = getComputedStyle(node);
      if (style.backgroundImage !== 'none') return null;
      const colour = parse(style.backgroundColor);
      if (colour[3] > 0.5) return colour;
    }
    return [255, 255, 255, 1];
  };
  const bad = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const text = walker.currentNode;
    const node = text.parentElement;
    if (!text.textContent.trim() || !node.getClientRects().length || node.closest('script, style, svg.chart')) continue;
    const style = getComputedStyle(node);
    if (style.visibility !== 'visible' || Number(style.opacity) < 0.9 || node.closest('.inactive')) continue;
    const size = parseFloat(style.fontSize);
    const behind = background(node);
    const [ink, paper] = behind ? [lum(parse(style.color)), lum(behind)] : [1, 0];
    const contrast = (Math.max(ink, paper) + 0.05) / (Math.min(ink, paper) + 0.05);
    if (size < 11 || contrast < 4.5) {
      bad.push(text.textContent.trim().slice(0, 30) + ' (' + size + ' px, ' + contrast.toFixed(2) + ')');
    }
  }
  return [...new Set(bad)];
})()"""


@pytest.fixture(scope="module")
def big_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[LeagueReport, Path]:
    rng = random.Random(1)
    games, entries = [], []
    for number in range(500):
        seats = rng.sample(BOTS, 4)
        ranks = rng.sample(range(1, 5), 4)
        games.append(dict(zip(seats, ranks, strict=True)))
        scores = tuple(10 - 3 * rank for rank in ranks)
        entries.append(
            GameEntry(
                f"m{number // 4:03d}", number % 4, tuple(seats), tuple(ranks), 0, None, scores, rng.randrange(100, 300)
            )
        )
    faults = tuple(
        StoredFault(
            entries[n].match_id,
            entries[n].index,
            0,
            entries[n].seats[0],
            "crash",
            f"the bot exited with status 1 during game {n}; its last output:\n| oops",
        )
        for n in range(124)
    )
    activity = tuple(BotActivity(bot, 66, {"crash": 4}, BotTiming(100, 2.0, 9.0)) for bot in BOTS)
    report = LeagueReport("big", "scout", rate(games, bootstrap=50, seed=0), activity, tuple(entries), faults)
    folder = tmp_path_factory.mktemp("report")
    path = folder / "report.html"
    path.write_text(render_report_page(report, folder), encoding="utf-8")
    return report, path


def shown_games(page: Page) -> list[dict[str, Any]]:
    return list(
        page.evaluate(
            "[...document.querySelectorAll('table.games tbody tr')].filter((row) => !row.hidden)"
            ".map((row) => ({bots: JSON.parse(row.dataset.bots), length: Number(row.cells[3].textContent)}))"
        )
    )


@at_1280_by_900
def test_the_crosstable_names_the_bots_and_a_cell_lists_the_pairs_games(
    page: Page, page_log: PageLog, big_report: tuple[LeagueReport, Path], screenshot_dir: Path
) -> None:
    report, path = big_report
    open_page(page, path)
    columns = page.evaluate(
        "[...document.querySelectorAll('table.crosstable thead th.opponent')].map((th) => th.textContent)"
    )
    rows = page.evaluate("[...document.querySelectorAll('table.crosstable tbody th.bot')].map((th) => th.textContent)")
    order = [bot.bot for bot in report.ratings.bots]
    assert columns == rows == order
    page.evaluate("document.querySelector('.crosstable-box').scrollLeft = 2000")
    page.evaluate("document.querySelector('#crosstable').scrollIntoView()")
    name = page.evaluate(
        "(() => { const th = document.querySelector('table.crosstable tbody th.bot');"
        " const box = document.querySelector('.crosstable-box').getBoundingClientRect();"
        " return th.getBoundingClientRect().left - box.left; })()"
    )
    assert abs(name) < 2, "the names stay in view when the table scrolls sideways"
    page.screenshot(path=screenshot_dir / "report-crosstable.png")
    page.evaluate("document.querySelector('.crosstable-box').scrollLeft = 0")
    cell = "table.crosstable tbody tr:nth-child(3) td.heat"
    pair = page.evaluate(
        f"(() => {{ const c = document.querySelector('{cell}');"
        " return [c.parentElement.cells[0].textContent,"
        " c.closest('table').tHead.rows[0].cells[c.cellIndex].textContent]; })()"
    )
    page.evaluate(f"document.querySelector('{cell}').scrollIntoView({{block: 'center'}})")
    page.click(cell + " a")
    games = shown_games(page)
    expected = [game for game in report.games if set(pair) <= set(game.seats)]
    assert len(games) == len(expected) > 0 and all(set(pair) <= set(game["bots"]) for game in games)
    assert page.evaluate("document.getElementById('games-shown').textContent") == f"{len(expected)} of 500 games shown"
    assert_clean(page, page_log)


@at_1280_by_900
def test_the_games_sort_by_a_column_and_keys_work_after_a_control_was_used(
    page: Page, page_log: PageLog, big_report: tuple[LeagueReport, Path]
) -> None:
    _, path = big_report
    open_page(page, path)
    page.evaluate("document.querySelector('table.games th[data-kind=\"number\"]:nth-child(4) button').scrollIntoView()")
    page.click("table.games thead th:nth-child(4) button")
    lengths = [game["length"] for game in shown_games(page)]
    assert lengths == sorted(lengths)
    page.click("table.games thead th:nth-child(4) button")
    lengths = [game["length"] for game in shown_games(page)]
    assert lengths == sorted(lengths, reverse=True)
    assert page.evaluate("document.activeElement.tagName") == "BODY"
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "bot-filter"
    page.evaluate(
        "(() => { const s = document.getElementById('bot-filter'); s.value = 'student03';"
        " s.dispatchEvent(new Event('change', { bubbles: true })); })()"
    )
    assert all("student03" in game["bots"] for game in shown_games(page))
    assert page.evaluate("document.activeElement.id") != "bot-filter"
    page.keyboard.press("Escape")
    assert len(shown_games(page)) == 500
    assert_clean(page, page_log)


@at_phone_size
def test_the_report_fits_a_phone(
    page: Page, page_log: PageLog, big_report: tuple[LeagueReport, Path], screenshot_dir: Path
) -> None:
    _, path = big_report
    open_page(page, path)
    assert page.evaluate("innerWidth") == PHONE["width"]
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    page.screenshot(path=screenshot_dir / "report-phone.png")
    assert_clean(page, page_log)


@at_1280_by_900
def test_every_text_reads_at_4_5_to_1_and_11_px(
    page: Page, big_report: tuple[LeagueReport, Path], scout_page: Path, scauver_page: Path
) -> None:
    _, path = big_report
    open_page(page, path)
    assert page.evaluate(CONTRAST) == []
    for replay_page, steps in ((scout_page, (0, 21, 40, 172)), (scauver_page, (0, 41, 401, 900))):
        open_page(page, replay_page)
        for step in steps:
            page.evaluate(f"location.hash = 'step={step}&view=full'")
            wait_until(page, f"document.documentElement.dataset.step === '{step}'")
            found = page.evaluate(CONTRAST)
            assert found == [], (replay_page.name, step, json.dumps(found))

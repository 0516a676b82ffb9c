"""The replay page's parts in headless Chromium, used as a person would: the move list (grouped by round, a click
goes to its step, it follows the current step), a SCOUT round's final position and the game-over standings, the
chart's jump to a step, the decision view (legal moves with the one played, the clock, the illegal action as
sent, the log link), the keys after a control was used, and the page at phone size (390 x 844): nothing scrolls
sideways, a hand stays a row of cards, the sticky controls cover at most a fifth of the screen."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from browsing import PHONE, PageLog, assert_clean, at_phone_size, open_page, wait_until
from page_figures import FIGURES
from playwright.sync_api import Page
from replays import forfeited, self_play

from tournaments.pages.timeline import replay_steps
from tournaments.pages.writer import write_replay_page

pytestmark = pytest.mark.timeout(240)

SENT = '{"kind":"show","start":9,"length":3}'


@pytest.fixture(scope="module")
def scout_game(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    """A 5-seat SCOUT game with an illegal action (as sent) at action 20, the seats' logs beside the page."""
    replay = self_play(
        "scout",
        ["heuristic", "random", "heuristic", "random", "random"],
        seed=5,
        faults={20: ("illegal_action", "request 21: cards 9..11 are not in a hand of 9 cards")},
    )
    replay["faults"][0]["sent"] = SENT
    for seat in replay["seats"]:
        seat["log"] = f"logs/{seat['bot']}.log"
    folder = tmp_path_factory.mktemp("parts")
    return replay, write_replay_page(replay, folder / "scout.html")


def opened(page: Page, path: Path, fragment: str = "") -> Page:
    open_page(page, path, fragment)
    assert page.evaluate("document.documentElement.dataset.ready") == "1"
    return page


def click_shown(page: Page, selector: str) -> None:
    """Scroll the element into view, as a person would before clicking it, and click it."""
    page.evaluate(f"document.querySelector({json.dumps(selector)}).scrollIntoView({{block: 'center'}})")
    page.click(selector)


def step_of(page: Page) -> int:
    return int(page.evaluate("document.documentElement.dataset.step"))


def go(page: Page, step: int, view: str = "full") -> None:
    page.evaluate(f"location.hash = 'step={step}&view={view}'")
    wait_until(page, f"document.documentElement.dataset.step === '{step}'")


def test_the_move_list_lists_every_move_by_round_and_follows_the_step(
    page: Page, page_log: PageLog, scout_game: tuple[dict[str, Any], Path]
) -> None:
    replay, path = scout_game
    opened(page, path)
    steps = page.evaluate("[...document.querySelectorAll('#moves .ml-move')].map((row) => Number(row.dataset.step))")
    assert steps == list(range(len(replay["actions"]) + 1))
    assert page.evaluate("document.querySelectorAll('#moves .ml-round').length") == replay["players"]
    rounds = [step.observations[0]["round"] for step in replay_steps(replay)]
    for number in range(1, replay["players"] + 1):
        rows = f".ml-round[data-round='{number}'] .ml-move"
        listed = page.evaluate(f"[...document.querySelectorAll({json.dumps(rows)})].map((r) => Number(r.dataset.step))")
        assert all(rounds[step - 1] == number for step in listed if step), number
    assert "round 1 ends" in page.evaluate("document.querySelector('.ml-round[data-round=\"1\"]').textContent")
    fault = page.evaluate("document.querySelector('#moves .ml-fault').textContent")
    assert "illegal action of seat 2" in fault
    group = f"#moves .ml-round[data-round='{rounds[39]}']"
    assert page.evaluate(f"document.querySelector({json.dumps(group)} + ' details').open") is False
    click_shown(page, group + " summary")
    click_shown(page, '#moves .ml-move[data-step="40"]')
    assert step_of(page) == 40
    assert page.evaluate("document.querySelector('#moves .ml-move.current').dataset.step") == "40"
    page.keyboard.press("ArrowRight")
    assert page.evaluate("document.querySelector('#moves .ml-move.current').dataset.step") == "41"
    go(page, 150)
    visible = page.evaluate(
        "(() => { const box = document.getElementById('moves').getBoundingClientRect();"
        " const row = document.querySelector('#moves .ml-move.current').getBoundingClientRect();"
        " return row.top >= box.top && row.bottom <= box.bottom; })()"
    )
    assert visible, "the list scrolls to the current move"
    assert_clean(page, page_log)


def test_a_round_end_is_drawn_and_the_game_over_panel_ranks_the_seats(
    page: Page, page_log: PageLog, scout_game: tuple[dict[str, Any], Path], screenshot_dir: Path
) -> None:
    replay, path = scout_game
    steps = list(replay_steps(replay))
    ended = next(step for step in steps if step.index and len(step.observations[0]["finished_rounds"]) == 1)
    finished = ended.observations[0]["finished_rounds"][0]
    opened(page, path, f"#step={ended.index}&view=full")
    assert page.evaluate("document.querySelector('[data-round-end]').dataset.roundEnd") == "1"
    sizes = page.evaluate(
        "[...document.querySelectorAll('[data-end-hand]')].map((hand) => hand.querySelectorAll('[data-card]').length)"
    )
    assert sizes == finished["hand_sizes"]
    page.screenshot(path=screenshot_dir / "replay-scout-round-end.png")
    go(page, ended.index, "1")
    hidden = page.evaluate("document.querySelectorAll('[data-end-hand=\"0\"] .back').length")
    assert hidden == finished["hand_sizes"][0]
    go(page, ended.index + 1)
    assert page.evaluate("document.querySelectorAll('[data-round-end]').length") == 0
    assert page.evaluate("document.getElementById('game-over')") is None
    page.keyboard.press("End")
    order = page.evaluate(
        "[...document.querySelectorAll('#game-over tbody tr')].map((row) => Number(row.dataset.seat))"
    )
    assert order == sorted(range(replay["players"]), key=lambda seat: (replay["ranks"][seat], seat))
    cells = page.evaluate(
        "[...document.querySelectorAll('#game-over tbody tr')].map((row) => row.cells[2].textContent)"
    )
    assert cells == [str(replay["scores"][seat]) for seat in order]
    page.screenshot(path=screenshot_dir / "replay-scout-game-over.png")
    assert_clean(page, page_log)


def test_a_click_on_the_chart_goes_to_the_step_under_it(
    page: Page, page_log: PageLog, scout_game: tuple[dict[str, Any], Path]
) -> None:
    replay, path = scout_game
    opened(page, path)
    assert page.evaluate("document.querySelectorAll('svg.chart path.chart-line').length") == replay["players"]
    last = len(replay["actions"])
    chart = page.locator("svg.chart")
    for share in (0.5, 0.9):
        chart.scroll_into_view_if_needed()
        box = chart.bounding_box()
        assert box is not None
        chart.click(position={"x": share * box["width"], "y": box["height"] / 2})
        wait_until(page, f"Math.abs(Number(document.documentElement.dataset.step) - {share * last}) <= {0.03 * last}")
    cursor = float(page.evaluate("document.querySelector('.chart-cursor').getAttribute('x1')"))
    assert abs(cursor / 600 - 0.9) < 0.03
    assert_clean(page, page_log)


def test_the_decision_view_shows_the_legal_moves_the_clock_and_the_action_sent(
    page: Page, page_log: PageLog, scout_game: tuple[dict[str, Any], Path], screenshot_dir: Path
) -> None:
    replay, path = scout_game
    opened(page, path, "#step=21&view=full")
    wait_until(page, "document.querySelector('#decision ol.legal')")
    assert page.evaluate("document.querySelector('#decision code.sent').textContent") == SENT
    assert "cards 9..11" in page.evaluate("document.querySelector('#decision .decision-fault').textContent")
    assert "fallback" in page.evaluate("document.querySelector('#decision .clock').textContent")
    assert page.evaluate("document.querySelectorAll('#decision ol.legal li.chosen').length") == 1
    page.screenshot(path=screenshot_dir / "replay-scout-decision.png")

    go(page, 40)
    wait_until(page, "document.querySelector('#decision ol.legal li.chosen')")
    move = replay["actions"][39]
    steps = list(replay_steps(replay))
    legal = list(steps[40].legal)
    assert page.evaluate("document.querySelectorAll('#decision ol.legal li[data-option]').length") == len(legal)
    assert int(page.evaluate("document.querySelector('#decision li.chosen').dataset.option")) == legal.index(
        move["action"]
    )
    clock = page.evaluate("document.querySelector('#decision .clock').textContent")
    assert f"{move['ms']:.1f} ms of 1000 ms" in clock
    log = page.evaluate("document.querySelector('#decision a.log-link').getAttribute('href')")
    assert log == replay["seats"][move["seat"]]["log"]
    click_shown(page, "#decision details.shown summary")
    wait_until(page, "document.querySelector('#decision details.shown pre').textContent.length > 0")
    shown = page.evaluate("document.querySelector('#decision details.shown pre').textContent")
    assert shown.count("\n") < 80 and "hand: " in shown, "an observation is a few readable lines, not JSON"
    other = (move["seat"] + 1) % replay["players"]
    go(page, 40, str(other))
    wait_until(page, "document.querySelector('#decision').dataset.view === '" + str(other) + "'")
    assert page.evaluate("document.querySelectorAll('#decision ol.legal').length") == 0
    assert_clean(page, page_log)


def test_keys_still_work_after_a_control_was_used(
    page: Page, page_log: PageLog, scout_game: tuple[dict[str, Any], Path]
) -> None:
    _, path = scout_game
    opened(page, path)
    page.click("#forward")
    assert step_of(page) == 1
    page.keyboard.press("ArrowRight")
    assert step_of(page) == 2
    page.keyboard.press("Space")
    assert page.evaluate("document.getElementById('play').classList.contains('playing')")
    page.keyboard.press("Space")
    assert not page.evaluate("document.getElementById('play').classList.contains('playing')")
    stopped = step_of(page)
    page.click("#view")
    page.evaluate(
        "(() => { const s = document.getElementById('view'); s.value = '2';"
        " s.dispatchEvent(new Event('change', { bubbles: true })); })()"
    )
    assert page.evaluate("document.activeElement.id") != "view"
    page.keyboard.press("ArrowRight")
    assert step_of(page) == stopped + 1
    page.keyboard.press("f")
    assert page.evaluate("document.documentElement.dataset.view") == "full"
    page.click("#slider")
    before = step_of(page)
    page.keyboard.press("ArrowLeft")
    assert step_of(page) == before - 1, "the slider's own arrow step and the page's do not both happen"
    assert_clean(page, page_log)


@at_phone_size
@pytest.mark.parametrize("game", ["scout", "scauver"])
def test_at_phone_size_nothing_scrolls_sideways_and_the_moves_are_listed(
    page: Page,
    page_log: PageLog,
    game: str,
    scout_game: tuple[dict[str, Any], Path],
    scauver_page: Path,
    scauver_replay: dict[str, Any],
    screenshot_dir: Path,
) -> None:
    replay, path = scout_game if game == "scout" else (scauver_replay, scauver_page)
    seconds = open_page(page, path)
    assert page.evaluate("[innerWidth, innerHeight]") == [PHONE["width"], PHONE["height"]]
    FIGURES.append(f"{game} page at 390 x 844: drawn in {seconds * 1000:.0f} ms")
    fault_step = replay["faults"][-1]["before_action"] + 1
    for step in (0, len(replay["actions"]) // 2, fault_step, len(replay["actions"])):
        go(page, step)
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], step
        height = page.evaluate("document.getElementById('player').getBoundingClientRect().height")
        assert height <= PHONE["height"] / 5, (step, height)
    assert page.evaluate("document.querySelectorAll('#moves .ml-move').length") == len(replay["actions"]) + 1
    go(page, len(replay["actions"]) // 2)
    tops = page.evaluate(
        "[...document.querySelectorAll('[data-hand=\"0\"] [data-card]')].map((c) => c.getBoundingClientRect().top)"
    )
    assert len(tops) >= 2 and tops[0] == tops[1], "a hand is a row of cards"
    go(page, fault_step)
    page.screenshot(path=screenshot_dir / f"replay-{game}-phone.png")
    go(page, len(replay["actions"]) // 2)
    page.screenshot(path=screenshot_dir / f"replay-{game}-phone-middle.png")
    assert_clean(page, page_log)


def test_six_and_nine_are_underlined_and_nothing_else_is(page: Page, scout_game: tuple[dict[str, Any], Path]) -> None:
    _, path = scout_game
    opened(page, path)
    numbers = page.evaluate(
        "[...document.querySelectorAll('#board .sc-top, #board .sc-bottom')].map((span) =>"
        " [span.textContent, getComputedStyle(span).textDecorationLine])"
    )
    assert {text for text, line in numbers if line == "underline"} == {"6", "9"}
    assert all(line == "none" for text, line in numbers if text not in ("6", "9"))


def test_a_forfeited_seat_is_marked_from_its_fault_on(page: Page, page_log: PageLog, tmp_path: Path) -> None:
    replay = forfeited(self_play("scout", ["heuristic", "random", "random"], seed=4), 1)
    path = write_replay_page(replay, tmp_path / "forfeit.html")
    at = replay["faults"][0]["before_action"] + 1
    opened(page, path, f"#step={at - 1}&view=full")
    badge = "document.querySelectorAll('.seat-row[data-seat=\"1\"] .badge.forfeit').length"
    assert page.evaluate(badge) == 0
    go(page, at)
    assert page.evaluate(badge) == 1
    assert page.evaluate("document.querySelectorAll('table.seats .badge.forfeit').length") == 1
    page.keyboard.press("End")
    row = page.evaluate("document.querySelector('#game-over tr[data-seat=\"1\"]').textContent")
    assert "forfeited" in row and f"the game counted {replay['result']['scores'][1]}" in row
    assert_clean(page, page_log)


def test_a_showdown_gives_the_chips_when_the_pot_was_paid(
    page: Page, page_log: PageLog, scauver_replay: dict[str, Any], scauver_page: Path
) -> None:
    steps = list(replay_steps(scauver_replay))
    paid = next(
        step
        for before, step in zip(steps, steps[1:], strict=False)
        if step.observations[0]["last_round"] != before.observations[0]["last_round"]
        and not step.observations[0]["last_round"]["by_fold"]
    )
    opened(page, scauver_page, f"#step={paid.index}&view=full")
    text = page.evaluate("document.querySelector('[data-paid]').textContent")
    table = paid.observations[0]
    total = sum(table["chips"]) + sum(table["put"])
    assert total == scauver_replay["players"] * scauver_replay["config"]["starting_chips"]
    assert text.startswith("chips when the pot was paid: seat 0 " + str(table["chips"][0] + table["put"][0]))
    assert_clean(page, page_log)

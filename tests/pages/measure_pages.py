"""Page size and draw time of three pages that are large for their kind: a 5-seat SCOUT game, a Scauver game of
3,972 decisions (four heuristics, seed 0) and the report of a 30-bot, 500-game league (made up: no bots run).
Run from the worktree:

    .venv/bin/python tests/pages/measure_pages.py OUT_FOLDER

It prints one line per page: its size and the milliseconds from navigation to drawn (the page's own
`data-ready-at`), the median of three loads in headless Chromium (Debian's, driven by Playwright). Written only
against the public API that main's pages already had, so the same script measures before and after."""

from __future__ import annotations

import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from browsing import CHROMIUM, CHROMIUM_ARGS, DESKTOP, open_page  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402
from replays import self_play  # noqa: E402

from tournaments.league.store import BotTiming, StoredFault  # noqa: E402
from tournaments.league_report import BotActivity, GameEntry, LeagueReport  # noqa: E402
from tournaments.pages.report_page import render_report_page  # noqa: E402
from tournaments.pages.writer import write_replay_page  # noqa: E402
from tournaments.ratings.elo import rate  # noqa: E402

TRACEBACK = (
    "the bot exited with status 1 during game {game}; its last output:\n| Traceback (most recent call last):\n"
    '|   File "/home/organiser/league/bots/crashy/bot.py", line 12, in <module>\n|     main()\n'
    "| RuntimeError: oops"
)


def big_report(folder: Path) -> Path:
    rng = random.Random(1)
    bots = [f"student{number:02d}" for number in range(30)]
    games, entries = [], []
    for number in range(500):
        seats = rng.sample(bots, 4)
        ranks = rng.sample(range(1, 5), 4)
        games.append(dict(zip(seats, ranks, strict=True)))
        entries.append(GameEntry(f"m{number // 4:03d}", number % 4, tuple(seats), tuple(ranks), 0, None))
    faults = [
        StoredFault(entries[n].match_id, entries[n].index, 0, entries[n].seats[0], "crash", TRACEBACK.format(game=n))
        for n in range(124)
    ]
    activity = tuple(BotActivity(bot, 66, {"crash": 4}, BotTiming(100, 2.0, 9.0)) for bot in bots)
    report = LeagueReport("big", "scout", rate(games, bootstrap=100, seed=0), activity, tuple(entries), tuple(faults))
    path = folder / "report-30.html"
    path.write_text(render_report_page(report, folder), encoding="utf-8")
    return path


def main(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    scout = self_play("scout", ["heuristic", "random", "heuristic", "random", "random"], seed=5)
    scauver = self_play("scauver", ["heuristic"] * 4, seed=0)
    pages = {
        f"SCOUT, 5 seats, {len(scout['actions'])} decisions": write_replay_page(scout, folder / "scout-5.html"),
        f"Scauver, 4 seats, {len(scauver['actions'])} decisions": write_replay_page(scauver, folder / "scauver.html"),
        "report, 30 bots, 500 games": big_report(folder),
    }
    if not CHROMIUM.exists():
        raise SystemExit(f"{CHROMIUM} is not installed")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
        for label, path in pages.items():
            times = []
            for _ in range(3):
                page = browser.new_page(viewport=DESKTOP, device_scale_factor=1)
                open_page(page, path)
                times.append(float(page.evaluate("document.documentElement.dataset.readyAt")))
                page.close()
            print(f"{label}: {path.stat().st_size / 1000:.0f} kB, drawn in {statistics.median(times):.0f} ms")
        browser.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]))

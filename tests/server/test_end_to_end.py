"""The ladder end to end on loopback, with real processes: `referee ladder init` + `invite` + `serve`, students
submitting through `referee submit` and the web form (Playwright driving Debian's chromium), workers joining,
and a server and a worker killed mid-match."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browsing import READY, wait_until
from playwright.sync_api import Page
from processes import BOUND_S, LadderSite, eventually, get_json, make_ladder, referee, status_of

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "class"


@pytest.fixture
def site(tmp_path: Path) -> Iterator[LadderSite]:
    made = make_ladder(tmp_path)
    try:
        yield made
    finally:
        made.close()


def test_init_invite_serve_answers_health(site: LadderSite) -> None:
    seconds = site.serve(jobs=0)
    assert seconds < BOUND_S
    assert get_json(f"{site.url}/api/health")["status"] == "ok"
    assert status_of(f"{site.url}/api/students/ann/versions", site.students["bob"]) == 403
    assert status_of(f"{site.url}/api/students/ann/versions", "crl_forged_token") == 401
    print(f"/api/health answered {seconds:.1f} s after `referee serve` started")


def test_students_submit_play_and_watch_the_table_live(site: LadderSite, page: Page, screenshot_dir: Path) -> None:
    site.fast()
    site.serve(jobs=1)
    second = site.start_worker()
    watcher = page.context.new_page()
    watcher.goto(site.url + "/")
    watcher.evaluate("window.loadedOnce = true")

    version_page = submit_through_the_form(page, site, "ann", FIXTURES / "first_move")
    wait_until(page, "document.querySelector('#verdict')?.className === 'verdict-accepted'")
    assert "handshake: name" in page.inner_text("#check-report"), "the check report as a person reads it"
    page.screenshot(path=screenshot_dir / "ladder-version.png", full_page=True)
    assert version_page.startswith(site.url + "/versions/")

    accepted = referee(
        "submit",
        str(FIXTURES / "half_random"),
        "--server",
        site.url,
        "--token",
        site.students["bob"],
        cwd=site.root,
        check=False,
    )
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert ": accepted" in accepted.stdout

    refused = referee(
        "submit",
        str(FIXTURES / "crash_at_start"),
        "--server",
        site.url,
        "--token",
        site.students["cat"],
        cwd=site.root,
        check=False,
    )
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert ": refused" in refused.stdout
    cat = site.students["cat"]
    [version] = get_json(f"{site.url}/api/students/cat/versions", cat)
    detail = get_json(f"{site.url}/api/submissions/{version['id']}", cat)
    assert detail["check_report"], "a refused version shows its check report"
    assert status_of(f"{site.url}/api/submissions/{version['id']}", site.students["ann"]) == 403

    def two_students_played() -> list[dict[str, Any]] | None:
        rows = [row for row in get_json(f"{site.url}/api/table")["rows"] if not row["baseline"]]
        return rows if len(rows) == 2 and all(row["games"] > 0 for row in rows) else None

    rows = eventually(two_students_played, "both accepted bots playing")
    wait_until(watcher, "document.querySelectorAll('#leaderboard tbody tr:not(.baseline)').length === 2")
    assert watcher.evaluate("window.loadedOnce === true"), "the leaderboard updated without a reload"
    shown = watcher.eval_on_selector_all("#leaderboard tbody td.name", "cells => cells.map(cell => cell.textContent)")
    assert {row["name"] for row in rows} <= set(shown)
    assert not {"ann", "bob", "cat"} & set(shown), "a spectator sees pseudonyms"
    watcher.screenshot(path=screenshot_dir / "ladder-leaderboard.png", full_page=True)
    assert get_json(f"{site.url}/api/students/cat/games", cat) == [], "a refused version never plays"

    eventually(lambda: "reported match job" in second.output(), "the second worker taking a match")
    assert get_json(f"{site.url}/api/students/cat/games", cat) == []
    nothing_of_anns_for_others(site)
    game = get_json(f"{site.url}/api/students/ann/games", site.students["ann"])[0]
    page.goto(f"{site.url}/games/{game['id']}")
    wait_until(page, READY)
    assert page.evaluate("document.documentElement.dataset.ready") == "1", "ann's game's replay page draws"
    page.screenshot(path=screenshot_dir / "ladder-replay.png")
    page.goto(f"{site.url}/students/ann")
    assert page.locator("#games tbody tr").count() > 0, "ann's page lists her games"
    page.screenshot(path=screenshot_dir / "ladder-student.png", full_page=True)


def nothing_of_anns_for_others(site: LadderSite) -> None:
    """Ann's log and her games' replays are hers (and the staff's); other students get 403 and nothing, as for an
    item that does not exist."""
    ann, bob, cat = (site.students[name] for name in ("ann", "bob", "cat"))
    game = get_json(f"{site.url}/api/students/ann/games", ann)[0]
    log = f"{site.url}/api/games/{game['id']}/logs/{game['my_seat']}"
    assert status_of(log, ann) == 200
    assert status_of(log, site.admin) == 200
    assert status_of(log, bob) == 403, "bob sat in the game, but the log of ann's seat is not his"
    assert status_of(log, cat) == 403
    replay = f"{site.url}/api/games/{game['id']}/replay"
    assert status_of(replay, ann) == 200
    assert status_of(replay, cat) == 403, "cat did not sit in the game: no hand of it is hers to see"
    assert status_of(f"{site.url}/games/{game['id']}", cat) == 403
    version = get_json(f"{site.url}/api/students/ann/versions", ann)[0]
    assert status_of(f"{site.url}/api/versions/{version['digest']}/archive", bob) == 403, "no student reads source"
    assert status_of(f"{site.url}/api/submissions/{version['id']}", bob) == 403


def submit_through_the_form(page: Page, site: LadderSite, student: str, folder: Path) -> str:
    page.goto(site.url + "/login")
    page.fill("input[name=token]", site.students[student])
    page.click("#login button[type=submit]")
    wait_until(page, f"location.pathname === '/students/{student}'")
    page.set_input_files("#submit input[type=file]", [str(path) for path in sorted(folder.iterdir())])
    page.click("#submit button[type=submit]")
    wait_until(page, "location.pathname.startsWith('/versions/')")
    return page.url


def test_a_server_and_a_worker_killed_mid_match_lose_and_double_no_game(site: LadderSite) -> None:
    site.fast()
    site.serve(jobs=0)
    worker = site.start_worker()
    survivor = site.start_worker()
    for student, bot in (("ann", "first_move"), ("bob", "half_random")):
        result = referee(
            "submit",
            str(FIXTURES / bot),
            "--server",
            site.url,
            "--token",
            site.students[student],
            cwd=site.root,
            check=False,
        )
        assert result.returncode == 0, result.stdout + result.stderr
    eventually(lambda: "match job" in worker.output().replace("reported match job", ""), "a match claimed")
    claimed = claimed_matches(site)
    assert claimed
    assert site.server is not None
    site.server.kill()
    worker.kill()
    site.workers.remove(worker)
    killed = claimed_matches(site)
    eventually(lambda: "trying again" in survivor.output(), "the surviving worker waiting for the server")
    reported_before = survivor.output().count("reported")

    site.serve(jobs=0)
    site.start_worker()
    eventually(lambda: survivor.output().count("reported") > reported_before, "the survivor working again")
    eventually(
        lambda: all(job_state(site, job) == "done" for job in killed),
        "the killed matches done again",
        bound=BOUND_S * 2,
    )
    with sqlite3.connect(site.folder / "ladder.sqlite") as db:
        doubled = db.execute(
            "SELECT job_id, game_index, COUNT(*) FROM games GROUP BY job_id, game_index HAVING COUNT(*) > 1"
        ).fetchall()
        assert doubled == []
        for job in killed:
            games = db.execute("SELECT COUNT(*) FROM games WHERE job_id = ?", (job,)).fetchone()[0]
            assert games > 0, f"the reissued match {job} was recorded"
    table = get_json(f"{site.url}/api/table", site.admin)
    with sqlite3.connect(site.folder / "ladder.sqlite") as db:
        stored = db.execute("SELECT COUNT(*) FROM games").fetchone()[0]
    assert table["games"] <= stored


def claimed_matches(site: LadderSite) -> list[str]:
    with sqlite3.connect(site.folder / "ladder.sqlite") as db:
        return [row[0] for row in db.execute("SELECT id FROM jobs WHERE kind = 'match' AND state = 'claimed'")]


def job_state(site: LadderSite, job: str) -> str:
    with sqlite3.connect(site.folder / "ladder.sqlite") as db:
        return str(db.execute("SELECT state FROM jobs WHERE id = ?", (job,)).fetchone()[0])

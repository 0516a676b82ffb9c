"""A class of submission folders from one command: Python, C (built in the sandbox), JavaScript, stdio, a
broken build, a hang, a crash, copies and a folder named like a baseline (tests/fixtures/class and
tests/fixtures/class_folders, see its README.md); marked from the report; a resubmission replays only its own
games."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tournaments.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FROM_CLASS = ("heuristic_copy", "longest_show", "half_random", "first_move", "timeout", "crash_mid_game")
STUDENTS = (
    *FROM_CLASS,
    "greedy",
    "greedy_renamed",
    "first_move_twin",
    "c_stdio",
    "js_stdio",
    "broken_build",
)
DEALS = 2
PEERS = 1
"""Students also meet students (the league's schedule; the copies check no longer needs it)."""
BASELINE_GAMES = 2 * DEALS * 2
"""Two baselines, DEALS deals per match, two seats."""
GAMES_PER_STUDENT = BASELINE_GAMES + 2 * PEERS * DEALS * 2
"""And 2 x PEERS tables with other students (with seed 5, one of them seats greedy with greedy_renamed: two
deals from both seats, enough identical positions to compare their actions)."""

LEAGUE = """
game = "scout"
players = 2
seed = 5
deals_per_match = {deals}
schedule = "baselines"
peers = {peers}
replay_dir = "replays"

[limits]
move_time_ms = 400
startup_time_s = 20

[marks]
random = [[0.5, 40]]
heuristic = [[0.5, 60], [0.75, 80]]

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


def invoke(*args: str) -> Any:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result


def _report(league: Path) -> dict[str, Any]:
    return json.loads(invoke("tournament", "report", str(league), "--format", "json").stdout)


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, dict[str, Any]]:
    """The class run once from one command: (its league file, the run's result, the JSON report)."""
    folder = tmp_path_factory.mktemp("class")
    submissions = folder / "submissions"
    shutil.copytree(FIXTURES / "class_folders", submissions, ignore=shutil.ignore_patterns("README.md"))
    for name in FROM_CLASS:
        shutil.copytree(FIXTURES / "class" / name, submissions / name)
    league = folder / "class.toml"
    league.write_text(LEAGUE.format(deals=DEALS, peers=PEERS))
    run = invoke("tournament", "run", str(league), "-j", "2", "--bootstrap", "0")
    return league, run, _report(league)


def _bots(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["bot"]: row for row in [*report["bots"], *report["baselines"]]}


def test_the_class_runs_from_one_command(played: tuple[Path, Any, dict[str, Any]]) -> None:
    league, run, report = played
    assert sorted(row["bot"] for row in report["bots"]) == sorted(STUDENTS)
    assert {row["bot"] for row in report["baselines"]} == {"random", "heuristic"}
    assert all(row["games"] == GAMES_PER_STUDENT for row in report["bots"])
    peer_games = len(STUDENTS) * PEERS * DEALS * 2
    assert report["games"] == len(STUDENTS) * BASELINE_GAMES + peer_games + 2 * DEALS
    assert "submissions/Heuristic' skipped: it is named like the bot 'heuristic'" in run.stderr
    assert any("Heuristic" in note for note in report["skipped"])
    assert "build: c_stdio: 'make' exited with status 0" in run.stderr
    assert "build: broken_build: its build failed; it forfeits its games" in run.stderr


def test_every_language_and_transport_plays_and_each_breakage_is_its_own(
    played: tuple[Path, Any, dict[str, Any]],
) -> None:
    bots = _bots(played[2])
    for name in ("c_stdio", "js_stdio", "greedy", "heuristic_copy", "longest_show"):
        assert sum(bots[name]["faults"].values()) == 0, (name, bots[name]["first_fault"])
        assert bots[name]["decisions"] > 0, name
    for name, kind in [("broken_build", "crash"), ("timeout", "timeout"), ("crash_mid_game", "crash")]:
        assert bots[name]["faults"][kind] == GAMES_PER_STUDENT, name
    build = bots["broken_build"]
    assert "the build failed: 'make' exited with status 2" in build["first_fault"]["detail"]
    assert "error: expected" in build["first_fault"]["detail"]
    assert Path(build["build_log"]).read_text().startswith("$ make")
    assert Path(bots["c_stdio"]["build_log"]).is_file() and bots["js_stdio"]["build_log"] is None
    assert (bots["c_stdio"]["language"], bots["js_stdio"]["language"], bots["js_stdio"]["version"]) == (
        "c",
        "javascript",
        "1.0",
    )
    assert bots["greedy"]["language"] is None
    for baseline in ("random", "heuristic"):
        assert sum(bots[baseline]["faults"].values()) == 0


def test_the_report_marks_the_class(played: tuple[Path, Any, dict[str, Any]]) -> None:
    bots = _bots(played[2])
    for name in STUDENTS:
        against = bots[name]["against"]
        assert {baseline: result["games"] for baseline, result in against.items()} == {
            "random": 2 * DEALS,
            "heuristic": 2 * DEALS,
        }
        shares = {baseline: result["share"] for baseline, result in against.items()}
        expected = max(
            [0]
            + ([40] if shares["random"] >= 0.5 else [])
            + ([60] if shares["heuristic"] >= 0.5 else [])
            + ([80] if shares["heuristic"] >= 0.75 else [])
        )
        low, high = bots[name]["mark_range"]
        assert low <= expected <= high, (name, shares, low, high)
        assert bots[name]["mark"] == (expected if low == high else None), (name, shares)
    for name in ("broken_build", "timeout", "crash_mid_game"):
        assert bots[name]["mark"] == 0
    assert bots["random"]["mark"] is None and bots["random"]["place"] is None
    assert [row["place"] for row in played[2]["bots"]] == list(range(1, len(STUDENTS) + 1))


def test_a_resubmission_replays_only_that_student_s_games(played: tuple[Path, Any, dict[str, Any]]) -> None:
    league, _, before = played
    library = league.parent / "submissions" / "greedy" / "tuning.py"
    library.write_text("MIDDLE = 2\n")
    held = invoke("tournament", "run", str(league), "-j", "2", "--bootstrap", "0")
    assert "bot 'greedy' is held" in held.stderr and "Played" not in held.stderr
    assert _report(league)["changed"] == ["greedy"]
    rerun = invoke("tournament", "run", str(league), "-j", "2", "--bootstrap", "0", "--replay-changed")
    assert "replaying 'greedy'" in rerun.stderr and "program tree " in rerun.stderr
    assert f"Played {GAMES_PER_STUDENT} games" in rerun.stderr
    after = _report(league)
    assert after["games"] == before["games"] and after["changed"] == []
    old, new = _bots(before), _bots(after)
    for name in STUDENTS:
        if name != "greedy":
            assert new[name]["against"] == old[name]["against"], name
            assert new[name]["mark"] == old[name]["mark"], name


def test_copies_are_flagged_for_the_teacher(played: tuple[Path, Any, dict[str, Any]]) -> None:
    league = played[0]
    before = {(flag["kind"], tuple(flag["bots"])) for flag in _report(league)["copies"]}
    assert not any(kind == "similar choices" for kind, _ in before), "no student has answered the bank yet"
    asked = invoke("tournament", "copies", str(league), "--json")
    leads = json.loads(asked.stdout)
    assert any("answered the same 200 positions" in line for line in leads["compared"])
    flags = {(flag["kind"], tuple(flag["bots"])): flag for flag in _report(league)["copies"]}
    assert {(flag["kind"], tuple(flag["bots"])) for flag in leads["leads"]} == set(flags)
    assert ("identical program", ("first_move", "first_move_twin")) in flags
    similar = flags[("similar code", ("greedy", "greedy_renamed"))]
    assert similar["figure"] >= 0.9 and "fingerprints after the base code is removed" in similar["detail"]
    assert ("similar code", ("broken_build", "c_stdio")) in flags
    acting = flags[("similar choices", ("greedy", "greedy_renamed"))]
    assert acting["figure"] == 1.0 and "expected from the class's answers" in acting["detail"]
    flagged = {bot for _, bots in flags for bot in bots}
    assert not flagged & {"half_random", "timeout", "js_stdio", "longest_show"}, flags
    assert not any(kind == "similar code" and bots == ("first_move", "first_move_twin") for kind, bots in flags)

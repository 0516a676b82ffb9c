"""Grading a class end to end from the CLI: a folder of twelve submissions (tests/fixtures/class: four that
play, eight broken in different ways) in a league against a ladder of baselines, played, then reported."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from referee.records import FaultKind
from tournaments.classroom.pseudonyms import league_pseudonyms
from tournaments.cli import main
from tournaments.league.store import LeagueStore

CLASS = Path(__file__).resolve().parents[1] / "fixtures" / "class"
PLAYING = ("heuristic_copy", "longest_show", "first_move", "half_random")
BROKEN = {
    "syntax_error": (FaultKind.CRASH, "SyntaxError"),
    "crash_at_start": (FaultKind.CRASH, "weights.bin"),
    "crash_mid_game": (FaultKind.CRASH, "IndexError: list index out of range (at decision 5)"),
    "illegal_move": (FaultKind.ILLEGAL_ACTION, "request"),
    "timeout": (FaultKind.TIMEOUT, "no answer to request"),
    "wrong_protocol": (FaultKind.PROTOCOL_ERROR, "'id'"),
    "wrong_hello": (FaultKind.PROTOCOL_ERROR, "protocol 2 is not supported"),
    "no_program": (FaultKind.CRASH, 'and its Makefile was not built: add build = "make" to its bot.toml'),
}
"""Broken submission -> the kind of its every fault, and what its first fault's detail says."""
LOG_SAYS = {
    "syntax_error": "SyntaxError",
    "crash_at_start": "FileNotFoundError",
    "crash_mid_game": "IndexError",
    "no_program": "no bot program in",
}
BASELINES = ("heuristic", "random")
DEALS = 3
GAMES_PER_STUDENT = len(BASELINES) * DEALS * 2

LEAGUE = f"""
game = "scout"
players = 2
seed = 11
deals_per_match = {DEALS}
schedule = "baselines"
baselines = ["random", "heuristic"]

[limits]
move_time_ms = 1500
startup_time_s = 20

[[bots]]
name = "random"
command = "random"

[[bots]]
name = "heuristic"
command = "heuristic"

[[bots]]
each = "submissions/*"
"""


def invoke(*args: str) -> Any:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], list[dict[str, str]]]:
    """The class played once for every test here: (its folder, the JSON report, the CSV report's rows)."""
    folder = tmp_path_factory.mktemp("class")
    shutil.copytree(CLASS, folder / "submissions", ignore=shutil.ignore_patterns("README.md"))
    league = folder / "class.toml"
    league.write_text(LEAGUE)
    invoke("tournament", "run", str(league), "-j", "2", "--bootstrap", "0")
    invoke("tournament", "report", str(league), "--format", "json", "-o", str(folder / "report.json"))
    invoke("tournament", "report", str(league), "--format", "csv", "-o", str(folder / "report.csv"))
    with (folder / "report.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    return folder, json.loads((folder / "report.json").read_text()), rows


def _rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The students, then the baselines (as the CSV lists them)."""
    return [*report["bots"], *report.get("baselines", [])]


def _by_bot(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["bot"]: row for row in _rows(report)}


def test_every_bot_is_in_the_report_once(graded: tuple[Path, dict[str, Any], list[dict[str, str]]]) -> None:
    _, report, rows = graded
    names = [row["bot"] for row in _rows(report)]
    assert sorted(names) == sorted([*PLAYING, *BROKEN, *BASELINES])
    students = report["bots"]
    assert [row["place"] for row in students] == list(range(1, len(students) + 1))
    assert [row["place"] for row in report["baselines"]] == [None, None]
    assert [row["bot"] for row in rows] == names
    assert [row["place"] for row in rows[len(students) :]] == ["", ""]
    assert {row["bot"] for row in report["baselines"] if row["baseline"]} == set(BASELINES)
    assert not any(row["baseline"] for row in students)
    for row in _rows(report):
        low, high = row["elo_95"]
        assert low <= row["elo"] <= high, row
    assert all(row["games"] == GAMES_PER_STUDENT for row in students)
    assert report["games"] == len(students) * GAMES_PER_STUDENT + DEALS * 2


def test_broken_bots_rank_below_every_bot_that_plays(graded: tuple[Path, dict[str, Any], list[dict[str, str]]]) -> None:
    bots = _by_bot(graded[1])
    lowest_playing = min(bots[name]["elo"] for name in (*PLAYING, *BASELINES))
    highest_broken = max(bots[name]["elo"] for name in BROKEN)
    assert lowest_playing > highest_broken
    assert max(bots[name]["place"] for name in PLAYING) < min(bots[name]["place"] for name in BROKEN)
    assert bots["heuristic"]["elo"] > bots["random"]["elo"]
    assert bots["heuristic_copy"]["elo"] > bots["random"]["elo"]


def test_faults_are_counted_by_kind(graded: tuple[Path, dict[str, Any], list[dict[str, str]]]) -> None:
    _, report, rows = graded
    bots = _by_bot(report)
    for name in (*PLAYING, *BASELINES):
        assert set(bots[name]["faults"].values()) == {0}, (name, bots[name]["first_fault"])
        assert bots[name]["first_fault"] is None
        assert bots[name]["decisions"] > 0
        assert bots[name]["clock_warning"] is None, name
    for name, (kind, says) in BROKEN.items():
        expected = {other.value: GAMES_PER_STUDENT if other is kind else 0 for other in FaultKind}
        assert bots[name]["faults"] == expected, name
        assert bots[name]["first_fault"]["kind"] == kind.value
        assert says in bots[name]["first_fault"]["detail"], (name, bots[name]["first_fault"])
        (group,) = bots[name]["fault_groups"]
        assert (group["kind"], group["count"]) == (kind.value, GAMES_PER_STUDENT)
        assert len(group["games"]) == GAMES_PER_STUDENT
        assert group["detail"] == bots[name]["first_fault"]["detail"]
    csv_rows = {row["bot"]: row for row in rows}
    for name, row in bots.items():
        assert {kind: int(csv_rows[name][kind]) for kind in row["faults"]} == row["faults"]
        assert int(csv_rows[name]["faults"]) == sum(row["faults"].values())
    assert "SyntaxError: expected ':'" in csv_rows["syntax_error"]["first_fault"]


def test_every_bot_has_its_logs(graded: tuple[Path, dict[str, Any], list[dict[str, str]]]) -> None:
    folder, report, rows = graded
    matches_of_a_baseline = 1 + len(PLAYING) + len(BROKEN)
    for row in _rows(report):
        logs = [Path(path) for path in row["logs"]]
        assert len(logs) == (matches_of_a_baseline if row["baseline"] else len(BASELINES)), row["bot"]
        assert all(log.is_file() and log.parent.parent == folder / "class.logs" for log in logs)
        assert all(log.name == f"{row['bot']}.log" for log in logs)
        says = LOG_SAYS.get(row["bot"])
        if says is not None:
            assert all(says in log.read_text() for log in logs), row["bot"]
    assert {row["bot"]: row["logs"].split(";") for row in rows} == {row["bot"]: row["logs"] for row in _rows(report)}


def test_a_store_alone_reports_without_logs(graded: tuple[Path, dict[str, Any], list[dict[str, str]]]) -> None:
    folder, report, _ = graded
    alone = json.loads(invoke("tournament", "report", "--db", str(folder / "class.sqlite"), "--format", "json").stdout)
    assert sorted(row["bot"] for row in alone["bots"]) == sorted(row["bot"] for row in _rows(report))
    assert all(row["logs"] == [] and not row["baseline"] for row in alone["bots"])
    assert alone["baselines"] == [] and all(row["against"] == {} for row in alone["bots"])


def test_report_refusals(tmp_path: Path) -> None:
    runner = CliRunner()
    nothing = runner.invoke(main, ["tournament", "report"])
    assert nothing.exit_code == 2 and "give LEAGUE.toml, --db FILE, or both" in nothing.output
    missing = runner.invoke(main, ["tournament", "report", "--db", str(tmp_path / "none.sqlite")])
    assert missing.exit_code == 1 and "no league store there" in missing.output


def test_students_have_results_against_each_baseline(
    graded: tuple[Path, dict[str, Any], list[dict[str, str]]],
) -> None:
    _, report, rows = graded
    bots = _by_bot(report)
    for name in (*PLAYING, *BROKEN):
        against = bots[name]["against"]
        assert list(against) == ["random", "heuristic"], name
        assert all(result["games"] == DEALS * 2 for result in against.values()), name
    for name in BROKEN:
        assert bots[name]["against"]["random"] == {"games": DEALS * 2, "share": 0.0, "mean_rank": 2.0}
    assert bots["heuristic_copy"]["against"]["random"]["share"] > 0.5
    csv_rows = {row["bot"]: row for row in rows}
    assert float(csv_rows["heuristic_copy"]["random_share"]) == bots["heuristic_copy"]["against"]["random"]["share"]
    assert csv_rows["random"]["random_share"] == "" and csv_rows["first_move"]["mark"] == ""


def test_students_have_pseudonyms_from_their_names_and_the_league_s_secret(
    graded: tuple[Path, dict[str, Any], list[dict[str, str]]],
) -> None:
    folder, report, rows = graded
    with LeagueStore(folder / "class.sqlite", create=False) as store:
        expected = league_pseudonyms(store, [row["bot"] for row in report["bots"]])
    assert {row["bot"]: row["pseudonym"] for row in report["bots"]} == expected
    assert len(set(expected.values())) == len(expected) and not set(expected.values()) & set(expected)
    csv_rows = {row["bot"]: row for row in rows}
    assert all(csv_rows[bot]["pseudonym"] == pseudonym for bot, pseudonym in expected.items())
    assert all(csv_rows[bot]["pseudonym"] == "" for bot in BASELINES)

"""check-bot: the verdict and its reason for every built-in bot (they conform) and for the hostile fixture
bots (each fails for its own reason, or conforms where the referee tolerates it), the report's forms (text,
the project's JSON as docs/how-to/check-a-bot.md documents it, Gradescope's results.json checked against its
documented format), and the exit status."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from gradescope_schema import problems

from referee.botspec import resolve_bot
from referee.records import FaultKind, Limits
from tournaments.classroom.checkbot import CheckError, CheckPlan, CheckReport, check_bot, player_counts
from tournaments.classroom.checkbot_report import gradescope_results, report_json
from tournaments.classroom.checkbot_strength import StrengthTest
from tournaments.cli import main

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "bots"
SHELL_BOT = ROOT / "bots" / "shell" / "random_bot.sh"
GENEROUS = Limits(move_time_ms=5000, startup_time_s=30.0)
"""For bots that must pass: no load can make them miss it."""
HOSTILE_LIMITS = Limits(move_time_ms=1000, startup_time_s=5.0)
"""For bots that must fail: short enough that waiting for their timeouts stays quick."""

pytestmark = pytest.mark.timeout(240)


def _check(game: str, bot: str, tmp_path: Path, limits: Limits = GENEROUS, games: int = 2) -> CheckReport:
    spec = resolve_bot(bot, game, named_by_hello=True)
    return check_bot(CheckPlan(game=game, bot=spec, run_dir=tmp_path, players=(2,), games=games, limits=limits))


def _fixture(name: str) -> str:
    return str(FIXTURES / f"{name}.py")


def _assert_conforms(report: CheckReport, name: str) -> None:
    assert report.verdict.conforms, report.verdict.reasons
    assert report.name == name and report.handshake is not None and report.handshake.protocol == 1
    assert report.decisions > 0 and report.illegal_actions == 0
    assert report.times.decisions == report.decisions
    assert 0 < report.times.median_ms <= report.times.p95_ms <= report.times.max_ms <= report.times.limit_ms


@pytest.mark.parametrize(
    "game, bot, name",
    [
        ("scout", "random", "random"),
        ("scauver", "random", "random"),
        ("scout", "heuristic", "scout-heuristic"),
        ("scauver", "heuristic", "scauver-heuristic"),
        ("scout", f"stdio:{SHELL_BOT}", "sh-random"),
        ("scauver", f"stdio:{SHELL_BOT}", "sh-random"),
    ],
)
def test_a_built_in_bot_conforms(game: str, bot: str, name: str, tmp_path: Path) -> None:
    _assert_conforms(_check(game, bot, tmp_path), name)


@pytest.mark.parametrize("game", ["scout", "scauver"])
def test_the_c_bot_conforms(game: str, c_bot: Path, tmp_path: Path) -> None:
    _assert_conforms(_check(game, str(c_bot), tmp_path, games=1), "c-random")


@pytest.mark.parametrize("game", ["scout", "scauver"])
def test_the_js_bot_conforms(game: str, js_bot: list[str], tmp_path: Path) -> None:
    _assert_conforms(_check(game, " ".join(js_bot), tmp_path, games=1), "js-random")


# fixture bot -> (the fault kind of its first reason, whether its handshake failed, words of the detail)
HOSTILE = {
    "crash_at_start": (FaultKind.CRASH, True, "crashing at start, on purpose"),
    "never_connects": (FaultKind.TIMEOUT, True, "no hello within the startup limit"),
    "wrong_token": (FaultKind.PROTOCOL_ERROR, True, "hello refused"),
    "crash_mid_game": (FaultKind.CRASH, False, "crashing mid-game, on purpose"),
    "exits_mid_game": (FaultKind.CRASH, False, "exited with status 0"),
    "illegal_action": (FaultKind.ILLEGAL_ACTION, False, "request"),
    "never_answers": (FaultKind.TIMEOUT, False, "no answer to request"),
    "stale_id": (FaultKind.TIMEOUT, False, "with the stale id"),
    "wrong_id": (FaultKind.TIMEOUT, False, "with the wrong id"),
    "not_msgpack": (FaultKind.PROTOCOL_ERROR, False, "msgpack"),
    "no_type": (FaultKind.PROTOCOL_ERROR, False, "type"),
    "huge_message": (FaultKind.PROTOCOL_ERROR, False, "bytes"),
    "flood": (FaultKind.PROTOCOL_ERROR, False, "flood"),
}


@pytest.mark.parametrize("bot", list(HOSTILE), ids=list(HOSTILE))
def test_a_hostile_bot_fails_for_its_reason(bot: str, tmp_path: Path) -> None:
    kind, during_handshake, words = HOSTILE[bot]
    report = _check("scout", _fixture(bot), tmp_path, HOSTILE_LIMITS, games=1)
    assert not report.verdict.conforms
    first = report.verdict.reasons[0]
    assert (first.kind, first.handshake) == (kind, during_handshake), report.verdict.reasons
    assert words in first.detail
    assert (report.handshake is None) == during_handshake
    (table,) = report.tables
    assert table.faults and table.log_path is not None
    assert Path(table.log_path).parent == tmp_path / "2p"
    printed = Path(table.log_path).read_text().strip() != ""
    assert bool(table.output_tail) == printed


@pytest.mark.parametrize("bot", ["double_reply", "loud_stderr"])
def test_misbehaviour_the_referee_tolerates_still_conforms(bot: str, tmp_path: Path) -> None:
    assert _check("scauver", _fixture(bot), tmp_path, games=1).verdict.conforms


def test_a_crash_report_quotes_the_bots_last_output(tmp_path: Path) -> None:
    report = _check("scout", _fixture("many_lines_then_crash"), tmp_path, HOSTILE_LIMITS, games=1)
    (table,) = report.tables
    assert table.output_tail[-1] == "line 30" and len(table.output_tail) == 20
    assert "| line 30" in report.verdict.reasons[0].detail


def test_every_player_count_is_checked_unless_some_are_asked() -> None:
    assert player_counts("scout") == (2, 3, 4, 5)
    assert player_counts("scauver", (3, 2, 3)) == (2, 3)
    with pytest.raises(CheckError, match="2 to 4 players, not 5"):
        player_counts("scauver", (5,))


def test_each_player_count_plays_the_bot_at_every_seat(tmp_path: Path) -> None:
    spec = resolve_bot("random", "scauver", named_by_hello=True)
    report = check_bot(CheckPlan(game="scauver", bot=spec, run_dir=tmp_path, players=(2, 3), limits=GENEROUS))
    assert [(table.players, table.games) for table in report.tables] == [(2, 2), (3, 3)]
    assert len(list((tmp_path / "3p" / "replays").glob("*.json"))) == 3
    seats = [json.loads(path.read_text())["seats"] for path in sorted((tmp_path / "3p" / "replays").glob("*.json"))]
    assert sorted(next(s["seat"] for s in game if s["bot"] == "random") for game in seats) == [0, 1, 2]


def test_the_gradescope_file_follows_gradescopes_format(tmp_path: Path) -> None:
    good = gradescope_results(_check("scout", "random", tmp_path / "good", games=1), 1.5)
    assert problems(good) == []
    assert good["score"] == good["extra_data"]["max_score"] == len(good["tests"]) == 3
    bad = gradescope_results(_check("scout", _fixture("illegal_action"), tmp_path / "bad", HOSTILE_LIMITS, 1), 1.5)
    assert problems(bad) == []
    assert [test["status"] for test in bad["tests"]] == ["passed", "failed", "failed"]
    assert bad["score"] == 1 and "illegal_action" in bad["tests"][1]["output"]


def test_the_schema_check_catches_what_gradescope_would_refuse() -> None:
    assert problems({"score": 1, "tests": [{"status": "ok", "score": 2, "max_score": 1, "colour": 1}]}) == [
        "tests[0]: unknown key 'colour'",
        "tests[0].status: 'ok' is not one of ['failed', 'passed']",
        "tests[0]: score 2 is not within 0..max_score 1",
    ]
    assert problems({"max_score": 3, "tests": [{}]}) == [
        "results: unknown key 'max_score'",
        "results: a score is needed at the top level or on every test",
    ]


def _documented_example() -> dict:
    doc = (ROOT / "docs" / "how-to" / "check-a-bot.md").read_text()
    [block] = re.findall(r"```json\n(.*?)```", doc, flags=re.DOTALL)
    return json.loads(block)


def _shape(value: object) -> object:
    """The keys of every object in `value`, nested (lists by their first element)."""
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shape(value[0])] if value else []
    return None


def test_the_json_report_has_the_documented_shape(tmp_path: Path) -> None:
    spec = resolve_bot(_fixture("crash_mid_game"), "scout", named_by_hello=True)
    against = (StrengthTest("heuristic", 0.5),)
    plan = CheckPlan("scout", spec, tmp_path, (2,), 1, limits=HOSTILE_LIMITS, against=against, strength_games=1)
    report = report_json(check_bot(plan))
    example = _documented_example()
    assert _shape(report) == _shape(example)
    assert report["format"] == example["format"] and report["version"] == example["version"]
    assert report["conforms"] is False and report["reasons"][0]["kind"] == "crash"
    assert report["strength"][0]["baseline"] == "heuristic" and report["strength"][0]["passed"] is False


def invoke(*args: str):
    return CliRunner().invoke(main, ["check-bot", *args])


def test_the_command_exits_0_for_a_bot_that_conforms(tmp_path: Path) -> None:
    result = invoke("scout", "random", "-p", "2", "-n", "1", "--move-time", "5000", "--run-dir", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert "handshake: name 'random', version '1', protocol 1" in result.stdout
    assert "verdict: random conforms" in result.stdout and f"run folder (logs, replays): {tmp_path}" in result.stdout


def test_the_command_exits_1_and_says_why_for_a_bot_that_does_not(tmp_path: Path) -> None:
    out = tmp_path / "results" / "results.json"
    result = invoke("scout", _fixture("crash_at_start"), "-p", "2", "-n", "1", "--format", "gradescope", "-o", str(out))
    assert result.exit_code == 1
    assert "does not conform: crash during the handshake (first at 2 players)" in result.stderr
    assert problems(json.loads(out.read_text())) == []


def test_the_command_prints_the_json_report(tmp_path: Path) -> None:
    result = invoke("scauver", f"{sys.executable} -m bots.python.random_bot", "-p", "2", "-n", "1", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["conforms"] is True and data["bot"]["hello"]["name"] == "random"
    assert data["decision_times"]["limit_ms"] == 1000


@pytest.mark.parametrize(
    "args, status, message",
    [(["scauver", "random", "-p", "5"], 2, "2 to 4 players, not 5"), (["scout", "./no/such/bot.py"], 1, "no such bot")],
)
def test_a_check_that_cannot_run_is_an_error(args: list[str], status: int, message: str) -> None:
    """A wrong option is the grader's (2); a bot that cannot run is the submission's (1)."""
    result = invoke(*args)
    assert result.exit_code == status and message in result.stderr


def test_the_counts_of_each_table_are_the_checked_bots_own(tmp_path: Path) -> None:
    """Six games at two seats are played rotation by rotation (0, 2, 4, then 1, 3, 5): the decisions counted for
    the bot must be its own in every game, as its replays show them, never its opponent's."""
    report = _check("scauver", "heuristic", tmp_path, games=6)
    (table,) = report.tables
    own = 0
    for path in (tmp_path / "2p" / "replays").glob("*.json"):
        played = json.loads(path.read_text())
        seat = next(entry["seat"] for entry in played["seats"] if entry["bot"] == "scauver-heuristic")
        own += sum(move["seat"] == seat and move["by"] == "bot" for move in played["actions"])
    assert table.games == 6 and table.decisions == own


def test_a_strength_test_names_its_baseline_as_the_command_did(tmp_path: Path) -> None:
    """`--against heuristic:0` was reported as "against scout-heuristic" (the resolved bot's name): the student
    read a baseline the command never named."""
    args = ["scout", "random", "-p", "2", "-n", "1", "--strength-games", "2", "--against", "heuristic:0"]
    result = invoke(*args, "--run-dir", str(tmp_path / "run"))
    assert result.exit_code == 0, result.output
    assert "against heuristic: " in result.stdout and "scout-heuristic" not in result.stdout
    out = tmp_path / "results.json"
    graded = invoke(*args, "--run-dir", str(tmp_path / "graded"), "--format", "gradescope", "-o", str(out))
    names = [test["name"] for test in json.loads(out.read_text())["tests"]]
    assert graded.exit_code == 0 and "scout against heuristic: a score share of at least 0%" in names

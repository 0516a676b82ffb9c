"""check-bot as an autograder: a results.json for every way a submission fails to run (the reason shown to the
student, score 0), no test passed that the bot did not pass, no path of the grading machine in the file, the
strength tests against baselines with their weight, visibility and leaderboard, seeded opponents, and the
submission folder resolved as a league's `each` resolves it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from gradescope_schema import problems

from referee.botspec import STDIO_BRIDGE_MODULE, resolve_bot
from referee.records import Limits
from tournaments.classroom.checkbot import CheckPlan, check_bot
from tournaments.classroom.checkbot_strength import (
    StrengthSpecError,
    StrengthTest,
    Visibility,
    parse_strength_test,
)
from tournaments.classroom.checkbot_submission import Redactor, resolve_submission
from tournaments.cli import main

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "tests" / "fixtures" / "bots"
CLASS = ROOT / "tests" / "fixtures" / "class"
QUICK = ["-p", "2", "-n", "1", "--move-time", "1000", "--startup-time", "5"]

pytestmark = pytest.mark.timeout(240)


def _grade(tmp_path: Path, bot: str, *options: str) -> tuple[int, dict, str]:
    """check-bot BOT --format gradescope: (exit status, results.json, its text)."""
    out = tmp_path / "results" / "results.json"
    run_dir = tmp_path / "run"
    args = ["check-bot", "scout", bot, *QUICK, "--run-dir", str(run_dir), "--format", "gradescope", "-o", str(out)]
    result = CliRunner().invoke(main, [*args, *options])
    assert out.is_file(), result.output
    text = out.read_text()
    return result.exit_code, json.loads(text), text


def _submission(tmp_path: Path, files: dict[str, str], executable: tuple[str, ...] = ()) -> Path:
    folder = tmp_path / "submission"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text)
        (folder / name).chmod(0o755 if name in executable else 0o644)
    return folder


def _copy_class(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / "submission"
    shutil.copytree(CLASS / name, folder)
    return folder


FAILING_BUILD = "bot: bot.c\n\tcc -o bot bot.c -lno-such-library-here\n"

# case -> (how the submission is made, the BOT argument relative to it, extra options, words of the reason)
UNRUNNABLE = {
    "missing bot file": ({"README": "my bot\n"}, "bot.py", (), "no such bot program: 'bot.py'"),
    "a folder without a program": ({"notes.txt": "x\n"}, ".", (), "no bot program in the submission folder"),
    "a file without its run bit": ({"bot": "#!/bin/sh\n"}, "bot", (), "'bot' is not executable"),
    "a folder whose bot lacks its run bit": ({"bot": "#!/bin/sh\n"}, ".", (), "'bot' is not executable"),
    "a failed build": ({"Makefile": FAILING_BUILD, "bot.c": "int main;\n"}, ".", ("--build", "make"), "make"),
}


@pytest.mark.parametrize("case", list(UNRUNNABLE), ids=list(UNRUNNABLE))
def test_a_submission_that_cannot_run_gets_a_results_file_saying_why(case: str, tmp_path: Path) -> None:
    files, argument, options, words = UNRUNNABLE[case]
    folder = _submission(tmp_path, files)
    bot = str(folder) if argument == "." else str(folder / argument)
    status, results, text = _grade(tmp_path, bot, *options)
    assert status == 1
    assert problems(results) == []
    assert results["score"] == 0 and all(test["status"] == "failed" for test in results["tests"])
    assert words in results["output"] and words in results["tests"][0]["output"]
    assert [test["name"] for test in results["tests"]] == [
        "handshake",
        "scout at 2 players: every game without a fault",
        "decision times within the limit",
    ]
    assert str(tmp_path) not in text and str(ROOT) not in text


def test_an_unbuilt_folder_says_it_was_not_built(tmp_path: Path) -> None:
    folder = _copy_class(tmp_path, "no_program")
    status, results, _ = _grade(tmp_path, str(folder))
    assert status == 1 and results["score"] == 0
    assert 'and its Makefile was not built: add build = "make" to its bot.toml' in results["tests"][0]["output"]


def test_a_failed_build_quotes_the_compilers_words(tmp_path: Path) -> None:
    folder = _submission(tmp_path, {"Makefile": FAILING_BUILD, "bot.c": "int main;\n"})
    _, results, _ = _grade(tmp_path, str(folder), "--build", "make")
    assert "the build failed: 'make' exited with status 2" in results["output"]
    assert "no-such-library-here" in results["output"]


# a class fixture (or a hostile fixture bot) that starts but never plays -> words of the student-visible reason
NEVER_PLAYS = {
    "a syntax error": ("class", "syntax_error", "SyntaxError"),
    "a crash at start": ("class", "crash_at_start", "Traceback"),
    "a wrong hello": ("class", "wrong_hello", "protocol"),
    "never says hello": ("bots", "never_connects", "no hello within the startup limit"),
}


@pytest.mark.parametrize("case", list(NEVER_PLAYS), ids=list(NEVER_PLAYS))
def test_a_bot_that_never_plays_scores_0_and_is_told_why(case: str, tmp_path: Path) -> None:
    where, name, words = NEVER_PLAYS[case]
    if where == "class":
        bot = str(_copy_class(tmp_path, name))
    else:
        folder = _submission(tmp_path, {})
        shutil.copy(BOTS / f"{name}.py", folder / "bot.py")
        shutil.copy(BOTS / "_raw.py", folder / "_raw.py")
        bot = str(folder / "bot.py")
    status, results, text = _grade(tmp_path, bot)
    assert status == 1 and problems(results) == []
    assert results["score"] == 0
    assert words in results["tests"][0]["output"]
    assert str(tmp_path) not in text and str(ROOT) not in text


def test_a_traceback_names_the_students_file_relative_to_the_submission(tmp_path: Path) -> None:
    folder = _copy_class(tmp_path, "crash_at_start")
    _, results, _ = _grade(tmp_path, str(folder))
    assert 'File "bot.py", line' in results["tests"][0]["output"]


@pytest.mark.parametrize("bot, kind", [("hangs_after_three", "timed out"), ("crash_mid_game", "fallback")])
def test_a_bot_that_stops_answering_earns_only_its_handshake(bot: str, kind: str, tmp_path: Path) -> None:
    """Before, a bot that answered a few moves and then hung (or crashed every game) passed the clock test on
    the decisions it did answer and scored 2 of 3."""
    folder = _submission(tmp_path, {})
    shutil.copy(BOTS / f"{bot}.py", folder / "bot.py")
    shutil.copy(BOTS / "_raw.py", folder / "_raw.py")
    status, results, _ = _grade(tmp_path, str(folder / "bot.py"), "-n", "2", "--move-time", "300")
    assert status == 1 and problems(results) == []
    assert [test["status"] for test in results["tests"]] == ["passed", "failed", "failed"]
    assert results["score"] == 1
    assert kind in results["tests"][2]["output"]


def test_a_conforming_submission_folder_scores_full_marks_without_machine_paths(tmp_path: Path) -> None:
    folder = _copy_class(tmp_path, "first_move")
    status, results, text = _grade(tmp_path, str(folder))
    assert status == 0, results["output"]
    assert results["score"] == results["extra_data"]["max_score"] == 3
    assert str(tmp_path) not in text and str(ROOT) not in text
    assert "<run folder>" in results["output"]


def test_strength_tests_carry_their_weight_visibility_and_leaderboard(tmp_path: Path) -> None:
    status, results, _ = _grade(
        tmp_path,
        "heuristic",
        "--against",
        "random:0.01:weight=2:visibility=after_published",
        "--against",
        "heuristic:0",
        "--strength-games",
        "2",
    )
    assert status == 0, results["output"]
    assert problems(results) == []
    strength = results["tests"][3:]
    assert [(test["status"], test["max_score"]) for test in strength] == [("passed", 2.0), ("passed", 1.0)]
    assert strength[0]["visibility"] == "after_published" and "visibility" not in strength[1]
    assert strength[0]["name"] == "scout against random: a score share of at least 1%"
    assert results["score"] == results["extra_data"]["max_score"] == 6
    board = results["leaderboard"]
    assert [entry["name"] for entry in board] == ["score share against random", "score share against heuristic"]
    assert board[1] == {"name": "score share against heuristic", "value": 0.5, "order": "desc"}


def test_a_bot_that_forfeits_every_game_fails_its_strength_test(tmp_path: Path) -> None:
    folder = _submission(tmp_path, {})
    shutil.copy(BOTS / "crash_mid_game.py", folder / "bot.py")
    shutil.copy(BOTS / "_raw.py", folder / "_raw.py")
    _, results, _ = _grade(tmp_path, str(folder / "bot.py"), "--against", "random:0.01", "--strength-games", "2")
    (strength,) = results["tests"][3:]
    assert strength["status"] == "failed" and "a score share of 0%" in strength["output"]
    assert results["leaderboard"][0]["value"] == 0


def test_a_submission_that_cannot_run_fails_its_strength_tests_too(tmp_path: Path) -> None:
    folder = _submission(tmp_path, {})
    status, results, _ = _grade(tmp_path, str(folder), "--against", "heuristic:0.5:weight=3")
    assert status == 1 and problems(results) == []
    assert results["tests"][-1]["max_score"] == 3 and results["tests"][-1]["status"] == "failed"
    assert results["extra_data"]["max_score"] == 6 and results["score"] == 0


@pytest.mark.parametrize(
    "text, test",
    [
        ("heuristic:0.5", StrengthTest("heuristic", 0.5)),
        ("random:1:weight=2.5", StrengthTest("random", 1.0, 2.5)),
        ("x:0:visibility=hidden:weight=1", StrengthTest("x", 0.0, 1.0, Visibility.HIDDEN)),
    ],
)
def test_an_against_is_parsed(text: str, test: StrengthTest) -> None:
    assert parse_strength_test(text) == test


@pytest.mark.parametrize(
    "text, words",
    [
        ("heuristic", "is not BASELINE:SHARE"),
        ("heuristic:half", "not a number"),
        ("heuristic:1.5", "between 0 and 1"),
        ("heuristic:0.5:weight=0", "not positive"),
        ("heuristic:0.5:visibility=public", "not one of hidden"),
        ("heuristic:0.5:colour=red", "unknown option"),
    ],
)
def test_a_wrong_against_is_refused(text: str, words: str) -> None:
    with pytest.raises(StrengthSpecError, match=words):
        parse_strength_test(text)


@pytest.mark.parametrize(
    "args, words",
    [
        (["--against", "heuristic:2"], "between 0 and 1"),
        (["--against", "no-such-baseline:0.5"], "no bot 'no-such-baseline'"),
        (["-p", "9"], "2 to 5 players, not 9"),
    ],
)
def test_a_graders_mistake_is_a_usage_error_and_writes_nothing(args: list[str], words: str, tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    result = CliRunner().invoke(main, ["check-bot", "scout", "random", *args, "--format", "gradescope", "-o", str(out)])
    assert result.exit_code == 2 and words in result.stderr
    assert not out.exists()


def test_the_opponents_are_seeded(tmp_path: Path) -> None:
    """The same seed gives the same games, the random opponents' choices included; another seed does not."""

    def actions(run: str, seed: int) -> dict[int, list]:
        """Each seat's actions in order (simultaneous decisions are recorded in the order they arrived)."""
        spec = resolve_bot("heuristic", "scout", named_by_hello=True)
        plan = CheckPlan("scout", spec, tmp_path / run, players=(3,), games=1, seed=seed, limits=Limits(5000))
        check_bot(plan)
        (replay,) = (tmp_path / run / "3p" / "replays").glob("*.json")
        moves = json.loads(replay.read_text())["actions"]
        return {seat: [move["action"] for move in moves if move["seat"] == seat] for seat in range(3)}

    first = actions("a", 5)
    assert actions("b", 5) == first
    assert actions("c", 6) != first


def test_a_folder_is_found_as_a_leagues_each_finds_it(tmp_path: Path) -> None:
    folder = _copy_class(tmp_path, "first_move")
    checked = resolve_submission(str(folder), "scout")
    assert checked.problem is None and checked.spec is not None
    assert checked.spec.cwd == str(folder) and checked.spec.command[-1] == str(folder / "bot.py")
    assert checked.root == folder


def test_the_redactor_makes_submission_paths_relative_and_hides_the_graders(tmp_path: Path) -> None:
    root, run = tmp_path / "submission", tmp_path / "run"
    redactor = Redactor.for_check(root, run)
    text = f'File "{root}/bot.py", line 3; log {run}/2p/bot.log; module {ROOT}/protocol/sdk.py; in {root}'
    assert redactor.text(text) == (
        'File "bot.py", line 3; log <run folder>/2p/bot.log; module <referee>/protocol/sdk.py; in the submission folder'
    )
    assert redactor.value({"a": [text], "n": 1})["a"][0] == redactor.text(text)


def test_the_redactor_makes_paths_in_the_built_copy_relative_too(tmp_path: Path) -> None:
    root, run = tmp_path / "submission", tmp_path / "run"
    copy = run / "build" / "submission"
    redactor = Redactor.for_check(root, run, copy)
    assert redactor.text(f'File "{copy}/bot.py", line 3; log {run}/build.log') == (
        'File "bot.py", line 3; log <run folder>/build.log'
    )


CLASS_FOLDERS = ROOT / "tests" / "fixtures" / "class_folders"


def test_a_folders_bot_toml_names_its_zmq_bot_and_builds_it_in_a_copy(tmp_path: Path) -> None:
    """The league's submission folder: bot.toml's command (a program no league would find), its transport and
    its build, which runs in a copy in the run folder; the student's folder stays as handed in."""
    folder = _submission(tmp_path, {"player.py": (CLASS / "first_move" / "bot.py").read_text()})
    (folder / "bot.toml").write_text('command = "built.py"\ntransport = "zmq"\nbuild = "cp player.py built.py"\n')
    before = sorted(path.name for path in folder.iterdir())
    status, results, text = _grade(tmp_path, str(folder))
    assert status == 0, results["output"]
    assert results["score"] == results["extra_data"]["max_score"] == 3
    assert sorted(path.name for path in folder.iterdir()) == before
    assert (tmp_path / "run" / "build" / "submission" / "built.py").is_file()
    assert str(tmp_path) not in text and str(ROOT) not in text


def test_a_folders_stdio_bot_is_built_and_checked_over_stdio(tmp_path: Path) -> None:
    folder = _copy_class_folder(tmp_path, "c_stdio")
    checked = resolve_submission(str(folder), "scout", run_dir=tmp_path / "resolved")
    copy = tmp_path / "resolved" / "build" / "submission"
    assert checked.spec is not None and checked.built_in == copy and checked.spec.cwd == str(copy)
    assert checked.spec.command[1:3] == ("-m", STDIO_BRIDGE_MODULE) and checked.spec.command[-1] == str(copy / "bot")
    status, results, _ = _grade(tmp_path, str(folder))
    assert status == 0, results["output"]
    assert [test["status"] for test in results["tests"]] == ["passed"] * 3
    assert not (folder / "bot").exists()


def test_a_folder_whose_build_fails_is_told_why(tmp_path: Path) -> None:
    folder = _copy_class_folder(tmp_path, "broken_build")
    status, results, text = _grade(tmp_path, str(folder))
    assert status == 1 and problems(results) == []
    assert results["score"] == 0 and all(test["status"] == "failed" for test in results["tests"])
    reason = results["tests"][0]["output"]
    assert "the build failed: 'make' exited with status 2" in reason and "bot.c:" in reason
    assert str(tmp_path) not in text and str(ROOT) not in text


@pytest.mark.parametrize(
    "manifest, words",
    [
        ('command = "./bot\n', "bot.toml is not valid TOML"),
        ('command = "bot.py"\nlanguage = 3\n', "bot.toml: language must be a non-empty string, not 3"),
        ('transport = "pigeon"\n', 'bot.toml: transport must be "zmq" or "stdio", not \'pigeon\''),
    ],
    ids=["not TOML", "a wrong type", "an unknown transport"],
)
def test_a_folder_with_an_invalid_bot_toml_is_told_what_is_wrong(manifest: str, words: str, tmp_path: Path) -> None:
    folder = _submission(tmp_path, {"bot.py": (CLASS / "first_move" / "bot.py").read_text(), "bot.toml": manifest})
    status, results, text = _grade(tmp_path, str(folder))
    assert status == 1 and problems(results) == []
    assert results["score"] == 0 and all(test["status"] == "failed" for test in results["tests"])
    assert words in results["output"] and words in results["tests"][0]["output"]
    assert str(tmp_path) not in text


def test_build_runs_in_a_copy_for_a_folder_without_bot_toml(tmp_path: Path) -> None:
    """--build maps onto the league's build: in a copy of the folder, the bot found and run there."""
    folder = _submission(tmp_path, {"Makefile": "bot.py: player.py\n\tcp player.py bot.py\n"})
    (folder / "player.py").write_text((CLASS / "first_move" / "bot.py").read_text())
    status, results, _ = _grade(tmp_path, str(folder), "--build", "make")
    assert status == 0, results["output"]
    assert not (folder / "bot.py").exists()


def _copy_class_folder(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / "submission"
    shutil.copytree(CLASS_FOLDERS / name, folder)
    return folder


def test_build_for_a_program_path_runs_the_program_its_copy_built(tmp_path: Path) -> None:
    folder = _submission(tmp_path, {"Makefile": "bot.py: player.py\n\tcp player.py bot.py\n"})
    (folder / "player.py").write_text((CLASS / "first_move" / "bot.py").read_text())
    checked = resolve_submission(str(folder / "bot.py"), "scout", build="make", run_dir=tmp_path / "run")
    copy = tmp_path / "run" / "build" / "submission"
    assert checked.problem is None and checked.spec is not None, checked.problem
    assert checked.spec.command[-1] == str(copy / "bot.py") and checked.built_in == copy
    assert not (folder / "bot.py").exists()


def test_a_stdio_bot_in_a_folder_without_its_bot_toml_is_told_to_say_stdio(tmp_path: Path) -> None:
    """Run over ZeroMQ, a stdio bot prints its hello on its standard output and is never heard: the student is
    told what the folder lacks, not only that no hello came."""
    folder = _copy_class_folder(tmp_path, "c_stdio")
    (folder / "bot.toml").write_text('build = "make"\ncommand = "./bot"\n')
    status, results, text = _grade(tmp_path, str(folder))
    assert status == 1 and problems(results) == []
    assert results["tests"][0]["status"] == "failed"
    assert 'transport = "stdio" in its bot.toml' in results["tests"][0]["output"]
    assert 'transport = "stdio"' in results["output"]
    (folder / "bot.toml").write_text('build = "make"\ncommand = "./bot"\ntransport = "stdio"\n')
    _, results, _ = _grade(tmp_path / "again", str(folder))
    assert results["tests"][0]["status"] == "passed" and "stdio" not in results["tests"][0]["output"]

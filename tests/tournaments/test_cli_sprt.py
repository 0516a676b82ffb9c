import json
import signal
import subprocess
import sys

from click.testing import CliRunner

from tournaments.cli import main


def sprt(*arguments: str):
    return CliRunner().invoke(main, ["tournament", "sprt", *arguments])


def test_random_against_random_plays_pairs_until_max_pairs():
    result = sprt(
        "scauver",
        "random",
        "random",
        "--max-pairs",
        "3",
        "--batch",
        "2",
        "--seed",
        "5",
        "--move-time",
        "2000",
        "-j",
        "1",
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("SPRT scauver: random#1 vs random#2")
    progress = [line for line in lines if line.startswith("pairs")]
    assert [line.split()[1] for line in progress] == ["2", "3"]
    assert "LLR" in progress[-1]
    assert "no decision after 3 pairs" in result.output
    assert "3 pairs counted, 6 games played" in result.output


def test_heuristic_against_random_accepts_h1_as_json():
    result = sprt(
        "scauver", "heuristic", "random", "--elo0", "0", "--elo1", "200", "--max-pairs", "60", "--seed", "1", "--json"
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["decision"] == "H1"
    assert data["llr"] >= data["bounds"][1]
    assert data["pairs"] == sum(data["pentanomial"]) <= 60
    assert data["games"] >= 2 * data["pairs"]
    assert data["faults"] == {"scauver-heuristic": 0, "random": 0}


def test_bad_bounds_and_unknown_bots_are_clear_errors():
    result = sprt("scauver", "random", "random", "--elo0", "10", "--elo1", "5")
    assert result.exit_code == 1
    assert "elo0 (10.0) must be below elo1 (5.0)" in result.output
    result = sprt("scauver", "random", "no-such-bot-program")
    assert result.exit_code == 1
    assert "no bot 'no-such-bot-program'" in result.output
    assert "Traceback" not in result.output


def test_two_workers_play_the_batches_of_one_test():
    result = sprt("scauver", "random", "random", "--max-pairs", "4", "--batch", "1", "-j", "2", "--seed", "6", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["pairs"], data["games"], sum(data["pentanomial"])) == (4, 8, 4)
    assert "2 at once" in result.stderr


def test_bounds_that_decide_without_data_are_refused_before_any_game():
    result = sprt("scauver", "random", "random", "--alpha", "0.6", "--beta", "0.6")
    assert result.exit_code == 1
    assert "alpha + beta must be below 1, got 0.6 + 0.6" in result.output
    assert "pairs" not in result.output and "Traceback" not in result.output
    wide = sprt("scauver", "random", "random", "--elo0", "-1000", "--elo1", "1000")
    assert wide.exit_code == 1 and "one pair of games would decide this test" in wide.output


def test_sigterm_stops_between_pairs_and_says_how_far_it_got():
    command = [sys.executable, "-c", "from tournaments.cli import main; main()", "tournament", "sprt", "scauver"]
    command += ["random", "random"]
    command += ["--max-pairs", "100000", "--batch", "2", "--seed", "3"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if line.startswith("pairs"):
                break
        process.send_signal(signal.SIGTERM)
        _, errors = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 143
    assert "Interrupted before a decision" in errors
    assert "Traceback" not in errors

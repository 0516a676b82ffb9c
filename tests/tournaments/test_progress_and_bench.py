"""The progress line of a league run, `referee bench league` and the protocol bench's prepared requests (figures
checked for shape, never for speed)."""

from __future__ import annotations

import io
import json
import shutil

import pytest
from click.testing import CliRunner

from tournaments.bench import instructions
from tournaments.bench.instructions import play_games
from tournaments.bench.protocol import prepared_round_trips_us, seated_requests
from tournaments.cli import main
from tournaments.cli.progress import Leaderboard, ProgressLine, format_duration
from tournaments.ratings.tallies import GameTallies


def test_progress_writes_a_line_per_tenth_with_eta_and_leader() -> None:
    stream = io.StringIO()
    leaderboard = Leaderboard(GameTallies.of([{"a": 1, "b": 2}]))
    progress = ProgressLine(total=20, done=4, leaderboard=leaderboard, stream=stream)
    progress.draw(force=True)
    for _ in range(16):
        progress.advance({"a": 1, "b": 2})
    progress.close()
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("[") and "4/20 games" in lines[0]
    assert lines[-1].startswith("[" + "#" * 24 + "]") and "20/20 games 100%" in lines[-1]
    assert "leader a +" in lines[-1] and "(17 games)" in lines[-1]
    assert any("ETA" in line for line in lines[1:-1])
    assert len(lines) <= 12


def test_durations() -> None:
    assert [format_duration(seconds) for seconds in (0.4, 42, 185, 7625)] == ["0s", "42s", "3m05s", "2h07m"]


def test_bench_league_reports_each_concurrency(write_league) -> None:
    league = write_league(bots=["a", "b", "c", "d"], command="random")
    result = CliRunner().invoke(main, ["bench", "league", str(league), "-j", "1", "-j", "2", "--json"])
    assert result.exit_code == 0, result.output
    runs = json.loads(result.stdout)["runs"]
    assert [run["concurrency"] for run in runs] == [1, 2]
    assert all(run["games"] == 24 and run["games_per_s"] > 0 and run["cores_busy"] > 0 for run in runs)
    assert runs[0]["speedup"] == 1.0


def test_prepared_requests_reach_their_seats_bots_in_order_and_are_all_answered() -> None:
    samples = prepared_round_trips_us("scout", 3, games=2, seed=5)
    expected = len(seated_requests("scout", 3, 5)) + len(seated_requests("scout", 3, 6))
    assert len(samples) == expected and all(sample > 0 for sample in samples)


@pytest.mark.parametrize(("game", "players"), [("scout", 4), ("scauver", 2)])
def test_bench_engine_prints_search_figures(game: str, players: int) -> None:
    result = CliRunner().invoke(main, ["bench", "engine", game, "-p", str(players), "--seconds", "0.3", "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    assert figures["clones_per_s"] > 0 and figures["playouts_per_s"] > 0 and figures["playout_decisions"] >= 1
    text = CliRunner().invoke(main, ["bench", "engine", game, "-p", str(players), "--seconds", "0.3"])
    assert "clones/s" in text.output and "playouts/s" in text.output


needs_valgrind = pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")


@needs_valgrind
def test_bench_engine_counts_instructions_of_the_games_alone() -> None:
    command = ["bench", "engine", "scout", "-p", "3", "--instructions", "--games", "1"]
    result = CliRunner().invoke(main, [*command, "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    played = play_games("scout", 3, games=1, seed=0)
    assert (figures["games"], figures["rounds"], figures["decisions"]) == (1, played.rounds, played.decisions)
    assert 0 < figures["instructions"] < figures["baseline_instructions"]
    assert figures["instructions_per_decision"] == round(figures["instructions"] / played.decisions)
    text = CliRunner().invoke(main, command)
    assert "M instructions per game" in text.output and "per decision" in text.output


def test_bench_engine_instructions_without_valgrind_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(instructions, "VALGRIND", "valgrind-that-is-not-installed")
    result = CliRunner().invoke(main, ["bench", "engine", "scout", "--instructions"])
    assert result.exit_code == 1
    assert "valgrind is not installed" in result.output and "Traceback" not in result.output


def test_random_play_counts_every_decision_of_the_history() -> None:
    played = play_games("scauver", 2, games=2, seed=3)
    assert played.games == 2 and played.rounds >= 2 and played.decisions > 2 * played.rounds

"""`referee bench ratings`: figures checked for shape and for what the store held, never for speed."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tournaments.cli import main
from tournaments.league.store import LeagueStore


def test_bench_ratings_times_each_size_of_a_growing_store(tmp_path: Path) -> None:
    db = tmp_path / "bench.sqlite"
    options = ["--games", "300", "--games", "120", "--bots", "6", "-p", "3", "--bootstrap", "20", "--json"]
    result = CliRunner().invoke(main, ["bench", "ratings", *options, "--db", str(db)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["store"] == str(db)
    assert [run["games"] for run in data["runs"]] == [120, 300]
    for run in data["runs"]:
        assert (run["bots"], run["seats"], run["bootstrap"]) == (6, "3", 20)
        assert 0 < run["outcomes"] <= run["games"]
        assert run["table_s"] >= 0 and run["rate_s"] >= 0 and run["leader_ms"] >= 0
        assert run["leader"].startswith("bot05 +")
    with LeagueStore(db, create=False) as store:
        assert store.game_count() == 300


def test_bench_ratings_in_memory_prints_the_targets() -> None:
    result = CliRunner().invoke(main, ["bench", "ratings", "--games", "50", "--bootstrap", "5", "--bots", "3"])
    assert result.exit_code == 0, result.output
    assert "store: in memory; 5 bootstrap resamples" in result.output
    assert "table_s" in result.output and "target_s" in result.output


def test_bench_ratings_refuses_more_seats_than_bots() -> None:
    result = CliRunner().invoke(main, ["bench", "ratings", "--games", "50", "--bots", "2", "-p", "3"])
    assert result.exit_code == 2
    assert "--players 3 needs at least as many --bots" in result.output

"""`referee bench rl`: steps/s of random play through the engine, PettingZoo, OpenSpiel and the batched env."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tournaments.cli import main

pytest.importorskip("pettingzoo")
pytest.importorskip("pyspiel")


@pytest.mark.parametrize(("game", "players"), [("scout", 3), ("scauver", 2)])
def test_bench_rl_measures_every_api_against_the_engine(game: str, players: int) -> None:
    result = CliRunner().invoke(main, ["bench", "rl", game, "-p", str(players), "--seconds", "0.2", "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    assert [row["api"] for row in figures["apis"]] == ["engine", "pettingzoo", "openspiel", "batched"]
    assert all(row["games"] >= 1 and row["steps"] > 0 and row["steps_per_s"] > 0 for row in figures["apis"])
    assert figures["apis"][0]["engine_over_api"] == 1.0
    assert figures["apis"][0]["median_over_engine"] == 1.0
    assert all(0 < low <= median <= high for low, median, high in (row["us_per_step"] for row in figures["apis"]))
    text = CliRunner().invoke(main, ["bench", "rl", game, "-p", str(players), "--seconds", "0.1"]).output
    assert "pettingzoo" in text and "x engine" in text


def test_bench_rl_refuses_a_bad_player_count_cleanly() -> None:
    result = CliRunner().invoke(main, ["bench", "rl", "scout", "-p", "9", "--seconds", "0.1"])
    assert result.exit_code == 1 and "Error:" in result.output and "Traceback" not in result.output

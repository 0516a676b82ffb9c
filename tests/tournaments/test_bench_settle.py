"""`referee bench settle`: simulated leagues, the adaptive scheduler against a round robin."""

from __future__ import annotations

import json
import random

import pytest
from click.testing import CliRunner

from tournaments.bench.settle import SettleBench, compare, kendall_tau, plackett_luce
from tournaments.cli import main
from tournaments.ratings.elo import rate


def test_plackett_luce_at_two_seats_is_the_elo_model():
    rng = random.Random(3)
    truth = {"a": 200.0, "b": 0.0}
    wins = sum(plackett_luce(("a", "b"), truth, rng)["a"] == 1 for _ in range(4000))
    assert wins / 4000 == pytest.approx(1 / (1 + 10 ** (-200 / 400)), abs=0.025)


def test_plackett_luce_ranks_every_seat_once():
    ranks = plackett_luce(("a", "b", "c", "d"), {"a": 0, "b": 50, "c": 100, "d": 150}, random.Random(1))
    assert sorted(ranks.values()) == [1, 2, 3, 4]


def test_kendall_tau_counts_the_pairs_in_order_and_only_those_beyond():
    ratings = rate([{"a": 1, "b": 2}, {"b": 1, "c": 2}, {"a": 1, "c": 2}] * 3, bootstrap=0)
    assert kendall_tau(ratings, {"a": 3.0, "b": 2.0, "c": 1.0}) == 1
    assert kendall_tau(ratings, {"a": 1.0, "b": 2.0, "c": 3.0}) == -1
    assert kendall_tau(ratings, {"a": 2.0, "b": 3.0, "c": 1.0}) == pytest.approx(1 / 3)
    assert kendall_tau(ratings, {"a": 2.0, "b": 2.5, "c": 1.0}, beyond=1.0) == 1, "a-b is closer than 1: left out"


def test_a_small_comparison_plays_within_its_budget_and_orders_far_apart_bots():
    result = compare(SettleBench(bots=5, seats=2, repetitions=1, spread=400, budget_per_bot=40, bootstrap=30))
    for run in result.adaptive:
        assert 5 * 20 // 2 <= run.games <= 5 * 40 and -1 <= run.tau <= 1
        assert 0 <= run.coverage <= 1 and 0 <= run.pair_coverage <= 1
    assert [run.games for run in result.round_robin] == [run.games for run in result.adaptive]
    assert len(result.equal_correctness) == 1 and all(ratio > 0 for ratio in result.equal_correctness)


def test_the_cli_prints_one_row_per_size_and_json():
    args = ["bench", "settle", "--bots", "4", "--seats", "2", "--repetitions", "1",
            "--budget-per-bot", "30", "--bootstrap", "20"]
    result = CliRunner().invoke(main, [*args, "--seats", "3", "--json"])
    assert result.exit_code == 0, result.output
    runs = json.loads(result.stdout)["runs"]
    assert [(run["bots"], run["seats"]) for run in runs] == [(4, 2), (4, 3)]
    assert {"games", "tau", "rr_tau", "top_k", "coverage", "rr_coverage", "rr_games_x"} <= set(runs[0])
    text = CliRunner().invoke(main, args)
    assert text.exit_code == 0 and "rr_games_x" in text.stdout and "settled: separated at LOS 99.95%" in text.stdout

"""bots/python/train_dmc.py: the Deep Monte-Carlo learner's network learns, its return is the documented one,
and a short run writes a curve and a policy file that plays through the environment's own encoder."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from policy_duel import play  # noqa: E402

from bots.python.train_dmc import CURVE_FIELDS, QNetwork, learner_return, train  # noqa: E402
from referee.games.rl.policy_file import load_policy  # noqa: E402


def test_the_network_fits_a_function_of_its_inputs() -> None:
    rng = np.random.default_rng(3)
    inputs = rng.random((512, 6), dtype=np.float32)
    targets = (inputs @ np.array([1.0, -2.0, 0.5, 0.0, 3.0, -1.0], np.float32)) * inputs[:, 0]
    network = QNetwork.new(6, rng)
    first = network.fit(inputs, targets)
    for _ in range(600):
        last = network.fit(inputs, targets)
    assert last < 0.05 * first, (first, last)
    assert np.allclose(network(inputs[:4]), targets[:4], atol=0.3)


def test_the_return_is_the_rank_reward_plus_the_scaled_score() -> None:
    result = {"ranks": [2, 1, 3], "scores": [10, 16, -2]}
    assert learner_return(result, 0) == pytest.approx(0.0 + (10 - 8) / 20)
    assert learner_return(result, 1) == pytest.approx(1.0 + (16 - 8) / 20)
    assert learner_return(result, 2) == pytest.approx(-1.0 + (-2 - 8) / 20)


def test_a_short_training_writes_its_curve_and_a_policy_that_plays(tmp_path: Path) -> None:
    out, curve = tmp_path / "dmc.npz", tmp_path / "dmc.csv"
    points = train("scout", 3, 0.02, out, curve, report_minutes=0.01, evaluation_games=3)
    rows = list(csv.DictReader(curve.open()))
    assert len(rows) == len(points) >= 2 and tuple(rows[0]) == CURVE_FIELDS
    assert int(rows[-1]["games"]) > 0 and all(0.0 <= float(row["share_above_heuristic"]) <= 1.0 for row in rows)
    policy = load_policy(out)
    policy.check_table("scout", 3, {})
    assert len(play("scout", [policy.choose] * 3, seed=5)["ranks"]) == 3


def test_the_curves_are_drawn_one_line_a_file(tmp_path: Path) -> None:
    from bots.python.learning_curve import main as draw

    for name, shares in (("two", [0.0, 0.6, 0.7]), ("four", [0.1, 0.4])):
        with (tmp_path / f"{name}.csv").open("w", newline="") as file:
            writer = csv.DictWriter(file, fieldnames=CURVE_FIELDS)
            writer.writeheader()
            writer.writerows(
                {"minutes": i, "games": 10 * i, "rank_reward": 0, "share_above_heuristic": s}
                for i, s in enumerate(shares)
            )
    out = tmp_path / "curve.svg"
    assert draw([str(tmp_path / "two.csv"), str(tmp_path / "four.csv"), "--out", str(out)]) == 0
    picture = out.read_text()
    lines = [line for line in picture.splitlines() if line.startswith("<polyline")]
    assert len(lines) == 2 and lines[0].count(",") == 3 and lines[1].count(",") == 2
    assert ">two<" in picture and ">four<" in picture


@pytest.mark.parametrize("players", [2, 4])
def test_the_trained_networks_fit_their_league_files(players: int) -> None:
    """The networks docs/how-to/train-with-dmc.md reports on are in bots/ladders/, each beside a league file
    whose table it learned (a file for another table or option set would be refused before any game)."""
    from tournaments.league.league_file import load_league

    ladders = Path(__file__).resolve().parents[2] / "bots" / "ladders"
    league = load_league(ladders / f"scout-{players}-dmc.toml")
    assert (league.game, league.players) == ("scout", players)
    policy = load_policy(ladders / f"scout-{players}-dmc.npz")
    policy.check_table("scout", players, dict(league.config))
    assert policy.encoder.settings.action_features and policy.encoder.settings.observation == "compact"

"""The policy bot: a saved linear policy or any choose(observation, legal_actions) function as a BOT.

`policy:FILE` resolves to bots/python/policy_bot with that file, relative to a league file's folder in a
league; the league's store identifies such a bot by its policy file (a retrained policy is noticed); the
policy plays a legal action of either game. docs/tutorials/train-a-policy.md runs the whole way
(tests/test_training.py).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest

from bots.python.linear_policy import FEATURES, LinearPolicy
from referee.botspec import POLICY_MODULE, UnknownBot, resolve_bot
from referee.games import load_game
from tournaments.league.identity import program_digest
from tournaments.league.league_file import load_league


@pytest.fixture
def policy_file(tmp_path: Path) -> Path:
    path = tmp_path / "mine.npz"
    LinearPolicy("scout", np.arange(len(FEATURES["scout"]), dtype=float)).save(path)
    return path


def test_policy_files_and_functions_resolve_to_the_policy_bot(policy_file: Path, tmp_path: Path) -> None:
    spec = resolve_bot(f"policy:{policy_file}", "scout")
    assert spec.name == "mine" and spec.command == (sys.executable, "-m", POLICY_MODULE, "--policy", str(policy_file))
    agent = tmp_path / "agent.py"
    agent.write_text("def act(observation, legal_actions):\n    return legal_actions[0]\n")
    spec = resolve_bot(f"policy:{agent}:act", "scout")
    assert spec.name == "agent" and spec.command[-4:] == ("--choose", str(agent), "--function", "act")
    assert resolve_bot(f"policy:{agent}", "scout").command[-2:] == ("--choose", str(agent))
    with pytest.raises(UnknownBot, match="no policy file"):
        resolve_bot(f"policy:{tmp_path / 'none.npz'}", "scout")


def test_a_league_finds_the_policy_beside_its_file_and_identifies_it_by_its_digest(policy_file: Path) -> None:
    league_path = policy_file.parent / "league.toml"
    league_path.write_text(
        'game = "scout"\nplayers = 2\nseed = 1\n'
        '[[bots]]\nname = "mine"\ncommand = "policy:mine.npz"\n[[bots]]\nname = "random"\ncommand = "random"\n'
    )
    spec = next(bot.spec for bot in load_league(league_path).bots if bot.name == "mine")
    assert spec.command[-2:] == ("--policy", str(policy_file))
    before = program_digest(spec.command, None)
    LinearPolicy("scout", np.zeros(len(FEATURES["scout"]))).save(policy_file)
    assert program_digest(spec.command, None) != before


@pytest.mark.parametrize("name", ["scout", "scauver"])
def test_a_policy_plays_legal_actions_and_survives_saving(name: str, tmp_path: Path) -> None:
    rng = random.Random(1)
    weights = np.array([rng.uniform(-1, 1) for _ in FEATURES[name]])
    LinearPolicy(name, weights).save(tmp_path / "p.npz")
    policy = LinearPolicy.load(tmp_path / "p.npz")
    assert policy.game == name and np.array_equal(policy.weights, weights)
    rules = load_game(name)
    state = rules.new_game(3, 5, {"round_cap": 3} if name == "scauver" else None)
    while not state.is_over():
        seat = state.to_move()[0]
        legal = state.legal_actions(seat)
        action = policy.greedy(state.observation(seat), legal)
        assert action in legal
        state.apply(seat, action)


def test_a_file_that_is_not_a_policy_is_refused(tmp_path: Path) -> None:
    np.savez(tmp_path / "other.npz", game=np.array("chess"), weights=np.zeros(3))
    with pytest.raises(ValueError, match="not a linear policy"):
        LinearPolicy.load(tmp_path / "other.npz")


def test_training_against_the_heuristic_on_score_writes_a_policy(tmp_path: Path) -> None:
    pytest.importorskip("pettingzoo")
    from bots.python.train_policy import train

    out = tmp_path / "p.npz"
    policy = train("scauver", 2, 0.0, out, opponent="heuristic", reward="score", report=1, evaluation_games=2)
    assert LinearPolicy.load(out).game == "scauver" and policy.weights.shape == (len(FEATURES["scauver"]),)

"""The action encodings and observation vectors of referee.games.rl, which need only the core install.

Over seeded random games at every player count: every legal action of every decision gets an index of its
own inside the fixed action space (so the mask is exactly the legal set and every legal action can be
taken), and the observation vector has its fixed size and bounds.
"""

from __future__ import annotations

import random
import subprocess
import sys

import numpy as np
import pytest

from referee.games import load_game
from referee.games.rl.codec import codec_for
from referee.games.rl.features import feature_size, features
from referee.games.rl.rewards import rank_rewards, score_rewards

TABLES = [
    pytest.param(name, players, id=f"{name}-{players}p")
    for name, counts in (("scout", range(2, 6)), ("scauver", range(2, 5)))
    for players in counts
]
GAMES = 6
SCAUVER_ROUNDS = 8  # keeps a Scauver game short; every phase still comes up in each round


def random_games(name: str, players: int, games: int):
    """Every decision of `games` seeded random games: (state, seat, observation, legal actions)."""
    rules = load_game(name)
    config = rules.resolve_config({"round_cap": SCAUVER_ROUNDS} if name == "scauver" else {})
    for seed in range(games):
        rng = random.Random(seed)
        state = rules.new_game(players, seed, config)
        while not state.is_over():
            seat = rng.choice(state.to_move())
            legal = state.legal_actions(seat)
            yield state, seat, state.observation(seat), legal
            state.apply(seat, rng.choice(legal))


@pytest.mark.parametrize(("name", "players"), TABLES)
def test_every_legal_action_has_an_index_of_its_own(name: str, players: int) -> None:
    config = load_game(name).resolve_config({"round_cap": SCAUVER_ROUNDS} if name == "scauver" else {})
    codec = codec_for(name, players, config)
    kinds = set()
    for _state, _seat, observation, legal in random_games(name, players, GAMES if name == "scout" else 3 * GAMES):
        indices = [codec.encode(action, observation) for action in legal]
        assert len(set(indices)) == len(legal), legal
        assert all(0 <= index < codec.size for index in indices)
        kinds |= {action["kind"] for action in legal}
    expected = (
        {"orient", "show", "scout"}
        if name == "scout"
        else {"setup", "check", "bet", "fold", "call", "raise", "place", "final", "vanguards"}
    )  # no_link is rare in random play: its index is checked below
    assert kinds == expected


def test_scauver_bet_sizes_are_amphoras_so_every_offered_size_has_an_index() -> None:
    config = load_game("scauver").resolve_config({"bet_min_amphoras": 2, "bet_max_amphoras": 6, "amphora": 3})
    codec = codec_for("scauver", 2, config)
    observation = {"hand": [], "amphora": 3}
    bets = [codec.encode({"kind": "bet", "amount": 3 * k}, observation) for k in range(2, 7)]
    raises = [codec.encode({"kind": "raise", "amount": 3 * k}, observation) for k in range(2, 7)]
    assert bets == list(range(83, 88)) and raises == list(range(88, 93))
    assert codec.size == 288 + 2 * 5
    assert codec.encode({"kind": "no_link"}, observation) == codec.size - 1


@pytest.mark.parametrize(("name", "players"), TABLES)
def test_observation_vectors_have_their_fixed_size_and_bounds(name: str, players: int) -> None:
    config = load_game(name).resolve_config({"round_cap": SCAUVER_ROUNDS} if name == "scauver" else {})
    for _state, _seat, observation, _legal in random_games(name, players, 2):
        vector = features(name, observation, config)
        assert vector.shape == (feature_size(name, players),) and vector.dtype == np.float32
        assert vector.min() >= -1.0 and vector.max() <= 1.0 and vector.any()


def test_rank_rewards_are_zero_sum_and_share_ties() -> None:
    assert rank_rewards([1, 2, 3]) == [1.0, 0.0, -1.0]
    assert rank_rewards([1, 1, 3]) == [0.5, 0.5, -1.0]
    assert sum(rank_rewards([2, 1, 2, 4])) == 0
    assert score_rewards([3, 9, -3]) == [0.0, 6.0, -6.0]


def test_importing_the_games_loads_no_learning_library() -> None:
    code = (
        "import sys, referee.games as g; g.list_games(); g.load_game('scout');"
        "print(sorted(m for m in ('pettingzoo', 'gymnasium', 'pyspiel', 'referee.games.rl') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    assert load_game("scout").name == "scout" and "rl" not in __import__("referee.games").games.list_games()

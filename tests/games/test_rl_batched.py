"""The batched environment (referee.games.rl.batched): its arrays' shapes, each game's trajectory against
the PettingZoo env seeded alike, and the auto-reset of games that end."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from referee.games.base import ConfigError
from referee.games.rl.action_features import action_feature_width
from referee.games.rl.batched import Batch, BatchedEnv
from referee.games.rl.codec import codec_for
from referee.games.rl.features import feature_size

OPTIONS: dict[str, dict[str, Any]] = {"scout": {}, "scauver": {"round_cap": 4}}


def random_actions(batch: Batch, rng: random.Random) -> list[int]:
    return [rng.choice(np.flatnonzero(mask).tolist()) for mask in batch.masks]


@pytest.mark.parametrize(("name", "players", "observation"), [("scout", 4, "full"), ("scauver", 3, "compact")])
def test_every_array_has_its_shape(name: str, players: int, observation: str) -> None:
    env = BatchedEnv(name, players, games=5, observation=observation, options=OPTIONS[name])
    batch = env.reset(seed=1)
    config = env.config
    most = int(batch.masks.sum(axis=1).max())
    assert batch.observations.shape == (5, feature_size(name, players, observation == "compact"))
    assert batch.observations.dtype == np.float32
    assert batch.masks.shape == (5, codec_for(name, players, config).size)
    assert batch.masks.dtype == np.int8
    assert batch.action_indices.shape == (5, most)
    assert batch.action_features.shape == (5, most, action_feature_width(name))
    assert batch.action_features.dtype == np.float32
    assert batch.rewards.shape == (5, players)
    assert batch.dones.shape == (5,) and not batch.dones.any()
    assert batch.seats.shape == (5,)
    for game in range(5):
        legal = np.flatnonzero(batch.masks[game]).tolist()
        assert batch.action_indices[game, : len(legal)].tolist() == legal
        assert (batch.action_indices[game, len(legal) :] == -1).all()
        assert not batch.action_features[game, len(legal) :].any()
    plain = BatchedEnv(name, players, games=5, action_features=False, options=OPTIONS[name]).reset(seed=1)
    assert plain.action_features.shape == (5, 0, action_feature_width(name))


@pytest.mark.parametrize(("name", "players"), [("scout", 2), ("scout", 4), ("scauver", 2), ("scauver", 4)])
def test_each_game_follows_the_pettingzoo_env_seeded_alike(name: str, players: int) -> None:
    pytest.importorskip("pettingzoo")
    from referee.games.rl import pettingzoo_env

    games = 3
    env = BatchedEnv(name, players, games=games, reward="score", options=OPTIONS[name])
    batch = env.reset(seed=10)
    singles = [pettingzoo_env(name, players=players, reward="score", **OPTIONS[name]) for _ in range(games)]
    for game, single in enumerate(singles):
        single.reset(seed=10 + game)
    rng = random.Random(3)
    ended = [0] * games
    for _ in range(400):
        for game, single in enumerate(singles):
            agent = single.agent_selection
            seen = single.observe(agent)
            info = single.infos[agent]
            count = len(info["action_indices"])
            assert batch.seats[game] == single.possible_agents.index(agent)
            assert np.array_equal(batch.observations[game], seen["observation"])
            assert np.array_equal(batch.masks[game], seen["action_mask"])
            assert batch.action_indices[game, :count].tolist() == info["action_indices"].tolist()
            assert np.array_equal(batch.action_features[game, :count], info["action_features"])
        actions = random_actions(batch, rng)
        batch = env.step(actions)
        for game, single in enumerate(singles):
            single.step(actions[game])
            if all(single.terminations.values()):
                assert batch.dones[game]
                expected = [single.rewards[agent] for agent in single.possible_agents]
                assert batch.rewards[game].tolist() == pytest.approx(expected)
                assert batch.results[game] == single.infos[single.possible_agents[0]]["result"]
                single.reset()
                ended[game] += 1
            else:
                assert not batch.dones[game]
                assert not batch.rewards[game].any()
                assert batch.results[game] is None
    if name == "scauver" or players == 2:
        assert sum(ended) > 0


def test_games_that_end_are_dealt_anew_and_rewarded_once() -> None:
    env = BatchedEnv("scauver", 2, games=4, options={"round_cap": 2})
    batch = env.reset(seed=0)
    rng = random.Random(0)
    ends = 0
    for _ in range(600):
        batch = env.step(random_actions(batch, rng))
        for game in np.flatnonzero(batch.dones):
            ends += 1
            assert batch.results[game] is not None
            assert batch.rewards[game].sum() == pytest.approx(0.0)
            assert batch.masks[game].any()
        assert batch.masks.any(axis=1).all()
    assert ends >= 4


def test_a_refused_action_or_batch_is_an_error() -> None:
    env = BatchedEnv("scout", 3, games=2)
    with pytest.raises(RuntimeError):
        env.step([0, 0])
    batch = env.reset(seed=0)
    illegal = int(np.flatnonzero(batch.masks[0] == 0)[0])
    with pytest.raises(ValueError):
        env.step([illegal, int(np.flatnonzero(batch.masks[1])[0])])
    with pytest.raises(ValueError):
        env.step([0])
    with pytest.raises(ValueError):
        env.reset(seed=[1, 2, 3])
    with pytest.raises(ConfigError):
        BatchedEnv("scout", 7)
    with pytest.raises(ValueError):
        BatchedEnv("scout", 3, games=0)


def test_a_seed_list_gives_each_game_its_own_seed() -> None:
    first = BatchedEnv("scout", 3, games=2).reset(seed=[5, 9])
    second = BatchedEnv("scout", 3, games=2).reset(seed=9)
    assert np.array_equal(first.observations[1], second.observations[0])

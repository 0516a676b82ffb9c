"""The environments' fast paths against the reference built from scratch at every decision.

The PettingZoo env and the OpenSpiel state build their vectors, masks and action features once per decision
from the engine's read-only legal actions (SCOUT's indices remembered by identity, its feature rows computed
from the indices) and keep them until the next action; OpenSpiel's states keep observations per seat and
share them with their clones. Over random games at every table size of both games, what they hand out must
equal the reference: features.py's vector of a fresh `state.observation(seat)`, the mask of codec.legal_index
over a fresh `legal_actions`, and action_features.action_features row by row.
"""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np
import pytest

from referee.games import load_game
from referee.games.rl.action_features import action_features, indexed_action_features
from referee.games.rl.codec import codec_for, indexed_legal, legal_index
from referee.games.rl.features import features

OPTIONS: dict[str, dict[str, Any]] = {"scout": {}, "scauver": {"round_cap": 8}}
TABLES = [("scout", players) for players in range(2, 6)] + [("scauver", players) for players in range(2, 5)]
GAMES = 4


def reference(name: str, state: Any, seat: int, config: dict[str, Any], compact: bool) -> dict[str, Any]:
    observation = state.observation(seat)
    codec = codec_for(name, state.players, config)
    table = legal_index(codec, state.legal_actions(seat), observation)
    indices = sorted(table)
    mask = np.zeros(codec.size, np.int8)
    mask[indices] = 1
    return {
        "vector": features(name, observation, config, compact),
        "mask": mask,
        "indices": indices,
        "rows": action_features(name, observation, [table[index] for index in indices], config),
    }


@pytest.mark.parametrize(("name", "players"), TABLES)
def test_fast_rows_equal_the_reference_rows(name: str, players: int) -> None:
    rules = load_game(name)
    config = rules.resolve_config(OPTIONS[name])
    codec = codec_for(name, players, config)
    decisions = 0
    for seed in range(GAMES * 3):
        rng = random.Random(seed)
        state = rules.new_game(players, seed, config)
        while not state.is_over():
            seat = state.to_move()[0]
            observation = state.observation(seat)
            table = indexed_legal(codec, state.legal_actions_view(seat), observation)
            assert table == legal_index(codec, state.legal_actions(seat), observation)
            indices = sorted(table)
            rows = [table[index] for index in indices]
            fast = indexed_action_features(name, observation, indices, rows, config)
            assert fast.dtype == np.float32
            assert np.array_equal(fast, action_features(name, observation, rows, config))
            state.apply(seat, dict(rng.choice(rows)))
            decisions += 1
    assert decisions > 100


@pytest.mark.parametrize(("name", "players"), TABLES)
def test_pettingzoo_env_equals_the_reference_at_every_decision(name: str, players: int) -> None:
    pytest.importorskip("pettingzoo")
    from referee.games.rl import pettingzoo_env

    for seed in range(GAMES):
        compact = seed % 2 == 1
        env = pettingzoo_env(name, players=players, observation="compact" if compact else "full", **OPTIONS[name])
        env.reset(seed=seed)
        rng = random.Random(seed)
        config = env.config
        while not env.terminations[env.agent_selection]:
            agent = env.agent_selection
            state = env.state_
            assert state is not None
            seat = env.possible_agents.index(agent)
            expected = reference(name, state, seat, config, compact)
            seen = env.observe(agent)
            assert np.array_equal(seen["observation"], expected["vector"])
            assert np.array_equal(seen["action_mask"], expected["mask"])
            info = env.infos[agent]
            assert info["action_indices"].tolist() == expected["indices"]
            assert np.array_equal(info["action_features"], expected["rows"])
            assert info["legal_actions"] == state.legal_actions(seat)
            seen["observation"][:] = 9.0
            seen["action_mask"][:] = 0
            again = env.observe(agent)
            assert np.array_equal(again["observation"], expected["vector"])
            assert np.array_equal(again["action_mask"], expected["mask"])
            other = env.possible_agents[(seat + 1) % players]
            waiting = env.observe(other)
            vector = features(name, state.observation((seat + 1) % players), config, compact)
            assert np.array_equal(waiting["observation"], vector)
            assert not waiting["action_mask"].any()
            env.step(rng.choice(expected["indices"]))


def spiel_reference(name: str, state: Any, config: dict[str, Any]) -> tuple[np.ndarray, list[int], np.ndarray]:
    """The tensor, legal indices and rows of the seat to move, from its observation string and the actions'
    strings (the maps themselves) through the reference functions."""
    player = state.current_player()
    observation = json.loads(state.observation_string(player))
    indices = state.legal_actions()
    actions = [json.loads(state.action_to_string(player, index)) for index in indices]
    return features(name, observation, config), indices, action_features(name, observation, actions, config)


@pytest.mark.parametrize(("name", "players"), TABLES)
def test_openspiel_state_equals_the_reference_and_a_rebuilt_state(name: str, players: int) -> None:
    pyspiel = pytest.importorskip("pyspiel")
    import referee.games.rl.openspiel  # noqa: F401

    game = pyspiel.load_game(f"python_{name}", {"players": players, **OPTIONS[name]})
    config = load_game(name).resolve_config(OPTIONS[name])
    for seed in range(GAMES):
        rng = random.Random(seed)
        state = game.new_initial_state()
        twin = None
        decisions = 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                if len(state.history()) % 13 == 0:
                    rebuilt = game.new_initial_state()
                    for action in state.history():
                        rebuilt.apply_action(action)
                    assert rebuilt.chance_outcomes() == outcomes
                outcome = rng.choice([outcome for outcome, _ in outcomes])
                state.apply_action(outcome)
                if twin is not None:
                    twin.apply_action(outcome)
                continue
            vector, indices, rows = spiel_reference(name, state, config)
            player = state.current_player()
            assert np.array_equal(np.asarray(state.observation_tensor(player), np.float32), vector)
            for seat in range(players):
                assert state.observation_tensor(seat) == pyspiel.State.observation_tensor(state, seat)
                assert state.information_state_tensor(seat) == pyspiel.State.information_state_tensor(state, seat)
            assert state.observation_tensor() == pyspiel.State.observation_tensor(state)
            assert np.array_equal(state.legal_action_features(), rows)
            if decisions % 37 == 0:
                rebuilt = game.new_initial_state()
                for action in state.history():
                    rebuilt.apply_action(action)
                for seat in range(players):
                    assert rebuilt.observation_string(seat) == state.observation_string(seat)
                    assert rebuilt.information_state_string(seat) == state.information_state_string(seat)
                    assert rebuilt.observation_tensor(seat) == state.observation_tensor(seat)
                assert rebuilt.legal_actions() == indices
                assert np.array_equal(rebuilt.legal_action_features(), rows)
            if decisions % 25 == 5:
                twin = state.clone()
            if twin is not None:
                assert twin.current_player() == player
                assert twin.observation_string(player) == state.observation_string(player)
                assert twin.observation_tensor(player) == state.observation_tensor(player)
                assert twin.legal_actions() == indices
            action = rng.choice(indices)
            state.apply_action(action)
            if twin is not None:
                twin.apply_action(action)
            decisions += 1
        assert decisions > 0
        for seat in range(players):
            assert state.observation_tensor(seat) == pyspiel.State.observation_tensor(state, seat)

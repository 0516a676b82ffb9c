"""referee.games.rl.pettingzoo_env against PettingZoo's own api_test and against the rules engine.

A shadow engine, dealt from the environment's seed, plays the same actions: at every step the agent to
act, the action mask and the legal actions must be the engine's, every seat's observation must be computed
from the engine's observation of that seat and hold no card hidden from it, a simultaneous choice must not
change what the later seats see, and the final rewards must follow the engine's result.
"""

from __future__ import annotations

import json
import random
import warnings
from typing import Any

import numpy as np
import pytest

pettingzoo_test = pytest.importorskip("pettingzoo.test")

from referee.games import GameState, load_game  # noqa: E402
from referee.games.rl import pettingzoo_env  # noqa: E402
from referee.games.rl.features import features  # noqa: E402
from referee.games.rl.rewards import rank_rewards  # noqa: E402

TABLES = [
    pytest.param(name, players, id=f"{name}-{players}p")
    for name, counts in (("scout", range(2, 6)), ("scauver", range(2, 5)))
    for players in counts
]
OPTIONS: dict[str, dict[str, Any]] = {"scout": {}, "scauver": {"round_cap": 6}}


@pytest.mark.parametrize(("name", "players"), TABLES)
def test_pettingzoo_api_test_passes(name: str, players: int) -> None:
    env = pettingzoo_env(name, players=players, render_mode="ansi")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its warnings name PettingZoo's own environments only
        pettingzoo_test.api_test(env, num_cycles=200)
    env.reset(seed=3)
    assert f"{name} at {players} seats" in env.render()


def hidden_cards(name: str, state: GameState, seat: int) -> set[str]:
    """The cards of other seats' hands that `seat` may not know, as JSON strings to look for."""
    if name == "scauver":
        return {
            json.dumps(card)
            for other in range(state.players)
            if other != seat
            for card in state.observation(other)["hand"]
        }
    public = {frozenset(entry["card"]) for entry in state.observation(seat)["history"] if entry["kind"] == "scout"}
    hidden = set()
    for other in range(state.players):
        if other != seat:
            for top, bottom in state.observation(other)["hand"]:
                if frozenset((top, bottom)) not in public:
                    hidden |= {json.dumps([top, bottom]), json.dumps([bottom, top])}
    return hidden


def cards_in(name: str, observation: dict[str, Any]) -> set[str]:
    """Every card the observation names, as JSON strings: SCOUT cards in the hand, the Active Set and the
    history; Scauver cards are the only strings of the form rank + suit, so every string is looked at but
    those of `last_round` (the previous round's deal: every round is dealt from the whole deck again)."""
    if name == "scout":
        cards = observation["hand"] + observation["active_set"]
        for entry in observation["history"]:
            cards += entry.get("cards", []) + ([entry["card"]] if "card" in entry else [])
        return {json.dumps(card) for card in cards}
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            value = list(value.values())
        if isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, str):
            found.add(json.dumps(value))

    walk({key: value for key, value in observation.items() if key != "last_round"})
    return found


def without_who_chose(observation: dict[str, Any]) -> dict[str, Any]:
    """The observation without what says which seats have chosen (to_move, and Scauver's hand sizes at the
    setup): that much is public, what they chose is not."""
    return {key: value for key, value in observation.items() if key not in ("to_move", "hand_sizes")}


def play_against_the_engine(name: str, players: int, seed: int) -> tuple[int, list[float], list[float]]:
    """Play one random game through the environment and the shadow engine; (steps, the final rewards the
    agents got, the rewards of the engine's ranks)."""
    env = pettingzoo_env(name, players=players, **OPTIONS[name])
    env.reset(seed=seed)
    rules = load_game(name)
    shadow = rules.new_game(players, env.unwrapped.state_.seed, rules.resolve_config(OPTIONS[name]))
    rng = random.Random(seed)
    steps = 0
    final = [0.0] * players
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, info = env.last()
        if terminated or truncated:
            assert shadow.is_over()
            final[seat_of(agent)] = reward
            env.step(None)
            continue
        seat = seat_of(agent)
        assert seat == shadow.to_move()[0]
        assert info["legal_actions"] == shadow.legal_actions(seat)
        assert info["observation"] == shadow.observation(seat)
        for other in range(players):
            seen = env.observe(f"player_{other}")
            engine_view = shadow.observation(other)
            assert np.array_equal(seen["observation"], features(name, engine_view, env.unwrapped.config))
            assert not cards_in(name, engine_view) & hidden_cards(name, shadow, other)
            assert seen["action_mask"].any() == (other == seat)
        mask = observation["action_mask"]
        assert mask.sum() == len(info["legal_actions"])
        index = int(rng.choice(np.flatnonzero(mask)))
        later = [other for other in shadow.to_move() if other > seat]
        before = {other: without_who_chose(shadow.observation(other)) for other in later}
        env.step(index)
        chosen = [
            action
            for action in info["legal_actions"]
            if env.unwrapped.codec.encode(action, info["observation"]) == index
        ]
        assert len(chosen) == 1
        shadow.apply(seat, chosen[0])
        for other in later:
            if other in shadow.to_move():
                assert without_who_chose(shadow.observation(other)) == before[other], "a simultaneous choice showed"
        steps += 1
    return steps, final, rank_rewards(shadow.result()["ranks"])


def seat_of(agent: str) -> int:
    return int(agent.split("_")[1])


@pytest.mark.parametrize(("name", "players"), TABLES)
def test_the_environment_and_the_engine_agree_and_nothing_hidden_leaks(name: str, players: int) -> None:
    for seed in range(3):
        steps, final, expected = play_against_the_engine(name, players, seed)
        assert steps > players and final == expected


@pytest.mark.parametrize(("name", "players"), [("scout", 3), ("scauver", 2)])
def test_final_rewards_are_the_engines_ranks(name: str, players: int) -> None:
    env = pettingzoo_env(name, players=players, **OPTIONS[name])
    env.reset(seed=11)
    rng = np.random.default_rng(0)
    totals = {agent: 0.0 for agent in env.possible_agents}
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, _info = env.last()
        totals[agent] += reward
        if terminated or truncated:
            result = _info["result"]
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    assert list(totals.values()) == rank_rewards(result["ranks"])


def test_score_rewards_and_bad_arguments() -> None:
    env = pettingzoo_env("scout", players=3, reward="score")
    env.reset(seed=1)
    with pytest.raises(ValueError, match="not legal"):
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)[0]))
    with pytest.raises(ValueError, match="players"):
        pettingzoo_env("scout", players=6)
    with pytest.raises(ValueError, match="reward"):
        pettingzoo_env("scout", players=3, reward="points")


@pytest.mark.parametrize(("name", "players"), [("scout", 3), ("scauver", 3)])
def test_an_agent_redeals_the_game_it_cannot_see_and_the_environment_goes_on(name: str, players: int) -> None:
    env = pettingzoo_env(name, players=players, **OPTIONS[name])
    env.reset(seed=3)
    rng = random.Random(3)
    for _ in range(12):
        agent = env.agent_selection
        before = env.observe(agent)
        redealt = env.redealt(agent, rng)
        seat = seat_of(agent)
        assert redealt.observation(seat) == env.infos[agent]["observation"]
        assert redealt.legal_actions(seat) == env.infos[agent]["legal_actions"]
        assert all(np.array_equal(before[key], env.observe(agent)[key]) for key in before)
        env.step(int(np.flatnonzero(before["action_mask"])[0]))

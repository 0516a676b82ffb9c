"""The conventions of PettingZoo's classic games and of OpenSpiel's games, at every table size.

PettingZoo: render_test, seed_test and api_test on the wrapped `env()` of each game module (scout_v0,
scauver_v0), and TerminateIllegalWrapper ending a game on an illegal action. OpenSpiel: the real
max_game_length (lengths.py) never exceeded by a round of random play, score returns beside rank returns,
and the public and private observers.
"""

from __future__ import annotations

import functools
import json
import random
import warnings
from typing import Any

import numpy as np
import pytest

pettingzoo_test = pytest.importorskip("pettingzoo.test")
pyspiel = pytest.importorskip("pyspiel")

import referee.games.rl.openspiel  # noqa: E402, F401  (registers the games)
from referee.games import load_game  # noqa: E402
from referee.games.rl import scauver_v0, scout_v0  # noqa: E402
from referee.games.rl.features import OBSERVATIONS, feature_size, hand_size  # noqa: E402
from referee.games.rl.lengths import UNBOUNDED_ROUND_MOVES, round_bound  # noqa: E402
from referee.games.rl.rewards import score_rewards  # noqa: E402
from referee.games.scauver import CARD_VALUE  # noqa: E402

MODULES = {"scout": scout_v0, "scauver": scauver_v0}
OPTIONS: dict[str, dict[str, Any]] = {"scout": {}, "scauver": {"round_cap": 6}}
TABLES = [
    pytest.param(name, players, id=f"{name}-{players}p")
    for name, counts in (("scout", range(2, 6)), ("scauver", range(2, 5)))
    for players in counts
]


def env_fn(name: str, players: int) -> Any:
    return functools.partial(MODULES[name].env, players=players, **OPTIONS[name])


@pytest.mark.parametrize(("name", "players"), TABLES)
def test_render_seed_and_api_tests_pass_on_the_wrapped_env(name: str, players: int, capsys: Any) -> None:
    make = env_fn(name, players)
    pettingzoo_test.render_test(make)
    assert f"{name} at {players} seats" in capsys.readouterr().out  # "human" prints the table
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pettingzoo_test.seed_test(make, num_cycles=100)
        pettingzoo_test.api_test(make(), num_cycles=100)
    raw = MODULES[name].raw_env(players=players, **OPTIONS[name])
    assert raw.unwrapped is raw and make().unwrapped.metadata["name"] == f"{name}_{players}p_v0"


@pytest.mark.parametrize(("name", "players"), [("scout", 3), ("scauver", 2)])
def test_an_illegal_action_ends_the_wrapped_game_with_the_illegal_reward(name: str, players: int) -> None:
    env = MODULES[name].env(players=players, illegal_reward=-1.0, **OPTIONS[name])
    env.reset(seed=4)
    agent = env.agent_selection
    illegal = int(np.flatnonzero(env.observe(agent)["action_mask"] == 0)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(illegal)
    assert all(env.terminations.values())
    assert env.rewards[agent] == -1.0 and sum(env.rewards.values()) == -1.0
    with pytest.raises(AssertionError):
        MODULES[name].env(players=players).step(0)  # before reset: the order is enforced
    with pytest.raises(ValueError, match="render_mode"):
        MODULES[name].raw_env(players=players, render_mode="rgb_array")


@pytest.mark.parametrize(("name", "players"), TABLES)
def test_no_round_of_random_play_exceeds_the_bound_of_max_game_length(name: str, players: int) -> None:
    rules = load_game(name)
    config = rules.resolve_config(OPTIONS[name])
    game = pyspiel.load_game(f"python_{name}", {"players": players, **OPTIONS[name]})
    per_round = round_bound(name, players, config)
    assert (per_round is None) == (name == "scout" and players > 2)
    limit = per_round if per_round is not None else UNBOUNDED_ROUND_MOVES
    rounds = 2 if name == "scout" and players == 2 else (players if name == "scout" else config["round_cap"])
    assert game.max_game_length() == limit * rounds
    rng = random.Random(players)
    longest = 0
    for seed in range(20):
        state = rules.new_game(players, seed, config)
        moves: dict[int, int] = {}
        while not state.is_over():
            seat = state.to_move()[0]
            moves[state.round] = moves.get(state.round, 0) + 1
            state.apply(seat, rng.choice(state.legal_actions(seat)))
        longest = max(longest, *moves.values())
    assert 0 < longest <= limit


def random_game(game: Any, seed: int) -> Any:
    rng = random.Random(seed)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = [outcome for outcome, _ in state.chance_outcomes()]
            state.apply_action(rng.choice(outcomes))
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    return state


@pytest.mark.parametrize(("name", "players"), [("scout", 3), ("scout", 2), ("scauver", 3)])
def test_score_returns_are_the_final_scores_less_the_mean(name: str, players: int) -> None:
    params = {"players": players, **OPTIONS[name]}
    by_score = pyspiel.load_game(f"python_{name}", {**params, "returns": "score"})
    by_rank = pyspiel.load_game(f"python_{name}", params)
    pyspiel.random_sim_test(by_score, num_sims=1, serialize=True, verbose=False)
    for seed in range(3):
        scored, ranked = random_game(by_score, seed), random_game(by_rank, seed)
        assert scored.history() == ranked.history()
        final = json.loads(scored.observation_string(0))
        totals = final["scores"] if name == "scout" else final["chips"]
        assert scored.returns() == score_rewards(totals)
        assert sum(scored.returns()) == pytest.approx(0.0)
        assert all(abs(value) <= by_score.max_utility() for value in scored.returns())
        order = np.argsort(scored.returns(), kind="stable")
        assert [ranked.returns()[seat] for seat in order] == sorted(ranked.returns())
    with pytest.raises(ValueError, match="returns"):
        pyspiel.load_game(f"python_{name}", {**params, "returns": "chips"})


def observers(game: Any) -> tuple[Any, Any]:
    public = pyspiel.IIGObservationType(
        perfect_recall=False, public_info=True, private_info=pyspiel.PrivateInfoType.NONE
    )
    private = pyspiel.IIGObservationType(
        perfect_recall=False, public_info=False, private_info=pyspiel.PrivateInfoType.SINGLE_PLAYER
    )
    return game.make_py_observer(public), game.make_py_observer(private)


@pytest.mark.parametrize(("name", "players"), [("scout", 3), ("scout", 2), ("scauver", 3)])
def test_the_public_observer_is_the_same_for_every_seat_and_the_private_one_holds_the_hand(
    name: str, players: int
) -> None:
    game = pyspiel.load_game(f"python_{name}", {"players": players, **OPTIONS[name]})
    public, private = observers(game)
    rng = random.Random(1)
    state = game.new_initial_state()
    decisions = 0
    while not state.is_terminal() and decisions < 150:
        if state.is_chance_node():
            state.apply_action(rng.choice([outcome for outcome, _ in state.chance_outcomes()]))
            continue
        strings, tensors = set(), []
        for seat in range(players):
            strings.add(public.string_from(state, seat))
            public.set_from(state, seat)
            tensors.append(public.tensor.copy())
            own = json.loads(state.observation_string(seat))
            mine = json.loads(private.string_from(state, seat))
            assert mine["hand"] == own["hand"] and mine["seat"] == seat
            private.set_from(state, seat)
            assert private.tensor.sum() == (2 * len(own["hand"]) if name == "scout" else len(own["hand"]))
        assert len(strings) == 1, "the public observation differs between seats"
        assert all(np.array_equal(tensors[0], tensor) for tensor in tensors)
        view = json.loads(strings.pop())
        assert view["hand"] == [] and "seat" not in view
        state.apply_action(rng.choice(state.legal_actions()))
        decisions += 1
    everything = pyspiel.IIGObservationType(
        perfect_recall=False, public_info=True, private_info=pyspiel.PrivateInfoType.ALL_PLAYERS
    )
    with pytest.raises(ValueError, match="ALL_PLAYERS"):
        game.make_py_observer(everything)


@pytest.mark.parametrize(("name", "players"), [("scout", 2), ("scout", 4), ("scauver", 3)])
def test_the_compact_observation_holds_the_cards_and_the_full_ones_table(name: str, players: int) -> None:
    compact_env = MODULES[name].env(players=players, observation="compact", **OPTIONS[name])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pettingzoo_test.api_test(compact_env, num_cycles=60)
    full, compact = (MODULES[name].raw_env(players=players, observation=kind, **OPTIONS[name]) for kind in OBSERVATIONS)
    for env in (full, compact):
        env.reset(seed=5)
    rng = random.Random(5)
    cards = hand_size(name, players)
    small = hand_size(name, players, compact=True)
    assert feature_size(name, players, compact=True) < feature_size(name, players) / 2
    for _ in range(60):
        agent = full.agent_selection
        if full.terminations[agent]:
            break
        hand = full.infos[agent]["observation"]["hand"]
        long, short = full.observe(agent)["observation"], compact.observe(agent)["observation"]
        table = (cards + 200, small + 20) if name == "scout" else (len(long) - 16, len(short) - 16)
        assert np.array_equal(long[table[0] :], short[table[1] :])  # seats, phase and table as in the full one
        if name == "scout":
            slots = np.rint(short[: 2 * len(hand)] * 10).astype(int).reshape(-1, 2).tolist()
            assert slots == hand and not short[2 * len(hand) : small].any()
        else:
            counts = np.rint(short[:small] * 4).astype(int).tolist()
            assert counts == [sum(CARD_VALUE[card] == value for card in hand) for value in range(1, 11)]
        index = int(rng.choice(np.flatnonzero(full.observe(agent)["action_mask"])))
        full.step(index)
        compact.step(index)
    game = pyspiel.load_game(f"python_{name}", {"players": players, "observation": "compact", **OPTIONS[name]})
    assert game.observation_tensor_size() == feature_size(name, players, compact=True)
    pyspiel.random_sim_test(game, num_sims=1, serialize=False, verbose=False)

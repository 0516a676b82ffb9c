"""The game interface, checked the same way for every registered game and every player count.

Random games are played to the end; along the way, at a sample of decisions, every legal action must apply,
actions that are not legal must raise IllegalAction and leave the state as it was, a clone must be
independent, and a seat's observation must not move when only cards hidden from it change. Replays from
(seed, config, history) and fresh games from the same seed must be identical.

The leak test changes the hidden cards with the game's own `redeal` (tests/games/test_redeal.py checks it).
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import json
import random
from collections.abc import Callable, Iterator
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.games import Game, GameState, IllegalAction, list_games, load_game

CHECKED_DECISIONS = 25  # per game, the decisions where the expensive checks run (all decisions are played)
EXAMPLES = settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SEEDS = st.integers(min_value=0, max_value=2**63 - 1)

TABLES = [
    pytest.param(name, players, id=f"{name}-{players}p")
    for name in list_games()
    for players in range(load_game(name).info.min_players, load_game(name).info.max_players + 1)
]


# Helpers --------------------------------------------------------------------------------------------------


def canonical(action: Any) -> str:
    """A key that tells True from 1 and lists from tuples, unlike ==."""
    return json.dumps(action, sort_keys=True, default=repr) + type(action).__name__


def observations(state: GameState) -> list[dict[str, Any]]:
    return [state.observation(seat) for seat in range(state.players)]


def decisions(state: GameState, chooser: random.Random) -> Iterator[int]:
    """Play `state` to the end with uniformly random legal actions, yielding each seat before it acts."""
    while not state.is_over():
        to_move = state.to_move()
        assert to_move, "a game that is not over has a seat to move"
        seat = chooser.choice(to_move)
        yield seat
        state.apply(seat, chooser.choice(state.legal_actions(seat)))


def checked(total: int, chooser: random.Random) -> Callable[[int], bool]:
    """Run the expensive checks at about CHECKED_DECISIONS of `total` decisions."""
    rate = min(1.0, CHECKED_DECISIONS / max(total, 1))
    return lambda _: chooser.random() < rate


def game_length(game: Game, players: int, seed: int) -> int:
    state = game.new_game(players, seed=seed)
    return sum(1 for _ in decisions(state, random.Random(seed)))


def msgpack_safe(value: Any) -> bool:
    """Plain data that survives msgpack unchanged: no tuples, no other types."""
    unpacked = msgpack.unpackb(msgpack.packb(value))
    return unpacked == value and canonical(unpacked) == canonical(value)


def not_legal_variants(action: dict[str, Any], stale: list[dict[str, Any]], rng: random.Random) -> list[Any]:
    """Actions that look like `action` but break it: a wrong kind, a missing or extra key, a value of
    another type or out of range; plus actions that were legal earlier in the game; plus non-actions."""
    variants: list[Any] = [None, [], {}, {"kind": 7}, {"kind": "no such kind"}, dict(action, surplus=1)]
    for key in action:
        if key != "kind":
            variants.append({k: v for k, v in action.items() if k != key})
        value = action[key]
        for replacement in (None, "?", 1.5, [value], {"x": 1}, -(10**6), 10**6, not value, True):
            variants.append(dict(action, **{key: replacement}))
        if type(value) is int:
            variants.append(dict(action, **{key: value + rng.choice([-2, -1, 1, 2, 50])}))
    variants += rng.sample(stale, min(len(stale), 20))
    return variants


# The suite ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "players"), TABLES)
@EXAMPLES
@given(seed=SEEDS)
def test_random_games_run_to_the_end_with_well_formed_data(name: str, players: int, seed: int) -> None:
    state = load_game(name).new_game(players, seed=seed)
    rounds = [state.round]
    for seat in decisions(state, random.Random(seed)):
        for other in range(players):
            if other not in state.to_move():
                assert state.legal_actions(other) == [] and not state.legal_actions_view(other)
        actions = state.legal_actions(seat)
        assert actions, "a seat to move has a legal action"
        assert list(state.legal_actions_view(seat)) == actions, "the read-only view lists the same actions"
        assert len({canonical(a) for a in actions}) == len(actions), "legal actions are listed once each"
        assert all(type(a) is dict and type(a["kind"]) is str and msgpack_safe(a) for a in actions)
        rounds.append(state.round)
    assert state.to_move() == []
    assert all(state.legal_actions(seat) == [] for seat in range(players))
    assert rounds == sorted(rounds) and rounds[0] == 1
    result = state.result()
    assert set(result) == {"scores", "ranks"}
    assert len(result["scores"]) == len(result["ranks"]) == players
    assert min(result["ranks"]) == 1 and all(1 <= rank <= players for rank in result["ranks"])
    for observation in observations(state):
        assert msgpack_safe(observation)
    with pytest.raises(IllegalAction):
        state.apply(0, {"kind": "anything"})


@pytest.mark.parametrize(("name", "players"), TABLES)
@EXAMPLES
@given(seed=SEEDS)
def test_every_legal_action_applies_and_nothing_else_does(name: str, players: int, seed: int) -> None:
    game = load_game(name)
    chooser = random.Random(seed)
    check = checked(game_length(game, players, seed), chooser)
    state = game.new_game(players, seed=seed)
    stale: list[dict[str, Any]] = []
    for decision, seat in enumerate(decisions(state, random.Random(seed))):
        actions = state.legal_actions(seat)
        if not check(decision):
            continue
        for action in actions:
            state.clone().apply(seat, action)
        legal = {canonical(a) for a in actions}
        before = observations(state)
        for variant in not_legal_variants(chooser.choice(actions), stale, chooser):
            if canonical(variant) in legal:
                continue
            with pytest.raises(IllegalAction):
                state.apply(seat, variant)
        for wrong_seat in {*range(players), -1, players, "0"} - set(state.to_move()):
            with pytest.raises(IllegalAction):
                state.apply(wrong_seat, actions[0])  # type: ignore[arg-type]
        assert observations(state) == before, "a refused action changed nothing"
        stale += chooser.sample(actions, min(len(actions), 3))


@pytest.mark.parametrize(("name", "players"), TABLES)
@EXAMPLES
@given(seed=SEEDS)
def test_replay_and_the_same_seed_give_the_same_game(name: str, players: int, seed: int) -> None:
    game = load_game(name)
    first, second = game.new_game(players, seed=seed), game.new_game(players, seed=seed)
    assert observations(first) == observations(second)
    chooser = random.Random(seed)
    check = checked(game_length(game, players, seed), chooser)
    for decision, _ in enumerate(decisions(first, random.Random(seed))):
        if check(decision):
            replayed = game.replay(players, seed, first.history)
            assert observations(replayed) == observations(first)
            assert replayed.to_move() == first.to_move()
    for _ in decisions(second, random.Random(seed)):
        pass
    assert second.history == first.history
    assert second.result() == first.result()
    replayed = game.replay(players, seed, first.history, config=first.config)
    assert replayed.is_over() and replayed.result() == first.result()
    assert observations(replayed) == observations(first)


@pytest.mark.parametrize(("name", "players"), TABLES)
@EXAMPLES
@given(seed=SEEDS)
def test_a_clone_is_independent(name: str, players: int, seed: int) -> None:
    game = load_game(name)
    chooser = random.Random(seed)
    check = checked(game_length(game, players, seed), chooser)
    state = game.new_game(players, seed=seed)
    for decision, _ in enumerate(decisions(state, random.Random(seed))):
        if not check(decision):
            continue
        before, history = observations(state), list(state.history)
        twin = state.clone()
        assert observations(twin) == before
        for _ in decisions(twin, chooser):
            pass
        assert observations(state) == before and state.history == history
        assert twin.is_over()


def mutable_parts(state: GameState) -> dict[int, Any]:
    """Every list, dict, set and non-frozen object reachable from the state's attributes (not its Game), by id."""
    found: dict[int, Any] = {}
    seen: set[int] = set()
    pending: list[Any] = [value for key, value in vars(state).items() if key != "game"]
    while pending:
        value = pending.pop()
        if id(value) in seen or isinstance(value, str | bytes | int | float | enum.Enum | type | Game):
            continue
        seen.add(id(value))
        if isinstance(value, dict):
            found[id(value)] = value
            pending += [*value.keys(), *value.values()]
        elif isinstance(value, list | set | bytearray):
            found[id(value)] = value
            pending += list(value)
        elif isinstance(value, tuple | frozenset):
            pending += list(value)
        elif hasattr(value, "__dict__"):
            frozen = dataclasses.is_dataclass(value) and type(value).__dataclass_params__.frozen  # type: ignore[attr-defined]
            if not frozen:
                found[id(value)] = value
            pending += list(vars(value).values())
    return found


def internals(state: GameState) -> dict[str, Any]:
    return {key: value for key, value in vars(state).items() if key != "game"}


@pytest.mark.parametrize(("name", "players"), TABLES)
@EXAMPLES
@given(seed=SEEDS)
def test_a_clone_and_its_original_diverge_without_sharing_mutable_state(name: str, players: int, seed: int) -> None:
    """A clone may share only what neither state ever changes: from a sample of decisions, the original and its
    clone play on to their ends along different random choices; then each is, attribute by attribute, the
    state a fresh replay of its own history reaches, and every mutable object they shared is as it was."""
    game = load_game(name)
    chooser = random.Random(seed)
    check = checked(game_length(game, players, seed), chooser)
    state = game.new_game(players, seed=seed, config={})
    diverged = 0
    for decision, _ in enumerate(decisions(state, random.Random(seed))):
        if not check(decision):
            continue
        original = state.clone()
        twin = original.clone()
        shared = mutable_parts(original).keys() & mutable_parts(twin).keys()
        parts = mutable_parts(original)
        before = {key: copy.deepcopy(parts[key]) for key in shared}
        for played, rng in ((original, random.Random(seed + 1)), (twin, random.Random(seed + 2))):
            for _ in decisions(played, rng):
                pass
        for played in (original, twin):
            replayed = game.replay(players, seed, played.history, config=played.config, deal=played.deal)
            assert internals(played) == internals(replayed)
        assert all(parts[key] == before[key] for key in shared), "a shared object was changed"
        diverged += original.history != twin.history
    assert diverged or game_length(game, players, seed) < 3


@pytest.mark.parametrize(("name", "players"), TABLES)
@EXAMPLES
@given(seed=SEEDS)
def test_an_observation_does_not_depend_on_cards_hidden_from_its_seat(name: str, players: int, seed: int) -> None:
    game = load_game(name)
    chooser = random.Random(seed)
    check = checked(game_length(game, players, seed), chooser)
    state = game.new_game(players, seed=seed)
    checks = redealt_differently = 0
    for decision, _ in enumerate(decisions(state, random.Random(seed))):
        if not check(decision):
            continue
        for seat in range(players):
            twin = state.redeal(seat, chooser)
            assert twin.observation(seat) == state.observation(seat)
            checks += 1
            redealt_differently += observations(twin) != observations(state)
    assert redealt_differently or not checks, "the redealer should change what other seats see"


@pytest.mark.parametrize(("name", "players"), TABLES)
@EXAMPLES
@given(seed=SEEDS)
def test_declared_logs_only_grow_within_a_round(name: str, players: int, seed: int) -> None:
    """GameInfo.log_keys is a promise the referee's delta encoding relies on: within a round (observation
    "round"), every seat's log holds its previous entries, unchanged, first."""
    game = load_game(name)
    state = game.new_game(players, seed=seed)
    last: dict[tuple[int, str], tuple[Any, list[Any]]] = {}
    grown = 0
    for _ in decisions(state, random.Random(seed)):
        for seat in range(players):
            observation = state.observation(seat)
            for key in game.info.log_keys:
                log = observation[key]
                assert type(log) is list
                round_, before = last.get((seat, key), (None, []))
                if round_ == observation["round"]:
                    assert log[: len(before)] == before, f"{key} of seat {seat} changed within a round"
                    grown += len(log) > len(before)
                last[seat, key] = (observation["round"], json.loads(json.dumps(log)))
    assert grown or not game.info.log_keys


@pytest.mark.parametrize(("name", "players"), TABLES)
@EXAMPLES
@given(seed=SEEDS)
def test_the_dealt_cards_deal_the_same_game_as_an_explicit_deal(name: str, players: int, seed: int) -> None:
    """`state.dealt` is what a replay records: dealt explicitly (same seed), the same actions give the same
    observations at every decision and the same result, and the deal reads back unchanged."""
    game = load_game(name)
    played = game.new_game(players, seed=seed)
    for _ in decisions(played, random.Random(seed)):
        pass
    dealt = played.dealt
    assert msgpack_safe(dealt)
    twin = game.new_game(players, seed=seed, deal=dealt)
    original = game.new_game(players, seed=seed)
    for seat, action in played.history:
        assert observations(twin) == observations(original)
        twin.apply(seat, action)
        original.apply(seat, action)
    assert twin.is_over() and twin.result() == played.result()
    assert twin.dealt == dealt

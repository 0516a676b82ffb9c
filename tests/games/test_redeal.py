"""`state.redeal(seat, rng)` of every game, over random games and seats: the seat sees the same thing, the new
game is one of the rules to its end, the cards are those of the deal, the hidden ones differ from one draw to
the next, and nothing of the result depends on what the seat has not seen. And `legal_actions()` hands out
copies: editing one, however deeply, changes nothing the state offers."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.games import GameState, list_games, load_game

EXAMPLES = settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SEEDS = st.integers(min_value=0, max_value=2**63 - 1)
CONFIGS: dict[str, dict[str, Any]] = {"scauver": {"round_cap": 6}}
"""Scauver games kept short: its rounds repeat one pattern, and 200 of them would make each example slow."""
DRAWS = 16

TABLES = [
    pytest.param(name, players, id=f"{name}-{players}p")
    for name in list_games()
    for players in range(load_game(name).info.min_players, load_game(name).info.max_players + 1)
]


def positions(name: str, players: int, seed: int, count: int = 12) -> Iterator[tuple[GameState, int]]:
    """The first state and about `count` more along a random game (each with a random seat, to move or not):
    the first always has cards a seat has not seen, where a short game's sample might have none."""
    game = load_game(name)
    state = game.new_game(players, seed=seed, config=CONFIGS.get(name))
    chooser = random.Random(seed)
    length = sum(1 for _ in play_out(state.clone(), random.Random(seed)))
    yield state.clone(), chooser.randrange(players)
    while not state.is_over():
        if chooser.random() < count / max(length, 1):
            yield state.clone(), chooser.randrange(players)
        seat = chooser.choice(state.to_move())
        state.apply(seat, chooser.choice(state.legal_actions(seat)))
    yield state, chooser.randrange(players)


def play_out(state: GameState, chooser: random.Random) -> Iterator[int]:
    while not state.is_over():
        seat = chooser.choice(state.to_move())
        state.apply(seat, chooser.choice(state.legal_actions(seat)))
        yield seat


def observations(state: GameState) -> list[dict[str, Any]]:
    return [state.observation(seat) for seat in range(state.players)]


def cards_of(dealt: dict[str, Any]) -> Counter[str]:
    """The cards of an explicit deal, all rounds together (two-seat SCOUT deals one deck over both), each card
    as one string whatever its turn."""
    counted: Counter[str] = Counter()
    for entry in dealt["rounds"]:
        hands, draws = (entry["hands"], entry["draws"]) if isinstance(entry, dict) else (entry, [])
        cards = [card for hand in hands for card in hand] + draws
        counted.update(card if isinstance(card, str) else str(sorted(card)) for card in cards)
    return counted


def has_unseen_cards(state: GameState, seat: int) -> bool:
    """Whether some card `seat` has not seen is still to be dealt or held by another seat (by the observations
    alone: what the seat saw, and what each other seat holds)."""
    if state.is_over():
        return False
    mine = state.observation(seat)
    if state.game.name == "scauver":
        return mine["deck_left"] > 0
    if mine["round"] < mine["rounds"]:
        return True
    named = [
        entry["cards"] if entry["kind"] == "show" else [entry["card"]]
        for entry in mine["history"]
        if "card" in entry or "cards" in entry
    ]
    seen = {tuple(sorted(card)) for cards in named for card in cards}
    return any(
        tuple(sorted(card)) not in seen
        for other in range(state.players)
        if other != seat
        for card in state.observation(other)["hand"]
    )


@pytest.mark.parametrize(("name", "players"), TABLES)
@EXAMPLES
@given(seed=SEEDS)
def test_a_redeal_is_a_game_the_seat_cannot_tell_from_this_one(name: str, players: int, seed: int) -> None:
    """The seat's observation is the same; the new game replays from its seed, config, deal and history; its
    deal holds the same cards round by round; and it plays on to its end by the rules."""
    game = load_game(name)
    for state, seat in positions(name, players, seed):
        redealt = state.redeal(seat, random.Random(seed))
        assert redealt.observation(seat) == state.observation(seat)
        assert redealt.to_move() == state.to_move() and redealt.round == state.round
        assert [list(redealt.legal_actions(other)) for other in redealt.to_move() if other == seat] == [
            list(state.legal_actions(other)) for other in state.to_move() if other == seat
        ]
        replayed = game.replay(players, redealt.seed, redealt.history, redealt.config, redealt.deal)
        assert observations(replayed) == observations(redealt)
        assert cards_of(redealt.dealt) == cards_of(state.dealt)
        for _ in play_out(redealt, random.Random(seed)):
            pass
        assert redealt.is_over()


@pytest.mark.parametrize(("name", "players"), TABLES)
@EXAMPLES
@given(seed=SEEDS)
def test_a_redeal_draws_the_hidden_cards_at_random(name: str, players: int, seed: int) -> None:
    checked = 0
    for state, seat in positions(name, players, seed, count=6):
        if not has_unseen_cards(state, seat):
            continue
        draws = {json.dumps(state.redeal(seat, random.Random(draw)).dealt) for draw in range(DRAWS)}
        assert len(draws) > 1
        checked += 1
    assert checked


@pytest.mark.parametrize(("name", "players"), TABLES)
@EXAMPLES
@given(seed=SEEDS)
def test_a_redeal_depends_only_on_what_the_seat_has_seen(name: str, players: int, seed: int) -> None:
    """A twin that differs only in what the seat has not seen (itself a redeal) redeals, with the same random
    numbers, to a game that every seat sees alike and that goes on alike."""
    for state, seat in positions(name, players, seed, count=6):
        twin = state.redeal(seat, random.Random(~seed))
        for draw in (1, 2):
            ours, theirs = state.redeal(seat, random.Random(draw)), twin.redeal(seat, random.Random(draw))
            assert observations(ours) == observations(theirs)
            for seat_moved in zip(
                play_out(ours, random.Random(draw)), play_out(theirs, random.Random(draw)), strict=True
            ):
                assert seat_moved[0] == seat_moved[1]
            assert ours.result() == theirs.result()


def test_a_scout_redeal_draws_again_the_orientations_the_seat_has_not_been_shown() -> None:
    """Seats 0 and 1 chose their orientation; seat 2, still choosing, has not been shown how: redeals for it
    draw both ways for each, and keep its own choice for seat 0 when seat 0 redeals."""
    state = load_game("scout").new_game(3, seed=4)
    state.apply(0, {"kind": "orient", "flip": True})
    state.apply(1, {"kind": "orient", "flip": True})
    flips = {tuple(move[1]["flip"] for move in state.redeal(2, random.Random(draw)).history) for draw in range(16)}
    assert flips == {(False, False), (False, True), (True, False), (True, True)}
    assert {state.redeal(0, random.Random(draw)).history[0][1]["flip"] for draw in range(16)} == {True}


def test_a_scauver_redeal_draws_again_the_setups_the_seat_has_not_been_shown() -> None:
    state = load_game("scauver").new_game(3, seed=4)
    state.apply(0, state.legal_actions(0)[5])
    state.apply(1, state.legal_actions(1)[7])
    setups = {json.dumps(state.redeal(2, random.Random(draw)).history) for draw in range(8)}
    assert len(setups) == 8
    assert all(state.redeal(0, random.Random(draw)).history[0] == state.history[0] for draw in range(8))


def test_a_scauver_redeal_deals_the_hands_it_is_given() -> None:
    state = load_game("scauver").new_game(3, seed=5)
    for seat in (0, 1, 2):
        state.apply(seat, state.legal_actions(seat)[0])
    seen = set(state.observation(0)["hand"]) | {
        card for field in state.observation(0)["fields"] for card in field["left"] + field["right"]
    }
    unseen = sorted(set(state.dealt["rounds"][0]["draws"]) - seen)
    hand = unseen[: len(state.observation(1)["hand"])]
    redealt = state.redeal(0, random.Random(1), hands={1: hand})
    assert sorted(redealt.observation(1)["hand"]) == sorted(hand)
    assert redealt.observation(0) == state.observation(0)
    with pytest.raises(ValueError, match="not seen"):
        state.redeal(0, random.Random(1), hands={1: state.observation(0)["hand"][: len(hand)]})
    with pytest.raises(ValueError, match="holds"):
        state.redeal(0, random.Random(1), hands={1: hand[:1]})


# legal_actions hands out copies --------------------------------------------------------------------------


def defaced(value: Any) -> Any:
    """`value` edited in place, every list and map in it down to the leaves; the value to put in its place."""
    if isinstance(value, dict):
        for key in list(value):
            value[key] = defaced(value[key])
        value["defaced"] = True
        return value
    if isinstance(value, list):
        for at, item in enumerate(value):
            value[at] = defaced(item)
        value.append("defaced")
        return value
    return "defaced"


@pytest.mark.parametrize(("name", "players"), TABLES)
@EXAMPLES
@given(seed=SEEDS)
def test_editing_a_legal_action_changes_nothing_the_state_offers(name: str, players: int, seed: int) -> None:
    for state, _ in positions(name, players, seed):
        for seat in state.to_move():
            offered = json.dumps(state.legal_actions(seat))
            for action in state.legal_actions(seat):
                defaced(action)
            assert json.dumps(state.legal_actions(seat)) == offered
            assert json.dumps(list(state.legal_actions_view(seat))) == offered


def test_editing_a_scauver_setup_action_changes_nothing_the_state_offers() -> None:
    """The bug: the setup actions share card lists with the state's cache, so a caller that edited the one it
    was given changed the next offers."""
    state = load_game("scauver").new_game(2, seed=1)
    offered = state.legal_actions(0)
    first = offered[0]
    first["left"].append("KS")
    first["kind"] = "fold"
    again = state.legal_actions(0)
    assert again[0]["kind"] == "setup" and "KS" not in again[0]["left"]
    assert again == load_game("scauver").new_game(2, seed=1).legal_actions(0)


def test_a_scauver_redeal_draws_again_the_showdown_choices_the_seat_has_not_been_shown() -> None:
    """At a showdown, a seat that has chosen among several links is seen by no one until all have chosen:
    redeals for a seat still choosing draw its choice again, and the showdown ends by the rules."""
    game = load_game("scauver")
    found = 0
    for seed in range(40):
        state, chooser = game.new_game(2, seed=seed, config={"round_cap": 1}), random.Random(seed)
        while not state.is_over() and state.observation(0)["phase"] != "showdown":
            seat = chooser.choice(state.to_move())
            actions = [action for action in state.legal_actions(seat) if action["kind"] != "fold"]
            state.apply(seat, chooser.choice(actions or state.legal_actions(seat)))
        if state.is_over() or len(state.legal_actions(0)) < 2:
            continue
        state.apply(0, state.legal_actions(0)[0])
        redeals = [state.redeal(1, random.Random(draw)) for draw in range(12)]
        assert all(redealt.observation(1) == state.observation(1) for redealt in redeals)
        assert len({json.dumps(redealt.history[-1]) for redealt in redeals}) > 1
        for redealt in redeals:
            redealt.apply(1, redealt.legal_actions(1)[0])
            assert redealt.is_over() and redealt.observation(1)["last_round"]["choices"][0] is not None
        found += 1
        if found == 3:
            break
    assert found

"""ScoutState.deal_round, the engine entry point OpenSpiel's SCOUT uses to deal a round when it starts.

A game whose every round is dealt anew at its start must be the game a new engine reaches on the deal it
records (`state.deal`) with the same history, observation for observation, and its record must replay it; the
entry point refuses a round already under way and hands that are not a round of the table.
"""

from __future__ import annotations

import random

import pytest

from referee.games import load_game
from referee.games.base import ConfigError, IllegalAction
from referee.games.scout import TABLES


def _round(players: int, rng: random.Random, used: set[tuple[int, int]]) -> list[list[list[int]]]:
    table = TABLES[players]
    cards = [card for card in table.deck if card not in used]
    rng.shuffle(cards)
    size = table.hand_size
    return [
        [list(card) if rng.random() < 0.5 else list(card[::-1]) for card in cards[seat * size : (seat + 1) * size]]
        for seat in range(players)
    ]


def _names(hands: list[list[list[int]]]) -> set[tuple[int, int]]:
    return {(min(card), max(card)) for hand in hands for card in hand}


@pytest.mark.parametrize("players", range(2, 6))
def test_rounds_dealt_at_their_start_replay_from_the_record(players: int) -> None:
    rules = load_game("scout")
    for seed in range(3):
        rng = random.Random(seed)
        state = rules.new_game(players, seed)
        dealt_rounds = 0
        used: set[tuple[int, int]] = set()
        started = 0
        while not state.is_over():
            if state.round != started:
                started = state.round
                hands = _round(players, rng, used if TABLES[players].two_players else set())
                used |= _names(hands)
                state.deal_round(hands)
                dealt_rounds += 1
                for seat in range(players):
                    assert state.observation(seat)["hand"] == hands[seat]
                twin = rules.replay(players, seed, state.history, state.config, state.deal)
                for seat in range(players):
                    assert twin.observation(seat) == state.observation(seat)
            seat = state.to_move()[0]
            state.apply(seat, rng.choice(state.legal_actions(seat)))
        assert dealt_rounds == TABLES[players].rounds
        replayed = rules.replay(players, seed, state.history, state.config, state.deal)
        assert replayed.result() == state.result()
        assert replayed.dealt == state.dealt


def test_a_round_under_way_is_not_dealt_again() -> None:
    state = load_game("scout").new_game(4, 3)
    hands = _round(4, random.Random(3), set())
    state.apply(state.to_move()[0], {"kind": "orient", "flip": False})
    with pytest.raises(IllegalAction, match="before any seat has acted"):
        state.deal_round(hands)


def test_hands_that_are_not_a_round_are_refused() -> None:
    rules = load_game("scout")
    hands = _round(4, random.Random(5), set())
    with pytest.raises(ConfigError, match="must hold 4 hands"):
        rules.new_game(4, 5).deal_round(hands[:3])
    twice = [list(hand) for hand in hands]
    twice[1] = [*twice[1][:-1], twice[0][0]]
    with pytest.raises(ConfigError, match="dealt twice"):
        rules.new_game(4, 5).deal_round(twice)
    state = rules.new_game(2, 5)
    first = _round(2, random.Random(5), set())
    state.deal_round(first)
    assert not _names(first) & _names(state.dealt["rounds"][1])
    while state.round == 1:
        seat = state.to_move()[0]
        state.apply(seat, state.legal_actions(seat)[0])
    with pytest.raises(ConfigError, match="dealt twice"):
        state.deal_round(first)

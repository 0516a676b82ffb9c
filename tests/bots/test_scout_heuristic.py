"""The SCOUT heuristic's policy: each decision on its own, and in-process games against random."""

from __future__ import annotations

import math
import random

import pytest
from policy_duel import heuristic_wins

from bots.python import scout_heuristic as bot
from referee.games import load_game
from referee.games.scout import best_strength, set_strength


def test_shows_needed_splits_into_the_longest_sets() -> None:
    assert bot.shows_needed([3, 4, 5, 9, 9, 1]) == 3
    assert bot.shows_needed([7, 2, 8, 4]) == 4
    assert bot.shows_needed([5, 5, 6, 7]) == 2
    assert bot.shows_needed([]) == 0


def split_by_slices(tops: list[int]) -> tuple[int, int]:
    """The split's definition, slice by slice: from each first card the longest prefix that is a set."""
    shows, index = 0, 0
    while index < len(tops):
        length = 1
        while index + length < len(tops) and set_strength(tops[index : index + length + 1]):
            length += 1
        index += length
        shows += 1
    return shows, best_strength(tops)


def test_the_one_pass_split_is_the_split_by_slices_and_the_engines_strongest_set() -> None:
    rng = random.Random(3)
    for _ in range(3000):
        tops = [rng.randint(1, 10) for _ in range(rng.randint(0, 15))]
        assert bot.split(tops) == split_by_slices(tops), tops
        assert bot.split(bytes(tops)) == split_by_slices(tops)


def test_orientation_turns_a_hand_whose_bottoms_form_sets() -> None:
    hand = [[1, 6], [9, 5], [3, 4]]
    legal = [{"kind": "orient", "flip": False}, {"kind": "orient", "flip": True}]
    assert bot.flipped(hand) == [4, 5, 6]
    assert bot.choose_orientation(hand, legal) == {"kind": "orient", "flip": True}
    assert bot.choose_orientation([[4, 1], [5, 9], [6, 3]], legal) == {"kind": "orient", "flip": False}


def play_observation(hand: list[list[int]], active: list[list[int]]) -> dict:
    return {"phase": "play", "hand": hand, "active_set": active}


def test_prefers_the_longest_show_that_captures() -> None:
    hand = [[2, 1], [3, 1], [4, 1], [9, 1]]
    legal = [
        {"kind": "show", "start": 3, "length": 1},
        {"kind": "show", "start": 0, "length": 3},
        {"kind": "show", "start": 1, "length": 2},
    ]
    assert bot.choose_play(play_observation(hand, [[8, 2]]), legal) == legal[1]


def test_scouts_a_card_into_the_set_it_extends() -> None:
    hand = [[5, 1], [6, 1], [1, 9]]
    legal = [
        {"kind": "scout", "end": "left", "flip": False, "insert": 0, "and_show": False},
        {"kind": "scout", "end": "left", "flip": False, "insert": 2, "and_show": False},
        {"kind": "scout", "end": "left", "flip": True, "insert": 2, "and_show": False},
    ]
    assert bot.choose_play(play_observation(hand, [[2, 7], [3, 3]]), legal) == legal[2]


def test_emptying_the_hand_wins_over_everything() -> None:
    legal = [
        {"kind": "show", "start": 0, "length": 2},
        {"kind": "scout", "end": "left", "flip": False, "insert": 0, "and_show": False},
    ]
    assert bot.choose_play(play_observation([[5, 1], [5, 2]], [[4, 1], [4, 2]]), legal) == legal[0]


@pytest.mark.parametrize(("players", "games"), [(2, 20), (3, 15), (4, 12), (5, 10)])
def test_beats_random_clearly(players: int, games: int) -> None:
    wins = heuristic_wins("scout", bot.choose, players, games)
    assert wins >= 0.8 * games, f"won {wins} of {games} {players}-player games against random"


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_every_decision_is_legal(players: int) -> None:
    rng = random.Random(players)
    state = load_game("scout").new_game(players, seed=players)
    while not state.is_over():
        for seat in state.to_move():
            legal = state.legal_actions(seat)
            action = bot.choose(state.observation(seat), legal) if seat % 2 == 0 else rng.choice(legal)
            assert action in legal
            state.apply(seat, action)


def test_play_values_are_each_actions_change_of_hand_value_and_a_cache_changes_nothing() -> None:
    """A Show: cards captured and shed plus the change of the hand's value; a Scout: the change less 2 (the point
    given away and the card taken), a Scout & Show 1 more. A cached value_of gives the same values."""
    hand, active = [[5, 1], [6, 1], [1, 9], [3, 2]], [[2, 7], [3, 3]]
    tops = bytes(top for top, _ in hand)
    legal = [
        {"kind": "show", "start": 0, "length": 2},
        {"kind": "scout", "end": "left", "flip": True, "insert": 2, "and_show": False},
        {"kind": "scout", "end": "right", "flip": False, "insert": 4, "and_show": True},
    ]
    now = bot.hand_value([5, 6, 1, 3])
    expected = [
        2 + 2 + bot.hand_value([1, 3]) - now,
        bot.hand_value([5, 6, 7, 1, 3]) - now - 2,
        bot.hand_value([5, 6, 1, 3, 3]) - now - 2 + 1,
    ]
    assert bot.play_values(tops, active, legal) == pytest.approx(expected)
    seen: dict[bytes, float] = {}
    assert bot.play_values(tops, active, legal, lambda hand: seen.setdefault(hand, bot.hand_value(hand))) == (
        bot.play_values(tops, active, legal)
    )
    assert len(seen) == 4
    assert bot.play_values(bytes([4, 4]), [[1, 2]], [{"kind": "show", "start": 0, "length": 2}]) == [math.inf]

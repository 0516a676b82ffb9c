"""The Scauver heuristic's decisions, memoized by card values: the search bot's prior and rollout policy.

bots/python/scauver_heuristic.py values a field by its showdown score, and that score depends only on the
card values of the flanks and the hand, never on the suits. So every evaluation here is keyed by the values
(as tuples) and cached, and the heuristic's own functions are called on stand-in cards of those values: the
decisions are the heuristic's, and a playout that meets the same values again pays a dictionary look-up.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from bots.python import scauver_heuristic as heuristic
from referee.games._scauver_links import CARD_VALUE, FACE_RANKS, SUITS

Action = dict[str, Any]
Values = tuple[int, ...]

CACHE_SIZE = 1 << 18


def values(cards: Sequence[str]) -> Values:
    return tuple(CARD_VALUE[card] for card in cards)


def _stand_ins(*groups: Values) -> list[list[str]]:
    """Distinct cards (rank of each value, suits in turn) for groups of values; suits only tell copies apart."""
    used: dict[int, int] = {}
    cards = []
    for group in groups:
        cards.append([FACE_RANKS[value - 1] + SUITS[_next_copy(used, value)] for value in group])
    return cards


def _next_copy(used: dict[int, int], value: int) -> int:
    copy = used.get(value, 0)
    used[value] = copy + 1
    return copy % len(SUITS)


@lru_cache(maxsize=CACHE_SIZE)
def field_cost(left: Values, right: Values) -> int:
    """heuristic.field_cost of a field with these values."""
    left_cards, right_cards = _stand_ins(left, right)
    return heuristic.field_cost(left_cards, right_cards)


@lru_cache(maxsize=CACHE_SIZE)
def projected_cost(left: Values, right: Values, hand: Values) -> int:
    """heuristic.projected_cost: the cheapest field reachable by putting the hand into the flanks."""
    left_cards, right_cards, hand_cards = _stand_ins(left, right, hand)
    return heuristic.projected_cost(left_cards, right_cards, hand_cards)


def betting_cost(left: Values, right: Values, hand: Values) -> int:
    """The field's cost at a bet decision, as the heuristic sees it."""
    return projected_cost(left, right, hand) if hand else field_cost(left, right)


def _without_one(hand: Values, index: int) -> Values:
    return hand[:index] + hand[index + 1 :]


def setup_costs(hand: Sequence[str], legal: Sequence[Action]) -> list[int]:
    """The projected cost of each setup action (the heuristic plays the first cheapest)."""
    hand_values = values(hand)
    costs = []
    for action in legal:
        rest = list(hand_values)
        for card in action["left"] + action["right"]:
            rest.remove(CARD_VALUE[card])
        costs.append(projected_cost(values(action["left"]), values(action["right"]), tuple(rest)))
    return costs


def place_costs(left: Values, right: Values, hand: Sequence[str], legal: Sequence[Action]) -> list[int]:
    """The projected cost after each placement action."""
    hand_values = values(hand)
    costs = []
    for action in legal:
        value = CARD_VALUE[action["card"]]
        rest = _without_one(hand_values, hand_values.index(value))
        if action["flank"] == "left":
            costs.append(projected_cost(tuple(sorted((*left, value))), right, rest))
        else:
            costs.append(projected_cost(left, tuple(sorted((*right, value))), rest))
    return costs


def final_costs(left: Values, right: Values, legal: Sequence[Action]) -> list[int]:
    return [
        field_cost(tuple(sorted((*left, CARD_VALUE[action["left"]]))), tuple(sorted((*right, CARD_VALUE[action["right"]]))))
        for action in legal
    ]


def first_cheapest(costs: Sequence[int]) -> int:
    return min(range(len(costs)), key=costs.__getitem__)


def choose(observation: dict[str, Any], legal: Sequence[Action]) -> Action:
    """What bots/python/scauver_heuristic.choose plays, from the memoized evaluations."""
    phase = observation["phase"]
    seat = observation["seat"]
    hand = observation["hand"]
    field = observation["fields"][seat]
    if phase == "showdown":
        return heuristic.choose_vanguards(field["left"], field["right"], list(legal))
    if phase == "setup":
        return legal[first_cheapest(setup_costs(hand, legal))]
    left, right = tuple(sorted(values(field["left"]))), tuple(sorted(values(field["right"])))
    if phase == "place":
        return legal[first_cheapest(place_costs(left, right, hand, legal))]
    if phase == "final":
        return legal[first_cheapest(final_costs(left, right, legal))]
    cost = betting_cost(left, right, tuple(sorted(values(hand))))
    if phase == "answer":
        stage = "final_bet" if observation["lap"] == 0 else "answer"
        return heuristic.choose_answer(observation, list(legal), cost, stage)
    return heuristic.choose_bet(observation, list(legal), cost)

"""The Scauver heuristic's decisions, memoized by card values: the search bot's prior and rollout policy.

bots/python/scauver_heuristic.py values a field by its showdown score, and that score depends only on the
card values of the flanks and the hand, never on the suits. So every evaluation here works on sorted tuples of
values and is cached (a flank's vanguard sums, a field's cost, a projection), and the decisions are the
heuristic's own (tests/bots/test_scauver_search.py checks that they are equal over whole games); a playout
that meets the same values again pays a dictionary look-up.
"""

from __future__ import annotations

import gc
from collections.abc import Sequence
from functools import lru_cache
from itertools import combinations, product
from typing import Any

from bots.python import scauver_heuristic as heuristic
from bots.python.scauver_heuristic import FINAL_FLANK_SIZE
from referee.games._scauver_links import CARD_VALUE, VANGUARD_MAX

Action = dict[str, Any]
Values = tuple[int, ...]

CACHE_SIZE = 1 << 18


def values(cards: Sequence[str]) -> Values:
    return tuple(CARD_VALUE[card] for card in cards)


@lru_cache(maxsize=CACHE_SIZE)
def _vanguard_sums(flank: Values) -> dict[int, tuple[int, ...]]:
    """For every vanguard value of a flank, the value masks of the vanguards (1 to 3 cards) that reach it."""
    sums: dict[int, set[int]] = {}
    for size in range(1, VANGUARD_MAX + 1):
        for chosen in combinations(flank, size):
            mask = 0
            for value in chosen:
                mask |= 1 << value
            sums.setdefault(sum(chosen), set()).add(mask)
    return {total: tuple(masks) for total, masks in sums.items()}


@lru_cache(maxsize=CACHE_SIZE)
def field_cost(left: Values, right: Values) -> int:
    """heuristic.field_cost of a field with these values: |left - right| x the smallest valid link's value (equal
    sums, no value in common), or NO_LINK_COST plus the difference without a link."""
    gap = abs(sum(left) - sum(right))
    right_sums = _vanguard_sums(right)
    smallest = None
    for total, masks in _vanguard_sums(left).items():
        if smallest is not None and total >= smallest:
            continue
        others = right_sums.get(total)
        if others and any(not mask & other for mask in masks for other in others):
            smallest = total
    return heuristic.NO_LINK_COST + gap if smallest is None else gap * smallest


@lru_cache(maxsize=CACHE_SIZE)
def projected_cost(left: Values, right: Values, hand: Values) -> int:
    """heuristic.projected_cost: the cheapest field reachable by putting every hand card into a flank (at most
    4 cards a flank)."""
    best = None
    for sides in product((True, False), repeat=len(hand)):
        to_left = tuple(value for value, is_left in zip(hand, sides, strict=True) if is_left)
        to_right = tuple(value for value, is_left in zip(hand, sides, strict=True) if not is_left)
        if len(left) + len(to_left) > FINAL_FLANK_SIZE or len(right) + len(to_right) > FINAL_FLANK_SIZE:
            continue
        cost = field_cost(tuple(sorted(left + to_left)), tuple(sorted(right + to_right)))
        if best is None or cost < best:
            best = cost
    return field_cost(left, right) if best is None else best


def keep_caches_from_collector() -> None:
    """Move the caches out of the cyclic garbage collector's sight for good (`gc.freeze`), with everything else the
    process holds at start-up.

    A run of the collector over its oldest generation walks every container it tracks. Full caches hold hundreds
    of thousands of entries: such a run cost 80 to 350 ms of CPU, and in leagues at 500 ms a move on a loaded
    2-core machine up to 580 ms of a decision, wherever in a search it fell (docs/results.md, Scauver search:
    the clock). A collection
    first keeps the start-up's garbage out; then each cache gets an entry, because CPython tracks a dictionary only
    from its first tracked key (a full collection untracks one whose keys are all untracked, so the entry comes
    after it), and a dictionary the freeze finds untracked would be tracked again by the search, in the young
    generation."""
    gc.collect()
    _vanguard_sums((0,))
    projected_cost((), (), (0,))
    gc.freeze()


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
        field_cost(
            tuple(sorted((*left, CARD_VALUE[action["left"]]))), tuple(sorted((*right, CARD_VALUE[action["right"]])))
        )
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

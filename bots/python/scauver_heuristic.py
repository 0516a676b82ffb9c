"""A Scauver bot that plays for the lowest showdown score: balance the flanks, pick the cheapest link, bet
when the field is good and fold when a big bet meets a weak one.

The showdown score is |left - right| x link value and a field without a valid link loses to every field with
one, so the bot values a field by that score, projecting the cards still in hand into the flanks in the best
way (future draws are unknown and ignored). It uses the engine's pure link helpers and talks only the
protocol: `python -m bots.python.scauver_heuristic`.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product
from typing import Any

from protocol.sdk import run_bot
from referee.games._scauver_links import CARD_VALUE, link_strength, valid_links

Action = dict[str, Any]

FINAL_FLANK_SIZE = 4
NO_LINK_COST = 100
"""What a field without a valid link costs on top of its flank difference: such a field loses the showdown."""

STRONG_COST = 0
"""A field this cheap (a link with equal flanks) is worth betting and raising on."""

CALL_COST = {"bet": 30, "answer": 30, "final_bet": 12}
"""The costliest field still worth calling any bet with, by how much of the field is still open."""

CHEAP_CALL_SHARE = 0.25
"""A call costing at most this share of the pot is always made: folding would give the pot away too cheaply."""


def difference(left: Sequence[str], right: Sequence[str]) -> int:
    return abs(sum(CARD_VALUE[card] for card in left) - sum(CARD_VALUE[card] for card in right))


def field_cost(left: Sequence[str], right: Sequence[str]) -> int:
    """The showdown score of the best link of a field, or NO_LINK_COST plus its difference without one."""
    gap = difference(left, right)
    links = valid_links(left, right)
    if not links:
        return NO_LINK_COST + gap
    return gap * min(link_strength(vanguard_left, vanguard_right).size for vanguard_left, vanguard_right in links)


def projected_cost(left: Sequence[str], right: Sequence[str], hand: Sequence[str]) -> int:
    """The cheapest field reachable by putting every hand card into a flank (at most 4 cards a flank)."""
    best = None
    for sides in product((True, False), repeat=len(hand)):
        to_left = [card for card, is_left in zip(hand, sides, strict=True) if is_left]
        to_right = [card for card, is_left in zip(hand, sides, strict=True) if not is_left]
        if len(left) + len(to_left) > FINAL_FLANK_SIZE or len(right) + len(to_right) > FINAL_FLANK_SIZE:
            continue
        cost = field_cost([*left, *to_left], [*right, *to_right])
        if best is None or cost < best:
            best = cost
    return field_cost(left, right) if best is None else best


def _without(cards: Sequence[str], removed: Sequence[str]) -> list[str]:
    rest = list(cards)
    for card in removed:
        rest.remove(card)
    return rest


def choose_setup(hand: list[str], legal: list[Action]) -> Action:
    return min(
        legal,
        key=lambda action: projected_cost(
            action["left"], action["right"], _without(hand, action["left"] + action["right"])
        ),
    )


def choose_place(left: list[str], right: list[str], hand: list[str], legal: list[Action]) -> Action:
    def cost(action: Action) -> int:
        card, flank = action["card"], action["flank"]
        new_left = [*left, card] if flank == "left" else left
        new_right = [*right, card] if flank == "right" else right
        return projected_cost(new_left, new_right, _without(hand, [card]))

    return min(legal, key=cost)


def choose_final(left: list[str], right: list[str], legal: list[Action]) -> Action:
    return min(legal, key=lambda action: field_cost([*left, action["left"]], [*right, action["right"]]))


def choose_vanguards(left: list[str], right: list[str], legal: list[Action]) -> Action:
    """The link with the lowest score; among equal scores the strongest (ties are broken by strength)."""
    if legal[0]["kind"] == "no_link":
        return legal[0]
    gap = difference(left, right)

    def key(action: Action) -> tuple[int, Any]:
        strength = link_strength(action["left"], action["right"])
        return gap * strength.size, _negated(strength)

    return min(legal, key=key)


def _negated(strength: Any) -> tuple[int, int, tuple[int, ...]]:
    return -strength.size, -strength.length, tuple(-value for value in strength.height)


def choose_bet(observation: dict[str, Any], legal: list[Action], cost: int) -> Action:
    """On one's own turn checking is free: bet only with a strong field, never fold."""
    bets = [action for action in legal if action["kind"] == "bet"]
    if cost <= STRONG_COST and bets:
        return bets[len(bets) // 2]
    return next(action for action in legal if action["kind"] == "check")


def choose_answer(observation: dict[str, Any], legal: list[Action], cost: int, stage: str) -> Action:
    seat = observation["seat"]
    to_call = observation["bet"]["to_call"][seat]
    raises = [action for action in legal if action["kind"] == "raise"]
    if cost <= STRONG_COST and raises:
        return raises[0]
    if cost <= CALL_COST[stage] or to_call <= CHEAP_CALL_SHARE * observation["pot"]:
        return {"kind": "call"}
    return {"kind": "fold"}


def choose(observation: dict[str, Any], legal_actions: list[Action]) -> Action:
    phase = observation["phase"]
    seat = observation["seat"]
    hand = observation["hand"]
    field = observation["fields"][seat]
    left, right = field["left"], field["right"]
    if phase == "setup":
        return choose_setup(hand, legal_actions)
    if phase == "place":
        return choose_place(left, right, hand, legal_actions)
    if phase == "final":
        return choose_final(left, right, legal_actions)
    if phase == "showdown":
        return choose_vanguards(left, right, legal_actions)
    cost = _betting_cost(left, right, hand)
    if phase == "answer":
        stage = "final_bet" if observation["lap"] == 0 else "answer"
        return choose_answer(observation, legal_actions, cost, stage)
    return choose_bet(observation, legal_actions, cost)


def _betting_cost(left: list[str], right: list[str], hand: list[str]) -> int:
    """The field's projected cost at a bet decision: during a lap one hand card will stay in hand until the
    final placement, so every projection of the hand is an estimate; at the final bet the field is complete."""
    return projected_cost(left, right, hand) if hand else field_cost(left, right)


if __name__ == "__main__":
    raise SystemExit(run_bot(choose, name="scauver-heuristic", version="1"))

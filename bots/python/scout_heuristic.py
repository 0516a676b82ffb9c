"""A SCOUT bot that sheds its hand in long sets: it orients the hand to hold fewer, longer sets, shows the
longest set that captures, and scouts the card that joins a set of its hand.

A hand is valued by how many Shows it would take to empty it (its greedy split into the longest sets): fewer
is better, since every card still in hand at the end of a round costs a point. It uses the engine's pure set
helpers and talks only the protocol: `python -m bots.python.scout_heuristic`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from protocol.sdk import run_bot
from referee.games.scout import LENGTH_WEIGHT, best_strength, set_strength

Action = dict[str, Any]
Card = Sequence[int]

SHED_WEIGHT = 1.0
"""Points per card a Show takes out of the hand (each would cost a point at the end of the round)."""

SPLIT_WEIGHT = 0.8
"""Points per Show more (or fewer) that the rest of the hand needs after this action."""

SCOUT_COST = 1.0
"""What a Scout gives away: a point to the Active Set's owner (or, with two players, one's own chip)."""

SCOUT_SHOW_BONUS = 1.0
"""A Scout & Show keeps the turn for a Show that captures what is left of the Active Set."""

STRENGTH_WEIGHT = 0.05
"""Points per unit of the hand's strongest set, in lengths: a strong set is a reply ready for later."""


def shows_needed(tops: Sequence[int]) -> int:
    """How many Shows a greedy left-to-right split into the longest valid sets takes to empty the hand."""
    count, index = 0, 0
    while index < len(tops):
        length = 1
        while index + length < len(tops) and set_strength(tops[index : index + length + 1]):
            length += 1
        index += length
        count += 1
    return count


def hand_value(tops: Sequence[int]) -> float:
    return -SPLIT_WEIGHT * shows_needed(tops) + STRENGTH_WEIGHT * best_strength(tops) / LENGTH_WEIGHT


def flipped(hand: Sequence[Card]) -> list[int]:
    """The numbers in use of a hand turned around: order reversed, each card rotated."""
    return [bottom for _, bottom in reversed(hand)]


def choose_orientation(hand: Sequence[Card], legal: list[Action]) -> Action:
    keep = hand_value([top for top, _ in hand])
    turn = hand_value(flipped(hand))
    return next(action for action in legal if action["flip"] is (turn > keep))


def show_value(tops: list[int], action: Action, captured: int) -> float:
    start, length = action["start"], action["length"]
    rest = tops[:start] + tops[start + length :]
    if not rest:
        return float("inf")
    return captured + SHED_WEIGHT * length + hand_value(rest) - hand_value(tops)


def scout_value(tops: list[int], active: Sequence[Card], action: Action) -> float:
    top, bottom = active[0] if action["end"] == "left" else active[-1]
    number = bottom if action["flip"] else top
    gap = action["insert"]
    grown = tops[:gap] + [number] + tops[gap:]
    return hand_value(grown) - hand_value(tops) - SCOUT_COST - SHED_WEIGHT


def choose_play(observation: dict[str, Any], legal: list[Action]) -> Action:
    tops = [top for top, _ in observation["hand"]]
    active = observation["active_set"]

    def value(action: Action) -> float:
        if action["kind"] == "show":
            return show_value(tops, action, len(active))
        scouted = scout_value(tops, active, action)
        return scouted + (SCOUT_SHOW_BONUS if action["and_show"] else 0.0)

    return max(legal, key=value)


def choose(observation: dict[str, Any], legal_actions: list[Action]) -> Action:
    if observation["phase"] == "orient":
        return choose_orientation(observation["hand"], legal_actions)
    return choose_play(observation, legal_actions)


if __name__ == "__main__":
    raise SystemExit(run_bot(choose, name="scout-heuristic", version="1"))

"""A SCOUT bot that sheds its hand in long sets: it orients the hand to hold fewer, longer sets, shows the
longest set that captures, and scouts the card that joins a set of its hand.

A hand is valued by how many Shows it would take to empty it (its greedy split into the longest sets): fewer
is better, since every card still in hand at the end of a round costs a point. It ranks sets by the engine's
strengths and talks only the protocol: `python -m bots.python.scout_heuristic`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from protocol.sdk import run_bot
from referee.games.scout import LENGTH_WEIGHT, MATCH_BONUS, NOTHING, SINGLE_BASE

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

NO_STEP = 2
"""The step of no set (a set steps by -1, 0 or +1)."""

NUMBERS = tuple(bytes((number,)) for number in range(256))
"""Each number as a hand of one card, to insert into a hand of numbers."""


def split(tops: Sequence[int]) -> tuple[int, int]:
    """How many Shows a greedy left-to-right split into the longest valid sets takes to empty the hand, and the
    strength of its strongest set (NOTHING for an empty hand), in one pass from the right: the longest set that
    starts at each card gives both (the split jumps from the first card by those lengths)."""
    size = len(tops)
    if not size:
        return 0, NOTHING
    shows = [0] * (size + 1)
    shows[size - 1] = 1
    following = tops[size - 1]
    best = SINGLE_BASE + following
    length, step_run = 1, NO_STEP
    for index in range(size - 2, -1, -1):
        first = tops[index]
        step, following = following - first, first
        if -1 <= step <= 1:
            length = length + 1 if step == step_run else 2
            step_run = step
            strength = length * LENGTH_WEIGHT + (
                MATCH_BONUS + first if step == 0 else first if step == 1 else first - length + 1
            )
        else:
            length, step_run = 1, NO_STEP
            strength = SINGLE_BASE + first
        if strength > best:
            best = strength
        shows[index] = 1 + shows[index + length]
    return shows[0], best


def shows_needed(tops: Sequence[int]) -> int:
    """How many Shows a greedy left-to-right split into the longest valid sets takes to empty the hand."""
    return split(tops)[0]


def hand_value(tops: Sequence[int]) -> float:
    shows, strongest = split(tops)
    return -SPLIT_WEIGHT * shows + STRENGTH_WEIGHT * strongest / LENGTH_WEIGHT


def flipped(hand: Sequence[Card]) -> list[int]:
    """The numbers in use of a hand turned around: order reversed, each card rotated."""
    return [bottom for _, bottom in reversed(hand)]


def choose_orientation(hand: Sequence[Card], legal: list[Action]) -> Action:
    keep = hand_value([top for top, _ in hand])
    turn = hand_value(flipped(hand))
    return next(action for action in legal if action["flip"] is (turn > keep))


def play_values(
    tops: bytes, active: Sequence[Card], legal: Sequence[Action], value_of: Callable[[bytes], float] = hand_value
) -> list[float]:
    """The value of each legal action of the play phase, in points: a Show's cards captured and shed, plus the
    change of the hand's value (infinite if it empties the hand); a Scout's change of the hand's value less
    SCOUT_COST and SHED_WEIGHT, plus SCOUT_SHOW_BONUS for a Scout & Show.

    `tops` holds the hand's numbers in use, a byte each, so that `value_of` (hand_value) may be a cache keyed by
    the hand: the search's playouts value the same hands again and again."""
    base = value_of(tops)
    captured = len(active)
    grown: dict[tuple[int, int], float] = {}
    values = []
    for action in legal:
        if action["kind"] == "show":
            start, length = action["start"], action["length"]
            rest = tops[:start] + tops[start + length :]
            values.append(captured + SHED_WEIGHT * length + value_of(rest) - base if rest else math.inf)
            continue
        top, bottom = active[0] if action["end"] == "left" else active[-1]
        number, gap = (bottom if action["flip"] else top), action["insert"]
        value = grown.get((number, gap))
        if value is None:
            grown_value = value_of(tops[:gap] + NUMBERS[number] + tops[gap:])
            value = grown[number, gap] = grown_value - base - SCOUT_COST - SHED_WEIGHT
        values.append(value + SCOUT_SHOW_BONUS if action["and_show"] else value)
    return values


def best_play(values: Sequence[float]) -> int:
    """The index of the first of the highest values."""
    return max(range(len(values)), key=values.__getitem__)


def choose_play(observation: dict[str, Any], legal: list[Action]) -> Action:
    tops = bytes(top for top, _ in observation["hand"])
    return legal[best_play(play_values(tops, observation["active_set"], legal))]


def choose(observation: dict[str, Any], legal_actions: list[Action]) -> Action:
    if observation["phase"] == "orient":
        return choose_orientation(observation["hand"], legal_actions)
    return choose_play(observation, legal_actions)


if __name__ == "__main__":
    raise SystemExit(run_bot(choose, name="scout-heuristic", version="1"))

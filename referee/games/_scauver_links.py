"""Scauver's cards, vanguards and links: pure helpers of referee/games/scauver.py.

A vanguard is 1 to 3 cards of one flank; a link pairs a left and a right vanguard of equal value that share
no card value. Everything here works on card ids ("AS", "7H", "KD", or "10C" with the numeric deck).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

SUITS = ("S", "H", "D", "C")
FACE_RANKS = ("A", "2", "3", "4", "5", "6", "7", "J", "Q", "K")
NUMERIC_RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10")
RANK_VALUES = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)

FACE_DECK = tuple(rank + suit for rank in FACE_RANKS for suit in SUITS)
NUMERIC_DECK = tuple(rank + suit for rank in NUMERIC_RANKS for suit in SUITS)

CARD_VALUE: dict[str, int] = {
    card: RANK_VALUES[index // len(SUITS)] for deck in (FACE_DECK, NUMERIC_DECK) for index, card in enumerate(deck)
}
"""The value of every card id of either deck (A = 1, 2-7 face value, J/8 = 8, Q/9 = 9, K/10 = 10)."""

CARD_ORDER: dict[str, int] = {card: index for deck in (FACE_DECK, NUMERIC_DECK) for index, card in enumerate(deck)}
"""Canonical order of cards (by value, then suit S, H, D, C): the order of hands and of listed vanguards."""

VANGUARD_MAX = 3

LENGTH_RANK: dict[tuple[int, int], int] = {(2, 1): 0, (2, 2): 1, (3, 1): 2, (3, 2): 3, (3, 3): 4}
"""Link length from weakest to strongest, keyed by (cards in the greater vanguard, cards in the lesser)."""

_FLANK_SUBSETS: dict[int, tuple[tuple[int, ...], ...]] = {
    size: tuple(indices for k in range(1, VANGUARD_MAX + 1) for indices in combinations(range(size), k))
    for size in range(0, 5)
}


def value_mask(cards: Sequence[str]) -> int:
    """A bit per card value present: two vanguards share a value exactly when their masks intersect."""
    mask = 0
    for card in cards:
        mask |= 1 << CARD_VALUE[card]
    return mask


def valid_links(left: Sequence[str], right: Sequence[str]) -> list[tuple[list[str], list[str]]]:
    """Every valid link of a field, as (left vanguard, right vanguard) in canonical card order.

    A 1-card to 1-card pair never qualifies: equal values mean a shared value."""
    left = sorted(left, key=CARD_ORDER.__getitem__)
    right = sorted(right, key=CARD_ORDER.__getitem__)
    by_sum: dict[int, list[tuple[int, list[str]]]] = {}
    for total, mask, cards in _vanguards(left):
        by_sum.setdefault(total, []).append((mask, cards))
    links = []
    for total, mask, cards in _vanguards(right):
        for left_mask, left_cards in by_sum.get(total, ()):
            if not left_mask & mask:
                links.append((left_cards, cards))
    return links


def _vanguards(flank: Sequence[str]) -> list[tuple[int, int, list[str]]]:
    """(total value, value mask, cards) of every possible vanguard of a flank, in the flank's order."""
    vanguards = []
    for indices in _FLANK_SUBSETS[len(flank)]:
        cards = [flank[i] for i in indices]
        total = 0
        mask = 0
        for card in cards:
            value = CARD_VALUE[card]
            total += value
            mask |= 1 << value
        vanguards.append((total, mask, cards))
    return vanguards


def link_problem(left: Sequence[str], right: Sequence[str]) -> str | None:
    """Why two vanguards (already known to be cards of their flanks) do not form a valid link, or None."""
    for name, vanguard in (("left", left), ("right", right)):
        if not 1 <= len(vanguard) <= VANGUARD_MAX:
            return f"the {name} vanguard must hold 1 to {VANGUARD_MAX} cards, not {len(vanguard)}"
    left_value = sum(CARD_VALUE[card] for card in left)
    right_value = sum(CARD_VALUE[card] for card in right)
    if left_value != right_value:
        return f"the vanguards' values differ ({left_value} left, {right_value} right)"
    if value_mask(left) & value_mask(right):
        return "the vanguards share a card value"
    return None


@dataclass(frozen=True, order=True)
class LinkStrength:
    """How strong a valid link is; a greater LinkStrength is a stronger link (ties of score are broken by it).

    size: the link value; length: 0 (2-1) to 4 (3-3); height: the card values of the greater vanguard from the
    highest down, then those of the lesser."""

    size: int
    length: int
    height: tuple[int, ...]


def link_strength(left: Sequence[str], right: Sequence[str]) -> LinkStrength:
    """The strength of a valid link (left vanguard, right vanguard)."""
    left_values = sorted((CARD_VALUE[card] for card in left), reverse=True)
    right_values = sorted((CARD_VALUE[card] for card in right), reverse=True)
    greater, lesser = (left_values, right_values)
    if (len(right_values), right_values) > (len(left_values), left_values):
        greater, lesser = right_values, left_values
    return LinkStrength(sum(greater), LENGTH_RANK[len(greater), len(lesser)], tuple(greater + lesser))

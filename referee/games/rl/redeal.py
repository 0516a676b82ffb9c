"""SCOUT's hidden cards dealt again for one seat: what OpenSpiel's `resample_from_infostate` needs (openspiel.py).

A seat sees its own hands as dealt and every card a Show puts on the table; the moves themselves are public
(a Show names hand positions, a Scout the end it takes, the turn and the place it puts the card), except the
orientation choices that other seats made at a decision the seat has not finished: those are hidden until every
seat has chosen. So a redeal follows each round's moves over the dealt positions (which place of which
dealt hand each card in every hand came from), keeps the cards at the positions a Show revealed, and draws
every other card of the other hands again, with a random turn, from the cards the seat never saw: per round at
3 to 5 seats (each round deals the whole deck), and over both rounds at 2 (round 2 deals the 22 cards round 1
left). Pending orientation choices of other seats are drawn at random too. Nothing here reads a card the seat
did not see: the result depends only on its view and on `rng`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from ..scout import TABLES

Card = list[int]
"""A card as dealt: [top, bottom]."""
Hands = list[list[Card]]
Move = tuple[int, dict[str, Any]]
Place = tuple[int, int]
"""(seat, position in the hand as dealt)."""


def shown_places(hands: Hands, moves: Sequence[Move]) -> set[Place]:
    """The dealt places whose cards a Show of `moves` (one round's, in order) put on the table."""
    held: list[list[Place]] = [[(seat, at) for at in range(len(hand))] for seat, hand in enumerate(hands)]
    active: list[Place] = []
    shown: set[Place] = set()
    for seat, action in moves:
        kind = action["kind"]
        if kind == "orient":
            if action["flip"]:
                held[seat].reverse()
        elif kind == "show":
            start, length = action["start"], action["length"]
            active = held[seat][start : start + length]
            del held[seat][start : start + length]
            shown.update(active)
        else:
            taken = active.pop(0) if action["end"] == "left" else active.pop()
            held[seat].insert(action["insert"], taken)
    return shown


def _unordered(card: Sequence[int]) -> tuple[int, int]:
    low, high = sorted(card)
    return low, high


def redeal_rounds(
    players: int, rounds: Sequence[Hands], moves: Sequence[Sequence[Move]], seat: int, rng: random.Random
) -> list[Hands]:
    """`rounds` (the deals so far) with every card `seat` never saw drawn again; `moves[r]` are round r's moves."""
    table = TABLES[players]
    kept = [
        {(seat, at) for at in range(len(hands[seat]))} | shown_places(hands, round_moves)
        for hands, round_moves in zip(rounds, moves, strict=True)
    ]
    groups = [list(range(len(rounds)))] if table.two_players else [[index] for index in range(len(rounds))]
    redealt = [[[list(card) for card in hand] for hand in hands] for hands in rounds]
    for group in groups:
        seen = {_unordered(rounds[r][other][at]) for r in group for other, at in kept[r]}
        pool = [card for card in table.deck if card not in seen]
        rng.shuffle(pool)
        holes = [
            (r, other, at)
            for r in group
            for other in range(players)
            for at in range(len(rounds[r][other]))
            if (other, at) not in kept[r]
        ]
        for (r, other, at), card in zip(holes, pool, strict=False):
            redealt[r][other][at] = list(card) if rng.getrandbits(1) else list(card[::-1])
    return redealt


def hide_pending_orients(players: int, moves: Sequence[Move], seat: int, rng: random.Random) -> list[Move]:
    """One round's moves with the orientation choices of the other seats drawn at random while the round's
    orientation decision is unfinished (no seat sees them until all have chosen)."""
    orients = sum(action["kind"] == "orient" for _, action in moves)
    if orients >= players:
        return list(moves)
    return [
        (who, {"kind": "orient", "flip": bool(rng.getrandbits(1))}) if who != seat else (who, action)
        for who, action in moves
    ]

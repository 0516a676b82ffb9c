"""Fixed-size float32 vectors of an observation, for learners that want an array.

Each vector is computed from the observation dict alone (what the referee sends that seat), so it holds
nothing the seat may not know. Seats are listed relative to the observing seat (itself first, then the
seat on its left, ...) and counts are scaled to about [0, 1].

Every value lies in [-1, 1] (the few counts without a bound are clipped to it).

SCOUT, per player count (H = codec.hand_cap):
    hand           H slots x (10 top + 10 bottom one-hot), in hand order (an empty slot is all zero)
    active set     10 slots x (10 top + 10 bottom one-hot)
    per seat       hand size / H, captured / 45, chips / 10, Scout & Show used, score / 50,
                   owns the Active Set, is to move                      (7 x players)
    phase          orient, play, over; must_show; round / rounds; the round's starter (players, one-hot)

Compact (`compact=True`): SCOUT's hand and Active Set slots hold each card's two numbers / 10 (2 values a
slot, not 20); Scauver's hand and flanks count their cards by value (10 values / 4, not 40 bits).

Scauver:
    hand           40 cards, one bit each (card order: value, then suit S, H, D, C)
    per seat       left flank 40 bits, right flank 40 bits, chips, put, to call, exchange put (each / all the
                   chips of the table), in the round, eliminated, dealer, turn, hand size / 5
    table          phase (8, one-hot), amphora, cap, pot, level (each / all chips), raises / 4, lap / 3,
                   cards left in the deck / 40, round / round_cap
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np

from .. import Observation
from ..scauver import CARD_ORDER, CARD_VALUE
from .codec import LONGEST_SET, hand_cap
from .compiled import _fastscout

SCOUT_PER_SEAT = 7
SCAUVER_PHASES = ("setup", "bet", "answer", "place", "final", "final_bet", "showdown", "over")
SCAUVER_SCALARS = 9
DECK = 40
VALUES = 10
OBSERVATIONS = ("full", "compact")
"""The two vectors: "full" (cards one-hot) and "compact" (SCOUT cards as their two numbers / 10, Scauver cards
counted by value / 4: suits never matter to a link)."""


@cache
def scout_size(players: int, compact: bool = False) -> int:
    per_card = 2 if compact else 20
    return (hand_cap(players) + LONGEST_SET) * per_card + SCOUT_PER_SEAT * players + 5 + players


def _cards(out: np.ndarray, offset: int, cards: list[list[int]]) -> None:
    if cards:
        base = offset - 1
        out[
            [
                base + slot * 20 + half * 10 + number
                for slot, card in enumerate(cards)
                for half, number in enumerate(card)
            ]
        ] = 1.0


def _numbers(out: np.ndarray, offset: int, cards: list[list[int]]) -> None:
    if cards:
        out[offset : offset + 2 * len(cards)] = [number / 10 for card in cards for number in card]


def scout_features(observation: Observation, compact: bool = False) -> np.ndarray:
    players = observation["players"]
    seat = observation["seat"]
    cap = hand_cap(players)
    out = np.zeros(scout_size(players, compact), np.float32)
    per_card = 2 if compact else 20
    write = _numbers if compact else _cards
    write(out, 0, observation["hand"])
    write(out, cap * per_card, observation["active_set"])
    offset = (cap + LONGEST_SET) * per_card
    owner, to_move = observation["active_owner"], observation["to_move"]
    hand_sizes, captured, chips = observation["hand_sizes"], observation["captured"], observation["chips"]
    used, scores = observation["scout_show_used"], observation["scores"]
    seats = [(seat + relative) % players for relative in range(players)]
    out[offset : offset + SCOUT_PER_SEAT * players] = [
        value
        for other in seats
        for value in (
            hand_sizes[other] / cap,
            captured[other] / 45,
            min(chips[other] / 10, 1.0),
            used[other],
            max(-1.0, min(scores[other] / 50, 1.0)),
            other == owner,
            other in to_move,
        )
    ]
    offset += SCOUT_PER_SEAT * players
    out[offset + ("orient", "play", "over").index(observation["phase"])] = 1.0
    out[offset + 3] = observation["must_show"]
    out[offset + 4] = observation["round"] / observation["rounds"]
    out[offset + 5 + (observation["round_starter"] - seat) % players] = 1.0
    return out


def scauver_size(players: int, compact: bool = False) -> int:
    cards = VALUES if compact else DECK
    return cards + (2 * cards + SCAUVER_SCALARS) * players + len(SCAUVER_PHASES) + 8


def _card_bits(out: np.ndarray, offset: int, cards: list[str]) -> None:
    for card in cards:
        out[offset + CARD_ORDER[card]] = 1.0


def _value_counts(out: np.ndarray, offset: int, cards: list[str]) -> None:
    for card in cards:
        out[offset + CARD_VALUE[card] - 1] += 0.25


def scauver_features(observation: Observation, config: Mapping[str, Any], compact: bool = False) -> np.ndarray:
    players = observation["players"]
    seat = observation["seat"]
    out = np.zeros(scauver_size(players, compact), np.float32)
    total = config["starting_chips"] * players
    cards, write = (VALUES, _value_counts) if compact else (DECK, _card_bits)
    write(out, 0, observation["hand"])
    bet = observation["bet"]
    offset = cards
    for relative in range(players):
        other = (seat + relative) % players
        field = observation["fields"][other]
        write(out, offset, field["left"])
        write(out, offset + cards, field["right"])
        out[offset + 2 * cards : offset + 2 * cards + SCAUVER_SCALARS] = (
            observation["chips"][other] / total,
            observation["put"][other] / total,
            bet["to_call"][other] / total if bet else 0.0,
            bet["exchange_put"][other] / total if bet else 0.0,
            observation["in_round"][other],
            observation["eliminated"][other],
            other == observation["dealer"],
            other == observation["turn"],
            observation["hand_sizes"][other] / 5,
        )
        offset += 2 * cards + SCAUVER_SCALARS
    out[offset + SCAUVER_PHASES.index(observation["phase"])] = 1.0
    offset += len(SCAUVER_PHASES)
    out[offset : offset + 8] = (
        observation["amphora"] / total,
        observation["cap"] / total,
        observation["pot"] / total,
        bet["level"] / total if bet else 0.0,
        (bet["raises"] / 4) if bet else 0.0,
        observation["lap"] / 3,
        observation["deck_left"] / DECK,
        observation["round"] / config["round_cap"],
    )
    return np.clip(out, -1.0, 1.0, out=out)


def hand_size(game: str, players: int, compact: bool = False) -> int:
    """How many of the first values of the vector encode the seat's own hand (its private part)."""
    if game == "scout":
        return hand_cap(players) * (2 if compact else 20)
    return VALUES if compact else DECK


def feature_size(game: str, players: int, compact: bool = False) -> int:
    return scout_size(players, compact) if game == "scout" else scauver_size(players, compact)


def features(game: str, observation: Observation, config: Mapping[str, Any], compact: bool = False) -> np.ndarray:
    """The observation as a float32 vector of `feature_size(game, players, compact)` values."""
    if game == "scout":
        return scout_features(observation, compact)
    return scauver_features(observation, config, compact)


def fast_features(game: str, observation: Observation, config: Mapping[str, Any], compact: bool = False) -> np.ndarray:
    """`features`, SCOUT's by the C extension where it was built (compiled.py): the same numbers, what the
    environments hand out at every decision."""
    if game != "scout" or _fastscout is None:
        return features(game, observation, config, compact)
    players = observation["players"]
    out = np.empty(scout_size(players, compact), np.float32)
    _fastscout.scout_vector(observation, hand_cap(players), compact, out)
    return out

"""How many decisions a game can take: OpenSpiel's max_game_length, from the rules and the options.

SCOUT at two seats: a round is the 2 orientations, at most 2 x 3 Scouts (each pays one of the seat's 3
chips), and at most one Show per card that was ever in a hand (a Show takes at least one card out, and the
round ends when a hand is empty): 2 x hand size + 6.

SCOUT at 3 to 5 seats has no bound: a Scout of a one-card Active Set empties it, the next seat must Show
anything, the seat after scouts that Show, and so on for ever (no card is captured and nobody runs out).
Those games are truncated (`truncation`: UNBOUNDED_ROUND_MOVES decisions a round).

Scauver: at most `round_cap` rounds, each at most P setups, 3 laps of P turns (a bet decision, the exchange
it may open, a placement), P finals, a final bet and its exchange, and P showdown choices, where an
exchange is at most (max_raises + 1) x (P - 1) answers: after the bet and after each raise every other seat
still in answers once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..scout import TABLES, TWO_PLAYER_CHIPS

UNBOUNDED_ROUND_MOVES = 2_000
"""Decisions a SCOUT round at 3 to 5 seats may take before the game is truncated: random play's longest
rounds are far below it (tests/games/test_rl_lengths.py)."""


def round_bound(game: str, players: int, config: Mapping[str, Any]) -> int | None:
    """The most decisions one round can take, or None where the rules set no bound."""
    if game == "scout":
        table = TABLES[players]
        if not table.two_players:
            return None
        scouts = players * TWO_PLAYER_CHIPS
        return players + scouts + players * table.hand_size + scouts
    exchange = (config["max_raises"] + 1) * (players - 1)
    laps = 3 * players * (1 + exchange + 1)
    return players + laps + players + (players + exchange) + players


def rounds(game: str, players: int, config: Mapping[str, Any]) -> int:
    return TABLES[players].rounds if game == "scout" else int(config["round_cap"])


def game_bound(game: str, players: int, config: Mapping[str, Any], rounds_played: int | None = None) -> int | None:
    """The most decisions a whole game (or its last `rounds_played` rounds) can take, or None: no bound."""
    per_round = round_bound(game, players, config)
    count = rounds(game, players, config) if rounds_played is None else rounds_played
    return None if per_round is None else per_round * count


def truncation(game: str, players: int, config: Mapping[str, Any], rounds_played: int | None = None) -> int:
    """The game's real bound, or where there is none UNBOUNDED_ROUND_MOVES a round."""
    bound = game_bound(game, players, config, rounds_played)
    count = rounds(game, players, config) if rounds_played is None else rounds_played
    return UNBOUNDED_ROUND_MOVES * count if bound is None else bound

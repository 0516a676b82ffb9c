"""The games of a simple match between n bots: duplicate deals, each played once per seat rotation.

Game i plays deal i // n with the seats rotated i % n places, so over n consecutive games every bot holds
every seat's cards of the same deal and the luck of the deal cancels out.
"""

from __future__ import annotations

import hashlib

from referee.games.base import MAX_SEED
from referee.records import GameSpec


def deal_seed(base_seed: int, deal: int) -> int:
    """The seed of deal number `deal` of a match started from `base_seed` (stable across machines)."""
    digest = hashlib.sha256(f"deal:{base_seed}:{deal}".encode()).digest()
    return int.from_bytes(digest[:8], "big") & MAX_SEED


def rotated_games(players: int, games: int, base_seed: int) -> tuple[GameSpec, ...]:
    """`games` GameSpecs for `players` bots (bot k sits at seat (k + i) % players in game i)."""
    specs = []
    for index in range(games):
        rotation = index % players
        seating = tuple((seat - rotation) % players for seat in range(players))
        specs.append(GameSpec(index=index, seed=deal_seed(base_seed, index // players), seating=seating))
    return tuple(specs)

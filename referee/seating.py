"""Balanced seating for duplicate deals: who sits where in every game of a match.

Deal d is played once in every rotation of a cyclic order c(d) of the match's bots, and the cyclic orders
of the design take turns over the deals. In rotation r of order c, seat s holds bot c[(s + r) % n], so over
the n rotations every bot holds every seat of the deal (the luck of the cards cancels), and each game puts
every bot of c right after its predecessor in c (the bot before you in turn order shapes your game). The
design's orders together put every bot right after every other equally often:

- 2 seats: the one cyclic order (0, 1): 1 deal, 2 games;
- 3 seats: both cyclic orders: 2 deals, 6 games;
- 4 seats: all 6 cyclic orders, each ordered pair twice: 6 deals, 24 games. No smaller design exists: a
  balanced one needs a multiple of 3 orders (12 ordered pairs, 4 per order), and no 3 cyclic orders of 4
  bots cover the 12 pairs once each (tests/referee/test_seating.py checks all of them);
- 5 seats: the orders (0, k, 2k, 3k, 4k) mod 5 for k = 1..4, each ordered pair once: 4 deals, 20 games.

So a match is balanced, in seats and in neighbours, when its number of deals is a multiple of
`design_deals(players)`. Game `deal * players + rotation` is the game's index (its key in the store, stable
when deals are added); the referee plays the games rotation by rotation (see referee.match.generations).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from referee.deals import DealKey
from referee.records import GameSpec


def cyclic_orders(players: int) -> tuple[tuple[int, ...], ...]:
    """The cyclic orders of the design for `players` seats, each written from bot 0."""
    if players < 2:
        raise ValueError(f"a table has at least 2 seats, not {players}")
    if _is_prime(players):
        return tuple(tuple(step * place % players for place in range(players)) for step in range(1, players))
    return tuple((0, *rest) for rest in itertools.permutations(range(1, players)))


def _is_prime(number: int) -> bool:
    return number > 1 and all(number % divisor for divisor in range(2, math.isqrt(number) + 1))


def design_deals(players: int) -> int:
    """Deals in the smallest balanced match for `players` seats (one per cyclic order of the design)."""
    return len(cyclic_orders(players))


def design_games(players: int) -> int:
    """Games in the smallest balanced match for `players` seats."""
    return players * design_deals(players)


def seating(order: Sequence[int], rotation: int) -> tuple[int, ...]:
    """seating[seat] = the bot at that seat in `rotation` of the cyclic `order`."""
    players = len(order)
    return tuple(order[(seat + rotation) % players] for seat in range(players))


def balanced_games(players: int, deal_seeds: Sequence[int]) -> tuple[GameSpec, ...]:
    """Every game of a match dealing `deal_seeds` in turn, in index order: deal d once in each rotation of
    the design's order d (cycling). Balanced when len(deal_seeds) is a multiple of design_deals(players)."""
    orders = cyclic_orders(players)
    return tuple(
        GameSpec(index=deal * players + rotation, seed=seed, seating=seating(orders[deal % len(orders)], rotation))
        for deal, seed in enumerate(deal_seeds)
        for rotation in range(players)
    )


def first_games(players: int, games: int, key: DealKey) -> tuple[GameSpec, ...]:
    """The first `games` games (by index) of the balanced match whose deals come from `key`: every deal in
    full before the next one starts, so any multiple of `players` games holds every bot in every seat of
    each deal, and any multiple of design_games(players) is a balanced match."""
    return balanced_games(players, key.deal_seeds(math.ceil(games / players)))[:games]

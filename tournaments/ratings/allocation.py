"""Where a settling round's games go: racing over the open adjacent pairs of the table.

    tables = next_tables(ratings, verdict, players=2)        # verdict: tournaments.ratings.settling

A round's size grows with the open pairs (neither separated nor known within the resolution): each counts for
as many tables as add about a quarter to the games its two bots have shared (at least one), so a pair that
needs thousands of games gets there in a few dozen looks, not thousands. Those tables are then shared out by
expected information: one to each open pair, then table by table to the pair whose expected chance of
being ordered right gains most from it (_ordered: the pair's true difference taken as the bootstrap has it
now, normal around the estimate with its standard error; the error after the games from the Elo model's
information, p (1 - p) a game). Pairs about a coin flip with few games shared gain most; a near tie that has
already shared many games gains little, since more games hardly move the chance of ordering it (its true
difference is as likely 2 Elo as 20), and neither does a pair already far apart. A pair's table is the two
bots and, at k > 2 seats, the k - 2 bots nearest in Elo to the pair's midpoint (same pool, ties by name).
At 20 bots, 2 seats, resolution 20, 16 leagues (`referee bench settle`): the round robin needed a median
2.8 times the games for the same order, against 1.2 times when every pair took its own quarter (both with a
quarter as many uniform tables as now; 2.3 times with as many again).

Up to half as many tables again go to each bot of an open pair with the bot just beyond the other (the
upper one's upper neighbour with the lower one, the upper one with the lower one's lower neighbour): a
sliding window rather than a bare chain, scaled by what such a game tells (information: nothing for a
neighbour 900 Elo away, whose games are foregone, as a heuristic's against a random are). With an rng (as
settling rounds give it, seeded by the league and the round), as many tables again are drawn uniformly from
the pool (EXPLORE), so that half of every round is a design that does not depend on the results. Why: the
bootstrap (tournaments.ratings.elo) resamples the games as played, as if the tables had been fixed in advance,
and so it cannot see that they were chosen by the results. Replaying an adaptive run's own tables with the
true strengths (bench settle, 20 bots, 4 seats, 4 leagues), its standard errors matched the spread of the
estimates (0.97 to 1.08 times it), yet the run's actual errors were 1.0 to 1.5 times that spread: a pair that
looks separated by an overestimate gets one table a round and keeps the overestimate, and the table's scale,
which adjacent pairs pin only through a chain of them, drifts with such pairs (slopes of the estimated on the
true Elo 0.95 to 1.08 at 50 bots, against 0.97 to 0.99 for a round robin). A share of tables chosen without
the results gives every contrast, the scale above all, information that grows with the games whatever the
results (a condition under which the estimates of an adaptive design are normal with the usual variance, Lai and Wei
1982), and the adaptive share then moves them less. With a quarter as many uniform tables the Elo intervals
held the true Elo 86% of the time at 20 bots x 4 seats (6 leagues) and 88% at 50 x 2 (3 leagues), 57-84%
with none; the figures with as many again are in docs/results.md (Settling against a round robin).

Pairs already separated, or known to be close enough, get one table a round and no growth: a
guard against the bias of stopping, as a pair frozen at the round it looked separated keeps the overestimate
of its difference that separated it, and a chain of such pairs stretches the table's ends. The tables come
most uncertain pair first (the lowest LOS), a pair's repeats together, so a budget that cuts a round short
keeps the pairs nearest a coin flip. Two open pairs that give the same table share it (the first one's
repeats).

A floor of games for every bot comes before this: the league's own schedule (a round robin, or a balanced
sample of one with max_tables), which a settling run plays first, so that no bot is placed from a handful of
games.
"""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Collection

import numpy

from .elo import BotRating, Ratings
from .settling import AdjacentPair, PairState, Settlement
from .soft_play import PairCheck

__all__ = ["GROWTH", "information", "next_tables", "pair_effect_tables"]

Table = tuple[str, ...]
GROWTH = 0.25
"""A round adds about this share of the games an open pair has shared."""
EXPLORE = 1.0
"""With an rng, a round adds this share of its tables again as tables drawn uniformly (its results cannot
have chosen them: see the module's docstring)."""


def next_tables(
    ratings: Ratings,
    verdict: Settlement,
    players: int,
    seatable: Collection[str] | None = None,
    games_per_table: int = 1,
    rng: random.Random | None = None,
) -> list[Table]:
    """The tables of the next round, most uncertain pair first (sorted names each; a table repeated once per
    match it should play). `seatable`: the bots that may be seated (the league's, not retired ones); a pair
    with another bot gets no table. `games_per_table`: the games of one match."""
    by_name = {bot.bot: bot for bot in ratings.bots}
    allowed = set(by_name) if seatable is None else set(seatable) & set(by_name)
    tables: list[Table] = []
    decided = [pair for pair in verdict.pairs if pair.state is not PairState.OPEN]
    position = {bot.bot: number for number, bot in enumerate(ratings.bots)}
    seatable_open = [pair for pair in verdict.open_pairs if {pair.upper, pair.lower} <= allowed]
    counts = _counts(seatable_open, ratings, games_per_table)
    for pair in [*sorted(seatable_open, key=lambda pair: (pair.los, pair.upper)), *decided]:
        if pair.upper not in allowed or pair.lower not in allowed:
            continue
        table = _table(pair, by_name, allowed, players)
        if table is not None and table not in tables:
            count = counts.get((pair.upper, pair.lower), 1)
            tables += [table] * count
            if pair.state is PairState.OPEN:
                tables += _skips(pair, ratings, position, allowed, players, count / 2)
    if rng is not None and tables:
        tables += _uniform(ratings, allowed, players, round(EXPLORE * len(tables)), rng)
    return tables


def pair_effect_tables(
    ratings: Ratings,
    suspected: Collection[PairCheck],
    players: int,
    seatable: Collection[str] | None = None,
    games_per_table: int = 1,
) -> list[Table]:
    """Tables for the pairs whose soft-play effect is suspected (tournaments.ratings.soft_play): each pair (in
    either order) at as many tables as add about GROWTH of the games it has shared (at least one), with, at k >
    2 seats, the k - 2 bots nearest in Elo to its midpoint. Its effect's interval narrows as its shared games
    grow, until the pair is flagged or its estimate shrinks below the size that made it suspected."""
    by_name = {bot.bot: bot for bot in ratings.bots}
    allowed = set(by_name) if seatable is None else set(seatable) & set(by_name)
    tables: list[Table] = []
    seen: set[frozenset[str]] = set()
    for check in suspected:
        names = frozenset((check.bot, check.partner))
        if names in seen or not names <= allowed or by_name[check.bot].pool != by_name[check.partner].pool:
            continue
        seen.add(names)
        upper, lower = sorted(names, key=lambda name: (-by_name[name].elo, name))
        table = _table(AdjacentPair(upper, lower, 0.5, 0.0, (0.0, 0.0), PairState.OPEN, 1.0), by_name, allowed, players)
        if table is not None:
            tables += [table] * max(1, int(GROWTH * check.games / games_per_table))
    return tables


def _counts(pairs: list[AdjacentPair], ratings: Ratings, games_per_table: int) -> dict[tuple[str, str], int]:
    """Tables for each open pair: as many in all as the pairs' growth (GROWTH of the games each has shared, at
    least one table), one each, the rest table by table to the pair whose expected chance of being ordered
    right gains the most from it (_ordered)."""
    size = sum(max(1, int(GROWTH * ratings.record(p.upper, p.lower).games / games_per_table)) for p in pairs)
    counts = {(pair.upper, pair.lower): 1 for pair in pairs}

    def gain(pair: AdjacentPair) -> float:
        key = (pair.upper, pair.lower)
        return _ordered(pair, (counts[key] + 1) * games_per_table) - _ordered(pair, counts[key] * games_per_table)

    heap = [(-gain(pair), number, pair) for number, pair in enumerate(pairs)]
    heapq.heapify(heap)
    for _ in range(size - len(pairs)):
        _, number, pair = heapq.heappop(heap)
        counts[(pair.upper, pair.lower)] += 1
        heapq.heappush(heap, (-gain(pair), number, pair))
    return counts


_NODES, _RAW_WEIGHTS = numpy.polynomial.hermite_e.hermegauss(16)
_QUADRATURE = tuple(zip(_NODES.tolist(), (_RAW_WEIGHTS / _RAW_WEIGHTS.sum()).tolist(), strict=True))
"""Gauss-Hermite nodes and weights for the mean of a function of a standard normal."""
_ELO_PER_SCORE_SD = 347.4
"""Elo per standard deviation of one game's score between equal bots (694.9 Elo per score x 0.5)."""


def _ordered(pair: AdjacentPair, games: int) -> float:
    """The expected chance that the pair's order is right once `games` more games between the two are in: its
    true difference as the bootstrap has it now (normal, the estimate and its standard error), the standard
    error after the games from the Elo model's information."""
    error = max((pair.interval[1] - pair.interval[0]) / 2 / 1.959964, 1e-9)
    per_game = _ELO_PER_SCORE_SD / math.sqrt(max(information(pair.difference), 1e-6))
    after = 1 / math.sqrt(1 / error**2 + games / per_game**2)
    return sum(
        weight * 0.5 * (1 + math.erf(abs(pair.difference + error * node) / after / math.sqrt(2)))
        for node, weight in _QUADRATURE
    )


def _uniform(ratings: Ratings, allowed: set[str], players: int, count: int, rng: random.Random) -> list[Table]:
    """`count` tables of bots drawn uniformly from the first pool."""
    pool = sorted(bot.bot for bot in ratings.bots if bot.pool == 1 and bot.bot in allowed)
    if len(pool) < players:
        return []
    return [tuple(sorted(rng.sample(pool, players))) for _ in range(count)]


def _skips(
    pair: AdjacentPair, ratings: Ratings, position: dict[str, int], allowed: set[str], players: int, count: float
) -> list[Table]:
    """Tables of each bot of an open pair with the other's next neighbour away from it (same pool): which of
    two near bots is ahead also decides its order with the bot just beyond the other, and the chain of
    adjacent pairs alone drifts (bench settle at 50 bots, 2 seats: a round robin needed 0.8 times the games
    for the same order without these tables, 1.8 with them; the Elo intervals' coverage 65% and 80%). Kept
    also where that neighbour is separated: those games are what keeps a separated pair's difference from
    staying at the overestimate that separated it (with them left out, coverage fell back to 64%)."""
    bots = ratings.bots
    by_name = {bot.bot: bot for bot in bots}
    above, below = position[pair.upper] - 1, position[pair.lower] + 1
    skips = []
    for first, second in ((above, position[pair.lower]), (position[pair.upper], below)):
        if 0 <= first < len(bots) and 0 <= second < len(bots) and bots[first].pool == bots[second].pool:
            names = (bots[first].bot, bots[second].bot)
            if set(names) <= allowed:
                skip = AdjacentPair(names[0], names[1], pair.los, 0.0, pair.interval, pair.state, 1.0)
                table = _table(skip, by_name, allowed, players)
                if table is not None:
                    skips += [table] * math.floor(count * information(bots[first].elo - bots[second].elo) + 0.5)
    return skips


def information(difference: float) -> float:
    """What a two-seat game of bots `difference` Elo apart tells about their difference, relative to a game of
    equal bots: the Fisher information p (1 - p) of the Elo model, over its maximum 1/4 (700 Elo apart: 0.1)."""
    chance = 1 / (1 + 10 ** (-difference / 400))
    return 4 * chance * (1 - chance)


def _table(pair: AdjacentPair, by_name: dict[str, BotRating], allowed: set[str], players: int) -> Table | None:
    upper, lower = by_name[pair.upper], by_name[pair.lower]
    middle = (upper.elo + lower.elo) / 2
    candidates = [
        bot
        for bot in by_name.values()
        if bot.bot in allowed and bot.pool == upper.pool and bot.bot not in (pair.upper, pair.lower)
    ]
    others = sorted(candidates, key=lambda bot: (abs(bot.elo - middle), bot.bot))
    if len(others) < players - 2:
        return None
    return tuple(sorted([pair.upper, pair.lower, *(bot.bot for bot in others[: players - 2])]))

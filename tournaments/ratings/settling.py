"""Is a table settled? Which bots can its games not tell apart, and about how many games would settle it?

    verdict = settlement(ratings, SettleRule(level=0.95, resolution=20))   # ratings with a bootstrap
    verdict.groups["heuristic-a"], verdict.settled, verdict.more_games

Only bots adjacent in the table (same pool) are compared, each pair by its bootstrap LOS (the likelihood that
the upper one is stronger) and the bootstrap interval of its Elo difference:

- within resolution: the 95% interval of the difference lies inside +/- resolution Elo (100 by default): the
  two are known to be that close, and more games would only measure how close;
- separated: not within, and at the decisive level, 1 - (1 - level) / 100 (99.95% for the default level of
  95%), both by the bootstrap LOS and by the difference's distance from 0 in bootstrap standard errors (half
  the 95% interval / 1.96; beyond 3.29 at 99.95%): the games order the two. The second test is smooth where
  the LOS of a few hundred resamples is not (one resample in 200 the other way reads as 99.5%);
- open: neither.

A pair with a bot of fewer than min_games games (20 by default) stays open whatever its LOS: the bootstrap of
a handful of games is overconfident (two bots that split 4 games 4-0 are apart in every resample), so no bot
is placed from a handful.

The table is settled when every adjacent pair is separated or within resolution (and all bots are one pool).

Why a decisive level above the stated one: a settling run looks at the table again after every round, and
two equal bots, whose LOS wanders, pass 95% at some look far more often than 5% of the time (at a single look
already 10%: either one can be ahead). A pair counts as decided only at the stricter level, so that copies
of one program keep playing until their interval falls inside the resolution instead of being split by a
lucky run. Measured on the two-copies league (two pairs of equal bots 700 Elo apart, 16-game matches, resolution
100, simulated): at 99.5% by the LOS alone copies were split in 1 run of 10, with the standard-error test
added 3 of 60 (the window tables of tournaments.ratings.allocation as now), at 99.9% 1 of 60, at 99.95%
none of 60, for 416 games instead of 352 (median). A real difference of more than the resolution passes
99.95% soon after 95%.

Groups: bots joined by an adjacent pair whose LOS is below the level (95%), or that is within resolution, are
one group, chained (a, b, c are one group when a-b and b-c are joined, even if a-c would not be). Groups are
numbered 1, 2, ... down the table, a pool starting a new group. Two bots of one group are the ones the games
cannot tell apart, or only by less than the resolution.

More games: an interval narrows as 1/sqrt(games). For an open pair of difference d and interval half-width w
(standard error s = w / 1.96), separating it takes s down to d / z (z the normal quantile of the decisive level,
3.29 at 99.95%): (s z / d)^2 times the games so far; resolving it takes 1.96 s down to resolution - d:
(1.96 s / (resolution - d))^2 times (never, when d is already beyond the resolution). A pair needs the
smaller of the two factors (at least what brings its bots to min_games); the table the largest over its open
pairs, in games of the present mix of tables. It is an estimate: the difference moves as games come in.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from statistics import NormalDist

from .elo import BotRating, Ratings

__all__ = [
    "DEFAULT_LEVEL",
    "DEFAULT_MIN_GAMES",
    "DEFAULT_RESOLUTION",
    "DEFAULT_RULE",
    "AdjacentPair",
    "PairState",
    "SettleRule",
    "Settlement",
    "settlement",
    "tie_games",
]

DEFAULT_LEVEL = 0.95
DEFAULT_RESOLUTION = 100.0
"""Elo. Two equal bots are known within +/-100 of each other after about 190 games between them
(tie_games), which a league of a few bots plays in minutes; +/-20 takes about 4,600 (docs/explanation/ratings.md,
Settling)."""
DEFAULT_MIN_GAMES = 20
DECISIVE_SHARE = 0.01
"""The decisive level leaves this share of the stated level's error: 1 - (1 - level) * share."""
_Z95 = 1.959964
_ELO_PER_SCORE = 400 / math.log(10) / 0.25
"""Elo per unit of expected score between two equal bots (the slope of the Elo curve at 50%)."""


class PairState(enum.StrEnum):
    SEPARATED = "separated"
    WITHIN = "within"
    """Not separated, but the difference's interval lies inside +/- the resolution."""
    OPEN = "open"


@dataclass(frozen=True)
class SettleRule:
    level: float = DEFAULT_LEVEL
    """The LOS at which adjacent bots are in different groups (0.5 < level < 1)."""
    resolution: float = DEFAULT_RESOLUTION
    """Elo: a pair whose 95% interval of the difference is inside +/- this is close enough."""
    min_games: int = DEFAULT_MIN_GAMES
    """A pair is decided only when both its bots have played at least this many games."""

    def __post_init__(self) -> None:
        if not 0.5 < self.level < 1:
            raise ValueError(f"the settling level must be between 0.5 and 1 (exclusive), not {self.level}")
        if not 0 < self.resolution < math.inf:
            raise ValueError(f"the resolution must be a positive number of Elo, not {self.resolution}")
        if self.min_games < 0:
            raise ValueError(f"the minimum of games must be 0 or more, not {self.min_games}")

    @property
    def decisive(self) -> float:
        """The LOS at which a pair is separated for good (see the module's docstring)."""
        return 1 - (1 - self.level) * DECISIVE_SHARE


@dataclass(frozen=True)
class AdjacentPair:
    upper: str
    lower: str
    los: float
    difference: float
    """Elo of the upper bot minus the lower one's (0 or more)."""
    interval: tuple[float, float]
    """95% bootstrap interval of the difference."""
    state: PairState
    games_factor: float
    """About how many times the present games would settle this pair (1 when it is; inf: no number would)."""


@dataclass(frozen=True)
class Settlement:
    rule: SettleRule
    pairs: tuple[AdjacentPair, ...]
    groups: dict[str, int]
    """Bot -> group number (1 the top group)."""
    pools: int
    games: int

    @property
    def open_pairs(self) -> tuple[AdjacentPair, ...]:
        return tuple(pair for pair in self.pairs if pair.state is PairState.OPEN)

    @property
    def settled(self) -> bool:
        return self.pools == 1 and not self.open_pairs

    @property
    def more_games(self) -> int | None:
        """About how many more games (of the present mix of tables) would settle the open pairs; None if no
        number would (a pair beyond the resolution that does not separate) or nothing is open."""
        factors = [pair.games_factor for pair in self.open_pairs]
        if not factors or not all(math.isfinite(factor) for factor in factors):
            return None
        return _rounded(self.games * (max(factors) - 1))


DEFAULT_RULE = SettleRule()


def settlement(ratings: Ratings, rule: SettleRule = DEFAULT_RULE) -> Settlement | None:
    """The verdict on `ratings`' adjacent pairs, or None without a bootstrap (no LOS to judge by)."""
    if not ratings.bootstrap or not ratings.bots:
        return None
    pairs: list[AdjacentPair] = []
    groups: dict[str, int] = {}
    group = 0
    previous: BotRating | None = None
    for bot in ratings.bots:
        joined = previous is not None and previous.pool == bot.pool and _pair(previous, bot, rule, pairs)
        group = group if joined else group + 1
        groups[bot.bot] = group
        previous = bot
    return Settlement(rule, tuple(pairs), groups, ratings.pools, ratings.games)


def _pair(upper: BotRating, lower: BotRating, rule: SettleRule, pairs: list[AdjacentPair]) -> bool:
    """Append the pair of `upper` and the next bot `lower`; True if they are one group."""
    assert upper.los_next is not None and upper.diff_next_ci95 is not None
    low, high = upper.diff_next_ci95
    difference = max(upper.elo - lower.elo, 0.0)
    fewest = min(upper.games, lower.games)
    if fewest < rule.min_games:
        factor = max(_games_factor(difference, (high - low) / 2, rule), rule.min_games / max(fewest, 1))
        state = PairState.OPEN
    elif -rule.resolution <= low and high <= rule.resolution:
        state, factor = PairState.WITHIN, 1.0
    elif upper.los_next >= rule.decisive and _apart(difference, (high - low) / 2, rule):
        state, factor = PairState.SEPARATED, 1.0
    else:
        state, factor = PairState.OPEN, _games_factor(difference, (high - low) / 2, rule)
    pairs.append(AdjacentPair(upper.bot, lower.bot, upper.los_next, difference, (low, high), state, factor))
    return state is PairState.WITHIN or upper.los_next < rule.level


def _apart(difference: float, half_width: float, rule: SettleRule) -> bool:
    """The difference is beyond z(decisive) standard errors of the bootstrap (half the 95% interval / 1.96)."""
    return difference * _Z95 > NormalDist().inv_cdf(rule.decisive) * half_width


def _games_factor(difference: float, half_width: float, rule: SettleRule) -> float:
    error = half_width / _Z95
    separate = (error * NormalDist().inv_cdf(rule.decisive) / difference) ** 2 if difference > 0 else math.inf
    resolve = (_Z95 * error / (rule.resolution - difference)) ** 2 if difference < rule.resolution else math.inf
    return max(1.0, min(separate, resolve))


def tie_games(resolution: float) -> int:
    """About how many two-seat games two equal bots must play each other for their difference to be known
    within +/- `resolution`: the games at which the 95% interval's half-width is half the resolution
    (1.96 x 347 / sqrt(games) Elo), leaving the other half for the observed difference, which wanders by about
    that much. 186 at 100 Elo, 742 at 50, 4,638 at 20."""
    return math.ceil((2 * _Z95 * _ELO_PER_SCORE * 0.5 / resolution) ** 2)


def _rounded(games: float) -> int:
    """Two significant figures: the estimate is no more precise than that."""
    if games < 10:
        return max(1, math.ceil(games))
    digits = int(math.floor(math.log10(games))) - 1
    return int(round(games, -digits))

"""The soft-play check: pairs of bots whose results together depart from what their ratings predict, as when
one bot plays to lose (or feeds points) whenever its partner sits at its table. No sandbox can stop bots
that signal through their play; this estimates, for every pair, how much one bot's presence helps the other,
with an interval, and how many games an effect of a given size would need to show.

    check = soft_play_check([game.ranks for game in games_without_forfeits])
    check.flagged       # the pairs whose interval is clear of zero, most significant first
    check.suspected     # not flagged, but a large estimate: where more games would decide (settling plays them)

The model, for each ordered pair (A, B) of bots that shared a table, is the Bradley-Terry model of the Elo table
(fitted once, on every game, with its prior) with one added parameter: A's strength moved by d (in Elo) in
the games where B sits at its table. d is the pair's effect: +100 means A plays as if 100 Elo stronger when B
is at its table (B may be feeding it), -100 as if 100 Elo weaker (A may be throwing its games for B). Its
score at d = 0 is

    U = sum over the games A and B shared, over each other seat j, of (s_Aj - p_Aj)

with s_Aj A's pairwise points (1 if A ranked better than j, 1/2 if tied, 0 if worse) and p_Aj = 1 / (1 +
10^((Elo_j - Elo_A)/400)): A's expected rank minus its observed rank at those tables, summed. Under the model
U has mean 0 and the efficient variance V = I_dd - h' I^+ h, where I_dd = sum of p_Aj (1 - p_Aj) over the
same pairings, h is their cross-information with the strengths, and I^+ the pseudo-inverse of the fit's
Fisher information: V takes out what the fitted ratings already absorbed of A's and B's results (a B thrown
to the bottom whenever A is there also looks like a weak B). V is scaled by the league's overdispersion phi (a
bot's points in one game vary more than independent pairings would: a good game beats every seat). The
estimate of d is the one-step estimate from d = 0, U / V natural-log units (times 400 / ln 10 for Elo), with
standard error sqrt(phi / V); z = U / sqrt(phi V) is the estimate over its error, with its two-sided p-value.

The flag is the effect's interval clear of zero, the interval corrected for testing every ordered pair (m of
them) by Holm's step-down method: the pairs ordered by p-value, the k-th (from 1) has its interval at the
level alpha / (m - k + 1) (1 - that is its confidence), as long as every pair before it was flagged; from
the first pair that is not, every later one has that pair's level. So a pair is flagged exactly when Holm's
method rejects "no effect" for it, which holds the chance that an honest league has any pair flagged at most
`alpha` (the family-wise error rate). No threshold on the effect's size is involved: a pair feeding at a
rate that keeps its effect small is flagged once its games make the interval narrow enough, and `games_for`
says how many that takes.

Power: the interval's width shrinks as 1 / sqrt(games) of the pair, so an effect of X Elo shows (is flagged,
with probability `POWER`, at the strictest level alpha / m, where the first pair is tested) after about

    games x ((z(1 - alpha / 2m) + z(POWER)) x error / X)^2

games shared by the pair, in games of the tables it has played so far (`PairCheck.games_for`). `detectable`
is the same figure the other way: the effect its present games would show.

Suspected: a pair not flagged whose point estimate is at least `effect` (DEFAULT_EFFECT Elo, the size the power
figure is for) in size and whose own 95% interval (uncorrected) is clear of zero: an effect that would matter
if real and that the games so far neither rule in nor rule out. Settling (tournaments/settle.py) plays those
pairs' tables until each is flagged or no longer suspected.

The games given should leave out every game in which a seat forfeited (a crash, a timeout limit): a forfeiting
bot ranks last whatever happens, and a fallback policy plays its seat, so such a game says nothing about how
the others play together; a bot that crashes in many games would otherwise make its neighbours look fed.

A flag says that a pair's results together depart from the rating model beyond chance; a real matchup
effect (a style that happens to beat another's) looks the same, so it is a reason to look at the pair's games
and replays, not a verdict. tests/tournaments/test_soft_play.py measures, on simulated leagues, the rate of
flags in honest ones (at most alpha) and that a feeding pair is found.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from numpy.typing import NDArray

from .bradley_terry import ELO_PER_NAT
from .elo import DEFAULT_PRIOR_DRAWS, RatingInputError, rate

FloatArray = NDArray[np.float64]

DEFAULT_ALPHA = 0.01
"""The family-wise error rate: the chance that an honest league has any pair flagged."""
DEFAULT_EFFECT = 100.0
"""Elo: the effect the power figure is given for, and the size of estimate that makes a pair suspected. A bot
that throws half the games it could when its partner is at a 4-seat table gives it about this much."""
POWER = 0.8
"""The chance with which the power figure's effect shows after its games."""
SUSPECT_LEVEL = 0.05
"""A suspected pair's own (uncorrected) interval is at this level."""
_NORMAL = NormalDist()


@dataclass(frozen=True)
class PairCheck:
    bot: str
    partner: str
    """The bot whose results are tested, and the one whose presence at its table they are tested for."""
    games: int
    """Games where both sat."""
    observed: float
    """The bot's pairwise points against its tables in those games."""
    expected: float
    """What the ratings predict for them."""
    z: float
    """Positive: the bot did better with its partner at the table than its rating says; negative: worse."""
    p_value: float
    """Two-sided, before the correction."""
    p_adjusted: float
    """Holm-adjusted over every pair tested."""
    flagged: bool
    """The interval is clear of zero (equivalently, p_adjusted below alpha)."""
    effect: float = 0.0
    """Elo the bot plays above its rating when its partner is at its table (the one-step estimate)."""
    error: float = math.inf
    """The effect's standard error (Elo); inf when the games cannot tell it from the ratings."""
    level: float = 1.0
    """The two-sided error level of `interval` (Holm's for this pair's step)."""
    strictest: float = 1.0
    """The strictest level of the check, alpha / m: what a pair needs to be the first flagged."""

    @property
    def excess(self) -> float:
        """Points (places at its tables) the bot gained beyond the prediction (negative: lost)."""
        return self.observed - self.expected

    @property
    def interval(self) -> tuple[float, float]:
        """The effect's interval at `level`, corrected for every pair tested: flagged when clear of zero."""
        half = _quantile(self.level) * self.error
        return (self.effect - half, self.effect + half)

    def games_for(self, effect: float, power: float = POWER) -> float:
        """About how many games shared would show an effect of `effect` Elo with probability `power`, at the
        strictest level of the check (inf when the pair's games tell nothing)."""
        if not math.isfinite(self.error) or self.games == 0 or effect == 0:
            return math.inf
        return self.games * ((_quantile(self.strictest) + _NORMAL.inv_cdf(power)) * self.error / effect) ** 2

    def detectable(self, power: float = POWER) -> float:
        """The effect (Elo) the present games would show with probability `power` at the strictest level."""
        return (_quantile(self.strictest) + _NORMAL.inv_cdf(power)) * self.error

    def suspected(self, effect: float = DEFAULT_EFFECT) -> bool:
        """Not flagged, an estimate of at least `effect` Elo in size, and clear of zero before the correction."""
        return not self.flagged and abs(self.effect) >= effect and self.p_value < SUSPECT_LEVEL

    def summary(self) -> str:
        """One line for a person."""
        how = "better" if self.z > 0 else "worse"
        low, high = self.interval
        return (
            f"{self.bot} ranks {how} than its rating predicts when {self.partner} sits at its table: "
            f"{self.effect:+.0f} Elo ({_elo(low)} to {_elo(high)}) over {self.games} games, "
            f"{self.excess:+.1f} places, z {self.z:+.2f}, p {self.p_value:.2g} (Holm-adjusted {self.p_adjusted:.2g})"
        )


def _quantile(level: float) -> float:
    """The normal quantile of a two-sided interval at error level `level`."""
    return _NORMAL.inv_cdf(1 - level / 2) if level < 1 else 0.0


def _elo(value: float) -> str:
    return f"{value:+.0f}" if math.isfinite(value) else ("+inf" if value > 0 else "-inf")


@dataclass(frozen=True)
class SoftPlayCheck:
    alpha: float
    pairs: tuple[PairCheck, ...]
    """Every ordered pair that shared a table, the most significant first."""
    effect: float = DEFAULT_EFFECT
    """Elo: the effect the power figures are for, and the size that makes a pair suspected."""

    @property
    def flagged(self) -> tuple[PairCheck, ...]:
        return tuple(pair for pair in self.pairs if pair.flagged)

    @property
    def suspected(self) -> tuple[PairCheck, ...]:
        return tuple(pair for pair in self.pairs if pair.suspected(self.effect))

    def games_for(self) -> float | None:
        """The median over pairs of the games shared that would show an effect of `effect` (None: no pairs)."""
        needed = sorted(pair.games_for(self.effect) for pair in self.pairs)
        return needed[len(needed) // 2] if needed else None

    def power_line(self) -> str:
        """The power figure in words, for the league as it stands."""
        needed = self.games_for()
        if needed is None or not math.isfinite(needed):
            return f"no pair's games can show an effect of {self.effect:g} Elo yet"
        shared = sorted(pair.games for pair in self.pairs)[len(self.pairs) // 2]
        return (
            f"an effect of {self.effect:g} Elo would need about {_rounded(needed):,} games shared by a pair to show "
            f"(median over pairs; they share {shared:,} now)"
        )


def _rounded(games: float) -> int:
    """Two significant figures: the estimate is no more precise than that."""
    if games < 100:
        return max(1, math.ceil(games))
    digits = int(math.floor(math.log10(games))) - 1
    return int(round(games, -digits))


@dataclass
class _Sums:
    games: int = 0
    observed: float = 0.0
    expected: float = 0.0
    variance: float = 0.0


def win_probability(elo: float, other: float) -> float:
    """The Bradley-Terry (Elo) probability that a bot rated `elo` ranks above one rated `other`."""
    return 1.0 / (1.0 + 10.0 ** ((other - elo) / 400.0))


def _points(rank: int, other: int) -> float:
    return 1.0 if rank < other else 0.5 if rank == other else 0.0


def _residual(ranks: Mapping[str, int], helped: str, elo: Mapping[str, float]) -> tuple[float, float, float]:
    """(points, expected points, model variance) of `helped` against the other seats of one game."""
    observed = expected = variance = 0.0
    for other in ranks:
        if other != helped:
            p = win_probability(elo[helped], elo[other])
            observed += _points(ranks[helped], ranks[other])
            expected += p
            variance += p * (1.0 - p)
    return observed, expected, variance


def _information(
    games: Sequence[Mapping[str, int]], theta: Mapping[str, float], index: Mapping[str, int]
) -> FloatArray:
    """The Bradley-Terry fit's Fisher information in the strengths (natural-log units), every pairing of a
    game counted as one independent comparison."""
    information = np.zeros((len(index), len(index)))
    for ranks in games:
        for first, second in itertools.combinations([bot for bot in ranks if bot in index], 2):
            p = 1.0 / (1.0 + math.exp(theta[second] - theta[first]))
            i, j = index[first], index[second]
            information[i, i] += p * (1.0 - p)
            information[j, j] += p * (1.0 - p)
            information[i, j] -= p * (1.0 - p)
            information[j, i] -= p * (1.0 - p)
    return information


def _dispersion(games: Sequence[Mapping[str, int]], elo: Mapping[str, float]) -> float:
    """How much more a bot's points vary from game to game than independent pairings would (at least 1): its
    results against one table are correlated, as a good game beats every seat."""
    squares = model = 0.0
    for ranks in games:
        for bot in ranks:
            observed, expected, variance = _residual(ranks, bot, elo)
            squares += (observed - expected) ** 2
            model += variance
    return max(1.0, squares / model) if model > 0 else 1.0


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given."""
    order = sorted(range(len(p_values)), key=p_values.__getitem__)
    adjusted = [1.0] * len(p_values)
    running = 0.0
    for step, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - step) * p_values[index]))
        adjusted[index] = running
    return adjusted


def holm_levels(p_values: list[float], alpha: float) -> list[float]:
    """Each p-value's Holm level, in the order given: alpha / (m - k + 1) for the k-th smallest while every
    smaller one is below its own level, and from the first that is not, that one's level for the rest. A
    p-value is below its level exactly when Holm's method rejects it."""
    order = sorted(range(len(p_values)), key=p_values.__getitem__)
    levels = [1.0] * len(p_values)
    stopped: float | None = None
    for step, index in enumerate(order):
        level = stopped if stopped is not None else alpha / (len(p_values) - step)
        if stopped is None and p_values[index] >= level:
            stopped = level
        levels[index] = level
    return levels


def soft_play_check(
    games: Sequence[Mapping[str, int]],
    alpha: float = DEFAULT_ALPHA,
    prior_draws: float = DEFAULT_PRIOR_DRAWS,
    effect: float = DEFAULT_EFFECT,
) -> SoftPlayCheck:
    """Estimate and test every ordered pair of bots that shared a table in `games` (bot -> rank dicts; leave
    out games with a forfeiting seat). `effect`: the Elo the power figures are for."""
    try:
        ratings = rate(games, 0, 0, prior_draws)
    except RatingInputError:
        return SoftPlayCheck(alpha, (), effect)
    elo = {bot.bot: bot.elo for bot in ratings.bots}
    pool = {bot.bot: bot.pool for bot in ratings.bots}
    names = sorted(elo)
    index = {name: position for position, name in enumerate(names)}
    theta = {name: elo[name] / ELO_PER_NAT for name in names}
    covariance = np.linalg.pinv(_information(games, theta, index))
    dispersion = _dispersion(games, elo)
    sums: dict[tuple[str, str], _Sums] = {}
    cross: dict[tuple[str, str], FloatArray] = {}
    played: Counter[str] = Counter()
    for ranks in games:
        if len({pool[bot] for bot in ranks}) > 1:
            continue
        played.update(ranks.keys())
        for helped in ranks:
            observed, expected, variance = _residual(ranks, helped, elo)
            row = np.zeros(len(names))
            for other in ranks:
                if other != helped:
                    weight = win_probability(elo[helped], elo[other])
                    row[index[helped]] += weight * (1.0 - weight)
                    row[index[other]] -= weight * (1.0 - weight)
            for helper in ranks:
                if helper != helped:
                    pair = sums.setdefault((helped, helper), _Sums())
                    pair.games += 1
                    pair.observed += observed
                    pair.expected += expected
                    pair.variance += variance
                    cross[helped, helper] = cross.get((helped, helper), 0.0) + row
    keys = sorted(sums)
    estimates = [
        _estimate(sums[key], cross[key], covariance, dispersion) if sums[key].games < played[key[0]] else _UNTOLD
        for key in keys
    ]
    p_values = [math.erfc(abs(z) / math.sqrt(2.0)) for _, _, z in estimates]
    adjusted = holm(p_values)
    levels = holm_levels(p_values, alpha)
    strictest = alpha / len(keys) if keys else alpha
    pairs = [
        PairCheck(bot, partner, sums[bot, partner].games, sums[bot, partner].observed,
                  sums[bot, partner].expected, z, p, q, p < level, estimate, error, level, strictest)
        for (bot, partner), (estimate, error, z), p, q, level
        in zip(keys, estimates, p_values, adjusted, levels, strict=True)
    ]  # fmt: skip
    pairs.sort(key=lambda pair: (pair.p_value, pair.bot, pair.partner))
    return SoftPlayCheck(alpha, tuple(pairs), effect)


_UNTOLD = (0.0, math.inf, 0.0)
"""The estimate of a pair whose partner sat at every one of the bot's tables: the partner's effect is then the bot's
own strength, which the ratings already hold (at 5 seats with 5 bots every pair is so). The efficient variance is
zero there, and what the arithmetic leaves of it is rounding and the ratings' prior: a bot last in every game,
pulled up by the prior, would otherwise look thrown by each of its neighbours."""


def _estimate(
    sums: _Sums, cross: FloatArray, covariance: NDArray[np.floating], dispersion: float
) -> tuple[float, float, float]:
    """(effect, its standard error, z) of one ordered pair, the first two in Elo."""
    efficient = sums.variance - float(cross @ covariance @ cross)
    if efficient <= 1e-9:
        return 0.0, math.inf, 0.0
    score = sums.observed - sums.expected
    z = score / math.sqrt(dispersion * efficient)
    return score / efficient * ELO_PER_NAT, math.sqrt(dispersion / efficient) * ELO_PER_NAT, z

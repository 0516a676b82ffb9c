"""The soft-play check: pairs of bots whose results together depart from what their ratings predict, as when
one bot plays to lose (or feeds points) whenever its partner sits at its table. No sandbox can stop bots
that signal through their play; this finds the pairs that profit, with a p-value.

    check = soft_play_check([game.ranks for game in store.games()])
    check.flagged       # the pairs below the threshold, most significant first

The statistic, for each ordered pair (A, B) of bots that shared a table, is a score test of one added
parameter: the Bradley-Terry model of the Elo table (fitted once, on every game, with its prior), with A's
strength moved by d in the games where B sits at its table. Its score at d = 0 is

    U = sum over the games A and B shared, over each other seat j, of (s_Aj - p_Aj)

with s_Aj A's pairwise points (1 if A ranked better than j, 1/2 if tied, 0 if worse) and p_Aj = 1 / (1 +
10^((Elo_j - Elo_A)/400)): A's expected rank minus its observed rank at those tables, summed. Under the model
U has mean 0 and the efficient variance V = I_dd - h' I^+ h, where I_dd = sum of p_Aj (1 - p_Aj) over the
same pairings, h is their cross-information with the strengths, and I^+ the pseudo-inverse of the fit's
Fisher information: V takes out what the fitted ratings already absorbed of A's and B's results (a B thrown
to the bottom whenever A is there also looks like a weak B). V is scaled by the league's overdispersion (a
bot's points in one game vary more than independent pairings would: a good game beats every seat), and z =
U / sqrt(V) gives a two-sided p-value from the standard normal: z > 0, A ranks better with B at its table
than its rating says (B may feed A); z < 0, A ranks worse (A may be throwing its games for B or another bot
at those tables). The p-values of every ordered pair are adjusted with Holm's step-down method, which holds
the chance that an honest league has any pair flagged at most `alpha` (the family-wise error rate), and a
pair is flagged when its adjusted p-value is below `alpha` (DEFAULT_ALPHA).

A flag says that a pair's results together depart from the rating model beyond chance; a real matchup
effect (a style that happens to beat another's) looks the same, so it is a reason to look at the pair's games
and replays, not a verdict. tests/tournaments/test_soft_play.py measures, on simulated leagues, the rate of
flags in honest ones (at most alpha) and that a feeding pair is found.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .bradley_terry import ELO_PER_NAT
from .elo import DEFAULT_PRIOR_DRAWS, RatingInputError, rate

FloatArray = NDArray[np.float64]

DEFAULT_ALPHA = 0.01
"""The family-wise error rate: the chance that an honest league has any pair flagged."""


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

    @property
    def excess(self) -> float:
        """Points (places at its tables) the bot gained beyond the prediction (negative: lost)."""
        return self.observed - self.expected

    def summary(self) -> str:
        """One line for a person."""
        how = "better" if self.z > 0 else "worse"
        return (
            f"{self.bot} ranks {how} than its rating predicts when {self.partner} sits at its table: "
            f"{self.excess:+.1f} places over {self.games} games, z {self.z:+.2f}, p {self.p_value:.2g} "
            f"(Holm-adjusted {self.p_adjusted:.2g})"
        )


@dataclass(frozen=True)
class SoftPlayCheck:
    alpha: float
    pairs: tuple[PairCheck, ...]
    """Every ordered pair that shared a table, the most significant first."""

    @property
    def flagged(self) -> tuple[PairCheck, ...]:
        return tuple(pair for pair in self.pairs if pair.flagged)


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


def soft_play_check(
    games: Sequence[Mapping[str, int]], alpha: float = DEFAULT_ALPHA, prior_draws: float = DEFAULT_PRIOR_DRAWS
) -> SoftPlayCheck:
    """Test every ordered pair of bots that shared a table in `games` (bot -> rank dicts)."""
    try:
        ratings = rate(games, 0, 0, prior_draws)
    except RatingInputError:
        return SoftPlayCheck(alpha, ())
    elo = {bot.bot: bot.elo for bot in ratings.bots}
    pool = {bot.bot: bot.pool for bot in ratings.bots}
    names = sorted(elo)
    index = {name: position for position, name in enumerate(names)}
    theta = {name: elo[name] / ELO_PER_NAT for name in names}
    covariance = np.linalg.pinv(_information(games, theta, index))
    dispersion = _dispersion(games, elo)
    sums: dict[tuple[str, str], _Sums] = {}
    cross: dict[tuple[str, str], FloatArray] = {}
    for ranks in games:
        if len({pool[bot] for bot in ranks}) > 1:
            continue
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
    z_scores = []
    for key in keys:
        efficient = sums[key].variance - float(cross[key] @ covariance @ cross[key])
        spread = math.sqrt(dispersion * efficient) if efficient > 1e-9 else 0.0
        z_scores.append((sums[key].observed - sums[key].expected) / spread if spread > 0 else 0.0)
    p_values = [math.erfc(abs(z) / math.sqrt(2.0)) for z in z_scores]
    adjusted = holm(p_values)
    pairs = [
        PairCheck(bot, partner, sums[bot, partner].games, sums[bot, partner].observed,
                  sums[bot, partner].expected, z, p, q, q < alpha)
        for (bot, partner), z, p, q in zip(keys, z_scores, p_values, adjusted, strict=True)
    ]  # fmt: skip
    pairs.sort(key=lambda pair: (pair.p_value, pair.bot, pair.partner))
    return SoftPlayCheck(alpha, tuple(pairs))

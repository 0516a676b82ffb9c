"""A sequential probability ratio test over paired deals: is a new bot at least some Elo better than a base bot?

As in chess engine testing (fishtest), games come in pairs: the same deal played twice with the seats swapped,
so the luck of the cards largely cancels within a pair. A pair is one observation, its outcome the new bot's
points over the two games (0, 1/2, 1, 3/2 or 2; win 1, draw 1/2, loss 0): the pentanomial.

The statistic is the generalised SPRT on the pentanomial that fishtest uses (M. Van den Bergh): for each
hypothesis, the distribution of pair scores (points / 2, so 0..1) closest in likelihood to the observed one
among those with the hypothesis' mean, s = 1 / (1 + 10^(-elo/400)) (logistic Elo); LLR is the log-likelihood
ratio of the pairs under the two. That maximum-likelihood distribution is p_i = phat_i / (1 + lam * (a_i - s))
with lam solving sum_i phat_i * (a_i - s) / (1 + lam * (a_i - s)) = 0 (a_i the pair scores, phat_i the observed
shares). For scores near 1/2 it agrees with the normal approximation N * (s1 - s0) * (2 * mean - s0 - s1) /
(2 * variance), but unlike that formula one pair can never decide the test on its own.

H0: elo = elo0, H1: elo = elo1. The test stops at LLR <= log(beta / (1 - alpha)) (accept H0) or
LLR >= log((1 - beta) / alpha) (accept H1); alpha and beta are the error rates at elo0 and elo1. Empty
pentanomial cells count as 1e-3 pairs (as fishtest does), which keeps every cell possible.

A test that would decide without data is refused (SprtConfigError), as fastchess refuses it: alpha + beta >= 1
puts a bound at or beyond LLR 0, where every test starts, so it decides before the first game; and elo0, elo1,
alpha and beta must be such that no single pair can cross a bound (elo bounds too far apart, or error rates
too large, make one pair of games decide).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

from protocol.errors import BadInput

PAIR_OUTCOMES = 5
"""New bot's points in a pair: 0, 1/2, 1, 3/2, 2 (the pentanomial cells)."""
EMPTY_CELL = 1e-3
_VALUES = tuple(cell / (PAIR_OUTCOMES - 1) for cell in range(PAIR_OUTCOMES))
"""The pair score of each cell: 0, 1/4, 1/2, 3/4, 1."""
_MAX_STEPS = 200
_TILT_TOLERANCE = 1e-13
ELO_CAP = 1000.0
_Z95 = 1.959963984540054


class SprtConfigError(BadInput, ValueError):
    """Bounds or error rates that make no test (elo0 >= elo1, alpha or beta outside (0, 1), alpha + beta >= 1,
    Elo beyond +-ELO_CAP, or a test that one pair of games would decide)."""


class Decision(enum.StrEnum):
    CONTINUE = "continue"
    H0 = "H0"
    """Accepted: the new bot is not elo1 better (a bot truly elo1 better ends here with probability beta)."""
    H1 = "H1"
    """Accepted: the new bot is more than elo0 better (a bot only elo0 better ends here with probability alpha)."""


@dataclass(frozen=True)
class SprtTest:
    """The hypotheses and error rates."""

    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        for name, elo in (("elo0", self.elo0), ("elo1", self.elo1)):
            if not -ELO_CAP <= elo <= ELO_CAP:
                raise SprtConfigError(f"{name} must be a number from {-ELO_CAP:g} to {ELO_CAP:g}, got {elo}")
        if not self.elo0 < self.elo1:
            raise SprtConfigError(f"elo0 ({self.elo0}) must be below elo1 ({self.elo1})")
        for name, rate in (("alpha", self.alpha), ("beta", self.beta)):
            if not 0 < rate < 1:
                raise SprtConfigError(f"{name} must be between 0 and 1, got {rate}")
        if self.alpha + self.beta >= 1:
            raise SprtConfigError(
                f"alpha + beta must be below 1, got {self.alpha:g} + {self.beta:g}: the test would decide before "
                "the first game (its bounds would not lie on both sides of 0, where the LLR starts)"
            )
        self._check_no_single_pair_decides()

    def _check_no_single_pair_decides(self) -> None:
        for cell in range(PAIR_OUTCOMES):
            ratio = llr(Pentanomial(tuple(int(index == cell) for index in range(PAIR_OUTCOMES))), self.elo0, self.elo1)
            if not self.lower_bound < ratio < self.upper_bound:
                raise SprtConfigError(
                    f"one pair of games would decide this test (a pair scoring {cell / 2:g} points gives LLR "
                    f"{ratio:+.3f}, beyond the bounds ({self.lower_bound:+.3f}, {self.upper_bound:+.3f})): "
                    "bring elo0 and elo1 closer together, or lower alpha and beta"
                )

    @property
    def lower_bound(self) -> float:
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper_bound(self) -> float:
        return math.log((1 - self.beta) / self.alpha)


@dataclass(frozen=True)
class Pentanomial:
    """Counts of pairs by the new bot's points: counts[k] pairs scored k/2 points (k = 0..4)."""

    counts: tuple[int, ...] = (0,) * PAIR_OUTCOMES

    def add(self, points: float) -> Pentanomial:
        """These counts plus one pair in which the new bot scored `points` (0, 0.5, ..., 2)."""
        cell = round(points * 2)
        if not 0 <= cell < PAIR_OUTCOMES or cell != points * 2:
            raise ValueError(f"a pair scores 0, 0.5, 1, 1.5 or 2 points, not {points!r}")
        counts = list(self.counts)
        counts[cell] += 1
        return Pentanomial(tuple(counts))

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    @property
    def points(self) -> float:
        return sum(cell * count for cell, count in enumerate(self.counts)) / 2


@dataclass(frozen=True)
class SprtState:
    test: SprtTest
    pentanomial: Pentanomial
    llr: float
    decision: Decision
    elo: float | None
    """The new bot's Elo advantage estimated from the pairs (None before the first pair, capped at +-ELO_CAP)."""
    elo_ci95: tuple[float, float] | None


def expected_score(elo: float) -> float:
    """Expected score of a bot `elo` (logistic) stronger than its opponent."""
    return 1 / (1 + 10 ** (-elo / 400))


def llr(pentanomial: Pentanomial, elo0: float, elo1: float) -> float:
    """The log-likelihood ratio of elo1 against elo0 (see the module docstring); 0 before the first pair."""
    if pentanomial.pairs == 0:
        return 0.0
    weights = _regularised(pentanomial)
    total = 0.0
    for elo, sign in ((elo1, 1), (elo0, -1)):
        score = expected_score(elo)
        tilt = _tilt(weights, score)
        total -= sign * sum(
            weight * math.log1p(tilt * (value - score)) for weight, value in zip(weights, _VALUES, strict=True)
        )
    return total


def evaluate(test: SprtTest, pentanomial: Pentanomial) -> SprtState:
    """The LLR and the decision after the pairs counted in `pentanomial`."""
    ratio = llr(pentanomial, test.elo0, test.elo1)
    if ratio >= test.upper_bound:
        decision = Decision.H1
    elif ratio <= test.lower_bound:
        decision = Decision.H0
    else:
        decision = Decision.CONTINUE
    elo, interval = _elo_estimate(pentanomial)
    return SprtState(test, pentanomial, ratio, decision, elo, interval)


def _regularised(pentanomial: Pentanomial) -> list[float]:
    return [max(count, EMPTY_CELL) for count in pentanomial.counts]


def _tilt(weights: list[float], score: float) -> float:
    """The lam of the maximum-likelihood distribution with mean `score`.

    The balance sum falls steadily with lam between the poles -1 / (1 - score) and 1 / score: Newton's method,
    falling back to bisection whenever a step would leave the bracket around the root.
    """
    low, high = -1 / (1 - score), 1 / score
    tilt = 0.0
    for _ in range(_MAX_STEPS):
        balance = slope = 0.0
        for weight, value in zip(weights, _VALUES, strict=True):
            term = (value - score) / (1 + tilt * (value - score))
            balance += weight * term
            slope -= weight * term * term
        if balance > 0:
            low = tilt
        else:
            high = tilt
        step = -balance / slope
        following = tilt + step if low < tilt + step < high else (low + high) / 2
        if abs(following - tilt) < _TILT_TOLERANCE:
            return following
        tilt = following
    return tilt


def _moments(pentanomial: Pentanomial) -> tuple[float, float, float]:
    """Regularised pair count, mean pair score (0..1) and per-pair variance."""
    weights = _regularised(pentanomial)
    total = sum(weights)
    mean = sum(weight * value for weight, value in zip(weights, _VALUES, strict=True)) / total
    variance = sum(weight * (value - mean) ** 2 for weight, value in zip(weights, _VALUES, strict=True)) / total
    return total, mean, variance


def _elo_estimate(pentanomial: Pentanomial) -> tuple[float | None, tuple[float, float] | None]:
    if pentanomial.pairs == 0:
        return None, None
    total, mean, variance = _moments(pentanomial)
    spread = _Z95 * math.sqrt(variance / total)
    return _elo_of(mean), (_elo_of(mean - spread), _elo_of(mean + spread))


def _elo_of(score: float) -> float:
    """The logistic Elo difference of an expected score, capped at +-ELO_CAP (scores of 0 or 1 have none)."""
    if score <= 0 or score >= 1:
        return math.copysign(ELO_CAP, score - 0.5)
    return min(max(-400 * math.log10(1 / score - 1), -ELO_CAP), ELO_CAP)

"""A student's results against each baseline, and the mark they give (the league file's [marks]).

    results = against_baselines(store.games(), "ann", ("random", "heuristic"))
    ladder = {"heuristic": ((0.25, 70.0),), "random": ((0.7, 40.0),)}
    mark = mark_of(results, ladder)             # the mark of the shares themselves
    held = mark_held(results, ladder)           # the marks the shares' 95% intervals allow: one, or "uncertain"

Against a baseline B, over every stored game in which both the student and B sat:
- games: how many;
- share: the student's score share against B, each game 1 when it ranked above B, 1/2 when level, 0 below
  (at two seats: wins plus half the draws, over games). It depends on these two bots' games alone, so a
  classmate's resubmission never moves it (an Elo rating is relative to the whole pool);
- mean rank: the student's mean rank in those games (1 best).

Marks: each baseline's thresholds are (share, mark) pairs; against that baseline the student earns the mark of
the highest share reached (share >= threshold), and the student's mark is the highest over all baselines
(a ladder: beating random earns something, beating heuristic more). No threshold reached: 0. No [marks]: no
mark (None).

A share is measured on a sample of deals, so a share near a threshold gives one mark in one run and another in
the next. `mark_held` gives each share its 95% Wilson interval (BaselineResult.interval: the games counted as
independent, a draw as half a win) and the marks the interval's two ends give: where they agree the mark holds
(another run's deals would give it too, but for a 1-in-20 chance per share); where they differ the mark is
uncertain, and says which thresholds the intervals straddle ("random: 0.43-0.58 straddles 0.5") rather than
taking a side. More deals narrow the intervals (by the square root of the games).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

Z95 = 1.959963984540054
"""The normal quantile of a two-sided 95% interval."""


class RankedGame(Protocol):
    """A game with its ranks (bot -> rank, 1 best), as tournaments.league.store.StoredGame has them."""

    @property
    def ranks(self) -> Mapping[str, int]: ...


@dataclass(frozen=True)
class BaselineResult:
    baseline: str
    games: int
    share: float | None
    """None without games."""
    mean_rank: float | None

    @property
    def interval(self) -> tuple[float, float] | None:
        """The share's 95% Wilson score interval (None without games)."""
        return None if self.share is None or not self.games else wilson(self.share, self.games)


def wilson(share: float, games: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion `share` observed over `games` trials (z: its normal quantile).
    Unlike share +- z * standard error it stays within [0, 1] and is not empty at a share of 0 or 1."""
    spread = z * z / games
    centre = (share + spread / 2) / (1 + spread)
    half = z * math.sqrt(share * (1 - share) / games + spread / (4 * games)) / (1 + spread)
    return max(0.0, min(share, centre - half)), min(1.0, max(share, centre + half))


def against_baselines(games: Sequence[RankedGame], bot: str, baselines: Sequence[str]) -> tuple[BaselineResult, ...]:
    """`bot`'s results against each of `baselines`, in their order (see the module's docstring)."""
    results = []
    for baseline in baselines:
        shared = [game for game in games if bot in game.ranks and baseline in game.ranks and bot != baseline]
        points = sum(_points(game.ranks[bot], game.ranks[baseline]) for game in shared)
        ranks = sum(game.ranks[bot] for game in shared)
        count = len(shared)
        results.append(
            BaselineResult(baseline, count, points / count if count else None, ranks / count if count else None)
        )
    return tuple(results)


def _points(mine: int, theirs: int) -> float:
    return 1.0 if mine < theirs else 0.5 if mine == theirs else 0.0


def mark_of(results: Sequence[BaselineResult], marks: Mapping[str, Sequence[tuple[float, float]]]) -> float | None:
    """The mark the results give under `marks` (None when there are no marks)."""
    if not marks:
        return None
    earned = [0.0]
    for result in results:
        share = result.share if result.share is not None else 0.0
        earned += [mark for threshold, mark in marks.get(result.baseline, ()) if share >= threshold]
    return max(earned)


@dataclass(frozen=True)
class Straddle:
    """A threshold inside a share's interval: the games cannot say on which side of it the student is."""

    baseline: str
    low: float
    high: float
    threshold: float

    def __str__(self) -> str:
        return f"{self.baseline}: {self.low:.2f}-{self.high:.2f} straddles {self.threshold:g}"


@dataclass(frozen=True)
class HeldMark:
    """The marks a student's results allow: `low` from the lower ends of its shares' intervals, `high` from the
    upper ends. Equal: the mark holds. Different: `straddles` names the thresholds that make the difference."""

    low: float
    high: float
    straddles: tuple[Straddle, ...] = ()

    @property
    def holds(self) -> bool:
        return self.low == self.high

    @property
    def mark(self) -> float | None:
        """The mark where it holds; None where it is uncertain."""
        return self.low if self.holds else None

    @property
    def note(self) -> str | None:
        """What to say of an uncertain mark ("uncertain: 40-70; random: 0.62-0.79 straddles 0.7"); None where
        it holds."""
        if self.holds:
            return None
        said = "; ".join(str(straddle) for straddle in self.straddles)
        return f"uncertain: {self.low:g}-{self.high:g}; {said}"


def mark_held(results: Sequence[BaselineResult], marks: Mapping[str, Sequence[tuple[float, float]]]) -> HeldMark | None:
    """The marks `results` allow under `marks` (None when there are no marks); see the module's docstring."""
    if not marks:
        return None
    ends = [(result, result.interval or (0.0, 0.0)) for result in results]
    low = _mark_at([(result.baseline, interval[0]) for result, interval in ends], marks)
    high = _mark_at([(result.baseline, interval[1]) for result, interval in ends], marks)
    straddles = tuple(
        Straddle(result.baseline, interval[0], interval[1], threshold)
        for result, interval in ends
        for threshold, mark in marks.get(result.baseline, ())
        if interval[0] < threshold <= interval[1] and mark > low
    )
    return HeldMark(low, high, straddles)


def _mark_at(shares: Sequence[tuple[str, float]], marks: Mapping[str, Sequence[tuple[float, float]]]) -> float:
    earned = [0.0]
    for baseline, share in shares:
        earned += [mark for threshold, mark in marks.get(baseline, ()) if share >= threshold]
    return max(earned)

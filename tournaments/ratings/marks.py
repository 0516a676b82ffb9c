"""A student's results against each baseline, and the mark they give (the league file's [marks]).

    results = against_baselines(store.games(), "ann", ("random", "heuristic"))
    mark = mark_of(results, {"heuristic": ((0.5, 60.0), (0.6, 80.0)), "random": ((0.5, 40.0),)})

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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol


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

"""What each isolation level costs (`referee bench isolation`): the same matches of SDK random bots played with
no sandbox, in the bubblewrap sandbox (full) and under a gVisor kernel per bot (kernel).

For each level:
- bot start: what starting and stopping one bot costs (bench_reuse's start per game over the seats: matches of
  one game each against one match that keeps its processes);
- referee per decision: the median time between two consecutive actions of a match (referee_decisions_us: the
  thaw and freeze of a frozen bot included);
- games per second as leagues play them: duplicate deals with fresh processes for every seat rotation.
Ratios are to the level with no sandbox; each figure is the median of interleaved repeats.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from referee.isolation.sandbox import Isolation

from .protocol import bench_reuse, referee_decisions_us

LEVELS = (Isolation.NONE, Isolation.FULL, Isolation.KERNEL)
"""The levels a run can ask for (partial is what a machine gives, not a choice)."""


@dataclass(frozen=True)
class LevelFigures:
    level: Isolation
    start_ms: float
    """Starting and stopping one bot."""
    decision_us: float
    """Median referee time per decision."""
    games_per_s: float
    """Games per second with fresh processes for every seat rotation (as leagues play)."""
    starts_per_game: float


def match_isolation(level: Isolation) -> dict[str, bool]:
    """The MatchSpec fields that ask for `level` (sandbox, kernel)."""
    return {"sandbox": level is not Isolation.NONE, "kernel": level is Isolation.KERNEL}


def bench_level(level: Isolation, game: str, players: int, games: int, seed: int) -> LevelFigures:
    chosen = match_isolation(level)
    reuse = bench_reuse(game, players, games, seed, **chosen)
    decisions = referee_decisions_us(game, players, games, seed, **chosen)
    return LevelFigures(
        level=level,
        start_ms=reuse.start_s * 1000 / players,
        decision_us=statistics.median(decisions),
        games_per_s=reuse.rotated.games_per_s,
        starts_per_game=reuse.rotated.starts_per_game,
    )


def bench_isolation(
    levels: Sequence[Isolation] = LEVELS,
    game: str = "scout",
    players: int = 4,
    games: int = 12,
    seed: int = 0,
    repeats: int = 3,
) -> list[LevelFigures]:
    """The figures of each level in `levels`, in order: each the median of `repeats` runs, the levels
    interleaved within each repeat (the machine's load changes, and weighs on every level alike)."""
    runs = [[bench_level(level, game, players, games, seed + repeat) for level in levels] for repeat in range(repeats)]
    return [_median([run[index] for run in runs]) for index in range(len(levels))]


def _median(figures: list[LevelFigures]) -> LevelFigures:
    return LevelFigures(
        level=figures[0].level,
        start_ms=statistics.median(figure.start_ms for figure in figures),
        decision_us=statistics.median(figure.decision_us for figure in figures),
        games_per_s=statistics.median(figure.games_per_s for figure in figures),
        starts_per_game=statistics.median(figure.starts_per_game for figure in figures),
    )

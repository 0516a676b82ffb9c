"""What each isolation level costs (`referee bench isolation`): the same match of SDK random bots played with no
sandbox, in the bubblewrap sandbox (full) and under a gVisor kernel per bot (kernel).

The match is played as leagues play: duplicate deals, fresh bot processes for every seat rotation. From its
wall time and its games' replays, for each level:
- table start: what starting a rotation's bots (all at once, each to its hello) and stopping them costs: the
  match's wall time less its games' own, over its rotations;
- referee per decision: the median time between two consecutive actions of a game (from the replays: the
  thaw and freeze of a frozen bot included);
- games per second: the match's games over its wall time.
Each figure is the median of interleaved repeats (the machine's load changes, and weighs on every level alike);
ratios are to no sandbox.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass

from referee import replay
from referee.botspec import resolve_bot, unique_names
from referee.deals import DealKey
from referee.isolation.sandbox import Isolation
from referee.match import run_match
from referee.records import Limits, MatchSpec
from referee.seating import first_games

LEVELS = (Isolation.NONE, Isolation.FULL, Isolation.KERNEL)
"""The levels a run can ask for (partial is what a machine gives, not a choice)."""


@dataclass(frozen=True)
class LevelFigures:
    level: Isolation
    table_start_ms: float
    """Starting and stopping one rotation's bots."""
    decision_us: float
    """Median referee time per decision."""
    games_per_s: float


def match_isolation(level: Isolation) -> dict[str, bool]:
    """The MatchSpec fields that ask for `level` (sandbox, kernel)."""
    return {"sandbox": level is not Isolation.NONE, "kernel": level is Isolation.KERNEL}


def bench_level(level: Isolation, game: str, players: int, games: int, seed: int) -> LevelFigures:
    """One match of `games` games of random bots at `level`."""
    bots = unique_names([resolve_bot("random", game) for _ in range(players)])
    with tempfile.TemporaryDirectory(prefix="referee-bench-") as replay_dir:
        spec = MatchSpec(
            f"bench-{level.value}",
            game,
            bots,
            first_games(players, games, DealKey.from_seed(seed)),
            limits=Limits(move_time_ms=5000),
            replay_dir=replay_dir,
            sandbox=match_isolation(level)["sandbox"],
            kernel=match_isolation(level)["kernel"],
        )
        started = time.perf_counter()
        record = run_match(spec)
        seconds = time.perf_counter() - started
        played_s, gaps_us = 0.0, []
        for game_record in record.games:
            applied = [move["at_ms"] for move in replay.load(str(game_record.replay_path))["actions"]]
            played_s += applied[-1] / 1000
            gaps_us += [(now - before) * 1000 for before, now in zip([0.0, *applied], applied, strict=False)]
    rotations = record.bot_starts / players
    return LevelFigures(
        level=level,
        table_start_ms=(seconds - played_s) * 1000 / rotations,
        decision_us=statistics.median(gaps_us),
        games_per_s=len(record.games) / seconds,
    )


def bench_isolation(
    levels: Sequence[Isolation] = LEVELS,
    game: str = "scout",
    players: int = 4,
    games: int = 12,
    seed: int = 0,
    repeats: int = 3,
) -> list[LevelFigures]:
    """The figures of each level in `levels`, in order, each the median of `repeats` runs, the levels
    interleaved within each repeat."""
    runs = [[bench_level(level, game, players, games, seed + repeat) for level in levels] for repeat in range(repeats)]
    return [_median([run[index] for run in runs]) for index in range(len(levels))]


def _median(figures: list[LevelFigures]) -> LevelFigures:
    return LevelFigures(
        level=figures[0].level,
        table_start_ms=statistics.median(figure.table_start_ms for figure in figures),
        decision_us=statistics.median(figure.decision_us for figure in figures),
        games_per_s=statistics.median(figure.games_per_s for figure in figures),
    )

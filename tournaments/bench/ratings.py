"""`referee bench ratings`: the rating paths of `tournament table` and `tournament rate` at league sizes.

Synthetic games (bots of evenly spread strengths at random tables, ranked by strength plus noise, ties when
two performances round alike) go into a league store through LeagueStore.add_game, as a league run writes
them, and into a JSON lines file as `tournament rate` reads one. Timed: the table path (the store's outcome
counts, their tallies, the ratings with their bootstrap) and the rate path (reading the file, tallying, the
same ratings); and the live leader line's refit, which should cost the same at every size.
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from referee.records import GameRecord, SeatTiming

from ..league.schedule import ScheduledMatch
from ..league.store import LeagueStore
from ..ratings.elo import rate_tallies
from ..ratings.results_file import read_results
from ..ratings.tallies import GameTallies

_MATCH_ID = "bench-ratings"
_NOISE = 1.0
_STRENGTH_STEP = 0.15
"""Natural-log strength between neighbouring bots (about 65 Elo)."""
_TIE_GRAIN = 0.05


@dataclass(frozen=True)
class StoreContents:
    games: int
    bots: int
    seats: tuple[int, ...]
    outcomes: int
    """Distinct outcomes (bots and their ranks) among the games."""


@dataclass(frozen=True)
class RatingsTiming:
    contents: StoreContents
    bootstrap: int
    table_s: float
    """Store -> outcome counts -> tallies -> ratings with the bootstrap."""
    rate_s: float
    """JSON lines file -> games -> tallies -> ratings with the bootstrap."""
    leader_s: float
    """One refit of the live leader line on its tallies (no bootstrap)."""
    leader: str
    top_elo: float


def synthetic_games(games: int, bots: int, seats: int, seed: int) -> Iterator[dict[str, int]]:
    """`games` games at tables of `seats` of `bots` bots: bot{i} is stronger than bot{i-1}."""
    rng = random.Random(seed)
    names = [f"bot{number:02d}" for number in range(bots)]
    strength = {name: number * _STRENGTH_STEP for number, name in enumerate(names)}
    for _ in range(games):
        table = rng.sample(names, seats)
        performance = {bot: round((strength[bot] + rng.gauss(0, _NOISE)) / _TIE_GRAIN) for bot in table}
        yield {bot: 1 + sum(other > mine for other in performance.values()) for bot, mine in performance.items()}


def fill_store(store: LeagueStore, games: Iterator[dict[str, int]]) -> int:
    """Add `games` to the store as finished games of one match (with no faults); returns how many."""
    store.add_matches([ScheduledMatch(_MATCH_ID, (), ())])
    start = store.game_count()
    added = 0
    for index, ranks in enumerate(games, start=start):
        seats = tuple(ranks)
        store.add_game(
            GameRecord(
                match_id=_MATCH_ID,
                index=index,
                game="scout",
                seed=index,
                seats=seats,
                ranks=tuple(ranks.values()),
                scores=tuple(len(seats) - rank for rank in ranks.values()),
                faults=(),
                timings=tuple(SeatTiming(decisions=1, mean_ms=1.0, max_ms=1.0) for _ in seats),
            )
        )
        added += 1
    return added


def write_results(path: Path, store: LeagueStore) -> None:
    """The store's games as JSON lines, one game a line, as `tournament rate` reads them."""
    with path.open("w", encoding="utf-8") as file:
        for outcome, count in store.outcome_counts().items():
            line = json.dumps({"ranks": dict(outcome)}) + "\n"
            file.write(line * count)


def bench_ratings(store: LeagueStore, bootstrap: int, seed: int, work_dir: Path | None = None) -> RatingsTiming:
    """Time the table and rate paths over the games `store` holds (the rate path reads them from a file)."""
    started = time.perf_counter()
    tallies = GameTallies.of_counts(store.outcome_counts())
    table = rate_tallies(tallies, bootstrap=bootstrap, seed=seed)
    table_s = time.perf_counter() - started
    with tempfile.TemporaryDirectory(dir=work_dir) as folder:
        path = Path(folder) / "games.jsonl"
        write_results(path, store)
        started = time.perf_counter()
        rate_tallies(GameTallies.of(read_results(path)), bootstrap=bootstrap, seed=seed)
        rate_s = time.perf_counter() - started
    started = time.perf_counter()
    leader = rate_tallies(tallies, bootstrap=0).bots[0]
    leader_s = time.perf_counter() - started
    contents = StoreContents(
        games=tallies.games, bots=len(table.bots), seats=table.seats, outcomes=len(tallies.outcomes())
    )
    return RatingsTiming(contents, bootstrap, table_s, rate_s, leader_s, leader.bot, leader.elo)

"""League throughput: the same league played from an empty store with each concurrency, in games per second.

The time counted is the whole run as `referee tournament run` does it (worker start-up, bot processes,
games, one commit per game), so the ratio between concurrencies is what an organiser gains from more cores.
Each run also reports the CPU time of this process and all its descendants (workers, bots) over the wall
time: the cores the run actually got, which tells a busy machine from a run that cannot use more cores.
"""

from __future__ import annotations

import resource
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..league.executors import LocalExecutor
from ..league.league_file import load_league
from ..league.runner import plan_league, play_league
from ..league.store import LeagueStore

BENCH_LEAGUE = Path(__file__).resolve().parents[1] / "examples" / "bench.toml"


@dataclass(frozen=True)
class LeagueBenchRun:
    concurrency: int
    games: int
    seconds: float
    cpu_seconds: float

    @property
    def games_per_second(self) -> float:
        return self.games / self.seconds

    @property
    def cores_busy(self) -> float:
        return self.cpu_seconds / self.seconds


@dataclass(frozen=True)
class LeagueBenchResult:
    league: str
    runs: tuple[LeagueBenchRun, ...]

    def speedup(self, run: LeagueBenchRun) -> float:
        """Games/s of `run` over those of the first run."""
        return run.games_per_second / self.runs[0].games_per_second


def bench_league(
    league_path: Path | str = BENCH_LEAGUE,
    concurrencies: Sequence[int] = (1, 2),
    *,
    pinned: bool = True,
    sandbox: bool = True,
) -> LeagueBenchResult:
    """Play the whole league once per concurrency, each time into a fresh temporary store, with the workers
    placed as `referee tournament run` places them (pinned to their CPU shares unless `pinned` is False)."""
    league = load_league(league_path)
    runs = []
    for concurrency in concurrencies:
        with (
            tempfile.TemporaryDirectory(prefix="bench-league-") as folder,
            LeagueStore(Path(folder) / "bench.sqlite") as store,
        ):
            plan = plan_league(league, store, sandbox=sandbox)
            cpu_before = _cpu_seconds()
            started = time.perf_counter()
            games = play_league(plan, store, LocalExecutor(concurrency, pinned=pinned))
            elapsed = time.perf_counter() - started
            runs.append(LeagueBenchRun(concurrency, games, elapsed, _cpu_seconds() - cpu_before))
    return LeagueBenchResult(league.name, tuple(runs))


def _cpu_seconds() -> float:
    """User and system time of this process and of every descendant that has ended (workers, bots)."""
    own, ended = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + ended.ru_utime + ended.ru_stime

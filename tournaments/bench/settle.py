"""`referee bench settle`: the settling scheduler against a round robin, on simulated leagues of known strengths.

A simulated league: `bots` bots whose true Elo are drawn from a normal distribution (sd `spread`), at tables
of `seats`; a game's finishing order is Plackett-Luce (the winner drawn in proportion to 10^(Elo/400), then
the next among the rest, ...), which at two seats is exactly the Elo model. A match is `seats` games of one
table (as a league's smallest balanced match plays each deal once per rotation).

Adaptive: a floor first (a balanced sample of tables, tournaments.league.schedule.balanced_sample, until
every bot has about `floor` games), then the settling rounds of `tournament run --until-settled`: the table
rated with its bootstrap, judged (tournaments.ratings.settling), the next round's tables chosen
(tournaments.ratings.allocation), until settled or `budget` games.

Round robin: every table (at 2 seats every pair; above, a balanced sample of tables) in turn, again and
again, in a shuffled order. It is compared at equal games (the adaptive run's) and at equal correctness: in
each league, the games after which each schedule's order is first as right as the adaptive run's at its stop
(the adaptive after its rounds, the round robin measured CHECKPOINTS times per adaptive run's games, up to
MAX_MULTIPLE times as many); the ratio of the two, round robin over adaptive, is reported per league.

Order correctness: Kendall tau between the table's order and the true one (1: the same order), over all
pairs and over the pairs whose true difference is beyond the resolution (those the settled table claims to
order; a pair closer than that is a tie to it, and a coin flip to any schedule of a feasible size), and
whether the top `top` bots are the true top `top` as a set. Equal correctness is found for both taus.
Coverage: the share of bots whose 95% interval holds its true Elo (centred, as the table's Elo is mean 0),
and of the adjacent pairs whose 95% interval of the difference holds the true difference (the intervals
settling decides by), for the adaptive table at its stop and for the round robin at equal games: a
difference is the bias of choosing the games, and stopping, by the results.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import fmean

from ..league.schedule import balanced_sample
from ..ratings.allocation import next_tables
from ..ratings.elo import Ratings, rate_tallies
from ..ratings.settling import DEFAULT_RULE, SettleRule, settlement
from ..ratings.tallies import GameTallies

Table = tuple[str, ...]
MAX_MULTIPLE = 8
"""The round robin plays up to this many times the adaptive run's games, looking for equal correctness."""
CHECKPOINTS = 40
"""The round robin's order is measured this many times per adaptive run's games."""


@dataclass(frozen=True)
class SettleBench:
    bots: int
    seats: int
    repetitions: int = 3
    spread: float = 150.0
    """Standard deviation of the true Elo."""
    floor: int = 20
    """Games every bot plays before the settling rounds (about)."""
    budget_per_bot: int = 400
    """The adaptive run stops at this many games per bot if it has not settled."""
    bootstrap: int = 200
    rule: SettleRule = DEFAULT_RULE
    top: int = 3
    seed: int = 0


@dataclass(frozen=True)
class RunResult:
    games: int
    settled: bool
    tau: float
    tau_beyond: float
    """Kendall tau over the pairs whose true difference is beyond the resolution."""
    top_right: bool
    coverage: float
    pair_coverage: float
    """Share of adjacent pairs whose 95% interval of the difference holds the true difference."""


@dataclass(frozen=True)
class SettleComparison:
    bench: SettleBench
    adaptive: tuple[RunResult, ...]
    round_robin: tuple[RunResult, ...]
    """At each adaptive run's games."""
    equal_correctness: tuple[float, ...]
    """Per league: round robin games / adaptive games, each the first at which its tau is the adaptive run's
    at its stop (inf: not by MAX_MULTIPLE times)."""
    equal_correctness_beyond: tuple[float, ...]
    """The same for the tau of the pairs beyond the resolution."""

    @property
    def adaptive_games(self) -> float:
        return fmean(run.games for run in self.adaptive)


def compare(bench: SettleBench, on_repetition: Callable[[int], None] | None = None) -> SettleComparison:
    adaptive, robin, ratios, ratios_beyond = [], [], [], []
    for repetition in range(bench.repetitions):
        rng = random.Random(f"settle-bench/{bench.seed}/{bench.bots}/{bench.seats}/{repetition}")
        truth = _strengths(bench, rng)
        run, path = _adaptive(bench, truth, rng)
        adaptive.append(run)
        at_equal, robin_path = _round_robin(bench, truth, rng, run.games)
        robin.append(at_equal)
        ratios.append(_ratio(path, robin_path, 0, run.tau))
        ratios_beyond.append(_ratio(path, robin_path, 1, run.tau_beyond))
        if on_repetition is not None:
            on_repetition(repetition)
    return SettleComparison(bench, tuple(adaptive), tuple(robin), tuple(ratios), tuple(ratios_beyond))


Path = list[tuple[int, float, float]]
"""(games, tau, tau beyond the resolution) after each round (adaptive) or checkpoint (round robin)."""


def _ratio(adaptive: Path, robin: Path, column: int, target: float) -> float:
    """Round robin games / adaptive games, each the first at which the order is as right as `target` (the
    adaptive run's at its stop); inf when the round robin does not get there by MAX_MULTIPLE times."""
    first = next(point[0] for point in adaptive if point[column + 1] >= target)
    reached = next((point[0] for point in robin if point[column + 1] >= target), None)
    return math.inf if reached is None else reached / first


def _strengths(bench: SettleBench, rng: random.Random) -> dict[str, float]:
    return {f"bot{number:03d}": rng.gauss(0, bench.spread) for number in range(bench.bots)}


def plackett_luce(table: Sequence[str], truth: dict[str, float], rng: random.Random) -> dict[str, int]:
    """One finishing order of `table`: each place drawn among the bots left in proportion to 10^(Elo/400)."""
    left = list(table)
    ranks = {}
    for place in range(1, len(table) + 1):
        weights = [10 ** (truth[bot] / 400) for bot in left]
        winner = rng.choices(left, weights)[0]
        ranks[winner] = place
        left.remove(winner)
    return ranks


def _play(
    tallies: GameTallies, tables: Sequence[Table], bench: SettleBench, truth: dict[str, float], rng: random.Random
) -> int:
    for table in tables:
        for _ in range(bench.seats):
            tallies.add(plackett_luce(table, truth, rng))
    return len(tables) * bench.seats


def _adaptive(bench: SettleBench, truth: dict[str, float], rng: random.Random) -> tuple[RunResult, Path]:
    names = sorted(truth)
    tallies = GameTallies()
    count = max(1, math.ceil(bench.bots * bench.floor / bench.seats / bench.seats))
    count = min(count, math.comb(bench.bots, bench.seats))
    games = _play(tallies, balanced_sample(names, bench.seats, count, rng), bench, truth, rng)
    budget = bench.budget_per_bot * bench.bots
    path: Path = []
    while True:
        ratings = rate_tallies(tallies, bench.bootstrap)
        verdict = settlement(ratings, bench.rule)
        assert verdict is not None
        path.append((games, kendall_tau(ratings, truth), kendall_tau(ratings, truth, bench.rule.resolution)))
        room = (budget - games) // bench.seats
        tables = next_tables(ratings, verdict, bench.seats, games_per_table=bench.seats, rng=rng)[:room]
        if verdict.settled or not tables:
            return _result(ratings, truth, games, verdict.settled, bench), path
        games += _play(tallies, tables, bench, truth, rng)


def _round_robin(
    bench: SettleBench, truth: dict[str, float], rng: random.Random, equal_games: int
) -> tuple[RunResult, Path]:
    """The round robin at `equal_games` (with its bootstrap), and its path to MAX_MULTIPLE times as many."""
    names = sorted(truth)
    total = math.comb(bench.bots, bench.seats)
    cycle = (
        list(itertools.combinations(names, bench.seats))
        if total <= 5000
        else balanced_sample(names, bench.seats, min(total, 50 * bench.bots), rng)
    )
    rng.shuffle(cycle)
    step = max(1, round(equal_games / CHECKPOINTS / bench.seats)) * bench.seats
    target = max(bench.seats, round(equal_games / bench.seats) * bench.seats)
    tallies = GameTallies()
    games, position, at_equal = 0, 0, None
    path: Path = []
    while games < MAX_MULTIPLE * equal_games or at_equal is None:
        games += _play(tallies, [cycle[position % len(cycle)]], bench, truth, rng)
        position += 1
        if games % step == 0:
            table = rate_tallies(tallies, 0)
            path.append((games, kendall_tau(table, truth), kendall_tau(table, truth, bench.rule.resolution)))
        if games == target:
            at_equal = _result(rate_tallies(tallies, bench.bootstrap), truth, games, False, bench)
    assert at_equal is not None
    return at_equal, path


def _result(ratings: Ratings, truth: dict[str, float], games: int, settled: bool, bench: SettleBench) -> RunResult:
    top = bench.top
    order = [bot.bot for bot in ratings.bots]
    true_order = sorted(truth, key=lambda bot: -truth[bot])
    mean = fmean(truth.values())
    covered = [bot.ci95[0] <= truth[bot.bot] - mean <= bot.ci95[1] for bot in ratings.bots if bot.ci95 is not None]
    pairs = [
        upper.diff_next_ci95[0] <= truth[upper.bot] - truth[lower.bot] <= upper.diff_next_ci95[1]
        for upper, lower in zip(ratings.bots, ratings.bots[1:], strict=False)
        if upper.diff_next_ci95 is not None
    ]
    return RunResult(
        games=games,
        settled=settled,
        tau=kendall_tau(ratings, truth),
        tau_beyond=kendall_tau(ratings, truth, bench.rule.resolution),
        top_right=set(order[:top]) == set(true_order[:top]),
        coverage=fmean(covered) if covered else math.nan,
        pair_coverage=fmean(pairs) if pairs else math.nan,
    )


def kendall_tau(ratings: Ratings, truth: dict[str, float], beyond: float = 0.0) -> float:
    """Kendall's tau between the table's Elo and the true Elo: (concordant - discordant) / pairs, over the
    pairs whose true difference is more than `beyond`."""
    elo = {bot.bot: bot.elo for bot in ratings.bots}
    pairs = [(a, b) for a, b in itertools.combinations(sorted(elo), 2) if abs(truth[a] - truth[b]) > beyond]
    if not pairs:
        return 1.0
    agree = sum(_sign((elo[a] - elo[b]) * (truth[a] - truth[b])) for a, b in pairs)
    return agree / len(pairs)


def _sign(value: float) -> int:
    return (value > 0) - (value < 0)

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
again, in a shuffled order. It is compared at equal games (the adaptive run's) and at equal correctness:
the games after which its mean Kendall tau over the repetitions reaches the adaptive runs' mean, found on a
ladder of multiples of the adaptive games and interpolated between the two rungs around it.

Order correctness: Kendall tau between the table's order and the true one (1: the same order), and whether
the top `top` bots are the true top `top` as a set. Coverage: the share of bots whose 95% interval holds its
true Elo (centred, as the table's Elo is mean 0), for the adaptive table at its stop and for the round robin
at equal games: a difference would be the bias of stopping when the table looks settled.
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
LADDER = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)
"""Multiples of the adaptive games at which the round robin's order is measured."""


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
    top_right: bool
    coverage: float


@dataclass(frozen=True)
class SettleComparison:
    bench: SettleBench
    adaptive: tuple[RunResult, ...]
    round_robin: tuple[RunResult, ...]
    """At each adaptive run's games."""
    ladder_tau: tuple[float, ...]
    """The round robin's mean tau at each multiple of LADDER."""
    equal_correctness: float | None
    """Round robin games / adaptive games at equal mean tau (None: not reached at the ladder's top)."""

    @property
    def adaptive_games(self) -> float:
        return fmean(run.games for run in self.adaptive)


def compare(bench: SettleBench, on_repetition: Callable[[int], None] | None = None) -> SettleComparison:
    adaptive, robin, curves = [], [], []
    for repetition in range(bench.repetitions):
        rng = random.Random(f"settle-bench/{bench.seed}/{bench.bots}/{bench.seats}/{repetition}")
        truth = _strengths(bench, rng)
        run = _adaptive(bench, truth, rng)
        adaptive.append(run)
        at_equal, curve = _round_robin(bench, truth, rng, run.games)
        robin.append(at_equal)
        curves.append(curve)
        if on_repetition is not None:
            on_repetition(repetition)
    ladder_tau = tuple(fmean(curve[rung] for curve in curves) for rung in range(len(LADDER)))
    target = fmean(run.tau for run in adaptive)
    return SettleComparison(bench, tuple(adaptive), tuple(robin), ladder_tau, _crossing(ladder_tau, target))


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


def _adaptive(bench: SettleBench, truth: dict[str, float], rng: random.Random) -> RunResult:
    names = sorted(truth)
    tallies = GameTallies()
    count = max(1, math.ceil(bench.bots * bench.floor / bench.seats / bench.seats))
    count = min(count, math.comb(bench.bots, bench.seats))
    games = _play(tallies, balanced_sample(names, bench.seats, count, rng), bench, truth, rng)
    budget = bench.budget_per_bot * bench.bots
    while True:
        ratings = rate_tallies(tallies, bench.bootstrap)
        verdict = settlement(ratings, bench.rule)
        assert verdict is not None
        room = (budget - games) // bench.seats
        if verdict.settled or room < 1:
            return _result(ratings, truth, games, verdict.settled, bench.top)
        tables = next_tables(ratings, verdict, bench.seats, games_per_table=bench.seats)[:room]
        if not tables:
            return _result(ratings, truth, games, False, bench.top)
        games += _play(tallies, tables, bench, truth, rng)


def _round_robin(
    bench: SettleBench, truth: dict[str, float], rng: random.Random, equal_games: int
) -> tuple[RunResult, list[float]]:
    """The round robin at `equal_games` (with its bootstrap) and its tau at every multiple of LADDER."""
    names = sorted(truth)
    total = math.comb(bench.bots, bench.seats)
    cycle = (
        list(itertools.combinations(names, bench.seats))
        if total <= 5000
        else balanced_sample(names, bench.seats, min(total, 50 * bench.bots), rng)
    )
    rng.shuffle(cycle)
    checkpoints = sorted({max(bench.seats, round(rung * equal_games / bench.seats) * bench.seats) for rung in LADDER})
    marks = {checkpoint: 0.0 for checkpoint in checkpoints}
    tallies = GameTallies()
    games, position, at_equal = 0, 0, None
    target = max(bench.seats, round(equal_games / bench.seats) * bench.seats)
    while games < checkpoints[-1]:
        games += _play(tallies, [cycle[position % len(cycle)]], bench, truth, rng)
        position += 1
        if games in marks:
            marks[games] = kendall_tau(rate_tallies(tallies, 0), truth)
        if games == target:
            at_equal = _result(rate_tallies(tallies, bench.bootstrap), truth, games, False, bench.top)
    assert at_equal is not None
    by_rung = {rung: max(bench.seats, round(rung * equal_games / bench.seats) * bench.seats) for rung in LADDER}
    return at_equal, [marks[by_rung[rung]] for rung in LADDER]


def _result(ratings: Ratings, truth: dict[str, float], games: int, settled: bool, top: int) -> RunResult:
    order = [bot.bot for bot in ratings.bots]
    true_order = sorted(truth, key=lambda bot: -truth[bot])
    mean = fmean(truth.values())
    covered = [bot.ci95[0] <= truth[bot.bot] - mean <= bot.ci95[1] for bot in ratings.bots if bot.ci95 is not None]
    return RunResult(
        games=games,
        settled=settled,
        tau=kendall_tau(ratings, truth),
        top_right=set(order[:top]) == set(true_order[:top]),
        coverage=fmean(covered) if covered else math.nan,
    )


def kendall_tau(ratings: Ratings, truth: dict[str, float]) -> float:
    """Kendall's tau between the table's Elo and the true Elo: (concordant - discordant) / pairs."""
    elo = {bot.bot: bot.elo for bot in ratings.bots}
    pairs = list(itertools.combinations(sorted(elo), 2))
    if not pairs:
        return 1.0
    agree = sum(_sign((elo[a] - elo[b]) * (truth[a] - truth[b])) for a, b in pairs)
    return agree / len(pairs)


def _crossing(ladder_tau: Sequence[float], target: float) -> float | None:
    """The multiple of the adaptive games at which the round robin's mean tau reaches `target` (interpolated)."""
    previous_rung, previous_tau = 0.0, -1.0
    for rung, tau in zip(LADDER, ladder_tau, strict=True):
        if tau >= target:
            if previous_tau < -0.5:
                return rung
            share = (target - previous_tau) / (tau - previous_tau) if tau > previous_tau else 1.0
            return previous_rung + share * (rung - previous_rung)
        previous_rung, previous_tau = rung, tau
    return None


def _sign(value: float) -> int:
    return (value > 0) - (value < 0)

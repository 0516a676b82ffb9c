"""Elo ratings of game results: maximum-likelihood Bradley-Terry, bootstrap intervals, scores and a crosstable.

Input: games, each a mapping bot name -> rank (1 best, equal ranks tie), e.g. from a league store or a JSON
lines file. A game of k seats is split into its k*(k-1)/2 pairwise results by rank: the better rank wins the
pair, equal ranks draw (half a point each). Elo is the maximum-likelihood fit of the score model
(expected score = 1 / (1 + 10^(-difference/400)), draws as half points), mean 0 in each pool.

    ratings = rate(games, bootstrap=1000, seed=0)
    for bot in ratings.bots: print(bot.bot, bot.elo, bot.ci95, bot.score)

Degenerate cases, never an exception and never an infinity:
- A pool is the set of bots linked by games; Elo compares only within a pool (mean 0 in each). `pool` numbers
  them from 1, largest first.
- Within a pool the maximum may not exist: the pool falls into groups, each strongly connected by "took points
  from", and some group never lost a point to the rest of the pool (its ratings would run off to +infinity) or
  never took one (-infinity). Then every pairing between two different groups gets `prior_draws` virtual draws
  (BayesElo's prior, applied only where it is needed), which makes the ratings finite, and each bot of such a
  pool is marked: AT_LEAST (its group is unbounded above: the value shown is a floor), AT_MOST (unbounded
  below: a ceiling) or REGULARISED (a group between those: finite only because of the prior).

Intervals come from a bootstrap over games: whole games are resampled, so the pairwise results of one table
stay together (they are not independent). The likelihood of superiority of a bot over the next one in the
table is the share of resamples in which it rates higher.
"""

from __future__ import annotations

import enum
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .bradley_terry import DEFAULT_TOLERANCE, ELO_PER_NAT, Pairing, components, fit, strong_components

DEFAULT_BOOTSTRAP = 1000
DEFAULT_PRIOR_DRAWS = 1.0
_BOOTSTRAP_TOLERANCE = 1e-4
"""Natural-log units (0.02 Elo): far below the spread of the resamples."""


class RatingInputError(ValueError):
    """A game that cannot be rated (fewer than two bots, a rank that is not a positive integer)."""


class Estimate(enum.StrEnum):
    MLE = "mle"
    """The maximum-likelihood Elo."""
    AT_LEAST = "at_least"
    """The maximum is +infinity (its group never lost a point to the rest of the pool); the value is a floor."""
    AT_MOST = "at_most"
    """The maximum is -infinity (its group never took a point from the rest of the pool); the value is a ceiling."""
    REGULARISED = "regularised"
    """The pool has no finite maximum; this bot's value is finite only through the prior draws."""


@dataclass(frozen=True)
class PairRecord:
    """Pairwise results of one bot against another (each game they shared counts once)."""

    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        return self.wins + self.draws / 2

    @property
    def score(self) -> float:
        """Share of the points, 0..1 (0.5 when they never met)."""
        return self.points / self.games if self.games else 0.5


@dataclass(frozen=True)
class BotRating:
    bot: str
    elo: float
    estimate: Estimate
    ci95: tuple[float, float] | None
    """2.5% and 97.5% bootstrap quantiles of the Elo; None without a bootstrap."""
    pool: int
    """Which pool (bots linked by games), numbered from 1, the largest first."""
    games: int
    pairings: int
    """Pairwise results: a game at k seats gives each of its bots k - 1."""
    points: float
    wins: int
    draws: int
    losses: int
    """Wins, draws and losses count two-seat games only."""
    mean_rank: float
    los_next: float | None
    """Likelihood (0..1) that this bot is stronger than the next one in the table (same pool), from the bootstrap."""

    @property
    def score(self) -> float:
        """Share of the pairwise points, 0..1."""
        return self.points / self.pairings if self.pairings else 0.5

    @property
    def error(self) -> float | None:
        """Half the width of the 95% interval (the "+/-" of a table)."""
        return None if self.ci95 is None else (self.ci95[1] - self.ci95[0]) / 2


@dataclass(frozen=True)
class Ratings:
    bots: tuple[BotRating, ...]
    """Table order: pool by pool (largest first), strongest first within a pool."""
    crosstable: Mapping[tuple[str, str], PairRecord] = field(default_factory=dict)
    """(bot, opponent) -> results of bot against opponent, for every two bots that met."""
    pools: int = 1
    seats: tuple[int, ...] = ()
    """The table sizes of the games."""
    bootstrap: int = 0
    seed: int = 0
    prior_draws: float = DEFAULT_PRIOR_DRAWS

    @property
    def two_seat(self) -> bool:
        """True if every game had two seats (then wins/draws/losses describe all of them)."""
        return self.seats == (2,)

    @property
    def regularised(self) -> bool:
        return any(bot.estimate is not Estimate.MLE for bot in self.bots)

    def record(self, bot: str, opponent: str) -> PairRecord:
        return self.crosstable.get((bot, opponent), PairRecord())


@dataclass(frozen=True)
class _Tallies:
    """The games reduced to what the fit and the table need, bots numbered in name order."""

    names: list[str]
    pairs: list[tuple[int, int]]
    outcomes: list[tuple[tuple[int, float], ...]]
    """Distinct game outcomes: (pair index, points of the pair's first bot) for each pair at the table."""
    outcome_of_game: list[int]


def rate(
    games: Iterable[Mapping[str, int]],
    bootstrap: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
    prior_draws: float = DEFAULT_PRIOR_DRAWS,
) -> Ratings:
    """Rate games (bot name -> rank). `bootstrap` resamples for the intervals and LOS (0: none), seeded."""
    if prior_draws <= 0:
        raise RatingInputError(f"prior_draws must be positive, got {prior_draws}")
    checked = [_checked(game, number) for number, game in enumerate(games, start=1)]
    if not checked:
        return Ratings(bots=(), bootstrap=bootstrap, seed=seed, prior_draws=prior_draws)
    tallies = _tally(checked)
    counts = Counter(tallies.outcome_of_game)
    pairings = _pairings(tallies, counts)
    pools = components(len(tallies.names), pairings)
    strengths = _regularised_fit(pools, pairings, prior_draws)
    estimates = _estimates(pools, pairings)
    samples = _bootstrap(tallies, pools, strengths, bootstrap, seed, prior_draws)
    order = _table_order(pools, strengths, tallies.names)
    return Ratings(
        bots=_bot_ratings(checked, tallies, pools, strengths, estimates, samples, order),
        crosstable=_crosstable(checked),
        pools=len(pools),
        seats=tuple(sorted({len(game) for game in checked})),
        bootstrap=bootstrap,
        seed=seed,
        prior_draws=prior_draws,
    )


def _checked(game: Mapping[str, int], number: int) -> dict[str, int]:
    if len(game) < 2:
        raise RatingInputError(f"game {number}: a game needs at least two bots, got {len(game)}")
    for bot, rank in game.items():
        if not isinstance(bot, str) or not bot:
            raise RatingInputError(f"game {number}: bot names must be non-empty strings, got {bot!r}")
        if type(rank) is not int or rank < 1:
            raise RatingInputError(f"game {number}: the rank of {bot!r} must be a positive integer, got {rank!r}")
    return dict(game)


def _tally(games: list[dict[str, int]]) -> _Tallies:
    names = sorted({bot for game in games for bot in game})
    index = {name: number for number, name in enumerate(names)}
    pair_index: dict[tuple[int, int], int] = {}
    outcome_index: dict[tuple[tuple[int, float], ...], int] = {}
    outcome_of_game: list[int] = []
    for game in games:
        seated = sorted((index[bot], rank) for bot, rank in game.items())
        outcome = tuple(
            (pair_index.setdefault((first, second), len(pair_index)), pair_points(first_rank, second_rank))
            for position, (first, first_rank) in enumerate(seated)
            for second, second_rank in seated[position + 1 :]
        )
        outcome_of_game.append(outcome_index.setdefault(outcome, len(outcome_index)))
    return _Tallies(
        names=names,
        pairs=list(pair_index),
        outcomes=list(outcome_index),
        outcome_of_game=outcome_of_game,
    )


def pair_points(rank: int, other_rank: int) -> float:
    """Points of a bot ranked `rank` against one ranked `other_rank` at the same table: 1, 1/2 or 0."""
    return 1.0 if rank < other_rank else 0.5 if rank == other_rank else 0.0


def _pairings(tallies: _Tallies, counts: Mapping[int, int]) -> list[Pairing]:
    games = [0.0] * len(tallies.pairs)
    points = [0.0] * len(tallies.pairs)
    for outcome, count in counts.items():
        for pair, first_points in tallies.outcomes[outcome]:
            games[pair] += count
            points[pair] += count * first_points
    return [Pairing(first, second, games[pair], points[pair]) for pair, (first, second) in enumerate(tallies.pairs)]


def _regularised_fit(
    pools: list[list[int]],
    pairings: list[Pairing],
    prior_draws: float,
    start: Sequence[float] | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
) -> list[float]:
    """The fit, after adding the prior draws where a pool's maximum does not exist.

    Such a pool falls into strongly connected groups (see bradley_terry.strong_components); the prior goes to
    every pairing between two different groups, which joins them, and leaves the games within a group as they
    are. `pools` and the pairs of `pairings` are those of all the games: in a bootstrap resample a pairing may
    have no games, which can split a pool or leave a bot out; the prior then holds the pool together, so that
    every bot keeps a rating on its pool's scale.
    """
    group_of: dict[int, int] = {}
    if not all(0 < pairing.points < pairing.games for pairing in pairings):
        for pool in pools:
            parts = strong_components(pool, pairings) if len(pool) > 1 else []
            group_of.update({bot: number for number, part in enumerate(parts) for bot in part.bots})
    adjusted = [
        Pairing(pairing.first, pairing.second, pairing.games + prior_draws, pairing.points + prior_draws / 2)
        if group_of.get(pairing.first) != group_of.get(pairing.second)
        else pairing
        for pairing in pairings
    ]
    return fit(sum(len(pool) for pool in pools), adjusted, start, tolerance)


def _estimates(pools: list[list[int]], pairings: list[Pairing]) -> dict[int, Estimate]:
    estimates: dict[int, Estimate] = {}
    for pool in pools:
        parts = strong_components(pool, pairings) if len(pool) > 1 else []
        for part in parts:
            mark = _estimate_of(part.lost_to_rest, part.beat_rest) if len(parts) > 1 else Estimate.MLE
            estimates.update(dict.fromkeys(part.bots, mark))
        estimates.update({bot: Estimate.MLE for bot in pool if bot not in estimates})
    return estimates


def _estimate_of(lost_to_rest: bool, beat_rest: bool) -> Estimate:
    if not lost_to_rest:
        return Estimate.AT_LEAST
    if not beat_rest:
        return Estimate.AT_MOST
    return Estimate.REGULARISED


def _bootstrap(
    tallies: _Tallies,
    pools: list[list[int]],
    strengths: list[float],
    samples: int,
    seed: int,
    prior_draws: float,
) -> list[list[float]]:
    """Elo of every bot in each resample of whole games (same rule for the prior as the main fit)."""
    rng = random.Random(seed)
    population = tallies.outcome_of_game
    resampled: list[list[float]] = []
    for _ in range(samples):
        counts = Counter(rng.choices(population, k=len(population)))
        pairings = _pairings(tallies, counts)
        fitted = _regularised_fit(pools, pairings, prior_draws, strengths, _BOOTSTRAP_TOLERANCE)
        resampled.append([value * ELO_PER_NAT for value in fitted])
    return resampled


def _table_order(pools: list[list[int]], strengths: list[float], names: list[str]) -> list[int]:
    return [bot for pool in pools for bot in sorted(pool, key=lambda bot: (-strengths[bot], names[bot]))]


def _bot_ratings(
    games: list[dict[str, int]],
    tallies: _Tallies,
    pools: list[list[int]],
    strengths: list[float],
    estimates: dict[int, Estimate],
    samples: list[list[float]],
    order: list[int],
) -> tuple[BotRating, ...]:
    pool_of = {bot: number for number, pool in enumerate(pools) for bot in pool}
    stats = _bot_stats(games)
    rows = []
    for position, bot in enumerate(order):
        name = tallies.names[bot]
        following = order[position + 1] if position + 1 < len(order) else None
        los_next = None
        if samples and following is not None and pool_of[following] == pool_of[bot]:
            los_next = _superiority(samples, bot, following)
        bot_stats = stats[name]
        rows.append(
            BotRating(
                bot=name,
                elo=strengths[bot] * ELO_PER_NAT,
                estimate=estimates[bot],
                ci95=_interval([sample[bot] for sample in samples]) if samples else None,
                pool=pool_of[bot] + 1,
                games=bot_stats.games,
                pairings=bot_stats.pairings,
                points=bot_stats.points,
                wins=bot_stats.wins,
                draws=bot_stats.draws,
                losses=bot_stats.losses,
                mean_rank=bot_stats.mean_rank,
                los_next=los_next,
            )
        )
    return tuple(rows)


@dataclass(frozen=True)
class _BotStats:
    games: int
    pairings: int
    points: float
    wins: int
    draws: int
    losses: int
    mean_rank: float


def _bot_stats(games: list[dict[str, int]]) -> dict[str, _BotStats]:
    totals: dict[str, Counter[str]] = {}
    for game in games:
        for bot, rank in game.items():
            tally = totals.setdefault(bot, Counter())
            tally["games"] += 1
            tally["rank_sum"] += rank
            for other, other_rank in game.items():
                if other != bot:
                    tally["pairings"] += 1
                    tally["half_points"] += int(2 * pair_points(rank, other_rank))
                    if len(game) == 2:
                        tally[_two_seat_result(rank, other_rank)] += 1
    return {
        bot: _BotStats(
            games=tally["games"],
            pairings=tally["pairings"],
            points=tally["half_points"] / 2,
            wins=tally["wins"],
            draws=tally["draws"],
            losses=tally["losses"],
            mean_rank=tally["rank_sum"] / tally["games"],
        )
        for bot, tally in totals.items()
    }


def _two_seat_result(rank: int, other_rank: int) -> str:
    return "wins" if rank < other_rank else "draws" if rank == other_rank else "losses"


def _crosstable(games: list[dict[str, int]]) -> dict[tuple[str, str], PairRecord]:
    results: dict[tuple[str, str], Counter[str]] = {}
    for game in games:
        for bot, rank in game.items():
            for other, other_rank in game.items():
                if other != bot:
                    results.setdefault((bot, other), Counter())[_two_seat_result(rank, other_rank)] += 1
    return {
        pair: PairRecord(wins=tally["wins"], draws=tally["draws"], losses=tally["losses"])
        for pair, tally in sorted(results.items())
    }


def _interval(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return _quantile(ordered, 0.025), _quantile(ordered, 0.975)


def _quantile(ordered: list[float], share: float) -> float:
    """Linear interpolation between the closest ranks (numpy's default)."""
    position = share * (len(ordered) - 1)
    below = int(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def _superiority(samples: list[list[float]], bot: int, other: int) -> float:
    higher = sum(
        1.0 if sample[bot] > sample[other] else 0.5 if sample[bot] == sample[other] else 0.0 for sample in samples
    )
    return higher / len(samples)

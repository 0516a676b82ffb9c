"""Elo ratings of game results: Bradley-Terry with BayesElo's prior, bootstrap intervals, scores, a crosstable.

Input: games, each a mapping bot name -> rank (1 best, equal ranks tie), e.g. from a league store or a JSON
lines file, or their tallies (tournaments.ratings.tallies). A game of k seats is split into its k*(k-1)/2 pairwise
results by rank: the better rank wins the pair, equal ranks draw (half a point each). Elo is the fit of the
score model (expected score = 1 / (1 + 10^(-difference/400)), draws as half points), mean 0 in each pool.

    ratings = rate(games, bootstrap=1000, seed=0)
    for bot in ratings.bots: print(bot.bot, bot.elo, bot.ci95, bot.score)

The prior (BayesElo's, `prior_draws` = d, default 2): every bot brings d virtual draws, spread over the
opponents it met in proportion to the pairwise results it has with each; a pairing of n results between bots
with n_a and n_b results in all so gets d/2 * n * (1/n_a + 1/n_b) virtual draws. Where every bot has the same
number n of results, that is d virtual draws per bot and d/n per result, so each pairing's share of points s
becomes (s*n + d/2) / (n + d): 2 virtual draws move a 36-result bot's shares toward 1/2 by 2/38 (5%), and its
Elo toward 0 by a little more. Every Elo is then finite. In a round robin where every two bots met equally
often the fit orders bots by their points, so a bot that won every game is first; it is first too in the
gauntlets and uneven round robins of the tests, but a bot with a handful of games, all won, can still rate
below one that won hundreds and lost a few: the prior weighs evidence. With prior_draws=0 the Elo is the
plain maximum-likelihood value, which does not exist when a group of bots never lost (or never took) a point
against the rest of its pool: rate then raises RatingInputError.

A pool is the set of bots linked by games; Elo compares only within a pool (mean 0 in each). `pool` numbers
them from 1, largest first.

Intervals come from a bootstrap over games: whole games are resampled, so the pairwise results of one table
stay together (they are not independent). It is the Poisson bootstrap: in each resample every game is drawn
a Poisson(1) number of times (its outcome, seen c times, is drawn Poisson(c) times), which for leagues of more
than a few games is the same as drawing as many games as there are with replacement, and costs one draw per
distinct outcome instead of one per game. The virtual draws of the prior are those of the games themselves in
every resample. The likelihood of superiority of a bot over the next one in the table is the share of
resamples in which it rates higher, and the interval of their difference the 2.5% and 97.5% quantiles of the
difference over the resamples.

An anchor (as Ordo's -a/-A) fixes one bot's Elo instead of the pool's mean: `rate(games, anchor=Anchor("random",
0))` shifts the anchored bot's pool so that it rates exactly 0, in the fit and in every resample, so its
interval has no width and every other bot's interval is its distance from the anchor. Other pools keep mean 0.
Differences, LOS and the order do not change: ratings from two runs or two classes with the same anchor bot
can then be read on one scale.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from .bradley_terry import DEFAULT_TOLERANCE, ELO_PER_NAT, FloatArray, Pairing, components, fit_many, strong_components
from .resample import OutcomeResampler
from .tallies import GameTallies, Outcome, PairRecord, RatingInputError, pair_points

__all__ = [
    "DEFAULT_BOOTSTRAP",
    "DEFAULT_PRIOR_DRAWS",
    "Anchor",
    "BotRating",
    "PairRecord",
    "RatingInputError",
    "Ratings",
    "pair_points",
    "parse_anchor",
    "rate",
    "rate_tallies",
]

DEFAULT_BOOTSTRAP = 1000
DEFAULT_PRIOR_DRAWS = 2.0
"""BayesElo's default."""
_BOOTSTRAP_TOLERANCE = 1e-4
"""Natural-log units (0.02 Elo): far below the spread of the resamples."""
_CHUNK_ELEMENTS = 4_000_000
"""Resamples are drawn and fitted in chunks of about this many array elements."""
_MAX_CHUNK = 250


@dataclass(frozen=True)
class Anchor:
    """A bot whose Elo is fixed at `elo`; its pool is shifted to put it there."""

    bot: str
    elo: float = 0.0

    def __str__(self) -> str:
        return f"{self.bot}={self.elo:g}"


def parse_anchor(text: str) -> Anchor:
    """`NAME=ELO` (as `--anchor random=0`), or a bare NAME for 0; ValueError saying what is wrong."""
    name, sep, value = text.rpartition("=")
    if not sep:
        name, value = text, "0"
    if not name.strip():
        raise ValueError(f"{text!r}: give the anchored bot as NAME=ELO, e.g. random=0")
    try:
        elo = float(value)
    except ValueError:
        raise ValueError(f"{text!r}: {value!r} is not a number of Elo (NAME=ELO, e.g. random=0)") from None
    if not math.isfinite(elo):
        raise ValueError(f"{text!r}: the anchor's Elo must be a finite number")
    return Anchor(name.strip(), elo)


@dataclass(frozen=True)
class BotRating:
    bot: str
    elo: float
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
    diff_next_ci95: tuple[float, float] | None = None
    """2.5% and 97.5% bootstrap quantiles of this bot's Elo minus the next one's (same pool); None without."""

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
    """Virtual draws per bot (see the module's docstring); 0: none, plain maximum likelihood."""
    games: int = 0
    anchor: Anchor | None = None
    """The bot whose Elo is fixed (its pool is not mean 0), if any."""

    @property
    def two_seat(self) -> bool:
        """True if every game had two seats (then wins/draws/losses describe all of them)."""
        return self.seats == (2,)

    def record(self, bot: str, opponent: str) -> PairRecord:
        return self.crosstable.get((bot, opponent), PairRecord())


def rate(
    games: Iterable[Mapping[str, int]],
    bootstrap: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
    prior_draws: float = DEFAULT_PRIOR_DRAWS,
    anchor: Anchor | None = None,
) -> Ratings:
    """Rate games (bot name -> rank). `bootstrap` resamples for the intervals and LOS (0: none), seeded;
    `anchor` fixes one bot's Elo (RatingInputError if no game has it)."""
    return rate_tallies(GameTallies.of(games), bootstrap, seed, prior_draws, anchor)


def rate_tallies(
    tallies: GameTallies,
    bootstrap: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
    prior_draws: float = DEFAULT_PRIOR_DRAWS,
    anchor: Anchor | None = None,
) -> Ratings:
    """Rate the games of `tallies`; without a bootstrap this costs what the bots and pairs cost, not the games."""
    if not 0 <= prior_draws < math.inf:
        raise RatingInputError(f"prior_draws must be 0 or more, got {prior_draws}")
    if bootstrap < 0:
        raise RatingInputError(f"bootstrap must be 0 or more, got {bootstrap}")
    if not tallies.games:
        return Ratings(bots=(), bootstrap=bootstrap, seed=seed, prior_draws=prior_draws, anchor=anchor)
    if anchor is not None and anchor.bot not in tallies.bots():
        known = ", ".join(sorted(tallies.bots()))
        raise RatingInputError(f"the anchor {anchor.bot!r} played none of these games (bots: {known})")
    model = _Model.of(tallies, prior_draws)
    strengths = model.fit(model.games[None, :], model.points[None, :])[0]
    samples = _bootstrap(model, tallies.outcomes(), strengths, bootstrap, seed) if bootstrap else None
    elo = strengths * ELO_PER_NAT
    if anchor is not None:
        elo, samples = _anchored(model, anchor, elo, samples)
    return Ratings(
        bots=_bot_ratings(model, tallies, elo, samples),
        crosstable=_crosstable(model.pairs),
        pools=len(model.pools),
        seats=tallies.seats(),
        bootstrap=bootstrap,
        seed=seed,
        prior_draws=prior_draws,
        games=tallies.games,
        anchor=anchor,
    )


def _anchored(
    model: _Model, anchor: Anchor, elo: FloatArray, samples: FloatArray | None
) -> tuple[FloatArray, FloatArray | None]:
    """Elo and resamples with the anchor's pool shifted so that the anchor is at its Elo in each of them."""
    bot = model.names.index(anchor.bot)
    pool = next(members for members in model.pools if bot in members)
    shifted = elo.copy()
    shifted[pool] += anchor.elo - elo[bot]
    if samples is None:
        return shifted, None
    moved = samples.copy()
    moved[:, pool] += anchor.elo - samples[:, [bot]]
    shifted[bot] = moved[:, bot] = anchor.elo
    return shifted, moved


@dataclass(frozen=True)
class _Model:
    """The pairs of the games as arrays, with the prior's virtual draws, bots numbered in name order."""

    names: list[str]
    pairs: dict[tuple[str, str], PairRecord]
    pools: list[list[int]]
    first: NDArray[np.intp]
    second: NDArray[np.intp]
    games: FloatArray
    """Pairwise results of each pair."""
    points: FloatArray
    """Points of each pair's first bot."""
    virtual_draws: FloatArray

    @classmethod
    def of(cls, tallies: GameTallies, prior_draws: float) -> _Model:
        pairs = tallies.pairs()
        names = list(tallies.bots())
        index = {name: number for number, name in enumerate(names)}
        first = np.array([index[bot] for bot, _ in pairs], dtype=np.intp)
        second = np.array([index[other] for _, other in pairs], dtype=np.intp)
        games = np.array([record.games for record in pairs.values()], dtype=np.float64)
        points = np.array([record.points for record in pairs.values()], dtype=np.float64)
        pairings = [
            Pairing(int(a), int(b), float(n), float(s)) for a, b, n, s in zip(first, second, games, points, strict=True)
        ]
        pools = components(len(names), pairings)
        if prior_draws == 0:
            _check_maximum_exists(pools, pairings, names)
        per_bot = np.bincount(first, games, len(names)) + np.bincount(second, games, len(names))
        virtual_draws = prior_draws / 2 * games * (1 / per_bot[first] + 1 / per_bot[second])
        return cls(names, pairs, pools, first, second, games, points, virtual_draws)

    def fit(self, games: FloatArray, points: FloatArray, start: FloatArray | None = None) -> FloatArray:
        """Strengths (rows x bots) of rows of pairwise results, each with the prior's virtual draws added."""
        tolerance = DEFAULT_TOLERANCE if start is None else _BOOTSTRAP_TOLERANCE
        return fit_many(
            self.pools,
            self.first,
            self.second,
            games + self.virtual_draws,
            points + self.virtual_draws / 2,
            start,
            tolerance,
        )


def _check_maximum_exists(pools: list[list[int]], pairings: list[Pairing], names: list[str]) -> None:
    for pool in pools:
        parts = strong_components(pool, pairings) if len(pool) > 1 else []
        for part in parts:
            if len(parts) > 1 and not (part.lost_to_rest and part.beat_rest):
                bots = ", ".join(sorted(names[bot] for bot in part.bots))
                never = "lost a point to" if not part.lost_to_rest else "took a point from"
                raise RatingInputError(
                    f"without the prior (prior_draws 0) the Elo is infinite: {bots} never {never} the rest of "
                    "their pool; use a prior (prior_draws > 0)"
                )


def _bootstrap(
    model: _Model, outcomes: Mapping[Outcome, int], strengths: FloatArray, samples: int, seed: int
) -> FloatArray:
    """Elo of every bot (resamples x bots) in each Poisson resample of whole games.

    The resampler orders the outcomes itself, so that the same games give the same resamples however they
    were read (a store, a file, in any order).
    """
    pair_index = {
        (model.names[a], model.names[b]): number
        for number, (a, b) in enumerate(zip(model.first, model.second, strict=True))
    }
    resampler = OutcomeResampler.of(pair_index, outcomes)
    rng = np.random.default_rng(seed)
    bots = len(model.names)
    chunk = max(1, min(_MAX_CHUNK, _CHUNK_ELEMENTS // max(resampler.counts.size, bots * bots, 1)))
    fitted = []
    for size in _chunks(samples, chunk):
        games, points = resampler.draw(rng, size)
        if model.virtual_draws.sum() == 0:
            _check_resamples(model, games, points)
        fitted.append(model.fit(games, points, np.tile(strengths, (size, 1))))
    result: FloatArray = np.concatenate(fitted) * ELO_PER_NAT
    return result


def _chunks(total: int, size: int) -> Iterator[int]:
    while total > 0:
        yield min(size, total)
        total -= size


def _check_resamples(model: _Model, games: FloatArray, points: FloatArray) -> None:
    """Without a prior, a resample whose Elo would be infinite stops the bootstrap with a clear error."""
    for row_games, row_points in zip(games, points, strict=True):
        pairings = [
            Pairing(int(a), int(b), float(n), float(s))
            for a, b, n, s in zip(model.first, model.second, row_games, row_points, strict=True)
        ]
        for pool in model.pools:
            if len(pool) > 1 and len(strong_components(pool, pairings)) > 1:
                raise RatingInputError(
                    "without the prior (prior_draws 0) some bootstrap resamples have an infinite Elo; "
                    "use a prior (prior_draws > 0) or no bootstrap"
                )


def _bot_ratings(
    model: _Model, tallies: GameTallies, elo: FloatArray, samples: FloatArray | None
) -> tuple[BotRating, ...]:
    pool_of = {bot: number for number, pool in enumerate(model.pools) for bot in pool}
    order = [bot for pool in model.pools for bot in sorted(pool, key=lambda bot: (-elo[bot], model.names[bot]))]
    totals = tallies.bots()
    rows = []
    for position, bot in enumerate(order):
        name = model.names[bot]
        following = order[position + 1] if position + 1 < len(order) else None
        los_next = diff_next = None
        if samples is not None and following is not None and pool_of[following] == pool_of[bot]:
            los_next = _superiority(samples, bot, following)
            diff_next = _interval(samples[:, bot] - samples[:, following])
        bot_totals = totals[name]
        rows.append(
            BotRating(
                bot=name,
                elo=float(elo[bot]),
                ci95=None if samples is None else _interval(samples[:, bot]),
                pool=pool_of[bot] + 1,
                games=bot_totals.games,
                pairings=bot_totals.pairings,
                points=bot_totals.half_points / 2,
                wins=bot_totals.wins,
                draws=bot_totals.draws,
                losses=bot_totals.losses,
                mean_rank=bot_totals.rank_sum / bot_totals.games,
                los_next=los_next,
                diff_next_ci95=diff_next,
            )
        )
    return tuple(rows)


def _crosstable(pairs: Mapping[tuple[str, str], PairRecord]) -> dict[tuple[str, str], PairRecord]:
    both = {**pairs, **{(other, bot): record.reversed() for (bot, other), record in pairs.items()}}
    return dict(sorted(both.items()))


def _interval(values: FloatArray) -> tuple[float, float]:
    low, high = np.quantile(values, [0.025, 0.975])
    return float(low), float(high)


def _superiority(samples: FloatArray, bot: int, other: int) -> float:
    higher = np.count_nonzero(samples[:, bot] > samples[:, other])
    equal = np.count_nonzero(samples[:, bot] == samples[:, other])
    return float((higher + equal / 2) / samples.shape[0])

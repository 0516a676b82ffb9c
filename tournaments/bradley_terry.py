"""Maximum-likelihood Bradley-Terry fit over pairwise points (draws count half a point).

The model: bot i scores p = 1 / (1 + exp(theta_j - theta_i)) per pairing against bot j. Draws enter as half a
point, so the likelihood is the "score" likelihood that Ordo and the usual chess rating lists maximise
(sum over pairings of s*log p + (n - s)*log(1 - p)); its maximum is where every bot's expected points equal
its actual points. Ratings here are natural-log strengths; `ELO_PER_NAT` converts them to Elo.

The maximum exists exactly when every connected pool is strongly connected by "took points from" (a set of
bots that never lost a point to the rest of its pool would run off to +infinity); `mle_exists` tests that.
The fit assumes it (callers regularise first) and solves one pool at a time by Newton's method.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass

ELO_PER_NAT = 400 / math.log(10)
DEFAULT_TOLERANCE = 1e-10
_MAX_ITERATIONS = 200
_ROUNDING = 1e-12
_TRUSTED_STEP = 0.1
"""Natural-log units (17 Elo): shorter Newton steps are taken without checking the likelihood."""
_SMALLEST_SCALE = 1e-6
_MAX_EXPONENT = 700.0


class NoMaximumError(ArithmeticError):
    """The likelihood has no finite maximum (the pool is not strongly connected)."""


@dataclass(frozen=True)
class Pairing:
    """All pairwise results between bots `first` and `second`: `games` pairings, `points` of them to `first`."""

    first: int
    second: int
    games: float
    points: float


def components(bots: int, pairings: Sequence[Pairing]) -> list[list[int]]:
    """The connected pools (bots linked by having played each other), largest first, each sorted."""
    neighbours: list[set[int]] = [set() for _ in range(bots)]
    for pairing in pairings:
        if pairing.games > 0:
            neighbours[pairing.first].add(pairing.second)
            neighbours[pairing.second].add(pairing.first)
    return _search_components(neighbours)


def mle_exists(pool: Sequence[int], pairings: Sequence[Pairing]) -> bool:
    """True if, within `pool`, every bot took points from every other along some chain (strong connectivity)."""
    return len(strong_components(pool, pairings)) == 1


@dataclass(frozen=True)
class StrongPart:
    """A strongly connected part of a pool under "took points from", and how it fared against the rest.

    A part that never lost a point to the rest of its pool has a rating unbounded above; one that never took
    a point from the rest is unbounded below.
    """

    bots: frozenset[int]
    lost_to_rest: bool
    beat_rest: bool


def strong_components(pool: Sequence[int], pairings: Sequence[Pairing]) -> list[StrongPart]:
    """The strongly connected parts of `pool` under "took points from"."""
    members = set(pool)
    took_from: dict[int, set[int]] = {bot: set() for bot in pool}
    gave_to: dict[int, set[int]] = {bot: set() for bot in pool}
    for pairing in pairings:
        if pairing.first not in members or pairing.games <= 0:
            continue
        if pairing.points > 0:
            took_from[pairing.first].add(pairing.second)
            gave_to[pairing.second].add(pairing.first)
        if pairing.points < pairing.games:
            took_from[pairing.second].add(pairing.first)
            gave_to[pairing.first].add(pairing.second)
    parts: list[StrongPart] = []
    assigned: set[int] = set()
    for bot in pool:
        if bot in assigned:
            continue
        part = _reachable(bot, took_from, members) & _reachable(bot, gave_to, members)
        assigned |= part
        parts.append(
            StrongPart(
                bots=frozenset(part),
                lost_to_rest=any(winner not in part for member in part for winner in gave_to[member]),
                beat_rest=any(victim not in part for member in part for victim in took_from[member]),
            )
        )
    return parts


def fit(
    bots: int,
    pairings: Sequence[Pairing],
    start: Sequence[float] | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
) -> list[float]:
    """Maximum-likelihood strengths (natural log units), mean 0 within each connected pool.

    Raises NoMaximumError if some pool is not strongly connected. `start` (e.g. a previous fit) speeds it up;
    the fit stops when no strength moves by more than `tolerance`.
    """
    strengths = list(start) if start is not None else [0.0] * bots
    for pool in components(bots, pairings):
        if len(pool) < 2:
            strengths[pool[0]] = 0.0
            continue
        if not mle_exists(pool, pairings):
            raise NoMaximumError(f"no finite maximum for the pool of bots {pool}")
        members = set(pool)
        pool_pairings = [pairing for pairing in pairings if pairing.first in members and pairing.games > 0]
        _newton(pool, pool_pairings, strengths, tolerance)
    return strengths


def _newton(pool: list[int], pairings: list[Pairing], strengths: list[float], tolerance: float) -> None:
    """Newton's method on the pool's log-likelihood, with the last bot of the pool held fixed (the gauge).

    The factorised information matrix is kept while the steps keep halving (the chord method), so that a fit
    started near its answer, as in a bootstrap, costs a few gradients instead of a few factorisations. Steps
    longer than _TRUSTED_STEP are checked against the likelihood and halved until it does not fall.
    """
    position = {bot: index for index, bot in enumerate(pool[:-1])}
    links = _links(position, pairings)
    factor: _Cholesky | None = None
    previous_size = math.inf
    for _ in range(_MAX_ITERATIONS):
        gradient = _gradient(links, strengths, len(position))
        if factor is None:
            factor = _cholesky(_information(position, pairings, strengths))
        step = _cholesky_solve(factor, gradient)
        size = max((abs(value) for value in step), default=0.0)
        if size > previous_size / 2:
            factor = _cholesky(_information(position, pairings, strengths))
            step = _cholesky_solve(factor, gradient)
            size = max((abs(value) for value in step), default=0.0)
        scale = _step_scale(pairings, strengths, position, step) if size > _TRUSTED_STEP else 1.0
        for bot, index in position.items():
            strengths[bot] += scale * step[index]
        previous_size = size * scale
        if previous_size < tolerance:
            break
    mean = sum(strengths[bot] for bot in pool) / len(pool)
    for bot in pool:
        strengths[bot] -= mean


def _step_scale(pairings: list[Pairing], strengths: list[float], position: dict[int, int], step: list[float]) -> float:
    """The largest of 1, 1/2, 1/4, ... whose step does not lower the likelihood (backtracking)."""
    likelihood = _log_likelihood(pairings, strengths)
    scale = 1.0
    while scale >= _SMALLEST_SCALE:
        trial = list(strengths)
        for bot, index in position.items():
            trial[bot] += scale * step[index]
        if _log_likelihood(pairings, trial) >= likelihood - _ROUNDING * (1 + abs(likelihood)):
            return scale
        scale /= 2
    return scale


def _links(position: dict[int, int], pairings: list[Pairing]) -> list[tuple[int, int, int, int, float, float]]:
    """Per pairing: both bots, their slots in the gradient (the gauge bot's slot is the discarded last one),
    games and points."""
    gauge = len(position)
    return [
        (
            pairing.first,
            pairing.second,
            position.get(pairing.first, gauge),
            position.get(pairing.second, gauge),
            pairing.games,
            pairing.points,
        )
        for pairing in pairings
    ]


def _gradient(links: list[tuple[int, int, int, int, float, float]], strengths: list[float], free: int) -> list[float]:
    """Points minus expected points of each free bot of the pool."""
    gradient = [0.0] * (free + 1)
    exp = math.exp
    for first, second, first_slot, second_slot, games, points in links:
        residual = points - games / (1 + exp(min(strengths[second] - strengths[first], _MAX_EXPONENT)))
        gradient[first_slot] += residual
        gradient[second_slot] -= residual
    return gradient[:free]


def _information(position: dict[int, int], pairings: list[Pairing], strengths: list[float]) -> list[list[float]]:
    """The observed information matrix (minus the Hessian of the log-likelihood) over the free bots."""
    size = len(position)
    information = [[0.0] * size for _ in range(size)]
    for pairing in pairings:
        expected = _expected(strengths[pairing.first] - strengths[pairing.second])
        weight = pairing.games * expected * (1 - expected)
        first, second = position.get(pairing.first), position.get(pairing.second)
        if first is not None:
            information[first][first] += weight
        if second is not None:
            information[second][second] += weight
        if first is not None and second is not None:
            information[first][second] -= weight
            information[second][first] -= weight
    return information


@dataclass(frozen=True)
class _Cholesky:
    """The factor L of a symmetric positive definite matrix (L @ L.T), with its rows and its columns."""

    rows: list[list[float]]
    columns: list[list[float]]
    """columns[i] = the entries of column i below the diagonal."""


def _cholesky(matrix: list[list[float]]) -> _Cholesky:
    lower: list[list[float]] = []
    for row_index, row in enumerate(matrix):
        new_row: list[float] = []
        for column, above in enumerate(lower):
            dot = sum(map(operator.mul, new_row, above))
            new_row.append((row[column] - dot) / above[column])
        diagonal = row[row_index] - sum(value * value for value in new_row)
        new_row.append(math.sqrt(max(diagonal, 1e-300)))
        lower.append(new_row)
    columns = [[lower[below][index] for below in range(index + 1, len(lower))] for index in range(len(lower))]
    return _Cholesky(lower, columns)


def _cholesky_solve(factor: _Cholesky, vector: list[float]) -> list[float]:
    """Solve L @ L.T @ x = vector."""
    size = len(vector)
    middle: list[float] = []
    for index, row in enumerate(factor.rows):
        middle.append((vector[index] - sum(map(operator.mul, row, middle))) / row[index])
    solution: list[float] = []
    for index in reversed(range(size)):
        total = middle[index] - sum(map(operator.mul, factor.columns[index], solution))
        solution.insert(0, total / factor.rows[index][index])
    return solution


def _log_likelihood(pairings: list[Pairing], strengths: list[float]) -> float:
    total = 0.0
    for pairing in pairings:
        difference = strengths[pairing.first] - strengths[pairing.second]
        log_expected = -_softplus(-difference)
        total += pairing.points * log_expected + (pairing.games - pairing.points) * (log_expected - difference)
    return total


def _softplus(value: float) -> float:
    """log(1 + exp(value)) without overflow."""
    if value > 0:
        return value + math.log1p(math.exp(-value))
    return math.log1p(math.exp(value))


def _expected(difference: float) -> float:
    if difference >= 0:
        return 1 / (1 + math.exp(-difference))
    exponential = math.exp(difference)
    return exponential / (1 + exponential)


def _search_components(neighbours: list[set[int]]) -> list[list[int]]:
    edges = dict(enumerate(neighbours))
    everyone = set(edges)
    seen: set[int] = set()
    found: list[list[int]] = []
    for bot in range(len(neighbours)):
        if bot not in seen:
            pool = _reachable(bot, edges, everyone)
            seen |= pool
            found.append(sorted(pool))
    return sorted(found, key=lambda pool: (-len(pool), pool[0]))


def _reachable(start: int, edges: dict[int, set[int]], members: set[int]) -> set[int]:
    seen = {start}
    frontier = [start]
    while frontier:
        bot = frontier.pop()
        for other in edges[bot]:
            if other in members and other not in seen:
                seen.add(other)
                frontier.append(other)
    return seen

"""Maximum-likelihood Bradley-Terry fit over pairwise points (draws count half a point), many fits at once.

The model: bot i scores p = 1 / (1 + exp(theta_j - theta_i)) per pairing against bot j. Draws enter as half a
point, so the likelihood is the "score" likelihood that Ordo and the usual chess rating lists maximise
(sum over pairings of s*log p + (n - s)*log(1 - p)); its maximum is where every bot's expected points equal
its actual points. Ratings here are natural-log strengths; `ELO_PER_NAT` converts them to Elo.

The maximum exists exactly when every connected pool is strongly connected by "took points from" (a set of
bots that never lost a point to the rest of its pool would run off to +infinity); `mle_exists` tests that.
The fit assumes it (callers add a prior or check first). `fit_many` solves many fits of the same pairs at
once (the resamples of a bootstrap) by Newton's method, one row of the arrays per fit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from protocol.errors import BadInput

ELO_PER_NAT = 400 / math.log(10)
DEFAULT_TOLERANCE = 1e-10
_MAX_ITERATIONS = 100
_MAX_HALVINGS = 40
_ROUNDING = 1e-12

FloatArray = NDArray[np.float64]


class NoMaximumError(BadInput, ArithmeticError):
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
    pools = components(bots, pairings)
    for pool in pools:
        if len(pool) > 1 and not mle_exists(pool, pairings):
            raise NoMaximumError(f"no finite maximum for the pool of bots {pool}")
    played = [pairing for pairing in pairings if pairing.games > 0]
    first = np.array([pairing.first for pairing in played], dtype=np.intp)
    second = np.array([pairing.second for pairing in played], dtype=np.intp)
    games = np.array([[pairing.games for pairing in played]], dtype=np.float64)
    points = np.array([[pairing.points for pairing in played]], dtype=np.float64)
    begin = None if start is None else np.array([start], dtype=np.float64)
    return [float(value) for value in fit_many(pools, first, second, games, points, begin, tolerance)[0]]


def fit_many(
    pools: Sequence[Sequence[int]],
    first: NDArray[np.intp],
    second: NDArray[np.intp],
    games: FloatArray,
    points: FloatArray,
    start: FloatArray | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
) -> FloatArray:
    """Strengths of many fits of the same pairs: row r of `games` and `points` (fits x pairs) gives row r of the
    result (fits x bots), mean 0 within each of `pools` (which cover every bot).

    Pair q is between bots first[q] and second[q]; points are the first bot's. Every row must have a finite
    maximum (see mle_exists) and every pool must be connected by pairs with games in every row. Newton's
    method, with each step halved until the likelihood does not fall, from `start` (fits x bots) or from 0.
    """
    bots = sum(len(pool) for pool in pools)
    fits = games.shape[0]
    strengths = np.zeros((fits, bots)) if start is None else np.array(start, dtype=np.float64, copy=True)
    gauges = [pool[-1] for pool in pools]
    free = np.array([bot for bot in range(bots) if bot not in set(gauges)], dtype=np.intp)
    if free.size and first.size:
        _newton(strengths, free, first, second, games, points, tolerance)
    for pool in pools:
        members = np.array(pool, dtype=np.intp)
        strengths[:, members] -= strengths[:, members].mean(axis=1, keepdims=True)
    return strengths


def _newton(
    strengths: FloatArray,
    free: NDArray[np.intp],
    first: NDArray[np.intp],
    second: NDArray[np.intp],
    games: FloatArray,
    points: FloatArray,
    tolerance: float,
) -> None:
    """Newton's method on each row's log-likelihood, the gauge bots (not in `free`) held fixed, in place."""
    bots = strengths.shape[1]
    incidence = np.zeros((first.size, bots))
    incidence[np.arange(first.size), first] = 1.0
    incidence[np.arange(first.size), second] = -1.0
    active = np.arange(strengths.shape[0])
    for _ in range(_MAX_ITERATIONS):
        theta, n, s = strengths[active], games[active], points[active]
        expected = _expected(theta[:, first] - theta[:, second])
        gradient = ((s - n * expected) @ incidence)[:, free]
        information = _information(n * expected * (1 - expected), first, second, bots)[:, free][:, :, free]
        step = np.asarray(np.linalg.solve(information, gradient[:, :, None])[:, :, 0], dtype=np.float64)
        scale = _step_scale(theta, step, free, first, second, n, s)
        moved = np.zeros_like(theta)
        moved[:, free] = scale[:, None] * step
        strengths[active] = theta + moved
        size = np.abs(moved).max(axis=1)
        active = active[size >= tolerance]
        if not active.size:
            return


def _information(weights: FloatArray, first: NDArray[np.intp], second: NDArray[np.intp], bots: int) -> FloatArray:
    """Minus the Hessian of each row's log-likelihood (rows x bots x bots), from the weights n*p*(1-p) of pairs."""
    rows = weights.shape[0]
    offsets = (np.arange(rows) * bots * bots)[:, None]
    cells = np.concatenate([first * bots + first, second * bots + second, first * bots + second, second * bots + first])
    signed = np.concatenate([weights, weights, -weights, -weights], axis=1)
    flat = np.bincount((offsets + cells).ravel(), weights=signed.ravel(), minlength=rows * bots * bots)
    return np.asarray(flat, dtype=np.float64).reshape(rows, bots, bots)


def _step_scale(
    theta: FloatArray,
    step: FloatArray,
    free: NDArray[np.intp],
    first: NDArray[np.intp],
    second: NDArray[np.intp],
    games: FloatArray,
    points: FloatArray,
) -> FloatArray:
    """Per row, the largest of 1, 1/2, 1/4, ... whose step does not lower the likelihood (backtracking)."""
    before = _log_likelihood(theta, first, second, games, points)
    allowance = _ROUNDING * (1 + np.abs(before))
    scale = np.ones(theta.shape[0])
    pending = np.arange(theta.shape[0])
    for _ in range(_MAX_HALVINGS):
        trial = theta[pending].copy()
        trial[:, free] += scale[pending, None] * step[pending]
        after = _log_likelihood(trial, first, second, games[pending], points[pending])
        pending = pending[after < before[pending] - allowance[pending]]
        if not pending.size:
            break
        scale[pending] /= 2
    return scale


def _log_likelihood(
    theta: FloatArray, first: NDArray[np.intp], second: NDArray[np.intp], games: FloatArray, points: FloatArray
) -> FloatArray:
    difference = theta[:, first] - theta[:, second]
    log_expected = -np.logaddexp(0.0, -difference)
    total: FloatArray = (points * log_expected + (games - points) * (log_expected - difference)).sum(axis=1)
    return total


def _expected(difference: FloatArray) -> FloatArray:
    expected: FloatArray = 0.5 * (1 + np.tanh(difference / 2))
    return expected


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

"""Poisson bootstrap resamples of games kept as distinct outcomes with counts, as pairwise results.

In a resample every game is drawn a Poisson(1) number of times, so an outcome seen c times is drawn
Poisson(c) times, independently of the others: one draw per distinct outcome, however many games there are.
Counts up to _TABLE_LIMIT are drawn by inverting their distribution's table with one uniform number each,
larger ones by numpy's Poisson generator; outcomes are taken in order of their counts, so that each table
covers a contiguous block.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .tallies import Outcome, pair_result

FloatArray = NDArray[np.float64]

_TABLE_LIMIT = 30
_TAIL = 1e-16
"""A count's table stops where the probability left above it is below this."""


@dataclass(frozen=True)
class _Block:
    start: int
    stop: int
    cumulative: FloatArray
    """P(X <= k) for k = 0, 1, ... of the Poisson distribution of this block's count."""


@dataclass(frozen=True)
class OutcomeResampler:
    """Draws the pairwise results of resamples: each outcome adds a win, draw or loss to each pair at its table."""

    counts: FloatArray
    """Games of each distinct outcome, in increasing order."""
    blocks: tuple[_Block, ...]
    """The outcomes of each count up to _TABLE_LIMIT, drawn from their table."""
    entries: NDArray[np.intp]
    """Pairs at each outcome's table (k * (k - 1) / 2 at k seats)."""
    cell_of_entry: NDArray[np.intp]
    """Outcome by outcome, the cell each pair of its table adds to: 3 * pair + pair_result (WIN, DRAW, LOSS)."""
    pairs: int

    @classmethod
    def of(cls, pair_index: Mapping[tuple[str, str], int], outcomes: Mapping[Outcome, int]) -> OutcomeResampler:
        """`pair_index`: (bot, other) in name order -> pair number; `outcomes`: outcome -> games."""
        ordered = sorted(outcomes.items(), key=lambda item: (item[1], item[0]))
        cells = [
            3 * pair_index[bot, other] + pair_result(rank, other_rank)
            for outcome, _ in ordered
            for position, (bot, rank) in enumerate(outcome)
            for other, other_rank in outcome[position + 1 :]
        ]
        counts = np.array([count for _, count in ordered], dtype=np.float64)
        return cls(
            counts=counts,
            blocks=_blocks(counts),
            entries=np.array([len(outcome) * (len(outcome) - 1) // 2 for outcome, _ in ordered], dtype=np.intp),
            cell_of_entry=np.array(cells, dtype=np.intp),
            pairs=len(pair_index),
        )

    def draw(self, rng: np.random.Generator, size: int) -> tuple[FloatArray, FloatArray]:
        """Pairwise results (size x pairs) and the first bots' points of `size` resamples."""
        drawn = self._poisson(rng, size)
        cells: FloatArray = np.stack(
            [
                np.bincount(self.cell_of_entry, weights=np.repeat(row, self.entries), minlength=3 * self.pairs)
                for row in drawn
            ]
        )
        wins, draws, losses = cells[:, 0::3], cells[:, 1::3], cells[:, 2::3]
        return wins + draws + losses, wins + draws / 2

    def _poisson(self, rng: np.random.Generator, size: int) -> FloatArray:
        """Poisson(count) draws of every outcome (size x outcomes)."""
        drawn = np.empty((size, self.counts.size))
        tabled = self.blocks[-1].stop if self.blocks else 0
        uniform = rng.random((size, tabled))
        for block in self.blocks:
            drawn[:, block.start : block.stop] = np.searchsorted(
                block.cumulative, uniform[:, block.start : block.stop], side="right"
            )
        drawn[:, tabled:] = rng.poisson(self.counts[tabled:], size=(size, self.counts.size - tabled))
        return drawn


def _blocks(counts: FloatArray) -> tuple[_Block, ...]:
    """A block of outcomes for each count up to _TABLE_LIMIT (counts in increasing order)."""
    blocks = []
    values, starts = np.unique(counts, return_index=True)
    stops = [*starts[1:], counts.size]
    for value, start, stop in zip(values, starts, stops, strict=True):
        if value <= _TABLE_LIMIT:
            blocks.append(_Block(int(start), int(stop), _cumulative(float(value))))
    return tuple(blocks)


def _cumulative(mean: float) -> FloatArray:
    """P(X <= k), k = 0, 1, ..., for X ~ Poisson(mean), up to where the rest is below _TAIL."""
    probability = math.exp(-mean)
    cumulative = [probability]
    k = 0
    while 1 - cumulative[-1] > _TAIL and k < 10 * (mean + 10):
        k += 1
        probability *= mean / k
        cumulative.append(cumulative[-1] + probability)
    return np.array(cumulative, dtype=np.float64)

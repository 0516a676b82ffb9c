"""Pairs of students who answered the position bank (tournaments.classroom.position_bank) alike, beyond what the
class's own answers explain: the behavioural side of the copies check.

    leads = similar_choices(bank, {"ann": (3, 0, None, ...), "bo": (...), ...})

For a pair, a position counts unless both chose a known choice there (`Position.known`: the first or the last
legal action, the tutorial's strategy, a baseline's answer), which two honest students reach on their own, or
either did not answer. The pair agreed or not in each position counted. Under the hypothesis that the two
answered independently, each as the rest of the class answers, the chance that they agree in a counted position
is sum(p_a^2 for a not known) / (1 - P_known^2), with p_a the share of the class's other students (the pair
left out) who chose a there, smoothed by one answer spread evenly over the legal actions. The number of
agreements then follows a Poisson binomial law, whose upper tail is the pair's p-value.

A pair is a lead when at least MIN_COUNTED positions counted, it agreed in at least MIN_AGREEMENT of them, and
its p-value is at most ALPHA / the number of pairs (Bonferroni: in a class of 26, 325 pairs are tested, and
the class-wide chance of naming any independent pair stays below ALPHA). The figures say what the lead is;
two students who wrote the same uncommon strategy on their own are a lead too, and only reading their code
tells them apart.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .position_bank import Bank, Position

MIN_COUNTED = 10
MIN_AGREEMENT = 0.6
ALPHA = 0.01


@dataclass(frozen=True)
class ChoiceTally:
    pair: tuple[str, str]
    counted: int
    agreed: int
    expected: float
    """The agreements expected from the class's answers."""
    p_value: float


def pair_tallies(bank: Bank, answers: Mapping[str, Sequence[int | None]]) -> list[ChoiceTally]:
    """Every pair's tally (see the module's docstring), in name order."""
    names = sorted(answers)
    counts = [Counter(answers[name][index] for name in names) for index in range(len(bank.positions))]
    tallies = []
    for first, second in itertools.combinations(names, 2):
        chances = []
        agreed = 0
        for index, position in enumerate(bank.positions):
            mine, theirs = answers[first][index], answers[second][index]
            known = set(position.known)
            if mine is None or theirs is None or (mine in known and theirs in known):
                continue
            chance = _chance(position, counts[index], (mine, theirs), known)
            if chance is None:
                continue
            chances.append(chance)
            agreed += mine == theirs
        tallies.append(ChoiceTally((first, second), len(chances), agreed, sum(chances), _upper_tail(chances, agreed)))
    return tallies


def _chance(position: Position, counts: Counter[int | None], pair: tuple[int, int], known: set[int]) -> float | None:
    """The chance that two of the class agree in `position`, given that not both chose a known choice."""
    others = counts.copy()
    others.subtract(pair)
    others.pop(None, None)
    choices = len(position.legal)
    total = sum(others.values()) + 1
    shares = [(others.get(action, 0) + 1 / choices) / total for action in range(choices)]
    known_share = sum(shares[action] for action in known if action < choices)
    counted = 1 - known_share**2
    if counted <= 1e-12:
        return None
    return sum(share**2 for action, share in enumerate(shares) if action not in known) / counted


def _upper_tail(chances: Sequence[float], agreed: int) -> float:
    """P(at least `agreed` agreements) for independent positions with these chances (Poisson binomial)."""
    law = np.zeros(len(chances) + 1)
    law[0] = 1.0
    for chance in chances:
        law[1:] = law[1:] * (1 - chance) + law[:-1] * chance
        law[0] *= 1 - chance
    return float(min(1.0, law[agreed:].sum()))


def is_lead(tally: ChoiceTally, pairs: int) -> bool:
    return (
        tally.counted >= MIN_COUNTED
        and tally.agreed >= MIN_AGREEMENT * tally.counted
        and tally.p_value <= ALPHA / max(pairs, 1)
    )

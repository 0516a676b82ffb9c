"""CPU shares of local workers, and keeping a run on given CPUs."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tournaments.league.placement import cpu_shares, kept_on, usable_cpus

needs_two_cpus = pytest.mark.skipif(len(usable_cpus()) < 2, reason="needs at least 2 usable CPUs")


@pytest.mark.parametrize(
    ("workers", "cpus", "shares"),
    [
        (1, [0, 1], [{0, 1}]),
        (2, [0, 1], [{0}, {1}]),
        (3, [0, 1], [{0}, {1}, {0}]),
        (2, [0, 1, 2, 3, 4], [{0, 1, 2}, {3, 4}]),
        (3, [4, 6, 8, 10], [{4, 6}, {8}, {10}]),
    ],
)
def test_cpu_shares_are_disjoint_and_as_even_as_they_go(workers: int, cpus: list[int], shares: list[set]) -> None:
    assert cpu_shares(workers, cpus) == shares


def test_cpu_shares_need_a_worker_and_a_cpu() -> None:
    with pytest.raises(ValueError, match="at least one worker"):
        cpu_shares(0, [0, 1])


def child_cpus() -> set[int]:
    code = "import os; print(' '.join(map(str, sorted(os.sched_getaffinity(0)))))"
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(map(int, output.split()))


@needs_two_cpus
def test_kept_on_holds_this_process_and_its_children_then_restores() -> None:
    before = os.sched_getaffinity(0)
    one = frozenset(usable_cpus()[-1:])
    with kept_on(one):
        assert os.sched_getaffinity(0) == one
        assert child_cpus() == one
    assert os.sched_getaffinity(0) == before


def test_kept_on_none_changes_nothing() -> None:
    before = os.sched_getaffinity(0)
    with kept_on(None):
        assert os.sched_getaffinity(0) == before

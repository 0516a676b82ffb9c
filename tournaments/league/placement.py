"""Where local workers run: each worker process gets its own share of the CPUs, and its matches' bots with it.

A match is a strict relay: the referee waits for a bot, the bot for the referee. On a machine that lets
threads wander, each hand-over wakes a thread on another core (and in a virtual machine, an idle virtual CPU),
and every process resumes with cold caches: on the 2-core machines this project is measured on, a decision of
4 SDK random bots takes about 1.8 times as long as when the match stays on one core. Giving each worker a
disjoint set of CPUs keeps a match's relay on its own cores and keeps concurrent matches out of each other's
way: a bot that burns CPU slows only its own match, never the clocks of the bots in another one.

Every process a worker starts (the bots, and whatever they start) inherits its CPU set. With fewer workers
than CPUs the CPUs are shared out (one worker on a 2-core machine keeps both, so simultaneous decisions and
multi-threaded bots still get them); with more workers than CPUs, workers share CPUs round-robin.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence

CpuSet = frozenset[int]


def usable_cpus() -> list[int]:
    """The CPUs this process may run on (fewer than the machine's when a container or taskset limits it)."""
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


def cpu_shares(workers: int, cpus: Sequence[int]) -> list[CpuSet]:
    """One CPU set per worker: disjoint slices of `cpus` as even as they go (the first workers get one more),
    or, with more workers than CPUs, one CPU each, round-robin."""
    if workers < 1 or not cpus:
        raise ValueError(f"need at least one worker and one CPU, not {workers} and {list(cpus)}")
    if workers >= len(cpus):
        return [frozenset({cpus[index % len(cpus)]}) for index in range(workers)]
    size, extra = divmod(len(cpus), workers)
    shares = []
    start = 0
    for index in range(workers):
        end = start + size + (1 if index < extra else 0)
        shares.append(frozenset(cpus[start:end]))
        start = end
    return shares


def pin(cpus: CpuSet | None) -> None:
    """Keep this process (and every process it starts from now on) on `cpus`; None or an unsupported platform
    leaves it where it is."""
    if cpus is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, cpus)


@contextlib.contextmanager
def kept_on(cpus: CpuSet | None) -> Iterator[None]:
    """Keep this thread, and the processes it starts meanwhile, on `cpus` for the duration of the block."""
    if cpus is None or not hasattr(os, "sched_setaffinity"):
        yield
        return
    previous = os.sched_getaffinity(0)
    pin(cpus)
    try:
        yield
    finally:
        pin(frozenset(previous))

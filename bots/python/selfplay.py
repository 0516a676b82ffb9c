"""Self-play games in parallel for the training scripts (train_scout_value.py, train_scout_prior.py)."""

from __future__ import annotations

import contextlib
import multiprocessing
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

Task = TypeVar("Task")
Result = TypeVar("Result")


def map_games(
    play: Callable[[Task], Result],
    tasks: Sequence[Task],
    jobs: int = 1,
    initializer: Callable[..., None] | None = None,
    initargs: tuple[Any, ...] = (),
) -> list[Result]:
    """`play` for every task, in order, in `jobs` processes (each first runs `initializer(*initargs)`; with one
    job, this process does), a dot on stderr per tenth. `play` must draw its randomness from its task alone, so
    that any number of jobs gives the same results."""
    tenth = max(1, len(tasks) // 10)
    results: list[Result] = []
    with contextlib.ExitStack() as stack:
        if jobs > 1:
            context = multiprocessing.get_context("spawn")
            pool = stack.enter_context(context.Pool(jobs, initializer, initargs))
            played: Iterable[Result] = pool.imap(play, tasks)
        else:
            if initializer is not None:
                initializer(*initargs)
            played = map(play, tasks)
        for result in played:
            results.append(result)
            if len(results) % tenth == 0:
                print(".", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return results

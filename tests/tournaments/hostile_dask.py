"""Dask worker tasks that send the organiser what an honest worker never would, importable by the workers of a
test cluster: the DaskExecutor's `task` (and `prober`) stand-ins, each with the honest task's signature.

A task's payload goes on the queue the organiser gave the worker, as tournaments.league.dask_messages does.
`pickled_task` puts an object that distributed would unpickle on arrival, one whose unpickling writes the file
UNPICKLED in the spec's log_dir with the id of the process that unpickled it; `raising_task` raises an
exception that does the same (its worker unpickles it once itself, to check it can be sent): the file naming
the organiser's process is proof that the organiser ran a worker's code.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import distributed
import msgpack
from distributed.protocol import to_serialize
from fake_runner import record_for

from referee.records import MatchRecord, MatchSpec
from tournaments.league.record_data import record_to_data

UNPICKLED = "UNPICKLED"


def _queue(queues: Mapping[str, str]) -> distributed.Queue:
    return distributed.Queue(name=queues[distributed.get_worker().address], client=distributed.get_client())


def junk_task(spec: MatchSpec, queues: Mapping[str, str], runner: Callable[..., MatchRecord]) -> None:
    _queue(queues).put(b"\xc1\xc1 not msgpack at all")


def wrong_shape_task(spec: MatchSpec, queues: Mapping[str, str], runner: Callable[..., MatchRecord]) -> None:
    data = record_to_data(record_for(spec, spec.games[0]))
    data["ranks"] = ["first", "second"]
    _queue(queues).put(msgpack.packb(["game", data]))


def stranger_task(spec: MatchSpec, queues: Mapping[str, str], runner: Callable[..., MatchRecord]) -> None:
    data = record_to_data(record_for(spec, spec.games[0]))
    data["match_id"] = "a-match-nobody-asked-for"
    _queue(queues).put(msgpack.packb(["game", data]))


def weaker_task(spec: MatchSpec, queues: Mapping[str, str], runner: Callable[..., MatchRecord]) -> None:
    """A game played at no isolation, whatever the worker said in its probe."""
    data = record_to_data(record_for(spec, spec.games[0]))
    data["isolation"] = "none"
    _queue(queues).put(msgpack.packb(["game", data]))


class Planted:
    """Unpickling this writes the file UNPICKLED in `folder`."""

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def __reduce__(self) -> tuple[Any, ...]:
        return (_plant, (self.folder,))


def _plant(folder: str) -> None:
    Path(folder, UNPICKLED).write_text(f"unpickled in process {os.getpid()}\n")


def pickled_task(spec: MatchSpec, queues: Mapping[str, str], runner: Callable[..., MatchRecord]) -> None:
    client = distributed.get_client()
    assert spec.log_dir is not None
    client.sync(
        client.scheduler.queue_put,
        data=to_serialize(Planted(spec.log_dir)),
        name=queues[distributed.get_worker().address],
    )


def partial_prober() -> str:
    return "partial"


def unsandboxed_prober() -> str:
    return "none"


def full_prober() -> str:
    return "full"


def boasting_prober() -> str:
    return "root"


def raising_task(spec: MatchSpec, queues: Mapping[str, str], runner: Callable[..., MatchRecord]) -> None:
    """A task that raises: its exception reaches the scheduler pickled, and must not be read."""
    assert spec.log_dir is not None
    raise PlantedError(spec.log_dir)


class PlantedError(Exception):
    """An exception whose unpickling writes UNPICKLED in `folder`."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (_planted_error, (self.args[0],))


def _planted_error(folder: str) -> PlantedError:
    _plant(folder)
    return PlantedError(folder)


def failing_prober() -> str:
    raise RuntimeError("this machine cannot be probed")

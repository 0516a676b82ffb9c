"""Stand-ins for referee.match.run_match, importable by worker processes, to test executors without bots.

`scripted_runner` plays no game: it makes a record for every GameSpec (the bot listed first in the match
ranks first), hands it to on_game, and then, when the spec's log_dir names a folder, waits until the
caller has acknowledged that game there (a file MATCH-INDEX.ack): proof that records reach the caller
while their match is still running. A match whose id contains "fail" raises after its first game.

`placement_runner` plays like `scripted_runner` without pacing, and first writes into the spec's log_dir the
CPUs its worker may use and those of a process the worker starts (as a bot would be started).

`fork_hook_runner` hands over its first game, then forks (as a bot starts: BotProcess gives Popen a
preexec_fn, which runs the fork hooks) with a hook around the fork that marks IN_FORK_HOOK in the spec's
log_dir and waits there, so that a stop signal sent then arrives where Python swallows exceptions. Were the
worker to play on, it would mark PLAYED_ON a few seconds later.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from referee.records import GameRecord, GameSpec, MatchRecord, MatchSpec, SeatTiming

ACK_WAIT_S = 20.0


class ScriptedFailure(RuntimeError):
    pass


def record_for(spec: MatchSpec, game: GameSpec) -> GameRecord:
    seats = tuple(spec.bots[index].name for index in game.seating)
    ranks = tuple(1 + index for index in game.seating)
    return GameRecord(
        match_id=spec.match_id,
        index=game.index,
        game=spec.game,
        seed=game.seed,
        seats=seats,
        ranks=ranks,
        scores=tuple(-rank for rank in ranks),
        faults=(),
        timings=tuple(SeatTiming(1, 1.0, 1.0) for _ in seats),
    )


def ack_path(folder: str | Path, record: GameRecord) -> Path:
    return Path(folder) / f"{record.match_id}-{record.index}.ack"


def scripted_runner(spec: MatchSpec, on_game: Callable[[GameRecord], None] | None = None) -> MatchRecord:
    records = []
    for game in spec.games:
        record = record_for(spec, game)
        records.append(record)
        if on_game is not None:
            on_game(record)
        if "fail" in spec.match_id:
            raise ScriptedFailure(f"scripted failure in {spec.match_id}")
        if spec.log_dir is not None:
            _wait_for(ack_path(spec.log_dir, record))
    return MatchRecord(spec, tuple(records))


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + ACK_WAIT_S
    while not path.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"nobody acknowledged {path.name}: records do not reach the caller per game")
        time.sleep(0.01)


_PRINT_CPUS = "import json, os; print(json.dumps(sorted(os.sched_getaffinity(0))))"


PLACEMENT_WORKERS = 2
ARRIVAL_WAIT_S = 60.0
"""How long a worker waits for the other to arrive: a bound that only catches a hang."""


def placement_runner(spec: MatchSpec, on_game: Callable[[GameRecord], None] | None = None) -> MatchRecord:
    """Writes where its worker and its child may run. A worker's first match waits until both workers have
    one, so that each plays at least one however slowly the other starts (a worker asks for a match only when
    it is free)."""
    folder = Path(str(spec.log_dir))
    (folder / f"arrived-{os.getpid()}").touch()
    deadline = time.monotonic() + ARRIVAL_WAIT_S
    while len(list(folder.glob("arrived-*"))) < PLACEMENT_WORKERS and time.monotonic() < deadline:
        time.sleep(0.01)
    child = subprocess.run([sys.executable, "-c", _PRINT_CPUS], capture_output=True, text=True, check=True)
    placement = {"worker": os.getpid(), "cpus": sorted(os.sched_getaffinity(0)), "child": json.loads(child.stdout)}
    (Path(str(spec.log_dir)) / f"{spec.match_id}.cpus.json").write_text(json.dumps(placement))
    return scripted_runner(replace(spec, log_dir=None), on_game)


IN_FORK_HOOK = "in-fork-hook"
PLAYED_ON = "played-on"
FORK_HOOK_WAIT_S = 10.0
PLAYING_S = 3.0
"""The game the runner plays after the fork: longer than a stopping worker takes to raise a swallowed stop
again, shorter than the grace after which the executor kills it."""


def fork_hook_runner(spec: MatchSpec, on_game: Callable[[GameRecord], None] | None = None) -> MatchRecord:
    folder = Path(str(spec.log_dir))
    first = record_for(spec, spec.games[0])
    if on_game is not None:
        on_game(first)

    def wait_in_hook() -> None:
        (folder / IN_FORK_HOOK).touch()
        time.sleep(FORK_HOOK_WAIT_S)

    os.register_at_fork(after_in_parent=wait_in_hook)
    child = os.fork()
    if child == 0:
        os._exit(0)
    os.waitpid(child, 0)
    time.sleep(PLAYING_S)
    (folder / PLAYED_ON).touch()
    return MatchRecord(spec, (first,))

"""A stand-in for referee.match.run_match in leagues with remote seats, importable by worker processes.

`exclusive_runner` plays no game: it makes a record per GameSpec (the bot listed first ranks first), with
isolation remote where the match was given a transport that records its games so (the remote lane's,
tournaments.league.remote), else full. For the whole match it holds a lock file per remote bot of the match, made
with O_EXCL in the folder above the match's log folder: a remote bot seated in two matches at once makes the
second one raise. It holds the locks for HOLD_S, so that two matches started together would overlap.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fake_runner import record_for

from referee.botspec import is_remote
from referee.isolation.sandbox import Isolation
from referee.records import GameRecord, MatchRecord, MatchSpec

HOLD_S = 0.3


class SeatedTwice(RuntimeError):
    pass


def exclusive_runner(
    spec: MatchSpec, on_game: Callable[[GameRecord], None] | None = None, transport: Any = None
) -> MatchRecord:
    assert spec.log_dir is not None
    folder = Path(spec.log_dir).parent
    remote = [bot.name for bot in spec.bots if is_remote(bot)]
    held = []
    try:
        for name in remote:
            lock = folder / f"{name}.busy"
            try:
                os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                raise SeatedTwice(f"{name} is seated in {spec.match_id} while in another match") from None
            held.append(lock)
        level = getattr(transport, "isolation", None) or Isolation.FULL
        records = []
        for game in spec.games:
            record = record_for(spec, game)
            record = GameRecord(**{**record.__dict__, "isolation": level})
            records.append(record)
            if on_game is not None:
                on_game(record)
        time.sleep(HOLD_S)
        return MatchRecord(spec, tuple(records))
    finally:
        for lock in held:
            with contextlib.suppress(FileNotFoundError):
                lock.unlink()

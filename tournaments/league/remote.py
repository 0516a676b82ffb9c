"""Matches with remote seats (`remote:NAME` bots) in a league or an SPRT: played on the organiser's machine, one
at a time, at the one address where every remote bot connects.

    remote, local = split_remote(specs)
    remote_lane(settings, runner).run(remote, on_game)     # one worker process here, one match after another

A league's remote bots all connect to one listen address ([remote] listen; SPRT's --listen), which one match
binds at a time (referee.wire.remote_seats opens each match's wire there). So every match with a remote seat is
played in one worker process of this machine, in turn: a remote bot is never seated in two matches at once,
whatever the concurrency (-j) or the executor (a Dask cluster plays only the matches without remote seats; the
bots of a remote seat connect to the organiser, not to a worker). The local matches are played by the run's
executor as always, after the remote ones (so the authors, told when the league starts, are not kept waiting).

A remote bot's author runs `referee connect` for each match: it ends when a match is over, and the next match
listens at the same address (docs: Play a seat from another machine). A seat whose author is not connected
forfeits that match's games with a startup fault, as in `referee play`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.botspec import is_remote
from referee.isolation.process import BotProcess
from referee.isolation.sandbox import Isolation
from referee.match import run_match
from referee.records import GameRecord, MatchRecord, MatchSpec
from referee.session import BotTransport
from referee.wire.connection import Transport
from referee.wire.remote_seats import RemoteSeats, remote_name

from .executors import Executor, LocalExecutor, MatchRunner


@dataclass(frozen=True)
class RemoteMatchRunner:
    """A MatchRunner for matches with remote seats (picklable, for a worker process): `inner` (run_match, or a
    runner with its signature that writes pages) over a transport whose remote seats connect at `listen` with
    the keys of `keys` (a fresh RemoteSeats per match: referee.wire.remote_seats)."""

    listen: str
    keys: Path
    lag_quota_ms: int
    inner: MatchRunner = run_match

    def __call__(self, spec: MatchSpec, on_game: Callable[[GameRecord], None] | None = None, **_: Any) -> MatchRecord:
        names = [name for bot in spec.bots if (name := remote_name(bot.command)) is not None]
        seats = RemoteSeats.from_folder(self.listen, self.keys, names, self.lag_quota_ms)
        transport = BotTransport(
            Transport.IPC, seats.open_wire, seats.start_bot(BotProcess.start), isolation=Isolation.REMOTE
        )
        return self.inner(spec, on_game=on_game, transport=transport)


def has_remote_seat(spec: MatchSpec) -> bool:
    return any(is_remote(bot) for bot in spec.bots)


def split_remote(specs: Sequence[MatchSpec]) -> tuple[list[MatchSpec], list[MatchSpec]]:
    """(the specs with a remote seat, the others), each in the order given."""
    return [spec for spec in specs if has_remote_seat(spec)], [spec for spec in specs if not has_remote_seat(spec)]


def remote_lane(runner: RemoteMatchRunner) -> Executor:
    """Where matches with remote seats are played: one worker process on this machine, one match at a time."""
    return LocalExecutor(1, runner, pinned=False)

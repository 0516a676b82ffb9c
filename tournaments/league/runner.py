"""Running a league: its schedule, what the store still lacks, an executor, and one commit per finished game.

    with LeagueStore(league.default_db) as store:
        plan = plan_league(league, store)                   # binds the store; only missing games
        play_league(plan, store, LocalExecutor(2), on_stored=print)

A match partly played before an interruption is played again with fresh bot processes, but only its missing
games; the store ignores a game it already holds, so a game replayed after a crash is never counted twice.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from protocol.errors import BadInput
from referee.isolation.sandbox import Isolation, shown_folders
from referee.match import run_match
from referee.records import GameRecord, MatchSpec

from .executors import Executor
from .league_file import League, LeagueFileError, RemoteSettings
from .remote import RemoteMatchRunner, remote_lane, split_remote
from .schedule import ScheduledMatch, league_schedule, match_spec
from .store import LeagueStore

_STORE_FILES = ("", "-wal", "-shm", "-journal")
"""The files of an SQLite store (its write-ahead log and shared memory beside it)."""


@dataclass(frozen=True)
class LeaguePlan:
    league: League
    scheduled: int
    """Games in the league's schedule."""
    stored: int
    """Games of the schedule the store already holds."""
    specs: tuple[MatchSpec, ...]
    """The matches still to play, each with only its missing games."""
    notes: tuple[str, ...] = ()
    """Things worth telling the organiser (a bot's moved directory, bots no longer in the file)."""

    @property
    def remaining(self) -> int:
        return self.scheduled - self.stored


def plan_league(league: League, store: LeagueStore, *, sandbox: bool = True, hold_changed: bool = False) -> LeaguePlan:
    """Bind the store to the league (StoreMismatch if they disagree), record the schedule, list what is missing.
    `sandbox`: run the bots in the sandbox (MatchSpec.sandbox), which hides the league file, the store and the
    league's whole log and replay folders from them even where a bot's own folder holds them. Those folders,
    and every match's log folder, are made here, before any bot starts, so that every sandbox hides them
    (LeagueFileError if a log or replay folder holds a folder the sandbox shows a bot: hiding it would hide
    the bot's program, showing it would show the bot every other match's logs and replays). `hold_changed`: a
    bot whose program changed since its stored games is held rather than refused (LeagueStore.bind): its
    missing games wait, the others' are played."""
    roots = _output_roots(league)
    if sandbox:
        _check_outputs_beside_bots(league, roots)
    held = set(store.changed_bots(league)) if hold_changed else set()
    notes = store.bind(league, hold=held)
    schedule = league_schedule(league, store.deal_key())
    store.add_matches(schedule)
    waiting = [match for match in store.missing(schedule) if held & set(match.table)]
    schedule = [match for match in schedule if not held & set(match.table)]
    missing = store.missing(schedule)
    if waiting:
        notes.append(f"{sum(len(match.games) for match in waiting)} game(s) of held bots wait")
    scheduled = sum(len(match.games) for match in schedule)
    remaining = sum(len(match.games) for match in missing)
    specs = runnable_specs(league, store, missing, sandbox=sandbox)
    remote_specs, _ = split_remote(specs)
    if remote_specs and league.remote is not None:
        notes.append(
            f"{len(remote_specs)} match(es) with a remote seat are played first, one at a time, on this machine: "
            f"remote bots connect to {league.remote.listen} for each"
        )
    return LeaguePlan(
        league=league,
        scheduled=scheduled,
        stored=scheduled - remaining,
        specs=specs,
        notes=tuple(notes),
    )


def _output_roots(league: League) -> list[tuple[str, Path]]:
    """The league's log and replay folders, by league file key, absolute."""
    folders = (("log_dir", league.log_dir), ("replay_dir", league.replay_dir))
    return [(key, Path(os.path.abspath(folder))) for key, folder in folders if folder is not None]


def _check_outputs_beside_bots(league: League, roots: list[tuple[str, Path]]) -> None:
    for bot in league.bots:
        command = list(bot.spec.command)
        if not os.path.isabs(command[0]):
            command[0] = shutil.which(command[0]) or command[0]
        for folder in shown_folders(command, bot.spec.cwd, bot.spec.folders):
            for key, root in roots:
                if Path(folder).is_relative_to(root):
                    raise LeagueFileError(
                        league.path,
                        key,
                        f"{root} holds {folder}, which the sandbox shows bot {bot.name!r}",
                        "put the league's logs and replays in a folder of their own, outside every bot's folder",
                    )


def _make_folders(league: League, roots: list[tuple[str, Path]], matches: Sequence[ScheduledMatch]) -> None:
    """The log and replay folders, and each match's log folder (OSError if they cannot be made)."""
    for _, root in roots:
        root.mkdir(parents=True, exist_ok=True)
    if league.log_dir is not None:
        for match in matches:
            (league.log_dir / match.match_id).mkdir(parents=True, exist_ok=True)


def runnable_specs(
    league: League, store: LeagueStore, matches: Sequence[ScheduledMatch], *, sandbox: bool = True
) -> tuple[MatchSpec, ...]:
    """What the executors play for `matches`: their specs, sandboxed (unless not), with the league file, the
    store and the league's log and replay folders hidden from the bots. The folders, and each match's log
    folder, are made here, before any bot of these matches starts, so that every sandbox hides them."""
    roots = _output_roots(league)
    _make_folders(league, roots, matches)
    private = (str(league.path), *(f"{store.path.resolve()}{suffix}" for suffix in _STORE_FILES))
    private += tuple(str(root) for _, root in roots)
    return tuple(replace(match_spec(league, match), sandbox=sandbox, private_paths=private) for match in matches)


def play_league(
    plan: LeaguePlan,
    store: LeagueStore,
    executor: Executor,
    on_stored: Callable[[GameRecord], None] | None = None,
) -> int:
    """Play what the plan lists, committing each game as it arrives; returns the number of games added."""
    return play_specs(plan.specs, store, executor, on_stored, remote=plan.league.remote)


def play_specs(
    specs: Sequence[MatchSpec],
    store: LeagueStore,
    executor: Executor,
    on_stored: Callable[[GameRecord], None] | None = None,
    *,
    remote: RemoteSettings | None = None,
) -> int:
    """Play `specs`, committing each game as it arrives; returns the number of games added. Matches with remote
    seats (needing `remote`, the league's [remote]) are played first, one at a time on this machine
    (tournaments.league.remote), the others on `executor`; with [remote] rated = false their games are stored
    unrated."""
    added = 0
    remote_specs, local_specs = split_remote(specs)

    def commit(record: GameRecord) -> None:
        nonlocal added
        rated = remote is None or remote.rated or record.isolation is not Isolation.REMOTE
        if store.add_game(record, rated=rated):
            added += 1
            if on_stored is not None:
                on_stored(record)

    if remote_specs:
        if remote is None:
            raise BadInput(f"match {remote_specs[0].match_id} has a remote seat, and the league no [remote] table")
        inner = getattr(executor, "runner", run_match)
        remote_lane(RemoteMatchRunner(remote.listen, remote.keys, remote.lag_quota_ms, inner)).run(remote_specs, commit)
    executor.run(local_specs, commit)
    return added

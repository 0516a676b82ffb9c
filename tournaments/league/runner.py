"""Running a league: its schedule, what the store still lacks, an executor, and one commit per finished game.

    with LeagueStore(league.default_db) as store:
        plan = plan_league(league, store)                   # binds the store; only missing games
        play_league(plan, store, LocalExecutor(2), on_stored=print)

A match partly played before an interruption is played again with fresh bot processes, but only its missing
games; the store ignores a game it already holds, so a game replayed after a crash is never counted twice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from referee.records import GameRecord, MatchSpec

from .executors import Executor
from .league_file import League
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


def plan_league(league: League, store: LeagueStore, *, sandbox: bool = True) -> LeaguePlan:
    """Bind the store to the league (StoreMismatch if they disagree), record the schedule, list what is missing.
    `sandbox`: run the bots in the sandbox (MatchSpec.sandbox), which hides the league file and the store from
    them even where a bot's own folder holds them."""
    notes = store.bind(league)
    schedule = league_schedule(league, store.deal_key())
    store.add_matches(schedule)
    missing = store.missing(schedule)
    scheduled = sum(len(match.games) for match in schedule)
    remaining = sum(len(match.games) for match in missing)
    return LeaguePlan(
        league=league,
        scheduled=scheduled,
        stored=scheduled - remaining,
        specs=runnable_specs(league, store, missing, sandbox=sandbox),
        notes=tuple(notes),
    )


def runnable_specs(
    league: League, store: LeagueStore, matches: Sequence[ScheduledMatch], *, sandbox: bool = True
) -> tuple[MatchSpec, ...]:
    """What the executors play for `matches`: their specs, sandboxed (unless not), the league file and the
    store hidden from the bots."""
    private = (str(league.path), *(f"{store.path.resolve()}{suffix}" for suffix in _STORE_FILES))
    return tuple(replace(match_spec(league, match), sandbox=sandbox, private_paths=private) for match in matches)


def play_league(
    plan: LeaguePlan,
    store: LeagueStore,
    executor: Executor,
    on_stored: Callable[[GameRecord], None] | None = None,
) -> int:
    """Play what the plan lists, committing each game as it arrives; returns the number of games added."""
    return play_specs(plan.specs, store, executor, on_stored)


def play_specs(
    specs: Sequence[MatchSpec],
    store: LeagueStore,
    executor: Executor,
    on_stored: Callable[[GameRecord], None] | None = None,
) -> int:
    """Play `specs`, committing each game as it arrives; returns the number of games added."""
    added = 0

    def commit(record: GameRecord) -> None:
        nonlocal added
        if store.add_game(record):
            added += 1
            if on_stored is not None:
                on_stored(record)

    executor.run(specs, commit)
    return added

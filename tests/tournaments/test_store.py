"""The store: games committed once, resume finds what is missing, a changed league is refused."""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from referee.isolation.sandbox import Isolation
from referee.records import Fault, FaultCause, FaultFacts, FaultKind, GameRecord, GameSpec, SeatTiming
from tournaments.league.league_file import League, load_league
from tournaments.league.schedule import ScheduledMatch, league_schedule
from tournaments.league.store import (
    MIGRATED_SANDBOXED,
    SCHEMA_VERSION,
    BotChanged,
    LeagueStore,
    StoreError,
    StoreMismatch,
)


def record_of(match: ScheduledMatch, spec: GameSpec, faults: tuple[Fault, ...] = ()) -> GameRecord:
    seats = tuple(match.table[index] for index in spec.seating)
    ranks = tuple(1 + seat for seat in range(len(seats)))
    return GameRecord(
        match_id=match.match_id,
        index=spec.index,
        game="scout",
        seed=spec.seed,
        seats=seats,
        ranks=ranks,
        scores=tuple(10 - rank for rank in ranks),
        faults=faults,
        timings=tuple(SeatTiming(decisions=5, mean_ms=1.5, max_ms=3.0) for _ in seats),
    )


def bound_schedule(store: LeagueStore, league: League) -> list[ScheduledMatch]:
    """Bind `store` to `league` and record its schedule, as a run does before it plays."""
    store.bind(league)
    schedule = league_schedule(league, store.deal_key())
    store.add_matches(schedule)
    return schedule


def test_each_game_is_stored_once(write_league, tmp_path: Path) -> None:
    league = load_league(write_league(deals_per_match=2))
    with LeagueStore(tmp_path / "league.sqlite") as store:
        schedule = bound_schedule(store, league)
        match = schedule[0]
        fault = Fault(seat=1, bot=match.table[match.games[0].seating[1]], cause=FaultCause.DECISION_TIMEOUT)
        assert store.add_game(record_of(match, match.games[0], (fault,)))
        assert not store.add_game(record_of(match, match.games[0], (fault,)))
        assert store.game_count() == 1
        assert store.fault_counts() == {fault.bot: 1}
        (stored,) = store.games()
        assert stored.ranks == {match.table[index]: seat + 1 for seat, index in enumerate(match.games[0].seating)}
    db = sqlite3.connect(tmp_path / "league.sqlite")
    counts = [db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] for table in ("seats", "faults", "timings")]
    assert counts == [3, 1, 3]
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_missing_lists_only_unplayed_games(write_league, tmp_path: Path) -> None:
    league = load_league(write_league(deals_per_match=2))
    with LeagueStore(tmp_path / "db.sqlite") as store:
        schedule = bound_schedule(store, league)
        assert store.missing(schedule) == schedule
        for spec in schedule[0].games:
            store.add_game(record_of(schedule[0], spec))
        for spec in schedule[1].games[:2]:
            store.add_game(record_of(schedule[1], spec))
        missing = store.missing(schedule)
    assert [match.match_id for match in missing] == [match.match_id for match in schedule[1:]]
    assert missing[0].games == schedule[1].games[2:]
    assert missing[1:] == schedule[2:]


def test_resume_after_adding_a_bot_schedules_only_its_matches(write_league, tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite"
    small = load_league(write_league(file_name="small", bots=["a", "b", "c", "d"]))
    with LeagueStore(db) as store:
        store.bind(small)
        played = league_schedule(small, store.deal_key())
        store.add_matches(played)
        for match in played:
            for spec in match.games:
                store.add_game(record_of(match, spec))
    larger = load_league(write_league(file_name="larger", bots=["a", "b", "c", "d", "e"]))
    with LeagueStore(db) as store:
        assert store.bind(larger) == []
        schedule = league_schedule(larger, store.deal_key())
        store.add_matches(schedule)
        missing = store.missing(schedule)
    assert len(missing) == 6 and all("e" in match.table for match in missing)
    assert {spec.seed for spec in schedule[0].games} == {spec.seed for spec in played[0].games}


def test_the_deal_key_is_drawn_once_per_store_and_kept(write_league, tmp_path: Path) -> None:
    league = load_league(write_league())
    with LeagueStore(tmp_path / "one.sqlite") as store:
        store.bind(league)
        key = store.deal_key()
        assert not key.public and len(key.secret) == 32
        assert store.deal_key() == key
    with LeagueStore(tmp_path / "one.sqlite") as store:
        assert store.deal_key() == key, "a rerun deals the same games"
    with LeagueStore(tmp_path / "other.sqlite") as store:
        store.bind(league)
        assert store.deal_key() != key, "another store of the same league deals other games"
    db = sqlite3.connect(tmp_path / "one.sqlite")
    assert db.execute("SELECT secret FROM deal_key").fetchall() == [(key.secret,)]


@pytest.mark.parametrize(
    ("change", "label"),
    [({"players": 4}, "players"), ({"game": "scauver", "players": 2}, "game"), ({"seed": 8}, "seed")],
)
def test_incompatible_league_is_refused(write_league, tmp_path: Path, change: dict, label: str) -> None:
    db = tmp_path / "db.sqlite"
    with LeagueStore(db) as store:
        store.bind(load_league(write_league(file_name="first")))
    changed = load_league(write_league(file_name="second", **change))
    with LeagueStore(db) as store, pytest.raises(StoreMismatch, match=f"{label} = .*another --db"):
        store.bind(changed)


def test_changed_config_is_refused(write_league, tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite"
    with LeagueStore(db) as store:
        store.bind(load_league(write_league(file_name="first")))
        store.bind(load_league(write_league(file_name="renamed", name="new name")))
        assert store.league_name() == "new name"
    league = load_league(write_league(file_name="second", game="scauver", players=2))
    other = tmp_path / "other.sqlite"
    with LeagueStore(other) as store:
        store.bind(league)
    config_changed = dataclasses.replace(league, config={**league.config, "changed": 1})
    with LeagueStore(other) as store, pytest.raises(StoreMismatch, match="config"):
        store.bind(config_changed)


def test_changed_bot_command_is_noted_while_it_has_no_games_and_refused_after(write_league, tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite"
    with LeagueStore(db) as store:
        store.bind(load_league(write_league(file_name="first")))
        changed = load_league(write_league(file_name="second", command="heuristic"))
        notes = store.bind(changed)
        assert len(notes) == 4 and "now runs 'heuristic'" in notes[0] and "no stored game" in notes[0]
        schedule = league_schedule(changed, store.deal_key())
        store.add_matches(schedule)
        store.add_game(record_of(schedule[0], schedule[0].games[0]))
        with pytest.raises(BotChanged, match="the league file now runs 'random'") as refused:
            store.bind(load_league(write_league(file_name="third")))
    assert set(refused.value.bots) == set(schedule[0].table)


def test_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "text.sqlite"
    path.write_text("not a database, just text " * 100)
    with pytest.raises(StoreError, match="cannot be used as a league store"):
        LeagueStore(path)


def test_reading_a_store_that_does_not_exist(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no league store"):
        LeagueStore(tmp_path / "absent.sqlite", create=False)
    assert not (tmp_path / "absent.sqlite").exists()


def test_a_store_of_another_schema_is_refused_with_what_to_do(tmp_path: Path) -> None:
    old = tmp_path / "old.sqlite"
    with sqlite3.connect(old) as db:
        db.execute("CREATE TABLE games (match_id TEXT, game_index INTEGER)")
    with pytest.raises(StoreError, match=r"a store of schema 0, .* give a new store \(--db NEW.sqlite\)"):
        LeagueStore(old)
    fresh = tmp_path / "new.sqlite"
    LeagueStore(fresh).close()
    LeagueStore(fresh).close()
    with sqlite3.connect(fresh) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)


def test_the_illegal_action_sent_is_stored(write_league, tmp_path: Path) -> None:
    league = load_league(write_league(deals_per_match=2))
    with LeagueStore(tmp_path / "league.sqlite") as store:
        schedule = bound_schedule(store, league)
        match = schedule[0]
        bot = match.table[match.games[0].seating[0]]
        faults = (
            Fault(0, bot, FaultCause.ILLEGAL_ACTION, FaultFacts(note="not legal"), '{"kind":"teleport"}', 4),
            Fault(0, bot, FaultCause.DECISION_TIMEOUT, FaultFacts(request_id=3, allowed_ms=1000)),
        )
        store.add_game(record_of(match, match.games[0], faults))
        stored = store.fault_list()
        assert [(fault.sent, fault.before_action) for fault in stored] == [('{"kind":"teleport"}', 4), (None, None)]
        assert store.game_decisions() == {(match.match_id, match.games[0].index): 5 * len(match.games[0].seating)}


def test_a_schema_2_store_is_upgraded_keeping_its_games(write_league, tmp_path: Path) -> None:
    league = load_league(write_league(deals_per_match=2))
    path = tmp_path / "league.sqlite"
    with LeagueStore(path) as store:
        schedule = bound_schedule(store, league)
        match = schedule[0]
        fault = Fault(1, match.table[match.games[0].seating[1]], FaultCause.DECISION_TIMEOUT)
        store.add_game(record_of(match, match.games[0], (fault,)))
    _as_schema_2(path, [1])
    with LeagueStore(path) as store:
        assert [(f.detail, f.sent) for f in store.fault_list()] == [(fault.detail, None)]
        assert store.game_count() == 1
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,) == (5,)


def test_a_store_of_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite"
    LeagueStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError, match=f"a store of schema {SCHEMA_VERSION + 1}"):
        LeagueStore(path)


def test_faulted_games_are_dropped_alone_to_be_played_again(write_league, tmp_path: Path) -> None:
    league = load_league(write_league(deals_per_match=2))
    with LeagueStore(tmp_path / "db.sqlite") as store:
        schedule = bound_schedule(store, league)
        match = schedule[0]
        bot = match.table[0]
        startup = Fault(0, bot, FaultCause.STARTUP_TIMEOUT, FaultFacts(startup_s=10.0, not_running=True))
        late = Fault(0, bot, FaultCause.DECISION_TIMEOUT, FaultFacts(request_id=3, allowed_ms=1000))
        faults = [(startup,), (late,), ()]
        for spec, fault in zip(match.games, faults, strict=False):
            store.add_game(record_of(match, spec, fault))
        first, second, third = (match.games[position].index for position in range(3))
        assert store.faulted_games([FaultCause.STARTUP_TIMEOUT]) == [(match.match_id, first)]
        assert store.faulted_games([FaultKind.TIMEOUT]) == [(match.match_id, first), (match.match_id, second)]
        assert store.drop_games(store.faulted_games([FaultCause.STARTUP_TIMEOUT])) == 1
        assert store.played() == {(match.match_id, second), (match.match_id, third)}
        assert store.fault_counts() == {bot: 1}
        (left,) = store.missing([match])
        assert left.games[0].index == first


def test_each_game_keeps_its_isolation_level(write_league, tmp_path: Path) -> None:
    league = load_league(write_league(deals_per_match=2))
    with LeagueStore(tmp_path / "db.sqlite") as store:
        schedule = bound_schedule(store, league)
        levels = [Isolation.FULL, Isolation.PARTIAL, Isolation.NONE, Isolation.PARTIAL]
        games = [(match, spec) for match in schedule for spec in match.games][: len(levels)]
        for (match, spec), level in zip(games, levels, strict=True):
            store.add_game(dataclasses.replace(record_of(match, spec), isolation=level))
        assert store.isolation_counts() == {Isolation.FULL: 1, Isolation.PARTIAL: 2, Isolation.NONE: 1}
        assert store.unsandboxed_game_count() == 1


def _as_schema_4(path: Path) -> None:
    """Turn a store into the layout of schema 4: schema 5's, without the faults' cause and facts."""
    with sqlite3.connect(path) as db:
        db.execute("ALTER TABLE faults DROP COLUMN cause")
        db.execute("ALTER TABLE faults DROP COLUMN facts")
        db.execute("PRAGMA user_version = 4")


def _as_schema_3(path: Path, sandboxed: list[int]) -> None:
    """Turn a store into the layout of schema 3: each game's sandboxed flag where schema 4 has its level."""
    _as_schema_4(path)
    with sqlite3.connect(path) as db:
        db.execute("ALTER TABLE games DROP COLUMN isolation")
        db.execute("ALTER TABLE games ADD COLUMN sandboxed INTEGER NOT NULL DEFAULT 1")
        rowids = [row[0] for row in db.execute("SELECT rowid FROM games ORDER BY rowid")]
        for rowid, flag in zip(rowids, sandboxed, strict=True):
            db.execute("UPDATE games SET sandboxed = ? WHERE rowid = ?", (flag, rowid))
        db.execute("PRAGMA user_version = 3")


def _as_schema_2(path: Path, sandboxed: list[int]) -> None:
    """Turn a store into the layout of schema 2: schema 3's, without the faults' sent and before_action."""
    _as_schema_3(path, sandboxed)
    with sqlite3.connect(path) as db:
        db.execute("ALTER TABLE faults DROP COLUMN sent")
        db.execute("ALTER TABLE faults DROP COLUMN before_action")
        db.execute("PRAGMA user_version = 2")


@pytest.mark.parametrize("older", [_as_schema_2, _as_schema_3], ids=["schema 2", "schema 3"])
def test_an_older_store_is_migrated_reading_its_sandboxed_flags(
    older: Callable[[Path, list[int]], None], write_league, tmp_path: Path
) -> None:
    """Schemas 2 and 3 recorded `sandboxed` even for bots without a uid or cgroup of their own: a sandboxed game
    of such a store counts as partial, the level it is sure of, an unsandboxed one as none; games added later
    keep their real level. Schema 2 goes through 3 (faults.sent), schema 3 through 4 (its isolation step)."""
    league = load_league(write_league(deals_per_match=2))
    path = tmp_path / "db.sqlite"
    with LeagueStore(path) as store:
        schedule = bound_schedule(store, league)
        games = [(match, spec) for match in schedule for spec in match.games]
        for match, spec in games[:3]:
            store.add_game(record_of(match, spec))
    older(path, [1, 0, 1])
    with LeagueStore(path) as store:
        assert store.isolation_counts() == {MIGRATED_SANDBOXED: 2, Isolation.NONE: 1}
        assert MIGRATED_SANDBOXED is Isolation.PARTIAL
        match, spec = games[3]
        assert store.add_game(record_of(match, spec))
        assert store.isolation_counts() == {Isolation.FULL: 1, Isolation.PARTIAL: 2, Isolation.NONE: 1}
        assert store.game_count() == 4
    with LeagueStore(path) as store, sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        assert store.isolation_counts()[Isolation.PARTIAL] == 2

"""The store: games committed once, resume finds what is missing, a changed league is refused."""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from referee import records
from referee.isolation.sandbox import Isolation
from referee.records import (
    Fault,
    FaultCause,
    FaultFacts,
    FaultKind,
    GameRecord,
    GameSpec,
    MemoryHit,
    SeatTiming,
    Stage,
)
from tournaments.cli import main
from tournaments.cli.league import RETRY_FAULTS
from tournaments.league.league_file import League, load_league
from tournaments.league.schedule import ScheduledMatch, league_schedule
from tournaments.league.store import (
    LEVELS_CHECK,
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
        assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,) == (7,)


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


def _as_schema_6(path: Path) -> None:
    """Turn a store into the layout of schema 6: schema 7's, without games.rated and remote_timings."""
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE remote_timings")
        db.execute("ALTER TABLE games DROP COLUMN rated")
        db.execute("PRAGMA user_version = 6")


def _as_schema_4(path: Path) -> None:
    """Turn a store into the layout of schema 4: schema 5's, without the faults' cause and facts."""
    _as_schema_6(path)
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


CAUSE_FACTS: dict[FaultCause, FaultFacts] = {
    FaultCause.STARTUP_TIMEOUT: FaultFacts(startup_s=10.0, not_running=True),
    FaultCause.DECISION_TIMEOUT: FaultFacts(request_id=3, allowed_ms=1000, other_replies=1, other_id=2),
    FaultCause.LATE_ANSWER: FaultFacts(request_id=3, allowed_ms=1000, answered_ms=1500.0),
    FaultCause.TIMEOUT_LIMIT: FaultFacts(count=2, not_running=True),
    FaultCause.START_FAILED: FaultFacts(note="cannot start 'nope': no such executable file"),
    FaultCause.EXITED: FaultFacts(exit_status=1, stage=Stage.GAME, game=0, output=("the bot was killed by a test",)),
    FaultCause.KILLED_BY_SIGNAL: FaultFacts(signal=11, stage=Stage.HANDSHAKE, not_running=True),
    FaultCause.MEMORY_LIMIT: FaultFacts(
        exit_status=1, memory=MemoryHit.ALLOCATION_FAILED, memory_mb=512, stage=Stage.GAME, game=0
    ),
    FaultCause.HELLO_REFUSED: FaultFacts(startup_s=10.0, note="unknown token"),
    FaultCause.STOLEN_TOKEN: FaultFacts(victim="beta"),
    FaultCause.PROTOCOL_VIOLATION: FaultFacts(note="a message of 2000000 bytes, over the limit"),
    FaultCause.MULTIPART_MESSAGE: FaultFacts(count=2),
    FaultCause.HELLO_AFTER_HANDSHAKE: FaultFacts(),
    FaultCause.STALE_FLOOD: FaultFacts(count=65),
    FaultCause.CONNECTION_FLOOD: FaultFacts(count=17, most=16),
    FaultCause.ILLEGAL_ACTION: FaultFacts(request_id=4, note="not legal"),
    FaultCause.NO_ANSWER: FaultFacts(request_id=5, allowed_ms=1000, waited_ms=1000),
}
CAUSES_AFTER_SCHEMA_5 = (FaultCause.NO_ANSWER,)
"""Causes the referee gave no fault before schema 5 stored causes: no older store holds their words."""
UNPLACED = Fault(0, "", FaultCause.START_FAILED, FaultFacts(note="bwrap: setting up uid map: Permission denied"))
"""A fault whose words no rule of the migration places (the sandbox's own reason for a program that did not start)."""


def test_every_cause_is_stored_with_its_facts(write_league, tmp_path: Path) -> None:
    assert set(CAUSE_FACTS) == set(FaultCause)
    league = load_league(write_league(deals_per_match=2))
    with LeagueStore(tmp_path / "db.sqlite") as store:
        match = bound_schedule(store, league)[0]
        faults = tuple(Fault(0, match.table[0], cause, facts) for cause, facts in CAUSE_FACTS.items())
        store.add_game(record_of(match, match.games[0], faults))
        stored = store.fault_list()
    assert [(f.cause, f.facts, f.detail, f.kind) for f in stored] == [
        (f.cause, f.facts, f.detail, f.kind.value) for f in faults
    ]


@pytest.mark.parametrize(
    "older",
    [
        lambda path, games: _as_schema_2(path, [1] * games),
        lambda path, games: _as_schema_3(path, [1] * games),
        lambda path, games: _as_schema_4(path),
    ],
    ids=["schema 2", "schema 3", "schema 4"],
)
def test_an_older_stores_faults_get_their_cause_from_their_words_once(
    older: Callable[[Path, int], None], write_league, tmp_path: Path
) -> None:
    """The migration to schema 5 reads each stored fault's cause from its words (those the referee wrote then:
    the words derived now, tests/referee/test_fault_causes.py shows, are the same; a bot's output quoted in them
    is not read), and leaves its facts NULL; a fault no rule places keeps a NULL cause. The migrated store then
    answers by cause and stores new games with their causes and facts."""
    league = load_league(write_league(deals_per_match=2))
    path = tmp_path / "db.sqlite"
    with LeagueStore(path) as store:
        schedule = bound_schedule(store, league)
        games = [(match, spec) for match in schedule for spec in match.games]
        assert len(games) > len(CAUSE_FACTS) + 2
        older_causes = [cause for cause in CAUSE_FACTS if cause not in CAUSES_AFTER_SCHEMA_5]
        written = [Fault(0, "", cause, CAUSE_FACTS[cause]) for cause in older_causes] + [UNPLACED]
        for (match, spec), fault in zip(games, written, strict=False):
            store.add_game(record_of(match, spec, (dataclasses.replace(fault, bot=match.table[0]),)))
    older(path, len(written))
    with LeagueStore(path) as store:
        placed = {f.detail: (f.cause, f.facts) for f in store.fault_list()}
        assert placed == {f.detail: (None if f is written[-1] else f.cause, None) for f in written}
        keys = [(match.match_id, spec.index) for match, spec in games]
        startup = keys[list(CAUSE_FACTS).index(FaultCause.STARTUP_TIMEOUT)]
        assert store.faulted_games([FaultCause.STARTUP_TIMEOUT]) == [startup]
        crashes = [key for key, fault in zip(keys, written, strict=False) if fault.kind is FaultKind.CRASH]
        assert store.faulted_games([FaultKind.CRASH]) == sorted(crashes)
        match, spec = games[len(written)]
        late = Fault(0, match.table[0], FaultCause.LATE_ANSWER, CAUSE_FACTS[FaultCause.LATE_ANSWER])
        assert store.add_game(record_of(match, spec, (late,)))
        added = (match.match_id, spec.index)
        assert [f.facts for f in store.fault_list() if (f.match_id, f.index) == added] == [late.facts]
        assert store.faulted_games([FaultCause.LATE_ANSWER]) == sorted(
            [keys[list(CAUSE_FACTS).index(FaultCause.LATE_ANSWER)], added]
        )
        assert len(store.missing(schedule)) == len(schedule) - len({key[0] for key in keys[: len(written) + 1]})
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,) == (7,)


def test_retry_selects_by_cause_whatever_the_words(write_league, tmp_path: Path, monkeypatch) -> None:
    """Rewording every fault and every cause's meaning changes what the store's `detail` says, not which games a
    retry selects: it reads the cause column."""
    monkeypatch.setattr(records, "describe", lambda cause, facts: "words that say nothing of the cause")
    monkeypatch.setattr(FaultCause, "meaning", property(lambda cause: "reworded"))
    league = load_league(write_league(deals_per_match=2))
    with LeagueStore(tmp_path / "db.sqlite") as store:
        match = bound_schedule(store, league)[0]
        startup = Fault(0, match.table[0], FaultCause.STARTUP_TIMEOUT, CAUSE_FACTS[FaultCause.STARTUP_TIMEOUT])
        late = Fault(0, match.table[0], FaultCause.LATE_ANSWER, CAUSE_FACTS[FaultCause.LATE_ANSWER])
        store.add_game(record_of(match, match.games[0], (startup,)))
        store.add_game(record_of(match, match.games[1], (late,)))
        assert {f.detail for f in store.fault_list()} == {"words that say nothing of the cause"}
        assert FaultCause.STARTUP_TIMEOUT.meaning == "reworded"
        first, second = (match.match_id, match.games[0].index), (match.match_id, match.games[1].index)
        assert store.faulted_games(RETRY_FAULTS["startup"]) == [first]
        assert store.faulted_games(RETRY_FAULTS["startup-timeout"]) == [first]
        assert store.faulted_games(RETRY_FAULTS["late-answer"]) == [second]
        assert store.faulted_games(RETRY_FAULTS["timeout"]) == sorted([first, second])
        assert store.faulted_games([*RETRY_FAULTS["crash"], *RETRY_FAULTS["illegal-action"]]) == []


def test_a_migrated_store_resumes_its_league_and_retries_by_cause(write_league, tmp_path: Path) -> None:
    """A schema 2 store holding faults as the referee of then wrote them: the run upgrades it, replays the games
    of the cause asked for (by the old word, then by a kind) and keeps the others."""
    path = write_league(bots=("alpha", "beta"), players=2, deals_per_match=2)
    run = ["tournament", "run", str(path), "--bootstrap", "0", "-j", "1"]
    first = CliRunner().invoke(main, run)
    assert first.exit_code == 0, first.output
    with LeagueStore(path.with_suffix(".sqlite")) as store:
        keys = sorted(store.played())
    assert len(keys) == 4
    _as_schema_2(path.with_suffix(".sqlite"), [1] * len(keys))
    with sqlite3.connect(path.with_suffix(".sqlite")) as db:
        db.executemany(
            "INSERT INTO faults (match_id, game_index, position, seat, bot, kind, detail) VALUES (?, ?, 0, 0, ?, ?, ?)",
            [
                (*keys[0], "alpha", "timeout", "not running: no hello within the startup limit of 10.0 s"),
                (*keys[1], "alpha", "timeout", "no answer to request 3 within 1000 ms"),
                (*keys[2], "beta", "crash", "the bot exited with status 1 during game 2"),
            ],
        )
    startup = CliRunner().invoke(main, [*run, "--retry-faulted", "startup"])
    assert startup.exit_code == 0, startup.output
    assert "retrying 1 game(s) with a startup fault" in startup.stderr and "Played 1 games" in startup.stderr
    timeouts = CliRunner().invoke(main, [*run, "--retry-faulted", "timeout", "--retry-faulted", "exited"])
    assert timeouts.exit_code == 0, timeouts.output
    assert "retrying 1 game(s) with a timeout fault" in timeouts.stderr
    assert "retrying 1 game(s) with a exited fault" in timeouts.stderr and "Played 2 games" in timeouts.stderr
    with LeagueStore(path.with_suffix(".sqlite")) as store:
        assert sorted(store.played()) == keys and store.fault_list() == []
    with sqlite3.connect(path.with_suffix(".sqlite")) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)


def test_a_schema_5_store_takes_kernel_games_once_upgraded(write_league, tmp_path: Path) -> None:
    league = load_league(write_league(deals_per_match=2))
    path = tmp_path / "league.sqlite"
    with LeagueStore(path) as store:
        match = bound_schedule(store, league)[0]
        store.add_game(record_of(match, match.games[0]))
    _as_schema_6(path)
    with sqlite3.connect(path) as db:
        (version,) = db.execute("PRAGMA schema_version").fetchone()
        db.execute("PRAGMA writable_schema = ON")
        db.execute(
            "UPDATE sqlite_master SET sql = replace(sql, ?, ?) WHERE name = 'games'",
            (LEVELS_CHECK, "CHECK (isolation IN ('full', 'partial', 'none'))"),
        )
        db.execute(f"PRAGMA schema_version = {version + 1}")
        db.execute("PRAGMA user_version = 5")
    with sqlite3.connect(path) as db, pytest.raises(sqlite3.IntegrityError):
        db.execute("UPDATE games SET isolation = 'kernel'")
    with LeagueStore(path) as store:
        kernel = dataclasses.replace(record_of(match, match.games[1]), isolation=Isolation.KERNEL)
        store.add_game(kernel)
        assert store.isolation_counts() == {Isolation.FULL: 1, Isolation.KERNEL: 1}
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert db.execute("PRAGMA user_version").fetchone() == (7,)
        with pytest.raises(sqlite3.IntegrityError):
            db.execute("UPDATE games SET isolation = 'cloud'")

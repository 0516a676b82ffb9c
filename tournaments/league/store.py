"""The result store: one SQLite file per league (WAL), written by one process, one transaction per game.

Tables: league (one row: what the results are results of), bots, matches (the scheduled tables), games,
seats (bot, rank, score and forfeit of each seat), faults and timings; settle_rounds says which matches a
settling round added (tournaments/settle.py), so that a resumed run finishes them before it decides more.
A game and its seats, faults and timings are committed together when the game ends, so a killed run loses at
most the games still in progress, and (match_id, game_index) is a primary key: a game replayed after a crash
is never stored twice.

A store remembers its league's game, seats, seed, game options and limits, and each bot's command and
program digest (tournaments.league.identity): results of another setting, or of another program under a stored
name, would not be comparable, so binding such a league raises StoreMismatch (BotChanged for a bot), saying
what changed and what to do. `forget` drops a bot's games so that a rerun plays them again with the program
the file now names. A bot no longer in the league file stays in the store as retired: its games still count
for the others.
It also keeps the secret key the league's deals are dealt from (table deal_key, drawn on first use): bots
must never be able to read the store.
"""

from __future__ import annotations

import json
import shlex
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, TypedDict

from protocol.errors import BadInput, RefereeError
from referee.deals import DealKey
from referee.isolation.sandbox import Isolation
from referee.records import FaultCause, FaultFacts, FaultKind, GameRecord, Limits, RemoteTiming

from .league_file import League, LeagueBot
from .schedule import ScheduledMatch

SCHEMA_VERSION = 7
"""The store's layout (PRAGMA user_version): 2 added bot identities, forfeits, sandboxing and the deal key; 3 the
illegal action a bot sent and the action a fault came before (faults.sent, faults.before_action); 4 each game's
isolation level (full, partial, none) where 2 and 3 had a sandboxed flag; 5 each fault's cause and facts
(faults.cause, faults.facts: referee.records.FaultCause and FaultFacts), from which its detail is written; 6 the
kernel isolation level (games.isolation may be 'kernel'); 7 remote seats: whether a game counts in the ratings
(games.rated: a league file's [remote] rated = false stores its games with remote seats unrated) and each remote
seat's network figures (remote_timings: referee.records.RemoteTiming)."""
MIGRATED_SANDBOXED = Isolation.PARTIAL
"""The level an older store's sandboxed game gets: schemas 2 and 3 recorded `sandboxed` also for games whose bots
had no uid or cgroup of their own, so partial is all such a game is known to have had."""

MIGRATED_CAUSES: tuple[tuple[FaultKind, str | None, FaultCause], ...] = (
    (FaultKind.TIMEOUT, "no hello within the startup limit", FaultCause.STARTUP_TIMEOUT),
    (FaultKind.TIMEOUT, "answered after", FaultCause.LATE_ANSWER),
    (FaultKind.TIMEOUT, "no answer to request", FaultCause.DECISION_TIMEOUT),
    (FaultKind.TIMEOUT, "timeouts in this match (max_timeouts", FaultCause.TIMEOUT_LIMIT),
    (FaultKind.CRASH, "hit the memory limit", FaultCause.MEMORY_LIMIT),
    (FaultKind.CRASH, "the bot was killed by", FaultCause.KILLED_BY_SIGNAL),
    (FaultKind.CRASH, "the bot exited", FaultCause.EXITED),
    (FaultKind.CRASH, "no hello within the startup limit", FaultCause.EXITED),
    (FaultKind.CRASH, "cannot start", FaultCause.START_FAILED),
    (FaultKind.PROTOCOL_ERROR, "hello refused (", FaultCause.HELLO_REFUSED),
    (FaultKind.PROTOCOL_ERROR, "presented another bot's token", FaultCause.STOLEN_TOKEN),
    (FaultKind.PROTOCOL_ERROR, "a message is one frame, not", FaultCause.MULTIPART_MESSAGE),
    (FaultKind.PROTOCOL_ERROR, "hello after the handshake", FaultCause.HELLO_AFTER_HANDSHAKE),
    (FaultKind.PROTOCOL_ERROR, "stale or unsolicited messages", FaultCause.STALE_FLOOD),
    (FaultKind.PROTOCOL_ERROR, "a flood of connections", FaultCause.CONNECTION_FLOOD),
    (FaultKind.PROTOCOL_ERROR, None, FaultCause.PROTOCOL_VIOLATION),
    (FaultKind.ILLEGAL_ACTION, None, FaultCause.ILLEGAL_ACTION),
)
"""How the step to schema 5 gives the faults stored before it their cause: the first rule whose kind is the
fault's and whose words the first line of its detail contains (None: any words; the first line is the referee's,
a bot's output quoted below it is never read). This is the one place a fault's meaning is read
from its words, once, for the rows written before causes were stored: the words are those the referee wrote then
(the protocol errors left over are the codec's violations, whose words vary). A fault no rule places keeps a NULL
cause (a crash whose program could not start for a reason the sandbox gave); its facts are NULL, its detail as it
was."""


def _cause_from_words() -> str:
    """The UPDATE that applies MIGRATED_CAUSES."""

    def quoted(text: str) -> str:
        return "'" + text.replace("'", "''") + "'"

    first_line = "substr(detail, 1, instr(detail || char(10), char(10)) - 1)"
    rules = " ".join(
        f"WHEN kind = {quoted(kind.value)}"
        + ("" if words is None else f" AND instr({first_line}, {quoted(words)}) > 0")
        + f" THEN {quoted(cause.value)}"
        for kind, words, cause in MIGRATED_CAUSES
    )
    return f"UPDATE faults SET cause = CASE {rules} END"


_OLD_LEVELS = "CHECK (isolation IN ('full', 'partial', 'none'))"
LEVELS_CHECK = f"CHECK (isolation IN ({', '.join(repr(level.value) for level in Isolation)}))"
"""What games.isolation may hold: every level of referee.isolation.sandbox.Isolation."""


def _allow_every_level(db: sqlite3.Connection) -> None:
    """The step to schema 6: games.isolation's CHECK widened to every level, in place (SQLite's documented way to
    change a constraint that no stored row breaks: the table's text rewritten, its schema version bumped)."""
    (version,) = db.execute("PRAGMA schema_version").fetchone()
    db.execute("PRAGMA writable_schema = ON")
    db.execute(
        "UPDATE sqlite_master SET sql = replace(sql, ?, ?) WHERE type = 'table' AND name = 'games'",
        (_OLD_LEVELS, LEVELS_CHECK),
    )
    db.execute(f"PRAGMA schema_version = {int(version) + 1}")
    db.execute("PRAGMA writable_schema = OFF")


REMOTE_TIMINGS = """CREATE TABLE IF NOT EXISTS remote_timings (
    match_id TEXT NOT NULL,
    game_index INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    decisions INTEGER NOT NULL,
    median_lag_ms REAL NOT NULL,
    max_lag_ms REAL NOT NULL,
    credit_ms REAL NOT NULL,
    quota_left_ms REAL NOT NULL,
    PRIMARY KEY (match_id, game_index, seat),
    FOREIGN KEY (match_id, game_index) REFERENCES games (match_id, game_index)
)"""
"""Each remote seat's network figures in each game (referee.records.RemoteTiming); local seats have no row."""

MIGRATIONS: dict[int, tuple[str | Callable[[sqlite3.Connection], None], ...]] = {
    2: ("ALTER TABLE faults ADD COLUMN sent TEXT", "ALTER TABLE faults ADD COLUMN before_action INTEGER"),
    3: (
        "ALTER TABLE games ADD COLUMN isolation TEXT NOT NULL DEFAULT 'none' "
        "CHECK (isolation IN ('full', 'partial', 'none'))",
        f"UPDATE games SET isolation = CASE WHEN sandboxed THEN '{MIGRATED_SANDBOXED.value}' "
        f"ELSE '{Isolation.NONE.value}' END",
    ),
    4: ("ALTER TABLE faults ADD COLUMN cause TEXT", "ALTER TABLE faults ADD COLUMN facts TEXT", _cause_from_words()),
    5: (_allow_every_level,),
    6: ("ALTER TABLE games ADD COLUMN rated INTEGER NOT NULL DEFAULT 1", REMOTE_TIMINGS),
}
"""Schema N -> the statements that make it schema N + 1, run in one transaction when a store of schema N is opened
(a store older than the first of them cannot be upgraded: its games lack what later schemas record). The step to 4
keeps the old `sandboxed` column (it has a default, so new games need not set it)."""

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS league (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    name TEXT NOT NULL,
    game TEXT NOT NULL,
    players INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    config TEXT NOT NULL,
    limits TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS bots (
    name TEXT PRIMARY KEY,
    command TEXT NOT NULL,
    cwd TEXT,
    digest TEXT NOT NULL,
    retired INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS matches (
    match_id TEXT PRIMARY KEY,
    bots TEXT NOT NULL,
    games INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS games (
    match_id TEXT NOT NULL REFERENCES matches (match_id),
    game_index INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    replay_path TEXT,
    finished_at REAL NOT NULL,
    isolation TEXT NOT NULL DEFAULT 'none' {LEVELS_CHECK},
    rated INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (match_id, game_index)
);
CREATE TABLE IF NOT EXISTS seats (
    match_id TEXT NOT NULL,
    game_index INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    bot TEXT NOT NULL,
    rank INTEGER NOT NULL,
    score INTEGER NOT NULL,
    forfeited INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (match_id, game_index, seat),
    FOREIGN KEY (match_id, game_index) REFERENCES games (match_id, game_index)
);
CREATE TABLE IF NOT EXISTS faults (
    match_id TEXT NOT NULL,
    game_index INTEGER NOT NULL,
    position INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    bot TEXT NOT NULL,
    kind TEXT NOT NULL,
    detail TEXT NOT NULL,
    sent TEXT,
    before_action INTEGER,
    cause TEXT,
    facts TEXT,
    PRIMARY KEY (match_id, game_index, position),
    FOREIGN KEY (match_id, game_index) REFERENCES games (match_id, game_index)
);
CREATE TABLE IF NOT EXISTS deal_key (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    secret BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS settle_rounds (
    match_id TEXT PRIMARY KEY REFERENCES matches (match_id),
    round INTEGER NOT NULL,
    slot INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS timings (
    match_id TEXT NOT NULL,
    game_index INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    decisions INTEGER NOT NULL,
    mean_ms REAL NOT NULL,
    max_ms REAL NOT NULL,
    PRIMARY KEY (match_id, game_index, seat),
    FOREIGN KEY (match_id, game_index) REFERENCES games (match_id, game_index)
);
{REMOTE_TIMINGS};
"""


class StoreError(RefereeError):
    """A store that cannot be opened or read."""


class StoreMismatch(StoreError, BadInput, ValueError):
    """The league file describes games that are not comparable with the ones in the store."""


class BotChanged(StoreMismatch):
    """Bots of the league file that the store holds under the same name with another command or program."""

    def __init__(self, message: str, bots: Sequence[str]) -> None:
        super().__init__(message)
        self.bots = tuple(bots)


class UnknownStoredBot(StoreError, BadInput, LookupError):
    """A bot name the store does not hold."""


_GAME_TABLES = ("faults", "timings", "remote_timings", "seats", "games")
"""The tables with rows per game, children first: what forgetting a match deletes."""
_REMOTE_FIELDS = tuple(field.name for field in fields(RemoteTiming))
_UNRECORDED_LIMITS = frozenset({"log_cap_bytes"})
"""Limits a league file cannot set: not part of what makes results comparable."""


@dataclass(frozen=True)
class Forgotten:
    """What `LeagueStore.forget` dropped."""

    bots: tuple[str, ...]
    matches: int
    games: int


class SeatRow(TypedDict):
    """One seat of one stored game, as `tournament export` writes it."""

    match: str
    game: int
    seed: int
    seat: int
    seating: list[str]
    """The bots of the game in seat order."""
    bot: str
    rank: int
    score: int
    forfeited: bool
    faults: int
    decisions: int
    mean_ms: float
    max_ms: float


@dataclass(frozen=True)
class SettleEntry:
    """One match of a settling round, as the store keeps it."""

    match_id: str
    table: tuple[str, ...]
    slot: int


@dataclass(frozen=True)
class StoredGame:
    match_id: str
    index: int
    ranks: Mapping[str, int]
    """Bot name -> rank in this game (1 best, ties shared)."""
    scores: Mapping[str, int]


@dataclass(frozen=True)
class BotTiming:
    decisions: int
    mean_ms: float
    max_ms: float


@dataclass(frozen=True)
class RemoteTotals:
    """A remote bot's network figures over its stored games (LeagueStore.remote_totals)."""

    games: int
    decisions: int
    median_lag_ms: float
    """The median of its games' median lags."""
    max_lag_ms: float
    credit_ms: float
    """Lag quota spent, over every game."""
    least_quota_left_ms: float

    @classmethod
    def of(cls, timings: Sequence[RemoteTiming]) -> RemoteTotals:
        medians = sorted(timing.median_lag_ms for timing in timings)
        middle = (medians[(len(medians) - 1) // 2] + medians[len(medians) // 2]) / 2
        return cls(
            len(timings),
            sum(timing.decisions for timing in timings),
            middle,
            max(timing.max_lag_ms for timing in timings),
            sum(timing.credit_ms for timing in timings),
            min(timing.quota_left_ms for timing in timings),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "games": self.games,
            "decisions": self.decisions,
            **{
                name: round(value, 3)
                for name, value in (
                    ("median_lag_ms", self.median_lag_ms),
                    ("max_lag_ms", self.max_lag_ms),
                    ("credit_ms", self.credit_ms),
                    ("least_quota_left_ms", self.least_quota_left_ms),
                )
            },
        }


@dataclass(frozen=True)
class StoredFault:
    match_id: str
    index: int
    seat: int
    bot: str
    kind: str
    detail: str
    sent: str | None = None
    """An illegal action as the bot sent it (referee.faults.sent_text); None for other faults and older stores."""
    before_action: int | None = None
    """The index of the game's action the fault came before (its replay page shows it at step before_action + 1);
    None in stores older than schema 3."""
    cause: FaultCause | None = None
    """None for a fault stored before schema 5 whose words the migration could not place (MIGRATED_CAUSES)."""
    facts: FaultFacts | None = None
    """What `detail` was made from; None for faults stored before schema 5 (their detail is all there is)."""


class LeagueStore:
    """A league's results in the SQLite file at `path` (created on first use unless `create` is false)."""

    def __init__(self, path: Path | str, create: bool = True) -> None:
        self.path = Path(path)
        if not create and not self.path.is_file():
            raise StoreError(f"{self.path}: no league store there (running the league creates it)")
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None)
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")
            self._db.execute("PRAGMA foreign_keys = ON")
            self._db.execute("PRAGMA busy_timeout = 10000")
            self._upgrade()
            self._db.executescript(SCHEMA)
            self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except sqlite3.Error as error:
            raise StoreError(f"{self.path}: cannot be used as a league store ({error}){_advice(error)}") from None

    def _upgrade(self) -> None:
        """Bring a store of an older schema up to SCHEMA_VERSION (MIGRATIONS, in one transaction); StoreError for
        one that cannot be: older than the migrations go, or written by a newer card-referee."""
        (version,) = self._db.execute("PRAGMA user_version").fetchone()
        (tables,) = self._db.execute("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'").fetchone()
        if not tables or version == SCHEMA_VERSION:
            return
        steps = range(version, SCHEMA_VERSION)
        if not steps or not all(step in MIGRATIONS for step in steps):
            self._db.close()
            raise StoreError(
                f"{self.path}: a store of schema {version}, written by another version of card-referee (this one "
                f"reads schema {SCHEMA_VERSION}); give a new store (--db NEW.sqlite) and run the league again"
            )
        self._db.execute("BEGIN IMMEDIATE")
        try:
            for step in steps:
                for statement in MIGRATIONS[step]:
                    if callable(statement):
                        statement(self._db)
                    else:
                        self._db.execute(statement)
            self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except sqlite3.Error:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> LeagueStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; a database failure (disk full, locked too long) becomes StoreError."""
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        except sqlite3.Error as error:
            raise StoreError(f"{self.path}: {error}{_advice(error)}") from error

    def bind(self, league: League, hold: Collection[str] = ()) -> list[str]:
        """Record the league and its bots, or check them against what the store holds.

        Raises StoreMismatch when the game, seats, seed, game options or limits differ, and BotChanged when a
        stored name now runs another command or program, unless it is one of `hold` (`changed_bots`): such a
        bot keeps its stored identity and games, and its matches wait (tournaments.league.runner). Returns
        notes: a bot whose working directory moved (same command and program: its results are kept), bots no
        longer in the file (listed as retired), bots held.
        """
        config = _settings_json(league.config)
        limits = _settings_json(_limits_record(league.limits))
        with self._transaction() as db:
            row = db.execute("SELECT game, players, seed, config, limits FROM league").fetchone()
            if row is None:
                db.execute(
                    "INSERT INTO league (id, name, game, players, seed, config, limits) VALUES (1, ?, ?, ?, ?, ?, ?)",
                    (league.name, league.game, league.players, league.seed, config, limits),
                )
            else:
                _check_same(self.path, row, league, config, limits)
                db.execute("UPDATE league SET name = ?", (league.name,))
            return self._bind_bots(db, league, frozenset(hold))

    def check(self, league: League) -> None:
        """StoreMismatch if `league` could not be bound for its settings (game, seats, seed, options, limits);
        reads only (for a dry run)."""
        row = self._db.execute("SELECT game, players, seed, config, limits FROM league").fetchone()
        if row is not None:
            config = _settings_json(league.config)
            _check_same(self.path, row, league, config, _settings_json(_limits_record(league.limits)))

    def changed_bots(self, league: League) -> dict[str, str]:
        """The bots of `league` that the store holds, with games, under another command or program: name -> what
        changed, in words (after "bot 'name'")."""
        games = dict(self._db.execute("SELECT bot, COUNT(*) FROM seats GROUP BY bot").fetchall())
        known = {
            name: _StoredBot(command, cwd, digest, games.get(name, 0))
            for name, command, cwd, digest in self._db.execute("SELECT name, command, cwd, digest FROM bots")
        }
        return {
            bot.name: before.change(bot)
            for bot in league.bots
            if (before := known.get(bot.name)) and before.games and before.differs(bot)
        }

    def _bind_bots(self, db: sqlite3.Connection, league: League, hold: frozenset[str]) -> list[str]:
        games = dict(db.execute("SELECT bot, COUNT(*) FROM seats GROUP BY bot").fetchall())
        known = {
            name: _StoredBot(command, cwd, digest, games.get(name, 0))
            for name, command, cwd, digest in db.execute("SELECT name, command, cwd, digest FROM bots")
        }
        changed = [(bot, before) for bot in league.bots if (before := known.get(bot.name)) and before.differs(bot)]
        held = [(bot, before) for bot, before in changed if before.games and bot.name in hold]
        self._refuse_changed(
            league, [(bot, before) for bot, before in changed if before.games and (bot, before) not in held]
        )
        notes = [f"bot {bot.name!r}{before.change_without_games(bot)}" for bot, before in changed if not before.games]
        notes += [
            f"bot {bot.name!r} is held{before.change(bot)}: its stored games are kept and its other matches wait "
            "(`tournament run --replay-changed` replays them with the new program)"
            for bot, before in held
        ]
        for bot in league.bots:
            if bot.name in hold:
                continue
            before = known.get(bot.name)
            if before is not None and before.cwd != bot.cwd and not before.differs(bot):
                notes.append(
                    f"bot {bot.name!r} now runs in {bot.cwd!r} (was {before.cwd!r}), the same command and program; "
                    "its results are kept"
                )
            db.execute(
                "INSERT INTO bots (name, command, cwd, digest, retired) VALUES (?, ?, ?, ?, 0) ON CONFLICT (name) "
                "DO UPDATE SET command = excluded.command, cwd = excluded.cwd, digest = excluded.digest, retired = 0",
                (bot.name, bot.command, bot.cwd, bot.digest),
            )
        return notes + self._retire(db, league, known)

    def _refuse_changed(self, league: League, changed: Sequence[tuple[LeagueBot, _StoredBot]]) -> None:
        """BotChanged for the bots that now run another command or program than their stored games did."""
        if not changed:
            return
        names = [bot.name for bot, _ in changed]
        raise BotChanged(
            f"{self.path}: "
            + "; ".join(f"bot {bot.name!r}{before.change(bot)}" for bot, before in changed)
            + ". Results of two programs under one name would be mixed: drop the old games with "
            f"`{_forget_command(self.path, league, names)}` (a rerun plays them again), or give the new "
            "program a new name in the league file",
            names,
        )

    def _retire(self, db: sqlite3.Connection, league: League, known: Mapping[str, _StoredBot]) -> list[str]:
        """Mark the stored bots the file no longer lists as retired (or drop them if they played no game)."""
        listed = {bot.name for bot in league.bots}
        retired = [name for name, before in known.items() if name not in listed and before.games]
        gone = [name for name, before in known.items() if name not in listed and not before.games]
        db.executemany("UPDATE bots SET retired = 1 WHERE name = ?", [(name,) for name in retired])
        db.executemany("DELETE FROM bots WHERE name = ?", [(name,) for name in gone])
        if not retired:
            return []
        return [
            f"{_names(retired)} no longer in the league file: listed as retired, and their stored games still "
            f"count for the others' ratings (drop them with: {_forget_command(self.path, league, retired)})"
        ]

    def deal_key(self) -> DealKey:
        """The secret key of the league's deals: drawn from a secure source the first time, then the same for
        every rerun (so resumed games are the same deals)."""
        with self._transaction() as db:
            db.execute("INSERT OR IGNORE INTO deal_key (id, secret) VALUES (1, ?)", (DealKey.fresh().secret,))
            (secret,) = db.execute("SELECT secret FROM deal_key").fetchone()
        return DealKey(bytes(secret))

    def add_matches(self, matches: Iterable[ScheduledMatch]) -> None:
        with self._transaction() as db:
            db.executemany(
                "INSERT INTO matches (match_id, bots, games) VALUES (?, ?, ?) "
                "ON CONFLICT (match_id) DO UPDATE SET games = excluded.games",
                [(match.match_id, json.dumps(list(match.table)), len(match.games)) for match in matches],
            )

    def add_settle_round(self, round_number: int, matches: Sequence[ScheduledMatch]) -> None:
        """Record the matches of settling round `round_number` (before any is played)."""
        with self._transaction() as db:
            db.executemany(
                "INSERT INTO matches (match_id, bots, games) VALUES (?, ?, ?) ON CONFLICT (match_id) DO NOTHING",
                [(match.match_id, json.dumps(list(match.table)), len(match.games)) for match in matches],
            )
            db.executemany(
                "INSERT OR IGNORE INTO settle_rounds (match_id, round, slot) VALUES (?, ?, ?)",
                [(match.match_id, round_number, match.slot) for match in matches],
            )

    def settle_rounds(self) -> dict[int, list[SettleEntry]]:
        """Round number -> the matches that settling round added, in match_id order."""
        rows = self._db.execute(
            "SELECT round, settle_rounds.match_id, bots, slot FROM settle_rounds JOIN matches USING (match_id) "
            "ORDER BY round, settle_rounds.match_id"
        )
        rounds: dict[int, list[SettleEntry]] = {}
        for round_number, match_id, bots, slot in rows:
            rounds.setdefault(round_number, []).append(SettleEntry(match_id, tuple(json.loads(bots)), slot))
        return rounds

    def match_tables(self) -> dict[str, tuple[str, ...]]:
        """match_id -> the bot names of its table, in table order (as the match seats them), for every match."""
        rows = self._db.execute("SELECT match_id, bots FROM matches ORDER BY match_id")
        return {match_id: tuple(json.loads(bots)) for match_id, bots in rows}

    def played(self) -> set[tuple[str, int]]:
        """(match_id, game_index) of every stored game."""
        return {(match_id, index) for match_id, index in self._db.execute("SELECT match_id, game_index FROM games")}

    def missing(self, matches: Sequence[ScheduledMatch]) -> list[ScheduledMatch]:
        """The scheduled matches that still have games to play, each with only those games."""
        played = self.played()
        remaining = []
        for match in matches:
            games = tuple(spec for spec in match.games if (match.match_id, spec.index) not in played)
            if games:
                remaining.append(replace(match, games=games))
        return remaining

    def add_game(self, record: GameRecord, *, rated: bool = True) -> bool:
        """Commit one finished game with its seats, faults and timings; False if it was already stored. An
        unrated game (`rated` false) is stored and listed like any other, but left out of the ratings
        (outcome_counts)."""
        key = (record.match_id, record.index)
        with self._transaction() as db:
            inserted = db.execute(
                "INSERT OR IGNORE INTO games (match_id, game_index, seed, replay_path, finished_at, isolation, rated) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (*key, record.seed, record.replay_path, time.time(), record.isolation.value, int(rated)),
            ).rowcount
            if not inserted:
                return False
            forfeited = record.forfeited or (False,) * len(record.seats)
            _insert_rows(
                db,
                "seats",
                ("match_id", "game_index", "seat", "bot", "rank", "score", "forfeited"),
                [
                    (*key, seat, *row)
                    for seat, row in enumerate(zip(record.seats, record.ranks, record.scores, forfeited, strict=True))
                ],
            )
            _insert_rows(
                db,
                "faults",
                (
                    "match_id",
                    "game_index",
                    "position",
                    "seat",
                    "bot",
                    "kind",
                    "detail",
                    "sent",
                    "before_action",
                    "cause",
                    "facts",
                ),
                [
                    (
                        *key,
                        position,
                        f.seat,
                        f.bot,
                        f.kind.value,
                        f.detail,
                        f.sent,
                        f.before_action,
                        f.cause.value,
                        json.dumps(f.facts.to_json()),
                    )
                    for position, f in enumerate(record.faults)
                ],
            )
            _insert_rows(
                db,
                "timings",
                ("match_id", "game_index", "seat", "decisions", "mean_ms", "max_ms"),
                [
                    (*key, seat, timing.decisions, timing.mean_ms, timing.max_ms)
                    for seat, timing in enumerate(record.timings)
                ],
            )
            _insert_rows(
                db,
                "remote_timings",
                ("match_id", "game_index", "seat", *_REMOTE_FIELDS),
                [
                    (*key, seat, *(getattr(timing, name) for name in _REMOTE_FIELDS))
                    for seat, timing in enumerate(record.remote)
                    if timing is not None
                ],
            )
        return True

    def games(self) -> list[StoredGame]:
        """Every stored game, in the order of (match_id, game_index)."""
        rows = self._db.execute(
            "SELECT match_id, game_index, bot, rank, score FROM seats ORDER BY match_id, game_index, seat"
        )
        games: dict[tuple[str, int], tuple[dict[str, int], dict[str, int]]] = {}
        for match_id, index, bot, rank, score in rows:
            ranks, scores = games.setdefault((match_id, index), ({}, {}))
            ranks[bot] = rank
            scores[bot] = score
        return [StoredGame(match_id, index, ranks, scores) for (match_id, index), (ranks, scores) in games.items()]

    def outcome_counts(self) -> dict[tuple[tuple[str, int], ...], int]:
        """How many stored games ended with each distinct outcome ((bot, rank) per seat, in bot name order).

        Unrated games (add_game) are left out. SQLite groups the seats into games and counts equal games, so
        Python sees one row per distinct outcome and seat order (a few per outcome), not one per seat: what
        ratings need, at any size.
        """
        rows = self._db.execute(
            "SELECT outcome, COUNT(*) FROM ("
            "  SELECT json_group_array(json_array(bot, rank)) AS outcome FROM seats JOIN games USING (match_id, "
            "game_index) WHERE games.rated GROUP BY match_id, game_index"
            ") GROUP BY outcome"
        )
        counts: dict[tuple[tuple[str, int], ...], int] = {}
        for outcome, count in rows:
            key = tuple(sorted((str(bot), int(rank)) for bot, rank in json.loads(outcome)))
            counts[key] = counts.get(key, 0) + count
        return counts

    def fault_counts(self) -> Counter[str]:
        """Faults per bot over every stored game."""
        return Counter(dict(self._db.execute("SELECT bot, COUNT(*) FROM faults GROUP BY bot").fetchall()))

    def forfeited_games(self) -> frozenset[tuple[str, int]]:
        """The (match_id, game_index) of every stored game in which a seat forfeited."""
        rows = self._db.execute("SELECT DISTINCT match_id, game_index FROM seats WHERE forfeited")
        return frozenset((match_id, index) for match_id, index in rows)

    def forfeit_counts(self) -> Counter[str]:
        """Games forfeited per bot over every stored game."""
        rows = self._db.execute("SELECT bot, COUNT(*) FROM seats WHERE forfeited GROUP BY bot").fetchall()
        return Counter(dict(rows))

    def retired_bots(self) -> list[str]:
        """Bots the league file no longer lists (as of the last bind) whose games the store still holds."""
        return [name for (name,) in self._db.execute("SELECT name FROM bots WHERE retired ORDER BY rowid")]

    def forget(self, bots: Sequence[str]) -> Forgotten:
        """Drop the bots and every match they played (all its games, so the others' results in them too), so
        that a rerun of the league plays those matches again. Raises UnknownStoredBot for a name not stored."""
        with self._transaction() as db:
            known = [name for (name,) in db.execute("SELECT name FROM bots ORDER BY rowid")]
            unknown = [name for name in bots if name not in known]
            if unknown:
                raise UnknownStoredBot(
                    f"{self.path} holds no bot {unknown[0]!r}; it holds {', '.join(map(repr, known)) or 'none'}"
                )
            dropped = set(bots)
            matches = {
                match_id
                for match_id, table in db.execute("SELECT match_id, bots FROM matches")
                if dropped & set(json.loads(table))
            }
            matches |= {
                match_id
                for (match_id,) in db.execute(
                    f"SELECT DISTINCT match_id FROM seats WHERE bot IN ({', '.join('?' for _ in dropped)})",
                    sorted(dropped),
                )
            }
            keys = [(match_id,) for match_id in sorted(matches)]
            games = sum(db.execute("SELECT COUNT(*) FROM games WHERE match_id = ?", key).fetchone()[0] for key in keys)
            for table in (*_GAME_TABLES, "settle_rounds", "matches"):
                db.executemany(f"DELETE FROM {table} WHERE match_id = ?", keys)
            db.executemany("DELETE FROM bots WHERE name = ?", [(name,) for name in sorted(dropped)])
        return Forgotten(tuple(bots), len(keys), games)

    def faulted_games(self, faults: Collection[FaultCause | FaultKind]) -> list[tuple[str, int]]:
        """(match_id, game_index) of every stored game with a fault of one of these causes or kinds (selected by
        the faults' cause and kind columns, never by their words)."""
        causes = sorted(fault.value for fault in faults if isinstance(fault, FaultCause))
        kinds = sorted(fault.value for fault in faults if isinstance(fault, FaultKind))
        rows = self._db.execute(
            "SELECT DISTINCT match_id, game_index FROM faults "
            f"WHERE cause IN ({', '.join('?' * len(causes))}) OR kind IN ({', '.join('?' * len(kinds))}) "
            "ORDER BY match_id, game_index",
            (*causes, *kinds),
        )
        return [(match_id, index) for match_id, index in rows]

    def drop_games(self, keys: Sequence[tuple[str, int]]) -> int:
        """Drop these games (their seats, faults and timings), so that a rerun plays them again; returns how many
        were stored."""
        with self._transaction() as db:
            dropped = sum(
                db.execute("SELECT COUNT(*) FROM games WHERE match_id = ? AND game_index = ?", key).fetchone()[0]
                for key in keys
            )
            for table in _GAME_TABLES:
                db.executemany(f"DELETE FROM {table} WHERE match_id = ? AND game_index = ?", list(keys))
        return int(dropped)

    def seat_rows(self) -> list[SeatRow]:
        """One row per seat of every stored game, in the order of (match, game, seat)."""
        rows = self._db.execute(
            "SELECT s.match_id, s.game_index, g.seed, s.seat, s.bot, s.rank, s.score, s.forfeited, "
            "(SELECT COUNT(*) FROM faults f "
            " WHERE f.match_id = s.match_id AND f.game_index = s.game_index AND f.seat = s.seat), "
            "t.decisions, t.mean_ms, t.max_ms "
            "FROM seats s JOIN games g USING (match_id, game_index) "
            "LEFT JOIN timings t USING (match_id, game_index, seat) "
            "ORDER BY s.match_id, s.game_index, s.seat"
        ).fetchall()
        seatings: dict[tuple[str, int], list[str]] = {}
        for row in rows:
            seatings.setdefault((row[0], row[1]), []).append(row[4])
        return [
            SeatRow(
                match=match_id,
                game=index,
                seed=seed,
                seat=seat,
                seating=seatings[match_id, index],
                bot=bot,
                rank=rank,
                score=score,
                forfeited=bool(forfeited),
                faults=faults,
                decisions=decisions or 0,
                mean_ms=round(mean_ms or 0.0, 3),
                max_ms=round(max_ms or 0.0, 3),
            )
            for match_id, index, seed, seat, bot, rank, score, forfeited, faults, decisions, mean_ms, max_ms in rows
        ]

    def game_count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM games").fetchone()[0])

    def unsandboxed_game_count(self) -> int:
        """Games whose bots did not all run in the sandbox."""
        return self.isolation_counts().get(Isolation.NONE, 0)

    def isolation_counts(self) -> dict[Isolation, int]:
        """How many games were played at each isolation level (levels with no game left out)."""
        rows = self._db.execute("SELECT isolation, COUNT(*) FROM games GROUP BY isolation")
        return {Isolation(level): int(count) for level, count in rows}

    def unrated_game_count(self) -> int:
        """Games stored unrated (add_game): shown, not in the ratings."""
        return int(self._db.execute("SELECT COUNT(*) FROM games WHERE NOT rated").fetchone()[0])

    def remote_timings(self) -> dict[tuple[str, int], dict[int, RemoteTiming]]:
        """(match_id, game_index) -> seat -> that remote seat's network figures, for games with remote seats."""
        rows = self._db.execute(
            f"SELECT match_id, game_index, seat, {', '.join(_REMOTE_FIELDS)} FROM remote_timings "
            "ORDER BY match_id, game_index, seat"
        )
        timings: dict[tuple[str, int], dict[int, RemoteTiming]] = {}
        for match_id, index, seat, *figures in rows:
            timings.setdefault((match_id, index), {})[seat] = RemoteTiming(*figures)
        return timings

    def remote_totals(self) -> dict[str, RemoteTotals]:
        """Per remote bot over its stored games: games, decisions, the median of its games' median lags, its
        largest lag, the quota credit it spent and the least quota any game left it."""
        per_game: dict[str, list[RemoteTiming]] = {}
        rows = self._db.execute(
            f"SELECT s.bot, {', '.join('r.' + name for name in _REMOTE_FIELDS)} FROM remote_timings r "
            "JOIN seats s USING (match_id, game_index, seat) ORDER BY s.bot, r.match_id, r.game_index"
        )
        for bot, *figures in rows:
            per_game.setdefault(bot, []).append(RemoteTiming(*figures))
        return {bot: RemoteTotals.of(timings) for bot, timings in per_game.items()}

    def league_name(self) -> str | None:
        row = self._db.execute("SELECT name FROM league").fetchone()
        return None if row is None else str(row[0])

    def bot_names(self) -> list[str]:
        return [name for (name,) in self._db.execute("SELECT name FROM bots ORDER BY rowid")]

    def league_game(self) -> str | None:
        row = self._db.execute("SELECT game FROM league").fetchone()
        return None if row is None else str(row[0])

    def league_move_time_ms(self) -> int | None:
        """The move time the league's games were played under (None for a store without a league row)."""
        row = self._db.execute("SELECT limits FROM league").fetchone()
        value = json.loads(row[0]).get("move_time_ms") if row is not None else None
        return value if isinstance(value, int) else None

    def timing_totals(self) -> dict[str, BotTiming]:
        """Per bot over every stored game: decisions, their mean and their longest time."""
        rows = self._db.execute(
            "SELECT s.bot, SUM(t.decisions), SUM(t.mean_ms * t.decisions), MAX(t.max_ms) FROM timings t "
            "JOIN seats s USING (match_id, game_index, seat) GROUP BY s.bot"
        )
        return {
            bot: BotTiming(decisions, total / decisions if decisions else 0.0, longest or 0.0)
            for bot, decisions, total, longest in rows
        }

    def game_decisions(self) -> dict[tuple[str, int], int]:
        """(match_id, game_index) -> the decisions its bots made (fallback actions are not counted)."""
        rows = self._db.execute(
            "SELECT match_id, game_index, SUM(decisions) FROM timings GROUP BY match_id, game_index"
        )
        return {(match_id, index): decisions for match_id, index, decisions in rows}

    def fault_list(self) -> list[StoredFault]:
        """Every stored fault, in the order of (match_id, game_index, position)."""
        rows = self._db.execute(
            "SELECT match_id, game_index, seat, bot, kind, detail, sent, before_action, cause, facts FROM faults "
            "ORDER BY match_id, game_index, position"
        )
        return [
            StoredFault(
                match_id,
                index,
                seat,
                bot,
                kind,
                detail,
                sent,
                before_action,
                None if cause is None else FaultCause(cause),
                None if facts is None else FaultFacts.from_json(json.loads(facts)),
            )
            for match_id, index, seat, bot, kind, detail, sent, before_action, cause, facts in rows
        ]

    def replay_paths(self) -> dict[tuple[str, int], str]:
        """(match_id, game_index) -> the replay file the game was recorded in, for games that have one."""
        rows = self._db.execute("SELECT match_id, game_index, replay_path FROM games WHERE replay_path IS NOT NULL")
        return {(match_id, index): path for match_id, index, path in rows}


def _advice(error: sqlite3.Error) -> str:
    """What to do about a full disk (SQLITE_FULL), appended to the message; nothing for other errors."""
    full = getattr(error, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL
    return "; free space on its disk, or give another --db" if full else ""


def _insert_rows(db: sqlite3.Connection, table: str, columns: Sequence[str], rows: list[tuple[Any, ...]]) -> None:
    marks = ", ".join("?" for _ in columns)
    db.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", rows)


def _check_same(path: Path, row: Sequence[Any], league: League, config: str, limits: str) -> None:
    _check_same_league(path, row[:3], (league.game, league.players, league.seed))
    _check_same_settings(path, _OPTIONS, json.loads(row[3]), json.loads(config))
    _check_same_settings(path, _LIMITS, json.loads(row[4]), json.loads(limits))


def _check_same_league(path: Path, stored: Sequence[Any], given: Sequence[Any]) -> None:
    labels = ("game", "players", "seed")
    for label, before, now in zip(labels, stored, given, strict=True):
        if before != now:
            raise StoreMismatch(
                f"{path} holds results of a league with {label} = {before}, but the league file says {label} = {now}; "
                "results would not be comparable: give another --db for the new setting, or restore the file"
            )


@dataclass(frozen=True)
class _Settings:
    """A table of settings of the league file whose values the store keeps (for the refusal's words)."""

    what: str
    table: str


_OPTIONS = _Settings("game option", "[config]")
_LIMITS = _Settings("limit", "[limits], fault_policy and fault_budget")


def _check_same_settings(path: Path, settings: _Settings, stored: Mapping[str, Any], given: Mapping[str, Any]) -> None:
    changed = [
        f"{name} = {_shown(stored.get(name))} in the store, {_shown(given.get(name))} in the league file"
        for name in sorted(set(stored) | set(given))
        if stored.get(name) != given.get(name)
    ]
    if changed:
        raise StoreMismatch(
            f"{path} holds results played with other {settings.what}s ({'; '.join(changed)}): results would not be "
            f"comparable; restore {settings.table} in the league file, or give another --db to start the league "
            "afresh with the new setting"
        )


def _shown(value: Any) -> str:
    return "(not set)" if value is None else json.dumps(value)


def _settings_json(settings: Mapping[str, Any]) -> str:
    return json.dumps(dict(settings), sort_keys=True)


def _limits_record(limits: Limits) -> dict[str, Any]:
    """The limits a league file sets, by name (what makes results under them comparable)."""
    return {field.name: getattr(limits, field.name) for field in fields(limits) if field.name not in _UNRECORDED_LIMITS}


@dataclass(frozen=True)
class _StoredBot:
    command: str
    cwd: str | None
    digest: str
    games: int
    """Stored games it played (a bot holds one seat of a game, so its seats)."""

    def differs(self, bot: LeagueBot) -> bool:
        return (self.command, self.digest) != (bot.command, bot.digest)

    def change(self, bot: LeagueBot) -> str:
        """What changed, in words (after "bot 'name'")."""
        return (
            f": its {self.games} stored game(s) were played by {self.command!r} ({_digest_shown(self.digest)}), "
            f"the league file now runs {bot.command!r} ({_digest_shown(bot.digest)})"
        )

    def change_without_games(self, bot: LeagueBot) -> str:
        return (
            f" now runs {bot.command!r} ({_digest_shown(bot.digest)}) instead of {self.command!r} "
            f"({_digest_shown(self.digest)}); it has no stored game, so nothing is mixed"
        )


def _digest_shown(digest: str) -> str:
    kind, _, value = digest.partition(":")
    if kind == "key":
        return f"public key {value[:12]}"
    return f"version {value!r}" if kind == "version" else f"program {kind} {value[:12]}"


def _names(bots: Sequence[str]) -> str:
    return ("bot " if len(bots) == 1 else "bots ") + ", ".join(map(repr, bots)) + (" is" if len(bots) == 1 else " are")


def _forget_command(path: Path, league: League, bots: Sequence[str]) -> str:
    """The command that forgets `bots` of `league` in the store at `path`."""
    words = ["referee", "tournament", "forget", str(league.path), *bots]
    if path.resolve() != league.default_db.resolve():
        words += ["--db", str(path)]
    return shlex.join(words)

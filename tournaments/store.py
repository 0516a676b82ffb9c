"""The result store: one SQLite file per league (WAL), written by one process, one transaction per game.

Tables: league (one row: what the results are results of), bots, matches (the scheduled tables), games,
seats (bot, rank and score of each seat), faults and timings. A game and its seats, faults and timings are
committed together when the game ends, so a killed run loses at most the games still in progress, and
(match_id, game_index) is a primary key: a game replayed after a crash is never stored twice.

A store remembers its league's game, seats, seed and config: results of another setting would not be
comparable, so binding a different league raises StoreMismatch.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from referee.records import GameRecord

from .league import League
from .schedule import ScheduledMatch

SCHEMA = """
CREATE TABLE IF NOT EXISTS league (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    name TEXT NOT NULL,
    game TEXT NOT NULL,
    players INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    config TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS bots (
    name TEXT PRIMARY KEY,
    command TEXT NOT NULL,
    cwd TEXT
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
    PRIMARY KEY (match_id, game_index)
);
CREATE TABLE IF NOT EXISTS seats (
    match_id TEXT NOT NULL,
    game_index INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    bot TEXT NOT NULL,
    rank INTEGER NOT NULL,
    score INTEGER NOT NULL,
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
    PRIMARY KEY (match_id, game_index, position),
    FOREIGN KEY (match_id, game_index) REFERENCES games (match_id, game_index)
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
"""


class StoreError(Exception):
    """A store that cannot be opened or read."""


class StoreMismatch(StoreError, ValueError):
    """The league file describes games that are not comparable with the ones in the store."""


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
class StoredFault:
    match_id: str
    index: int
    seat: int
    bot: str
    kind: str
    detail: str


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
            self._db.executescript(SCHEMA)
        except sqlite3.Error as error:
            raise StoreError(f"{self.path}: cannot be used as a league store ({error})") from None

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
            raise StoreError(f"{self.path}: {error}") from error

    def bind(self, league: League) -> list[str]:
        """Record the league and its bots, or check them against what the store holds.

        Raises StoreMismatch when the game, seats, seed or config differ. Returns notes about bots whose
        command or directory changed (their new command is kept; their old results stay).
        """
        config = json.dumps(dict(league.config), sort_keys=True)
        with self._transaction() as db:
            row = db.execute("SELECT game, players, seed, config FROM league").fetchone()
            if row is None:
                db.execute(
                    "INSERT INTO league (id, name, game, players, seed, config) VALUES (1, ?, ?, ?, ?, ?)",
                    (league.name, league.game, league.players, league.seed, config),
                )
            else:
                _check_same_league(self.path, row, (league.game, league.players, league.seed, config))
                db.execute("UPDATE league SET name = ?", (league.name,))
            return self._bind_bots(db, league)

    def _bind_bots(self, db: sqlite3.Connection, league: League) -> list[str]:
        notes = []
        known = {name: (command, cwd) for name, command, cwd in db.execute("SELECT name, command, cwd FROM bots")}
        for bot in league.bots:
            before = known.get(bot.name)
            if before is not None and before != (bot.command, bot.cwd):
                notes.append(f"bot {bot.name!r} now runs {bot.command!r} (was {before[0]!r}); its old results are kept")
            db.execute(
                "INSERT INTO bots (name, command, cwd) VALUES (?, ?, ?) "
                "ON CONFLICT (name) DO UPDATE SET command = excluded.command, cwd = excluded.cwd",
                (bot.name, bot.command, bot.cwd),
            )
        return notes

    def add_matches(self, matches: Iterable[ScheduledMatch]) -> None:
        with self._transaction() as db:
            db.executemany(
                "INSERT INTO matches (match_id, bots, games) VALUES (?, ?, ?) "
                "ON CONFLICT (match_id) DO UPDATE SET games = excluded.games",
                [(match.match_id, json.dumps(list(match.table)), len(match.games)) for match in matches],
            )

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

    def add_game(self, record: GameRecord) -> bool:
        """Commit one finished game with its seats, faults and timings; False if it was already stored."""
        key = (record.match_id, record.index)
        with self._transaction() as db:
            inserted = db.execute(
                "INSERT OR IGNORE INTO games (match_id, game_index, seed, replay_path, finished_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (*key, record.seed, record.replay_path, time.time()),
            ).rowcount
            if not inserted:
                return False
            _insert_rows(
                db,
                "seats",
                ("match_id", "game_index", "seat", "bot", "rank", "score"),
                [
                    (*key, seat, *row)
                    for seat, row in enumerate(zip(record.seats, record.ranks, record.scores, strict=True))
                ],
            )
            _insert_rows(
                db,
                "faults",
                ("match_id", "game_index", "position", "seat", "bot", "kind", "detail"),
                [
                    (*key, position, fault.seat, fault.bot, fault.kind.value, fault.detail)
                    for position, fault in enumerate(record.faults)
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

    def fault_counts(self) -> Counter[str]:
        """Faults per bot over every stored game."""
        return Counter(dict(self._db.execute("SELECT bot, COUNT(*) FROM faults GROUP BY bot").fetchall()))

    def game_count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM games").fetchone()[0])

    def league_name(self) -> str | None:
        row = self._db.execute("SELECT name FROM league").fetchone()
        return None if row is None else str(row[0])

    def bot_names(self) -> list[str]:
        return [name for (name,) in self._db.execute("SELECT name FROM bots ORDER BY rowid")]

    def league_game(self) -> str | None:
        row = self._db.execute("SELECT game FROM league").fetchone()
        return None if row is None else str(row[0])

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

    def fault_list(self) -> list[StoredFault]:
        """Every stored fault, in the order of (match_id, game_index, position)."""
        rows = self._db.execute(
            "SELECT match_id, game_index, seat, bot, kind, detail FROM faults ORDER BY match_id, game_index, position"
        )
        return [StoredFault(*row) for row in rows]

    def replay_paths(self) -> dict[tuple[str, int], str]:
        """(match_id, game_index) -> the replay file the game was recorded in, for games that have one."""
        rows = self._db.execute("SELECT match_id, game_index, replay_path FROM games WHERE replay_path IS NOT NULL")
        return {(match_id, index): path for match_id, index, path in rows}


def _insert_rows(db: sqlite3.Connection, table: str, columns: Sequence[str], rows: list[tuple[Any, ...]]) -> None:
    marks = ", ".join("?" for _ in columns)
    db.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", rows)


def _check_same_league(path: Path, stored: Sequence[Any], given: Sequence[Any]) -> None:
    labels = ("game", "players", "seed", "config")
    for label, before, now in zip(labels, stored, given, strict=True):
        if before != now:
            raise StoreMismatch(
                f"{path} holds results of a league with {label} = {before}, but the league file says {label} = {now}; "
                "results would not be comparable: give another --db for the new setting, or restore the file"
            )

"""What a league report shows, gathered once from the store for every format of `referee tournament report`:
the ratings, per bot its games, faults (by kind) and decision times, every fault, and every game with the
replay page a person can open (when one exists on this machine).

    with LeagueStore(path, create=False) as store:
        report = league_report(store, bootstrap=1000)

`ratings_report` is the same without a store, for ratings of results from elsewhere (`tournament rate`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .league.store import BotTiming, LeagueStore, StoredFault
from .ratings.elo import Anchor, Ratings, rate
from .ratings.settling import DEFAULT_RULE, SettleRule


@dataclass(frozen=True)
class BotActivity:
    bot: str
    games: int
    faults: Mapping[str, int]
    """Fault kind -> count."""
    timing: BotTiming

    @property
    def fault_count(self) -> int:
        return sum(self.faults.values())


@dataclass(frozen=True)
class GameEntry:
    match_id: str
    index: int
    seats: tuple[str, ...]
    """The bot at each seat (StoredGame.ranks lists them in seat order)."""
    ranks: tuple[int, ...]
    faults: int
    page: Path | None
    """The game's replay page, if it exists here."""


@dataclass(frozen=True)
class LeagueReport:
    name: str
    game: str | None
    ratings: Ratings
    activity: tuple[BotActivity, ...] = ()
    """In the order of the ratings table; empty without a store."""
    games: tuple[GameEntry, ...] = ()
    faults: tuple[StoredFault, ...] = ()
    rule: SettleRule = DEFAULT_RULE
    """What separates the table's groups (tournaments.ratings.settling)."""

    @property
    def from_store(self) -> bool:
        return bool(self.activity)


def league_report(
    store: LeagueStore,
    name: str | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
    anchor: Anchor | None = None,
    rule: SettleRule = DEFAULT_RULE,
) -> LeagueReport:
    stored = store.games()
    ratings = rate([game.ranks for game in stored], bootstrap=bootstrap, seed=seed, anchor=anchor)
    faults = store.fault_list()
    timings = store.timing_totals()
    games_of = Counter(bot for game in stored for bot in game.ranks)
    kinds: dict[str, Counter[str]] = {}
    for fault in faults:
        kinds.setdefault(fault.bot, Counter())[fault.kind] += 1
    faults_in = Counter((fault.match_id, fault.index) for fault in faults)
    replays = store.replay_paths()
    bots = [rating.bot for rating in ratings.bots] + [bot for bot in store.bot_names() if bot not in games_of]
    activity = tuple(
        BotActivity(bot, games_of[bot], dict(kinds.get(bot, {})), timings.get(bot, BotTiming(0, 0.0, 0.0)))
        for bot in bots
    )
    games = tuple(
        GameEntry(
            game.match_id,
            game.index,
            tuple(game.ranks),
            tuple(game.ranks.values()),
            faults_in[(game.match_id, game.index)],
            replay_page(replays.get((game.match_id, game.index))),
        )
        for game in stored
    )
    return LeagueReport(
        name or store.league_name() or store.path.stem,
        store.league_game(),
        ratings,
        activity,
        games,
        tuple(faults),
        rule,
    )


def ratings_report(name: str, ratings: Ratings, rule: SettleRule = DEFAULT_RULE) -> LeagueReport:
    return LeagueReport(name, None, ratings, rule=rule)


def replay_page(replay_path: str | None) -> Path | None:
    """The page of a stored replay path (the path itself if it is a page, else REPLAY.html beside it), if it exists."""
    if replay_path is None:
        return None
    path = Path(replay_path)
    page = path if path.suffix == ".html" else path.with_suffix(".html")
    return page if page.is_file() else None

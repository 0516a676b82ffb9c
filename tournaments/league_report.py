"""What a league report shows, gathered once from the store for every format of `referee tournament report`:
the ratings, per bot its games, faults (by kind) and decision times, every fault, every game with the
replay page a person can open (when one exists on this machine), and the soft-play check (pairs of bots
whose results together depart from their ratings: tournaments/ratings/soft_play.py).

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
from .ratings.soft_play import SoftPlayCheck, soft_play_check


@dataclass(frozen=True)
class BotActivity:
    bot: str
    games: int
    faults: Mapping[str, int]
    """Fault kind -> count."""
    timing: BotTiming
    clock_warning: str | None = None
    """Said when its slowest decision took over half the move time (clock_warning)."""

    @property
    def fault_count(self) -> int:
        return sum(self.faults.values())


def clock_warning(max_ms: float, move_time_ms: int | None) -> str | None:
    """A warning for a bot whose slowest decision took over half the move time: a busier machine may time it
    out (check-bot warns the same way)."""
    if move_time_ms is None or max_ms <= move_time_ms / 2:
        return None
    return f"its slowest decision took {max_ms:,.0f} ms of {move_time_ms:,} ms: a busier machine may time it out"


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
    scores: tuple[int, ...] = ()
    """The final score at each seat."""
    decisions: int | None = None
    """The decisions its bots made (its length; fallback actions not counted)."""


@dataclass(frozen=True)
class LeagueReport:
    name: str
    game: str | None
    ratings: Ratings
    activity: tuple[BotActivity, ...] = ()
    """In the order of the ratings table; empty without a store."""
    games: tuple[GameEntry, ...] = ()
    faults: tuple[StoredFault, ...] = ()
    soft_play: SoftPlayCheck | None = None
    """Pairs whose results together depart from their ratings (tournaments.ratings.soft_play); None without a
    store."""
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
    lengths = store.game_decisions()
    bots = [rating.bot for rating in ratings.bots] + [bot for bot in store.bot_names() if bot not in games_of]
    move_time_ms = store.league_move_time_ms()
    activity = tuple(_activity(bot, games_of[bot], kinds.get(bot, {}), timings, move_time_ms) for bot in bots)
    games = tuple(
        GameEntry(
            game.match_id,
            game.index,
            tuple(game.ranks),
            tuple(game.ranks.values()),
            faults_in[(game.match_id, game.index)],
            replay_page(replays.get((game.match_id, game.index))),
            tuple(game.scores.values()),
            lengths.get((game.match_id, game.index)),
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
        soft_play_check([game.ranks for game in stored]),
        rule,
    )


def _activity(
    bot: str, games: int, kinds: Mapping[str, int], timings: Mapping[str, BotTiming], move_time_ms: int | None
) -> BotActivity:
    timing = timings.get(bot, BotTiming(0, 0.0, 0.0))
    return BotActivity(bot, games, dict(kinds), timing, clock_warning(timing.max_ms, move_time_ms))


def ratings_report(name: str, ratings: Ratings, rule: SettleRule = DEFAULT_RULE) -> LeagueReport:
    return LeagueReport(name, None, ratings, rule=rule)


def replay_page(replay_path: str | None) -> Path | None:
    """The page of a stored replay path (the path itself if it is a page, else REPLAY.html beside it), if it exists."""
    if replay_path is None:
        return None
    path = Path(replay_path)
    page = path if path.suffix == ".html" else path.with_suffix(".html")
    return page if page.is_file() else None

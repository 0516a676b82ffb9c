"""What a league's store says, gathered once for every command that shows it.

`league_results` builds a LeagueResults: the ratings (with their crosstable and, under a SettleRule, their
groups), faults and forfeits per bot, retired bots, games at each isolation level, the soft-play check (pairs
of bots whose results together depart from their ratings: tournaments/ratings/soft_play.py) and, where the
league has baselines, each student's results against each and its mark. `tournament run`, `tournament table`,
`tournament report` and grading (tournaments/classroom/grading.py) all read it.

    with LeagueStore(path, create=False) as store:
        results = league_results(store, league, bootstrap=1000)
        report = league_report(store, bootstrap=1000)

`league_report` adds what the report page shows besides: per bot its games, faults (by kind) and decision
times, every fault, every game with the replay page a person can open (when one exists on this machine).
`ratings_report` is the same without a store, for ratings of results from elsewhere (`tournament rate`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from referee.isolation.sandbox import Isolation

from .league.league_file import League
from .league.store import BotTiming, LeagueStore, RemoteTotals, StoredFault, StoredGame
from .ratings.elo import DEFAULT_BOOTSTRAP, DEFAULT_PRIOR_DRAWS, Anchor, Ratings, rate_tallies
from .ratings.marks import BaselineResult, HeldMark, against_baselines, mark_held
from .ratings.settling import DEFAULT_RULE, Settlement, SettleRule, settlement
from .ratings.soft_play import SoftPlayCheck
from .ratings.tallies import GameTallies
from .settle import league_soft_play


@dataclass(frozen=True)
class LeagueResults:
    """A league's results as its store holds them (league_results)."""

    name: str
    game: str | None
    games: int
    ratings: Ratings
    """In table order, with the crosstable (Ratings.crosstable)."""
    faults: Mapping[str, int]
    """Bot -> faults over every stored game."""
    forfeits: Mapping[str, int]
    """Bot -> games forfeited."""
    retired: tuple[str, ...]
    """Bots no longer in the league file whose games still count."""
    unsandboxed: int
    """Games played without the sandbox."""
    isolation: Mapping[str, int]
    """Games played at each isolation level (kernel, full, partial, none), every level named."""
    soft_play: SoftPlayCheck
    rule: SettleRule = DEFAULT_RULE
    """What separates the table's groups (tournaments.ratings.settling)."""
    baselines: tuple[str, ...] = ()
    """The league's baselines (needs the league file)."""
    against: Mapping[str, tuple[BaselineResult, ...]] = field(default_factory=dict)
    """Student -> its results against each baseline (tournaments.ratings.marks); empty without baselines."""
    marks: Mapping[str, float] = field(default_factory=dict)
    """Student -> its mark under the league file's [marks] where the mark holds (tournaments.ratings.marks:
    an uncertain mark is left out, and `held_marks` says why); empty without marks."""
    held_marks: Mapping[str, HeldMark] = field(default_factory=dict)
    """Student -> the marks its shares' intervals allow (one where it holds); empty without marks."""
    unrated: int = 0
    """Games stored unrated (a league file's [remote] rated = false): counted in `isolation`, not in `ratings`."""
    remote: Mapping[str, RemoteTotals] = field(default_factory=dict)
    """Remote bot -> its network figures over its stored games (lag, quota credit)."""

    @property
    def settlement(self) -> Settlement | None:
        """The table's groups and adjacent pairs under `rule` (None without a bootstrap)."""
        return settlement(self.ratings, self.rule)


def league_results(
    store: LeagueStore,
    league: League | None = None,
    *,
    name: str | None = None,
    bootstrap: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
    prior_draws: float = DEFAULT_PRIOR_DRAWS,
    anchor: Anchor | None = None,
    rule: SettleRule = DEFAULT_RULE,
) -> LeagueResults:
    """The results of every game in `store`. `league` (optional: a store alone knows no baselines) names the
    baselines and marks; `name` defaults to the store's league name, else the store file's stem. Raises
    tournaments.ratings.tallies.RatingInputError where the games cannot be rated (an anchor that never played,
    no prior where an Elo would be infinite)."""
    return _results(store, store.games(), league, name, bootstrap, seed, prior_draws, anchor, rule)


def _results(
    store: LeagueStore,
    stored: Sequence[StoredGame],
    league: League | None,
    name: str | None,
    bootstrap: int,
    seed: int,
    prior_draws: float,
    anchor: Anchor | None,
    rule: SettleRule,
) -> LeagueResults:
    tallies = GameTallies.of_counts(store.outcome_counts())
    ratings = rate_tallies(tallies, bootstrap=bootstrap, seed=seed, prior_draws=prior_draws, anchor=anchor)
    baselines = tuple(league.baselines) if league is not None else ()
    students = [bot for bot in (*(rating.bot for rating in ratings.bots), *store.bot_names()) if bot not in baselines]
    against = {bot: against_baselines(stored, bot, baselines) for bot in dict.fromkeys(students)} if baselines else {}
    marks = league.marks if league is not None else {}
    held = {bot: mark for bot, results in against.items() if (mark := mark_held(results, marks)) is not None}
    counts = store.isolation_counts()
    return LeagueResults(
        name=name or store.league_name() or store.path.stem,
        game=store.league_game(),
        games=tallies.games,
        ratings=ratings,
        faults=dict(store.fault_counts()),
        forfeits=dict(store.forfeit_counts()),
        retired=tuple(store.retired_bots()),
        unsandboxed=store.unsandboxed_game_count(),
        isolation={level.value: counts.get(level, 0) for level in Isolation},
        soft_play=league_soft_play(store, stored),
        rule=rule,
        baselines=baselines,
        against=against,
        marks={bot: mark.mark for bot, mark in held.items() if mark.mark is not None},
        held_marks=held,
        unrated=store.unrated_game_count(),
        remote=store.remote_totals(),
    )


def remote_notes(result: LeagueResults) -> list[str]:
    """What the table says of games with a remote seat: their isolation, and those its ratings leave out."""
    remote = result.isolation[Isolation.REMOTE.value]
    notes = []
    if remote:
        notes.append(
            f"{remote} game(s) had a remote seat (isolation remote): that bot ran on its author's machine, outside "
            "the sandbox, and its clock counted the network, less the lag quota's credit."
        )
    if result.unrated:
        notes.append(
            f"{result.unrated} game(s) with a remote seat are unrated ([remote] rated = false): they are stored and "
            "listed, and these ratings leave them out."
        )
    return notes


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
    notes: tuple[str, ...] = ()
    """What the Elo table's notes add: games with a remote seat, and those left out of the ratings
    (remote_notes)."""

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
    prior_draws: float = DEFAULT_PRIOR_DRAWS,
) -> LeagueReport:
    stored = store.games()
    results = _results(store, stored, None, name, bootstrap, seed, prior_draws, anchor, rule)
    faults = store.fault_list()
    timings = store.timing_totals()
    games_of = Counter(bot for game in stored for bot in game.ranks)
    kinds: dict[str, Counter[str]] = {}
    for fault in faults:
        kinds.setdefault(fault.bot, Counter())[fault.kind] += 1
    faults_in = Counter((fault.match_id, fault.index) for fault in faults)
    replays = store.replay_paths()
    lengths = store.game_decisions()
    bots = [rating.bot for rating in results.ratings.bots] + [bot for bot in store.bot_names() if bot not in games_of]
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
        results.name,
        results.game,
        results.ratings,
        activity,
        games,
        tuple(faults),
        results.soft_play,
        rule,
        tuple(remote_notes(results)),
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

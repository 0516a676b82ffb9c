"""A league's bots graded from its store: one row per bot with its place, Elo and 95% interval, games, mean
rank and score, faults by kind (with the first one's detail), decision times and the paths of its logs.
`referee tournament report --format csv|json` writes it (tournaments/classroom/grade_formats.py).

    with LeagueStore(league.default_db, create=False) as store:
        report = grade_league(store, league, bootstrap=1000)

Rows follow the Elo table (tournaments.ratings.elo); a bot of the store without games comes last. The league
(optional: a store alone has no log folder) finds the logs, LOG_DIR/MATCH/NAME.log as the referee names them,
and marks the baselines of a baselines schedule.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from referee.botspec import log_file_names
from referee.records import FaultKind

from ..league.league_file import League
from ..league.store import BotTiming, LeagueStore, StoredFault, StoredGame
from ..ratings.elo import Anchor, BotRating, rate


@dataclass(frozen=True)
class FirstFault:
    kind: FaultKind
    detail: str
    match_id: str
    game_index: int


@dataclass(frozen=True)
class BotGrade:
    place: int
    """1 for the top of the table."""
    bot: str
    baseline: bool
    elo: float | None
    """None for a bot without games."""
    elo_low: float | None
    elo_high: float | None
    """The 95% interval (None without a bootstrap, or without games)."""
    games: int
    mean_rank: float | None
    mean_score: float | None
    """The game's own score (SCOUT points, Scauver chips), averaged over the bot's games."""
    faults: Mapping[FaultKind, int]
    """Every kind, 0 when none."""
    first_fault: FirstFault | None
    decisions: int
    mean_ms: float
    max_ms: float
    logs: tuple[str, ...]
    """Its logs that exist, one per match it played (a bot that never started has none)."""

    @property
    def fault_count(self) -> int:
        return sum(self.faults.values())


@dataclass(frozen=True)
class GradeReport:
    league: str
    game: str | None
    games: int
    bootstrap: int
    bots: tuple[BotGrade, ...]


def grade_league(
    store: LeagueStore,
    league: League | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
    anchor: Anchor | None = None,
) -> GradeReport:
    stored = store.games()
    ratings = rate([game.ranks for game in stored], bootstrap=bootstrap, seed=seed, anchor=anchor)
    facts = _Facts(
        ratings={rating.bot: rating for rating in ratings.bots},
        faults=_faults_by_bot(store.fault_list()),
        timings=store.timing_totals(),
        scores=_mean_scores(stored),
        logs=_logs(store.match_tables(), league),
        baselines=frozenset(league.baselines if league is not None else ()),
    )
    names = [rating.bot for rating in ratings.bots] + [name for name in store.bot_names() if name not in facts.ratings]
    name = league.name if league is not None else store.league_name() or store.path.stem
    rows = tuple(facts.grade(place, bot) for place, bot in enumerate(names, start=1))
    return GradeReport(name, store.league_game(), len(stored), bootstrap, rows)


@dataclass(frozen=True)
class _Facts:
    """What the store (and the league) say about every bot, by name."""

    ratings: Mapping[str, BotRating]
    faults: Mapping[str, list[StoredFault]]
    timings: Mapping[str, BotTiming]
    scores: Mapping[str, float]
    logs: Mapping[str, list[str]]
    baselines: frozenset[str]

    def grade(self, place: int, bot: str) -> BotGrade:
        rating = self.ratings.get(bot)
        faults = self.faults.get(bot, [])
        kinds = Counter(FaultKind(fault.kind) for fault in faults)
        timing = self.timings.get(bot, BotTiming(0, 0.0, 0.0))
        interval = rating.ci95 if rating is not None else None
        return BotGrade(
            place=place,
            bot=bot,
            baseline=bot in self.baselines,
            elo=rating.elo if rating is not None else None,
            elo_low=interval[0] if interval else None,
            elo_high=interval[1] if interval else None,
            games=rating.games if rating is not None else 0,
            mean_rank=rating.mean_rank if rating is not None else None,
            mean_score=self.scores.get(bot),
            faults={kind: kinds[kind] for kind in FaultKind},
            first_fault=_first(faults),
            decisions=timing.decisions,
            mean_ms=timing.mean_ms,
            max_ms=timing.max_ms,
            logs=tuple(self.logs.get(bot, [])),
        )


def _first(faults: list[StoredFault]) -> FirstFault | None:
    if not faults:
        return None
    first = faults[0]
    return FirstFault(FaultKind(first.kind), first.detail, first.match_id, first.index)


def _faults_by_bot(faults: list[StoredFault]) -> dict[str, list[StoredFault]]:
    by_bot: dict[str, list[StoredFault]] = {}
    for fault in faults:
        by_bot.setdefault(fault.bot, []).append(fault)
    return by_bot


def _mean_scores(games: list[StoredGame]) -> dict[str, float]:
    totals: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    for game in games:
        for bot, score in game.scores.items():
            totals[bot] += score
            counts[bot] += 1
    return {bot: totals[bot] / counts[bot] for bot in counts}


def _logs(tables: Mapping[str, tuple[str, ...]], league: League | None) -> dict[str, list[str]]:
    """Bot -> the logs of its matches that exist (LOG_DIR/MATCH/NAME.log, named as referee.session names them)."""
    if league is None or league.log_dir is None:
        return {}
    logs: dict[str, list[str]] = {}
    for match_id, table in tables.items():
        for bot, file in zip(table, log_file_names(table), strict=True):
            path = Path(league.log_dir) / match_id / file
            if path.is_file():
                logs.setdefault(bot, []).append(str(path))
    return logs

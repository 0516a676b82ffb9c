"""A league's bots graded from its store: one row per bot with its place, Elo and 95% interval, games, mean
rank and score, faults by kind (with the first one's detail), decision times and the paths of its logs.
`referee tournament report --format csv|json` writes it (tournaments/classroom/grade_formats.py).

    with LeagueStore(league.default_db, create=False) as store:
        report = grade_league(store, league, bootstrap=1000)

Rows follow the Elo table (tournaments.ratings.elo); a bot of the store without games comes last. The league
(optional: a store alone has no log folder) finds the logs, LOG_DIR/MATCH/NAME.log as the referee names them
(and LOG_DIR/builds/NAME.log of a build), and says which bots are baselines: those are listed after the
students, without a place, and every student gets its results against each (tournaments.ratings.marks) and,
with the league file's [marks], a mark.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from referee.botspec import log_file_names
from referee.records import FaultKind

from ..league.builds import BUILD_LOGS
from ..league.league_file import League
from ..league.store import BotTiming, LeagueStore, StoredFault, StoredGame
from ..league_report import clock_warning, league_results
from ..ratings.elo import DEFAULT_PRIOR_DRAWS, Anchor, BotRating
from ..ratings.marks import BaselineResult, HeldMark
from ..ratings.soft_play import SoftPlayCheck
from .copies import CopyFlag, find_copies
from .fault_groups import FaultGroup, group_faults
from .pseudonyms import league_pseudonyms


@dataclass(frozen=True)
class FirstFault:
    kind: FaultKind
    detail: str
    match_id: str
    game_index: int


@dataclass(frozen=True)
class BotGrade:
    place: int | None
    """1 for the top of the students' table; None for a baseline (listed apart)."""
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
    fault_groups: tuple[FaultGroup[tuple[str, int]], ...] = ()
    """Its faults, identical ones told once (tournaments.classroom.fault_groups), each with the (match, game)
    pairs it happened in."""
    clock_warning: str | None = None
    """Said when its slowest decision took over half the league's move time (None otherwise, or without the
    league file, whose limits say what the move time is)."""
    against: tuple[BaselineResult, ...] = ()
    """Its results against each baseline (none for a baseline)."""
    mark: float | None = None
    """Its mark from [marks] where it holds (None without marks, for a baseline, and where it is uncertain)."""
    held_mark: HeldMark | None = None
    """The marks its shares' 95% intervals allow (tournaments.ratings.marks): one, or an uncertain range with the
    thresholds it straddles (None without marks, and for a baseline)."""
    build_log: str | None = None
    """The log of its build, if it had one."""
    language: str | None = None
    version: str | None = None
    """What its folder's bot.toml says (for the teacher; neither changes how it is run)."""

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
    """The students in place order, then the baselines."""
    baselines: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    """The league's notes on folders it skipped (tournaments.league.league_file.League.skipped)."""
    copies: tuple[CopyFlag, ...] = ()
    """Pairs of students that may be copies (tournaments.classroom.copies; needs the league file)."""
    changed: tuple[str, ...] = ()
    """Bots whose program changed since their stored games: their rows are the old program's until
    `tournament run --replay-changed` (needs the league file)."""

    soft_play: SoftPlayCheck | None = None
    """Pairs whose results together depart from their ratings (tournaments.ratings.soft_play)."""
    pseudonyms: Mapping[str, str] = field(default_factory=dict)
    """Student -> the name published pages show (tournaments.classroom.pseudonyms; needs the league file)."""

    def copies_of(self, bot: str) -> tuple[CopyFlag, ...]:
        return tuple(flag for flag in self.copies if bot in flag.bots)

    @property
    def students(self) -> tuple[BotGrade, ...]:
        return tuple(grade for grade in self.bots if not grade.baseline)

    @property
    def baseline_grades(self) -> tuple[BotGrade, ...]:
        return tuple(grade for grade in self.bots if grade.baseline)


def grade_league(
    store: LeagueStore,
    league: League | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
    anchor: Anchor | None = None,
    prior_draws: float = DEFAULT_PRIOR_DRAWS,
) -> GradeReport:
    stored = store.games()
    results = league_results(
        store,
        league,
        name=league.name if league is not None else None,
        bootstrap=bootstrap,
        seed=seed,
        prior_draws=prior_draws,
        anchor=anchor,
    )
    facts = _Facts(
        ratings={rating.bot: rating for rating in results.ratings.bots},
        faults=_faults_by_bot(store.fault_list()),
        timings=store.timing_totals(),
        scores=_mean_scores(stored),
        logs=_logs(store.match_tables(), league),
        move_time_ms=league.limits.move_time_ms if league is not None else None,
        baselines=results.baselines,
        against=results.against,
        marks=results.marks,
        held_marks=results.held_marks,
        build_logs=_build_logs(league),
        manifests=_manifests(league),
    )
    names = [rating.bot for rating in results.ratings.bots]
    names += [name for name in store.bot_names() if name not in facts.ratings]
    students = [bot for bot in names if bot not in facts.baselines]
    rows = [facts.grade(place, bot) for place, bot in enumerate(students, start=1)]
    rows += [facts.grade(None, bot) for bot in names if bot in facts.baselines]
    skipped = league.skipped if league is not None else ()
    copies = find_copies(league, store) if league is not None else ()
    changed = tuple(sorted(store.changed_bots(league))) if league is not None else ()
    return GradeReport(
        results.name,
        results.game,
        results.games,
        bootstrap,
        tuple(rows),
        facts.baselines,
        skipped,
        copies,
        changed,
        results.soft_play,
        league_pseudonyms(store, students, league.pseudonyms) if league is not None else {},
    )


@dataclass(frozen=True)
class _Facts:
    """What the store (and the league) say about every bot, by name."""

    ratings: Mapping[str, BotRating]
    faults: Mapping[str, list[StoredFault]]
    timings: Mapping[str, BotTiming]
    scores: Mapping[str, float]
    logs: Mapping[str, list[str]]
    baselines: tuple[str, ...]
    against: Mapping[str, tuple[BaselineResult, ...]]
    """Student -> its results against each baseline."""
    marks: Mapping[str, float]
    """Student -> its mark where it holds (none without [marks])."""
    held_marks: Mapping[str, HeldMark]
    build_logs: Mapping[str, str]
    manifests: Mapping[str, tuple[str | None, str | None]]
    move_time_ms: int | None = None

    def grade(self, place: int | None, bot: str) -> BotGrade:
        rating = self.ratings.get(bot)
        faults = self.faults.get(bot, [])
        kinds = Counter(FaultKind(fault.kind) for fault in faults)
        timing = self.timings.get(bot, BotTiming(0, 0.0, 0.0))
        interval = rating.ci95 if rating is not None else None
        baseline = bot in self.baselines
        against = () if baseline else self.against.get(bot, ())
        return BotGrade(
            place=place,
            bot=bot,
            baseline=baseline,
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
            fault_groups=group_faults((f, (f.match_id, f.index)) for f in faults),
            clock_warning=clock_warning(timing.max_ms, self.move_time_ms),
            against=against,
            mark=None if baseline else self.marks.get(bot),
            held_mark=None if baseline else self.held_marks.get(bot),
            build_log=self.build_logs.get(bot),
            language=self.manifests.get(bot, (None, None))[0],
            version=self.manifests.get(bot, (None, None))[1],
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


def _manifests(league: League | None) -> dict[str, tuple[str | None, str | None]]:
    """Bot -> (language, version) its bot.toml declares, or the version its [[bots]] entry declares."""
    if league is None:
        return {}
    declared = {}
    for bot in league.bots:
        language = bot.submission.manifest.language if bot.submission is not None else None
        declared[bot.name] = (language, bot.version)
    return declared


def _build_logs(league: League | None) -> dict[str, str]:
    """Bot -> the log of its build (LOG_DIR/builds/NAME.log), for the bots that have one."""
    if league is None or league.log_dir is None:
        return {}
    logs = {}
    for bot in league.bots:
        path = Path(league.log_dir) / BUILD_LOGS / f"{bot.name}.log"
        if bot.submission is not None and bot.submission.build is not None and path.is_file():
            logs[bot.name] = str(path)
    return logs

"""Playing a league until its table is settled: rounds of matches where the order is still undecided.

    result = settle_league(league, store, executor, SettleSettings(rule, max_games=2000))

After the league's own schedule (played by the caller, as any run: the floor of games for every bot), each
round rates every stored game (tournaments.ratings.elo, the bootstrap of the table: same resamples, same
seed), judges the adjacent pairs (tournaments.ratings.settling) and stops when the table is settled or the
budget is spent; else it schedules the next round's tables (tournaments.ratings.allocation), records them in
the store (LeagueStore.add_settle_round) and plays them on the executor. Each match is a balanced seating
design over deals of its own (tournaments.league.schedule.settle_games).

Resuming: the store records a round's matches before they are played, and a rerun first finishes the
matches of stored rounds (only their missing games), then decides the next round from the stored results.
So the next round is a function of the stored results and the league's seed alone (the uniform share of a
round's tables is drawn from a seed derived from the league's and the round's number), a game is never played
twice, and a run stopped by Ctrl-C or a kill continues where it was.

The budget counts every stored game, the schedule's included; a round is cut to the whole matches that fit,
so a match is never left short of its balanced design by the budget.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from referee.records import GameRecord

from .league.executors import Executor
from .league.league_file import League
from .league.runner import play_specs, runnable_specs
from .league.schedule import ScheduledMatch, allowed_table, derive_seed, settle_games, settle_matches
from .league.store import LeagueStore, StoredGame
from .ratings.allocation import next_tables, pair_effect_tables
from .ratings.elo import DEFAULT_BOOTSTRAP, DEFAULT_PRIOR_DRAWS, Ratings, rate_tallies
from .ratings.settling import DEFAULT_RULE, Settlement, SettleRule, settlement, tie_games
from .ratings.soft_play import PairCheck, SoftPlayCheck, soft_play_check
from .ratings.tallies import GameTallies

TIE_SHARES = 2
"""Without max_games, the budget is the schedule's games plus this many times tie_games(resolution) for every
adjacent pair: enough if every pair were two equal bots, with as much again for a round's other tables."""


def default_budget(scheduled_games: int, bots: int, rule: SettleRule) -> int:
    """The settling budget without max_games (TIE_SHARES): 96 + 2 x 3 x 186 = 1,212 games for four bots at
    +/-100 Elo with a 96-game schedule; +/-20 would make it 27,924."""
    return scheduled_games + TIE_SHARES * max(bots - 1, 1) * tie_games(rule.resolution)


class Stop(enum.StrEnum):
    SETTLED = "settled"
    BUDGET = "budget"
    """The next round's matches would not fit in max_games."""
    STUCK = "stuck"
    """Not settled, and no table would help: pools that never met, or open pairs of retired bots."""


@dataclass(frozen=True)
class SettleSettings:
    rule: SettleRule = DEFAULT_RULE
    max_games: int | None = None
    """Every stored game counts; None: default_budget."""
    bootstrap: int = DEFAULT_BOOTSTRAP
    prior_draws: float = DEFAULT_PRIOR_DRAWS

    def __post_init__(self) -> None:
        if self.bootstrap < 1:
            raise ValueError("settling judges pairs by the bootstrap: give at least one resample")


DEFAULT_SETTINGS = SettleSettings()


@dataclass(frozen=True)
class SettleRound:
    """What a round decided, for progress: its number, the open pairs it plays and the games so far."""

    number: int
    verdict: Settlement
    matches: tuple[ScheduledMatch, ...]
    stored: int
    budget: int
    suspected: tuple[PairCheck, ...] = ()
    """The soft-play pairs whose tables it plays (league_soft_play)."""


@dataclass(frozen=True)
class SettleResult:
    stop: Stop
    rounds: int
    """Settling rounds in the store (this run's and earlier runs')."""
    games: int
    budget: int
    ratings: Ratings
    verdict: Settlement
    soft_play: SoftPlayCheck | None = None
    """The soft-play check of the last look (None from a run that looked at none)."""


def league_soft_play(store: LeagueStore, stored: Sequence[StoredGame] | None = None) -> SoftPlayCheck:
    """The soft-play check (tournaments.ratings.soft_play) of `store`'s games (or `stored`, its games as read
    already), leaving out every game in which a seat forfeited: a forfeiting seat ranks last whatever the others
    do, so a crashing bot would make the bots at its tables look fed."""
    forfeited = store.forfeited_games()
    games = store.games() if stored is None else stored
    return soft_play_check([game.ranks for game in games if (game.match_id, game.index) not in forfeited])


def settle_league(
    league: League,
    store: LeagueStore,
    executor: Executor,
    settings: SettleSettings = DEFAULT_SETTINGS,
    *,
    scheduled_games: int,
    sandbox: bool = True,
    on_round: Callable[[SettleRound], None] | None = None,
    on_stored: Callable[[GameRecord], None] | None = None,
) -> SettleResult:
    """Play settling rounds into `store` (bound to `league`, its schedule played) until the table is settled,
    the budget is spent or no table would help. `scheduled_games`: the games of the league's schedule (for the
    default budget)."""
    budget = settings.max_games or default_budget(scheduled_games, len(league.bots), settings.rule)
    key = store.deal_key()
    rounds = store.settle_rounds()
    unfinished = [
        ScheduledMatch(entry.match_id, entry.table, settle_games(league, key, number, entry.slot), entry.slot)
        for number, entries in rounds.items()
        for entry in entries
    ]
    play_specs(
        runnable_specs(league, store, store.missing(unfinished), sandbox=sandbox),
        store,
        executor,
        on_stored,
        remote=league.remote,
    )
    number = max(rounds, default=0)
    seatable = [bot.name for bot in league.bots]
    while True:
        ratings = rate_tallies(
            GameTallies.of_counts(store.outcome_counts()), settings.bootstrap, prior_draws=settings.prior_draws
        )
        verdict = settlement(ratings, settings.rule)
        assert verdict is not None
        stored = store.game_count()
        check = league_soft_play(store)
        suspected = check.suspected
        if verdict.settled and not suspected:
            return SettleResult(Stop.SETTLED, number, stored, budget, ratings, verdict, check)
        rng = random.Random(derive_seed("settle", league.seed, number + 1))
        tables = pair_effect_tables(ratings, suspected, league.players, seatable, league.games_per_match)
        if not verdict.settled:
            tables += next_tables(ratings, verdict, league.players, seatable, league.games_per_match, rng)
        tables = [table for table in tables if allowed_table(league, table)]
        room = (budget - stored) // league.games_per_match
        if not tables:
            return SettleResult(Stop.STUCK, number, stored, budget, ratings, verdict, check)
        if room < 1:
            return SettleResult(Stop.BUDGET, number, stored, budget, ratings, verdict, check)
        number += 1
        matches = settle_matches(league, key, number, tables[:room])
        store.add_settle_round(number, matches)
        if on_round is not None:
            on_round(SettleRound(number, verdict, tuple(matches), stored, budget, suspected))
        play_specs(
            runnable_specs(league, store, matches, sandbox=sandbox), store, executor, on_stored, remote=league.remote
        )

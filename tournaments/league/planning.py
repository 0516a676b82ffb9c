"""What a run of a league would play, and how long it would take, without playing or writing anything
(`referee tournament run --dry-run`).

    estimate = plan_estimate(league, store_or_None, concurrency=2)

Games: the schedule's, less those the store holds, less those of bots held for a changed program (unless they
are to be replayed). Time, at `concurrency` matches at once:

    (games x decisions per game x time per decision + matches x MATCH_START_S) / concurrency

From the store when it holds games (its decisions per game and mean decision time, measured), else decisions
per game from ESTIMATE_GAMES games of random play in the rules engine, and ASSUMED_DECISION_MS per decision
(stated with the estimate). The worst case charges every decision the whole clock (every bot hangs).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from referee.deals import DealKey
from referee.games import load_game

from .league_file import League
from .schedule import league_schedule
from .store import LeagueStore

MATCH_START_S = 1.0
"""Starting a match's bots and their handshakes, and their fresh starts between rotations (an assumption:
about what Python bots take on a laptop)."""
ASSUMED_DECISION_MS = 5.0
"""What a decision is assumed to take when the store has measured none: a quick bot (the built-in heuristics
take about 1 ms); a bot that thinks for its whole clock is the worst case."""
ESTIMATE_GAMES = 5


@dataclass(frozen=True)
class Estimate:
    games: int
    """Games a run would play."""
    matches: int
    stored: int
    held: int
    """Games that wait for bots whose program changed (not replayed)."""
    decisions_per_game: float
    ms_per_decision: float
    seconds: float
    worst_seconds: float
    measured: bool
    """Whether the per-decision figures come from the store."""
    changed: tuple[str, ...] = ()
    """Bots whose program changed since their stored games."""
    changed_games: int = 0
    """Stored games of the matches of changed bots (what --replay-changed plays again)."""


def plan_estimate(
    league: League, store: LeagueStore | None, concurrency: int, replay_changed: bool = False
) -> Estimate:
    schedule = league_schedule(league, DealKey.fresh())
    changed = set(store.changed_bots(league)) if store is not None else set()
    replayed = changed if replay_changed else set()
    played = store.played() if store is not None else set()
    to_play = held = stored = matches = changed_games = 0
    for match in schedule:
        if changed & set(match.table):
            changed_games += sum((match.match_id, spec.index) in played for spec in match.games)
        if replayed & set(match.table):
            missing = len(match.games)
        else:
            missing = sum((match.match_id, spec.index) not in played for spec in match.games)
        stored += len(match.games) - missing
        if changed & set(match.table) and not replay_changed:
            held += missing
        elif missing:
            to_play += missing
            matches += 1
    decisions, ms, measured = _decision_figures(league, store)
    move_s = league.limits.move_time_ms / 1000
    seconds = (to_play * decisions * ms / 1000 + matches * MATCH_START_S) / concurrency
    worst = (to_play * decisions * move_s + matches * league.players * league.limits.startup_time_s) / concurrency
    return Estimate(
        to_play, matches, stored, held, decisions, ms, seconds, worst, measured, tuple(sorted(changed)), changed_games
    )


def _decision_figures(league: League, store: LeagueStore | None) -> tuple[float, float, bool]:
    """(decisions per game, ms per decision, measured?)."""
    if store is not None and store.game_count():
        timings = store.timing_totals().values()
        decisions = sum(timing.decisions for timing in timings)
        if decisions:
            total_ms = sum(timing.decisions * timing.mean_ms for timing in timings)
            return decisions / store.game_count(), total_ms / decisions, True
    return _random_play_decisions(league), min(ASSUMED_DECISION_MS, float(league.limits.move_time_ms)), False


def _random_play_decisions(league: League) -> float:
    game = load_game(league.game)
    chance = random.Random(0)
    total = 0
    for seed in range(ESTIMATE_GAMES):
        state = game.new_game(league.players, seed, league.config)
        while not state.is_over():
            for seat in state.to_move():
                state.apply(seat, chance.choice(list(state.legal_actions_view(seat))))
                total += 1
    return total / ESTIMATE_GAMES

"""Two copies of one bot get the same table: the shipped bench.toml league (heuristic-a and heuristic-b run the
same program, so do the three random bots) gives every copy exactly the same seats, deals and neighbours, and
played at its smallest balanced size it rates the two heuristic copies with overlapping intervals, far apart
from the random bots."""

from __future__ import annotations

import dataclasses
import itertools
from collections import Counter
from pathlib import Path

import pytest

from referee.deals import DealKey
from tournaments.bench.league import BENCH_LEAGUE
from tournaments.league.executors import LocalExecutor
from tournaments.league.league_file import League, load_league
from tournaments.league.runner import plan_league, play_league
from tournaments.league.schedule import league_schedule
from tournaments.league.store import LeagueStore
from tournaments.ratings.elo import rate

pytestmark = pytest.mark.timeout(300)


def exposure(
    league: League, bot: str, swap: dict[str, str]
) -> tuple[Counter[tuple[int, int]], Counter[tuple[str, str]]]:
    """Where `bot` sits over the whole league: (seat, deal) counts, and (bot before it, bot after it) counts in
    turn order, with the names in `swap` exchanged."""
    seats: Counter[tuple[int, int]] = Counter()
    neighbours: Counter[tuple[str, str]] = Counter()
    players = league.players
    for match in league_schedule(league, DealKey.fresh()):
        for game in match.games:
            names = [swap.get(name, name) for name in (match.table[index] for index in game.seating)]
            if swap.get(bot, bot) not in names:
                continue
            seat = names.index(swap.get(bot, bot))
            seats[seat, game.index // players] += 1
            neighbours[names[(seat - 1) % players], names[(seat + 1) % players]] += 1
    return seats, neighbours


def test_copies_of_one_bot_sit_everywhere_the_same_number_of_times() -> None:
    league = load_league(BENCH_LEAGUE)
    copies = [(a.name, b.name) for a, b in itertools.combinations(league.bots, 2) if a.command == b.command]
    assert ("heuristic-a", "heuristic-b") in copies and len(copies) == 4
    for first, second in copies:
        swapped = {first: second, second: first}
        assert exposure(league, first, {}) == exposure(league, second, swapped), (first, second)


def test_two_copies_of_one_bot_get_overlapping_intervals(tmp_path: Path) -> None:
    shipped = load_league(BENCH_LEAGUE)
    league = dataclasses.replace(shipped, deals_per_match=2)
    with LeagueStore(tmp_path / "bench.sqlite") as store:
        plan = plan_league(league, store)
        assert plan.scheduled == 60
        assert play_league(plan, store, LocalExecutor(2)) == 60
        ratings = {bot.bot: bot for bot in rate([game.ranks for game in store.games()], bootstrap=300).bots}
    heuristics = [ratings["heuristic-a"], ratings["heuristic-b"]]
    randoms = [ratings[name] for name in ("random-a", "random-b", "random-c")]
    assert all(bot.ci95 is not None for bot in ratings.values())
    (low_a, high_a), (low_b, high_b) = (bot.ci95 for bot in heuristics)  # type: ignore[misc]
    assert low_a <= high_b and low_b <= high_a, heuristics
    assert min(low_a, low_b) > max(bot.ci95[1] for bot in randoms), "the test tells bots apart"  # type: ignore[index]

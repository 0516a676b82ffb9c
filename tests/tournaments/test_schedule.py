"""Schedules: every table or a balanced sample, duplicate deals in the balanced seating design, deals from the
store's key (never from the league's seed), stable ids."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.deals import DealKey
from referee.seating import design_deals
from tournaments.league.league_file import load_league
from tournaments.league.schedule import balanced_sample, league_schedule, league_tables

NAMES = [f"bot{number}" for number in range(8)]
KEY = DealKey.from_seed(1)


@pytest.mark.parametrize(("pool", "players"), [(4, 3), (6, 3), (6, 4), (7, 5), (5, 2)])
def test_round_robin_meets_every_subset_once(write_league, pool: int, players: int) -> None:
    league = load_league(write_league(bots=NAMES[:pool], players=players))
    tables = league_tables(league)
    assert sorted(tables) == [tuple(table) for table in itertools.combinations(sorted(NAMES[:pool]), players)]


def test_gauntlet_puts_the_challenger_at_every_table(write_league) -> None:
    league = load_league(write_league(bots=NAMES[:6], players=3, schedule="gauntlet", challenger="bot2"))
    tables = league_tables(league)
    assert len(tables) == math.comb(5, 2) == len(set(tables))
    assert all("bot2" in table for table in tables)


@settings(max_examples=30, deadline=None)
@given(pool=st.integers(5, 12), players=st.integers(2, 5), fraction=st.floats(0.1, 0.9), seed=st.integers(0, 99))
def test_balanced_sample(pool: int, players: int, fraction: float, seed: int) -> None:
    names = NAMES + [f"extra{number}" for number in range(pool - len(NAMES))] if pool > len(NAMES) else NAMES[:pool]
    count = max(1, int(math.comb(pool, players) * fraction))
    tables = balanced_sample(names, players, count, random.Random(seed))
    assert len(tables) == count == len(set(tables))
    assert all(len(set(table)) == players and set(table) <= set(names) for table in tables)
    meetings = Counter(pair for table in tables for pair in itertools.combinations(sorted(table), 2))
    counts = [meetings[pair] for pair in itertools.combinations(sorted(names), 2)]
    plays = Counter(name for table in tables for name in table)
    assert max(counts) - min(counts) <= 3
    assert max(plays[name] for name in names) - min(plays[name] for name in names) <= 2


def test_sample_is_used_above_the_limit(write_league) -> None:
    league = load_league(write_league(bots=NAMES, players=4, max_tables=20))
    tables = league_tables(league)
    assert len(tables) == 20 == len(set(tables))


def test_schedule_is_deterministic_and_ignores_file_order(write_league) -> None:
    first = league_schedule(load_league(write_league(file_name="a", bots=NAMES, players=4, max_tables=12)), KEY)
    again = league_schedule(load_league(write_league(file_name="b", bots=NAMES, players=4, max_tables=12)), KEY)
    reordered = league_schedule(
        load_league(write_league(file_name="c", bots=NAMES[::-1], players=4, max_tables=12)), KEY
    )
    assert first == again
    assert sorted(first, key=lambda match: match.match_id) == sorted(reordered, key=lambda match: match.match_id)
    other_seed = league_schedule(load_league(write_league(file_name="d", bots=NAMES, players=4, seed=8)), KEY)
    assert not {match.match_id for match in first} & {match.match_id for match in other_seed}


def test_deals_come_from_the_key_and_the_match_never_from_the_seed(write_league) -> None:
    league = load_league(write_league(file_name="a", bots=NAMES[:5], players=3, deals_per_match=4))
    schedule = league_schedule(league, KEY)
    seeds = [spec.seed for spec in schedule[0].games]
    assert seeds == [KEY.deal_seed(spec.index // 3, schedule[0].match_id) for spec in schedule[0].games]
    secret = league_schedule(league, DealKey.fresh())
    assert [match.table for match in secret] == [match.table for match in schedule]
    assert [[spec.seating for spec in match.games] for match in secret] == [
        [spec.seating for spec in match.games] for match in schedule
    ], "the seed alone makes the tables and the seatings"
    assert not {spec.seed for spec in secret[0].games} & set(seeds)


@pytest.mark.parametrize("players", [2, 3, 4, 5])
@pytest.mark.parametrize("units", [1, 2])
def test_every_match_is_a_balanced_design(write_league, players: int, units: int) -> None:
    deals = units * design_deals(players)
    league = load_league(write_league(bots=NAMES[: players + 1], players=players, deals_per_match=deals))
    dealt: set[int] = set()
    for match in league_schedule(league, KEY):
        games = match.games
        assert [spec.index for spec in games] == list(range(deals * players))
        by_deal = [games[start : start + players] for start in range(0, deals * players, players)]
        seeds = [deal[0].seed for deal in by_deal]
        assert len(set(seeds)) == deals
        assert not dealt & set(seeds), "every table plays deals of its own"
        dealt |= set(seeds)
        for deal in by_deal:
            assert {spec.seed for spec in deal} == {deal[0].seed}
            for seat in range(players):
                assert sorted(spec.seating[seat] for spec in deal) == list(range(players))
        bot_seats = Counter((bot, seat) for spec in games for seat, bot in enumerate(spec.seating))
        assert set(bot_seats) == set(itertools.product(range(players), range(players)))
        assert set(bot_seats.values()) == {deals}
        followers = Counter(
            (spec.seating[seat], spec.seating[(seat + 1) % players]) for spec in games for seat in range(players)
        )
        assert set(followers) == set(itertools.permutations(range(players), 2))
        assert len(set(followers.values())) == 1, followers


def test_adding_a_bot_only_adds_its_matches(write_league) -> None:
    before = league_schedule(load_league(write_league(file_name="a", bots=NAMES[:5], players=3)), KEY)
    after = league_schedule(load_league(write_league(file_name="b", bots=NAMES[:6], players=3)), KEY)
    old = {match.match_id: match for match in before}
    added = [match for match in after if match.match_id not in old]
    assert all(old[match.match_id] == match for match in after if match.match_id in old)
    assert len(old) == len(before) and set(old) <= {match.match_id for match in after}
    assert added and all("bot5" in match.table for match in added)


def test_more_deals_only_add_games(write_league) -> None:
    short = league_schedule(load_league(write_league(file_name="a", deals_per_match=2)), KEY)
    long = league_schedule(load_league(write_league(file_name="b", deals_per_match=6)), KEY)
    for first, second in zip(short, long, strict=True):
        assert first.match_id == second.match_id
        assert second.games[: len(first.games)] == first.games

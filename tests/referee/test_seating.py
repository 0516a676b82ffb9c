"""The seating design (referee.seating), the order games are played in (referee.match.generations) and deal
seeds (referee.deals): every bot in every seat of every deal, every ordered pair of neighbours equally often,
no design smaller than the one used, and deals that only the key's holder can derive."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from referee.deals import KEY_BYTES, DealKey
from referee.games.base import MAX_SEED
from referee.match import generations
from referee.records import GameSpec
from referee.seating import balanced_games, cyclic_orders, design_deals, design_games, first_games

SEATS = [2, 3, 4, 5]
KEY = DealKey.from_seed(1)


def bot_seats(games: tuple[GameSpec, ...]) -> Counter[tuple[int, int]]:
    return Counter((bot, seat) for spec in games for seat, bot in enumerate(spec.seating))


def followers(games: tuple[GameSpec, ...]) -> Counter[tuple[int, int]]:
    """(X, Y) for every game and seat where Y sits right after X in turn order (seat + 1)."""
    return Counter(
        (spec.seating[seat], spec.seating[(seat + 1) % len(spec.seating)])
        for spec in games
        for seat in range(len(spec.seating))
    )


def balanced(games: tuple[GameSpec, ...], players: int) -> bool:
    seats, pairs = bot_seats(games), followers(games)
    return (
        set(seats) == set(itertools.product(range(players), repeat=2))
        and len(set(seats.values())) == 1
        and set(pairs) == set(itertools.permutations(range(players), 2))
        and len(set(pairs.values())) == 1
    )


@pytest.mark.parametrize(("players", "deals", "games"), [(2, 1, 2), (3, 2, 6), (4, 6, 24), (5, 4, 20)])
def test_the_designs_have_the_documented_sizes(players: int, deals: int, games: int) -> None:
    orders = cyclic_orders(players)
    assert (design_deals(players), design_games(players)) == (deals, games)
    assert all(order[0] == 0 and sorted(order) == list(range(players)) for order in orders)
    assert len(set(orders)) == len(orders), "distinct cyclic orders (each written from bot 0)"


@pytest.mark.parametrize("players", SEATS)
@pytest.mark.parametrize("units", [1, 2, 3])
def test_a_multiple_of_the_design_is_balanced(players: int, units: int) -> None:
    deals = units * design_deals(players)
    games = balanced_games(players, KEY.deal_seeds(deals))
    assert [spec.index for spec in games] == list(range(deals * players))
    assert balanced(games, players)
    assert set(bot_seats(games).values()) == {deals}
    assert set(followers(games).values()) == {deals * players // (players - 1)}
    for deal in range(deals):
        played = [spec for spec in games if spec.index // players == deal]
        assert {spec.seed for spec in played} == {KEY.deal_seed(deal)}
        for seat in range(players):
            assert sorted(spec.seating[seat] for spec in played) == list(range(players)), "every bot in every seat"


@pytest.mark.parametrize("players", [3, 4, 5])
def test_fewer_deals_than_the_design_leave_neighbours_unbalanced(players: int) -> None:
    for deals in range(1, design_deals(players)):
        games = balanced_games(players, KEY.deal_seeds(deals))
        assert len(set(bot_seats(games).values())) == 1, "every bot still holds every seat of each deal"
        assert not balanced(games, players)


def test_no_three_cyclic_orders_balance_four_seats() -> None:
    """A balanced 4-seat design needs a multiple of 3 orders (12 ordered pairs, 4 per order); 3 would have to
    cover every pair exactly once. No choice of 3 (repeats allowed) does, so 6 orders (24 games) is the least."""
    orders = cyclic_orders(4)
    assert len(orders) == 6
    for choice in itertools.combinations_with_replacement(orders, 3):
        games = tuple(GameSpec(number, number, order) for number, order in enumerate(choice))
        assert len(set(followers(games).values())) > 1 or len(followers(games)) < 12


@pytest.mark.parametrize("players", SEATS)
def test_first_games_play_deal_by_deal(players: int) -> None:
    full = balanced_games(players, KEY.deal_seeds(2 * design_deals(players)))
    for count in (1, players, players + 1, design_games(players), 2 * design_games(players)):
        assert first_games(players, count, KEY) == full[:count]
    assert balanced(first_games(players, design_games(players), KEY), players)


@pytest.mark.parametrize("players", SEATS)
def test_generations_are_the_rotations_and_no_deal_repeats_within_one(players: int) -> None:
    deals = design_deals(players)
    games = balanced_games(players, KEY.deal_seeds(deals))
    order = generations(games)
    assert len(order) == players
    for rotation, generation in enumerate(order):
        assert [spec.index for spec in generation] == [deal * players + rotation for deal in range(deals)]
        assert len({spec.seed for spec in generation}) == len(generation)
    assert sorted(spec.index for generation in order for spec in generation) == list(range(len(games)))
    shuffled = list(reversed(games))
    assert all(len({spec.seed for spec in generation}) == len(generation) for generation in generations(shuffled))
    assert [spec.index for spec in generations(shuffled)[0]] == [spec.index for spec in shuffled[::players]]


def test_games_of_distinct_deals_are_one_generation() -> None:
    games = tuple(GameSpec(index, KEY.deal_seed(index), (0, 1)) for index in range(5))
    assert generations(games) == [list(games)]


def test_a_public_key_is_reproducible_and_known_to_whoever_knows_the_seed() -> None:
    key = DealKey.from_seed(0)
    assert key.public and key == DealKey.from_seed(0) != DealKey.from_seed(1)
    assert key.deal_seed(0) == 8360419558958816119, "the derivation is stable across machines and versions"
    assert DealKey(bytes(range(KEY_BYTES))).deal_seed(5) == 7673621458244050191
    seeds = key.deal_seeds(200)
    assert len(set(seeds)) == 200 and all(0 <= seed <= MAX_SEED for seed in seeds)


def test_a_fresh_key_is_secret_and_new_every_time() -> None:
    first, second = DealKey.fresh(), DealKey.fresh()
    assert not first.public and len(first.secret) == KEY_BYTES
    assert first != second and not set(first.deal_seeds(50)) & set(second.deal_seeds(50))
    assert first.secret.hex() not in repr(first) and str(first.secret) not in repr(first)

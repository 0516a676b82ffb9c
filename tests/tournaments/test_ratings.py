import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from known_results import KNOWN_RESULTS

from tournaments.ratings.bradley_terry import ELO_PER_NAT, NoMaximumError, Pairing, fit
from tournaments.ratings.elo import DEFAULT_PRIOR_DRAWS, PairRecord, RatingInputError, rate
from tournaments.ratings.resample import OutcomeResampler

KNOWN_ELO = {"A": 137.18, "B": 22.79, "C": -39.44, "D": -120.52}


def two_seat_games(results: dict[tuple[str, str], tuple[int, int, int]]) -> list[dict[str, int]]:
    games: list[dict[str, int]] = []
    for (first, second), (wins, draws, losses) in results.items():
        games += [{first: 1, second: 2}] * wins + [{first: 1, second: 1}] * draws + [{first: 2, second: 1}] * losses
    return games


def elo_of(ratings) -> dict[str, float]:
    return {bot.bot: bot.elo for bot in ratings.bots}


def test_known_answer_four_bots_without_the_prior():
    ratings = rate(two_seat_games(KNOWN_RESULTS), bootstrap=0, prior_draws=0)
    elo = elo_of(ratings)
    for bot, value in KNOWN_ELO.items():
        assert elo[bot] == pytest.approx(value, abs=0.05)
    assert sum(elo.values()) == pytest.approx(0, abs=1e-9)
    assert [bot.bot for bot in ratings.bots] == ["A", "B", "C", "D"]


def test_known_answer_single_pairing_without_the_prior():
    ratings = rate(two_seat_games({("X", "Y"): (60, 20, 40)}), bootstrap=0, prior_draws=0)
    elo = elo_of(ratings)
    assert elo["X"] - elo["Y"] == pytest.approx(58.45, abs=0.05)
    assert elo["X"] == pytest.approx(-elo["Y"])


def test_the_prior_is_its_documented_virtual_draws():
    """Every bot of the known answer has 36 results, 12 per pairing: 2 virtual draws per bot are 2 * 12 / 36 =
    2/3 of a draw per pairing. Three times the games with 2 more draws per pairing (no prior) rate the same."""
    with_prior = elo_of(rate(two_seat_games(KNOWN_RESULTS), bootstrap=0, prior_draws=2))
    tripled = {pair: (3 * wins, 3 * draws + 2, 3 * losses) for pair, (wins, draws, losses) in KNOWN_RESULTS.items()}
    assert with_prior == pytest.approx(elo_of(rate(two_seat_games(tripled), bootstrap=0, prior_draws=0)))
    assert DEFAULT_PRIOR_DRAWS == 2
    assert elo_of(rate(two_seat_games(KNOWN_RESULTS), bootstrap=0)) == pytest.approx(with_prior)


def test_the_prior_moves_the_known_answer_a_little_toward_zero():
    """2 virtual draws move a 36-result bot's shares toward 1/2 by 2/38 (5%); its Elo moves by about as much."""
    ratings = rate(two_seat_games(KNOWN_RESULTS), bootstrap=0)
    with_prior = elo_of(ratings)
    for bot, value in KNOWN_ELO.items():
        assert 0.9 * abs(value) < abs(with_prior[bot]) < abs(value)
        assert (with_prior[bot] > 0) == (value > 0)
    assert [bot.bot for bot in ratings.bots] == ["A", "B", "C", "D"]


def test_a_multi_seat_bots_prior_counts_its_pairwise_results():
    """The prior of a four-seat game's bots is that of the six two-seat results it splits into."""
    games = [{"A": 1, "B": 2, "C": 3, "D": 4}] * 5 + [{"B": 1, "C": 2, "D": 3, "A": 4}] * 5
    pairwise = [
        {x: table[x], y: table[y]}
        for table in games
        for i, x in enumerate(sorted(table))
        for y in sorted(table)[i + 1 :]
    ]
    assert elo_of(rate(games, bootstrap=0)) == pytest.approx(elo_of(rate(pairwise, bootstrap=0)))


def test_a_bot_that_always_wins_or_always_loses_is_finite_and_in_its_place():
    games = [{"Top": 1, "Mid": 2}] * 5 + [{"Mid": 1, "Low": 2}] * 3 + [{"Mid": 1, "Other": 2}, {"Other": 1, "Mid": 2}]
    games += [{"Other": 1, "Low": 2}]
    ratings = rate(games, bootstrap=50)
    for bot in ratings.bots:
        assert math.isfinite(bot.elo)
        assert bot.ci95 is not None and all(math.isfinite(value) for value in bot.ci95)
    assert [bot.bot for bot in ratings.bots][0] == "Top"
    assert [bot.bot for bot in ratings.bots][-1] == "Low"


def test_two_bots_one_always_winning():
    """10 wins and the prior's 2 virtual draws (1 from each bot): a share of 11/12, 416 Elo apart."""
    ratings = rate([{"A": 1, "B": 2}] * 10, bootstrap=20)
    a, b = ratings.bots
    assert a.bot == "A" and a.elo == pytest.approx(-b.elo)
    assert a.elo - b.elo == pytest.approx(ELO_PER_NAT * math.log(11), abs=1e-6)
    assert a.ci95 is not None and math.isfinite(a.ci95[1])


def test_without_the_prior_an_infinite_elo_is_refused():
    with pytest.raises(RatingInputError, match="A never lost a point to the rest"):
        rate([{"A": 1, "B": 2}] * 3 + [{"B": 1, "C": 2}, {"C": 1, "B": 2}], bootstrap=0, prior_draws=0)
    with pytest.raises(RatingInputError, match="prior_draws must be 0 or more"):
        rate(two_seat_games(KNOWN_RESULTS), prior_draws=-1)


def test_without_the_prior_a_bootstrap_whose_resamples_are_infinite_is_refused():
    with pytest.raises(RatingInputError, match="some bootstrap resamples have an infinite Elo"):
        rate([{"A": 1, "B": 2}, {"B": 1, "A": 2}], bootstrap=50, prior_draws=0)


def test_two_seat_statistics_and_crosstable():
    ratings = rate(two_seat_games(KNOWN_RESULTS), bootstrap=0)
    a = ratings.bots[0]
    assert (a.games, a.wins, a.draws, a.losses) == (36, 24, 5, 7)
    assert a.score == pytest.approx(26.5 / 36)
    assert ratings.two_seat
    assert ratings.record("A", "B") == PairRecord(7, 2, 3)
    assert ratings.record("B", "A") == PairRecord(3, 2, 7)
    assert ratings.record("B", "A").score == pytest.approx(4 / 12)


def test_multi_seat_game_is_split_by_rank_with_ties_as_draws():
    ratings = rate([{"A": 1, "B": 2, "C": 2}], bootstrap=0)
    assert ratings.record("A", "B") == PairRecord(wins=1)
    assert ratings.record("B", "C") == PairRecord(draws=1)
    assert ratings.record("C", "A") == PairRecord(losses=1)
    by_bot = {bot.bot: bot for bot in ratings.bots}
    assert by_bot["A"].pairings == 2 and by_bot["A"].points == 2.0
    assert by_bot["B"].points == 0.5
    assert by_bot["B"].mean_rank == 2.0
    assert (by_bot["A"].wins, by_bot["A"].draws, by_bot["A"].losses) == (0, 0, 0)
    assert not ratings.two_seat and ratings.seats == (3,)


def test_multi_seat_matches_its_pairwise_split():
    """A 3-seat game rates exactly as the three two-seat results it splits into."""
    tables = [{"A": 1, "B": 2, "C": 3}, {"B": 1, "C": 2, "A": 3}, {"C": 1, "A": 1, "B": 3}, {"A": 1, "C": 2, "B": 2}]
    pairwise = []
    for table in tables:
        bots = sorted(table)
        pairwise += [{x: table[x], y: table[y]} for i, x in enumerate(bots) for y in bots[i + 1 :]]
    assert elo_of(rate(tables, bootstrap=0)) == pytest.approx(elo_of(rate(pairwise, bootstrap=0)))


def test_pools_that_never_met_are_rated_separately():
    games = two_seat_games({("A", "B"): (3, 0, 1), ("C", "D"): (1, 1, 1), ("D", "E"): (2, 0, 2)})
    ratings = rate(games, bootstrap=30)
    assert ratings.pools == 2
    pools: dict[int, list[float]] = {}
    for bot in ratings.bots:
        pools.setdefault(bot.pool, []).append(bot.elo)
    assert sorted(len(values) for values in pools.values()) == [2, 3]
    for values in pools.values():
        assert sum(values) == pytest.approx(0, abs=1e-9)
    assert [bot.pool for bot in ratings.bots] == [1, 1, 1, 2, 2]
    assert ratings.bots[2].los_next is None
    assert ratings.bots[1].los_next is not None


def test_bootstrap_is_seeded_and_brackets_the_estimate():
    games = two_seat_games(KNOWN_RESULTS)
    first = rate(games, bootstrap=200, seed=3)
    assert first == rate(games, bootstrap=200, seed=3)
    assert first != rate(games, bootstrap=200, seed=4)
    for bot in first.bots:
        assert bot.ci95 is not None
        low, high = bot.ci95
        assert low < bot.elo < high
        assert bot.error == pytest.approx((high - low) / 2)
    assert all(0 <= bot.los_next <= 1 for bot in first.bots[:-1] if bot.los_next is not None)
    assert first.bots[0].los_next > 0.9
    assert first.bots[-1].los_next is None


def test_bootstrap_resamples_whole_games():
    """One 5-seat game yields ten pairwise results that move together; resampling pairs would narrow the interval."""
    tables = [{"A": 1, "B": 2, "C": 3, "D": 4, "E": 5}, {"E": 1, "D": 2, "C": 3, "B": 4, "A": 5}] * 3
    tables += [{"A": 1, "B": 2, "C": 3, "D": 4, "E": 5}]
    whole = rate(tables, bootstrap=300, seed=1)
    pairwise = [
        {x: table[x], y: table[y]}
        for table in tables
        for i, x in enumerate(sorted(table))
        for y in sorted(table)[i + 1 :]
    ]
    split = rate(pairwise, bootstrap=300, seed=1)
    assert elo_of(whole) == pytest.approx(elo_of(split))
    assert whole.bots[0].error > 1.5 * split.bots[0].error


def test_without_bootstrap_there_are_no_intervals():
    ratings = rate(two_seat_games(KNOWN_RESULTS), bootstrap=0)
    assert all(bot.ci95 is None and bot.los_next is None and bot.error is None for bot in ratings.bots)


def test_no_games_gives_an_empty_table():
    assert rate([], bootstrap=10).bots == ()


@pytest.mark.parametrize(
    "game, message",
    [
        ({"A": 1}, "at least two bots"),
        ({"A": 1, "B": 0}, "positive integer"),
        ({"A": 1, "B": True}, "positive integer"),
        ({"A": 1, "B": 1.5}, "positive integer"),
        ({"A": 1, "": 2}, "non-empty strings"),
    ],
)
def test_bad_games_are_refused_with_their_number(game, message):
    with pytest.raises(RatingInputError, match=f"game 2: .*{message}"):
        rate([{"A": 1, "B": 2}, game])


outcome = st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(0, 3), st.integers(0, 3), st.integers(1, 3))


@settings(max_examples=40, deadline=None)
@given(st.lists(outcome, min_size=1, max_size=25))
def test_fit_balances_points_and_keeps_mean_zero(raw):
    """Always mean 0 and finite; without the prior, where the maximum exists, expected points equal points."""
    names = "PQRST"
    games = []
    for first, second, first_rank, second_rank, seats in raw:
        if first != second:
            game = {names[first]: first_rank + 1, names[second]: second_rank + 1}
            if seats == 3:
                game[names[(max(first, second) + 1) % 5]] = 2
            if len(game) > 1:
                games.append(game)
    if not games:
        return
    ratings = rate(games, bootstrap=5)
    for pool in range(1, ratings.pools + 1):
        values = [bot.elo for bot in ratings.bots if bot.pool == pool]
        assert sum(values) == pytest.approx(0, abs=1e-6)
    assert all(math.isfinite(bot.elo) for bot in ratings.bots)
    try:
        exact = rate(games, bootstrap=0, prior_draws=0)
    except RatingInputError:
        return
    elo = elo_of(exact)
    for bot in exact.bots:
        expected = 0.0
        for game in games:
            if bot.bot in game:
                for other in game:
                    if other != bot.bot:
                        expected += 1 / (1 + 10 ** ((elo[other] - bot.elo) / 400))
        assert expected == pytest.approx(bot.points, abs=1e-6)


def test_fit_converges_for_far_apart_strengths():
    strengths = fit(3, [Pairing(0, 1, 1000, 999), Pairing(1, 2, 1000, 999), Pairing(0, 2, 1, 0.5)])
    difference = (strengths[0] - strengths[1]) * ELO_PER_NAT
    assert math.isfinite(difference) and difference > 500


def test_fit_refuses_a_pool_without_a_finite_maximum():
    with pytest.raises(NoMaximumError):
        fit(3, [Pairing(0, 1, 3, 3), Pairing(1, 2, 2, 1)])


def test_poisson_resamples_draw_each_outcome_its_count_times_on_average():
    """Each outcome seen c times is drawn Poisson(c) times: mean and variance c, for small and large counts."""
    outcomes = {(("a", 1), ("b", 2)): 3, (("a", 2), ("b", 1)): 400}
    games, points = OutcomeResampler.of({("a", "b"): 0}, outcomes).draw(np.random.default_rng(7), 20000)
    wins, losses = points[:, 0], games[:, 0] - points[:, 0]
    assert games.shape == (20000, 1)
    assert wins.mean() == pytest.approx(3, abs=0.05) and wins.var() == pytest.approx(3, rel=0.05)
    assert losses.mean() == pytest.approx(400, abs=0.5) and losses.var() == pytest.approx(400, rel=0.05)

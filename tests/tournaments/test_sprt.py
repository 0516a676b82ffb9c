import math
import random

import pytest

from tournaments.ratings.sprt import Decision, Pentanomial, SprtConfigError, SprtTest, evaluate, expected_score, llr


def game_points(rng: random.Random, win: float, draw: float) -> float:
    roll = rng.random()
    return 1.0 if roll < win else 0.5 if roll < win + draw else 0.0


def run_test(test: SprtTest, win: float, draw: float, seed: int, max_pairs: int = 100_000):
    """Pairs of independent games until the test decides; returns the final state."""
    rng = random.Random(seed)
    pentanomial = Pentanomial()
    state = evaluate(test, pentanomial)
    while state.decision is Decision.CONTINUE and pentanomial.pairs < max_pairs:
        pentanomial = pentanomial.add(game_points(rng, win, draw) + game_points(rng, win, draw))
        state = evaluate(test, pentanomial)
    return state


def test_llr_against_hand_computed_values():
    # Only pairs of two losses (8) or two wins (12): the closest distribution with mean s puts s on 1 and
    # 1 - s on 0, so LLR = 12 * log(s1 / s0) + 8 * log((1 - s1) / (1 - s0)) with s0 = 0.5 and
    # s1 = 1 / (1 + 10^(-10/400)) = 0.514387: 12 * 0.028368 + 8 * (-0.029196) = 0.10685.
    assert expected_score(10) == pytest.approx(0.514387, abs=1e-6)
    assert llr(Pentanomial((8, 0, 0, 0, 12)), 0, 10) == pytest.approx(0.10685, abs=2e-4)
    # Pairs scoring 0, 1/2, 1, 3/2, 2 points: 2, 5, 10, 6, 3 (26 pairs). The normal approximation by hand:
    # pair scores 0, .25, .5, .75, 1: mean = 13.75 / 26 = 0.528846, mean of squares = 9.1875 / 26 = 0.353365,
    # variance = 0.353365 - 0.528846^2 = 0.073687;
    # LLR ~ 26 * (0.514387 - 0.5) * (2 * 0.528846 - 0.5 - 0.514387) / (2 * 0.073687) = 0.10992.
    assert llr(Pentanomial((2, 5, 10, 6, 3)), 0, 10) == pytest.approx(0.10992, rel=0.01)


def test_one_pair_never_decides():
    for cell in range(5):
        counts = tuple(1 if index == cell else 0 for index in range(5))
        assert evaluate(SprtTest(), Pentanomial(counts)).decision is Decision.CONTINUE


def test_bounds_of_the_default_test():
    test = SprtTest()
    assert test.lower_bound == pytest.approx(-2.944439, abs=1e-6)
    assert test.upper_bound == pytest.approx(2.944439, abs=1e-6)
    asymmetric = SprtTest(alpha=0.01, beta=0.1)
    assert asymmetric.lower_bound == pytest.approx(math.log(0.1 / 0.99))
    assert asymmetric.upper_bound == pytest.approx(math.log(0.9 / 0.01))


def test_a_clearly_stronger_bot_accepts_h1():
    state = run_test(SprtTest(elo0=0, elo1=10), win=0.6, draw=0.1, seed=1)
    assert state.decision is Decision.H1
    assert state.llr >= state.test.upper_bound
    assert state.elo is not None and state.elo > 50
    assert state.elo_ci95 is not None and state.elo_ci95[0] < state.elo < state.elo_ci95[1]


def test_equal_bots_accept_h0():
    state = run_test(SprtTest(elo0=0, elo1=10), win=0.4, draw=0.2, seed=2)
    assert state.decision is Decision.H0
    assert state.llr <= state.test.lower_bound
    assert state.pentanomial.pairs > 100


def test_a_weaker_bot_accepts_h0_quickly():
    state = run_test(SprtTest(elo0=0, elo1=10), win=0.3, draw=0.1, seed=3)
    assert state.decision is Decision.H0
    assert state.pentanomial.pairs < 300


def test_error_rates_hold_roughly():
    """Equal bots (elo0 true) rarely accept H1; bots elo1 apart rarely accept H0 (alpha = beta = 0.05)."""
    test = SprtTest(elo0=0, elo1=60)
    win_at_elo1 = expected_score(60) - 0.1
    false_h1 = sum(run_test(test, 0.45, 0.1, seed).decision is Decision.H1 for seed in range(60))
    false_h0 = sum(run_test(test, win_at_elo1, 0.2, seed).decision is Decision.H0 for seed in range(60))
    assert false_h1 <= 8
    assert false_h0 <= 8


def test_all_draws_accept_h0_and_keep_a_finite_llr():
    assert evaluate(SprtTest(), Pentanomial((0, 0, 30, 0, 0))).decision is Decision.CONTINUE
    pentanomial = Pentanomial((0, 0, 120, 0, 0))
    state = evaluate(SprtTest(), pentanomial)
    assert math.isfinite(state.llr)
    assert state.decision is Decision.H0
    assert state.elo == pytest.approx(0)


def test_all_wins_give_a_capped_finite_estimate():
    """Even a perfect score needs about log(19) / log(s1 / s0) = 104 pairs to tell elo1 = 10 from elo0 = 0."""
    assert evaluate(SprtTest(), Pentanomial((0, 0, 0, 0, 95))).decision is Decision.CONTINUE
    state = evaluate(SprtTest(), Pentanomial((0, 0, 0, 0, 110)))
    assert state.decision is Decision.H1
    assert state.elo == 1000


def test_no_pairs_continue():
    state = evaluate(SprtTest(), Pentanomial())
    assert (state.llr, state.decision, state.elo, state.elo_ci95) == (0.0, Decision.CONTINUE, None, None)


def test_pentanomial_counts_pairs_by_points():
    pentanomial = Pentanomial().add(2).add(1.5).add(1).add(1).add(0)
    assert pentanomial.counts == (1, 0, 2, 1, 1)
    assert (pentanomial.pairs, pentanomial.points) == (5, 5.5)
    with pytest.raises(ValueError, match="pair scores"):
        pentanomial.add(2.5)
    with pytest.raises(ValueError, match="pair scores"):
        pentanomial.add(0.25)


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"elo0": 5, "elo1": 5}, "below elo1"),
        ({"elo0": 10, "elo1": 0}, "below elo1"),
        ({"alpha": 0}, "alpha"),
        ({"beta": 1.5}, "beta"),
        ({"alpha": 0.6, "beta": 0.6}, r"alpha \+ beta must be below 1, got 0.6 \+ 0.6: the test would decide before"),
        ({"alpha": 0.5, "beta": 0.5}, r"alpha \+ beta must be below 1"),
        ({"alpha": 0.9, "beta": 0.2}, r"alpha \+ beta must be below 1"),
        ({"elo0": 0, "elo1": 800}, "one pair of games would decide this test"),
        ({"elo0": -1000, "elo1": 1000}, "one pair of games would decide this test"),
        ({"elo1": 10, "alpha": 0.45, "beta": 0.45, "elo0": -400}, "one pair of games would decide"),
        ({"elo0": float("nan")}, "elo0 must be a number from -1000 to 1000"),
        ({"elo1": float("inf")}, "elo1 must be a number from -1000 to 1000"),
        ({"elo1": 1e6}, "elo1 must be a number"),
    ],
)
def test_bad_settings_are_refused(settings, message):
    with pytest.raises(SprtConfigError, match=message):
        SprtTest(**settings)


@pytest.mark.parametrize(
    "settings",
    [{}, {"elo0": 0, "elo1": 200}, {"elo0": -5, "elo1": 5, "alpha": 0.4, "beta": 0.4}, {"alpha": 0.01, "beta": 0.01}],
)
def test_a_test_that_is_accepted_decides_on_no_single_pair(settings):
    """What the refusals promise: a test that is accepted never decides before data, nor on one pair alone."""
    test = SprtTest(**settings)
    assert test.lower_bound < 0 < test.upper_bound
    assert evaluate(test, Pentanomial()).decision is Decision.CONTINUE
    for cell in range(5):
        single = Pentanomial(tuple(int(index == cell) for index in range(5)))
        assert evaluate(test, single).decision is Decision.CONTINUE

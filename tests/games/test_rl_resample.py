"""`resample_from_infostate` of python_scout and python_scauver (what OpenSpiel's ISMCTS needs), and python_scout's
`from_round`/`scores` parameters (the rest of a game, as the ISMCTS bot searches it).

A resampled state must be one the seat cannot tell from the true one (the same information-state string, the
same legal actions, the seat to move) and must not depend on anything hidden from the seat: resampling the
true state and a state that differs from it only in what the seat cannot see, with the same random numbers,
gives the same state.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

pyspiel = pytest.importorskip("pyspiel")

import referee.games.rl.openspiel  # noqa: E402, F401  (registers the games)
from referee.games import shared_ranks  # noqa: E402
from referee.games.rl.rewards import rank_rewards  # noqa: E402

GAME_LENGTH = {2: 30, 3: 70, 4: 300, 5: 700}
"""About how many decisions a random game takes (SCOUT's rounds run long when nobody plays to end them)."""


SCAUVER_LENGTH = {2: 20, 3: 40, 4: 60}
"""About how many decisions a random python_scauver game of SCAUVER_ROUNDS rounds takes."""
SCAUVER_ROUNDS = 3


def decisions(players: int, seed: int, most: int = 8, name: str = "scout", **params: Any) -> list[Any]:
    """States (clones) at about `most` decisions spread over a random python_scout (or python_scauver) game."""
    if name == "scauver":
        params = {"round_cap": SCAUVER_ROUNDS, **params}
    share = most / (GAME_LENGTH if name == "scout" else SCAUVER_LENGTH)[players]
    game = pyspiel.load_game(f"python_{name}", {"players": players, **params})
    rng = random.Random(seed)
    state, found = game.new_initial_state(), []
    while not state.is_terminal() and len(found) < most:
        if state.is_chance_node():
            state.apply_action(rng.choice([outcome for outcome, _ in state.chance_outcomes()]))
            continue
        if rng.random() < share:
            found.append(state.clone())
        state.apply_action(rng.choice(state.legal_actions()))
    return found


def sampler(seed: int) -> Any:
    return random.Random(seed).random


def hands_of_others(state: Any, seat: int) -> list[Any]:
    observation = state.observation_of((seat + 1) % state.num_players())
    return [observation["hand"], observation.get("active_set")]


GAMES = [("scout", 2), ("scout", 3), ("scout", 4), ("scout", 5), ("scauver", 2), ("scauver", 3), ("scauver", 4)]


@pytest.mark.parametrize(("name", "players"), GAMES)
def test_a_resampled_state_is_one_the_seat_cannot_tell_from_the_game(name: str, players: int) -> None:
    changed = checks = 0
    for seed in range(3):
        for state in decisions(players, seed, name=name):
            seat = state.current_player()
            resampled = state.resample_from_infostate(seat, sampler(seed))
            assert resampled.current_player() == seat
            assert resampled.information_state_string(seat) == state.information_state_string(seat)
            assert resampled.observation_string(seat) == state.observation_string(seat)
            assert resampled.legal_actions() == state.legal_actions()
            assert len(resampled.history()) == len(state.history())
            changed += hands_of_others(resampled, seat) != hands_of_others(state, seat)
            checks += 1
    assert checks > 10
    assert changed > checks // 2, "a resample should deal the other seats other cards"


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_a_resample_depends_only_on_what_the_seat_saw(players: int) -> None:
    """A twin of the game that differs only in what the seat cannot see (itself a resample) resamples, with the
    same random numbers, to the very same state: chance outcomes and moves. (A python_scauver resample keeps
    which placed cards each seat was dealt and which it drew, so its chance outcomes are not compared.)"""
    for state in decisions(players, seed=players, most=5):
        seat = state.current_player()
        twin = state.redealt(seat, random.Random(99))
        for draw in (1, 2):
            assert (
                state.redealt(seat, random.Random(draw)).history() == twin.redealt(seat, random.Random(draw)).history()
            )


def test_the_other_seats_pending_orientation_choices_are_drawn_again() -> None:
    """Seat 2 choosing its orientation has not been shown seats 0 and 1's: resamples draw both ways."""
    game = pyspiel.load_game("python_scout", {"players": 3})
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    state.apply_action(1)
    state.apply_action(1)
    assert state.current_player() == 2
    choices = {tuple(state.redealt(2, random.Random(draw)).history()[-2:]) for draw in range(16)}
    assert len(choices) == 4


def test_the_other_seats_pending_setups_are_drawn_again() -> None:
    """Seat 2 choosing its setup has not been shown seats 0 and 1's (nor their cards): resamples draw them."""
    game = pyspiel.load_game("python_scauver", {"players": 3})
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    state.apply_action(state.legal_actions()[0])
    state.apply_action(state.legal_actions()[0])
    assert state.current_player() == 2
    resampled = [state.redealt(2, random.Random(draw)) for draw in range(4)]
    assert all(other.information_state_string(2) == state.information_state_string(2) for other in resampled)
    assert len({tuple(other.history()) for other in resampled}) == 4


def test_resampling_is_offered_at_decisions_only() -> None:
    dealing = pyspiel.load_game("python_scout", {"players": 3}).new_initial_state()
    with pytest.raises(ValueError, match="at a decision"):
        dealing.resample_from_infostate(0, sampler(0))


def test_openspiel_ismcts_searches_python_scout_through_the_resampler() -> None:
    """OpenSpiel's own Python ISMCTSBot, as shipped, asserts at every simulation that the resampled state has the
    root's information state; it plays a few decisions of a 3-seat game with a legal action each time."""
    import numpy as np
    from open_spiel.python.algorithms import ismcts, mcts

    game = pyspiel.load_game("python_scout", {"players": 3})
    numbers = np.random.RandomState(0)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, numbers), 2.0, 6, random_state=numbers)
    state = decisions(3, seed=1)[1]
    for _ in range(3):
        while state.is_chance_node():
            state.apply_action(state.chance_outcomes()[0][0])
        action = bot.step(state)
        assert action in state.legal_actions()
        state.apply_action(action)


@pytest.mark.parametrize(("players", "from_round"), [(3, 2), (4, 4), (5, 1)])
def test_the_rest_of_a_game_plays_the_rounds_left_ranked_on_the_totals(players: int, from_round: int) -> None:
    scores = [5 - 4 * seat for seat in range(players)]
    params = {"players": players, "from_round": from_round, "scores": ",".join(map(str, scores))}
    game = pyspiel.load_game("python_scout", params)
    for seed in range(3):
        rng, state = random.Random(seed), game.new_initial_state()
        while not state.is_terminal():
            outcomes = [outcome for outcome, _ in state.chance_outcomes()] if state.is_chance_node() else None
            state.apply_action(rng.choice(outcomes or state.legal_actions()))
        final = state.observation_of(0)
        assert len(final["finished_rounds"]) == players - from_round + 1
        totals = [before + now for before, now in zip(scores, final["scores"], strict=True)]
        assert state.returns() == pytest.approx(rank_rewards(shared_ranks(totals)))


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"players": 2, "from_round": 2}, "3 to 5 seats"),
        ({"players": 3, "from_round": 4}, "from_round must be 1 to 3"),
        ({"players": 3, "scores": "1,2"}, "2 totals for 3 seats"),
    ],
)
def test_a_rest_of_a_game_that_cannot_be_is_refused(params: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        pyspiel.load_game("python_scout", params)

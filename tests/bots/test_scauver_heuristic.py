"""The Scauver heuristic's policy: each decision on its own, and in-process games against random."""

from __future__ import annotations

import random

import pytest
from policy_duel import heuristic_wins

from bots.python import scauver_heuristic as bot


def test_final_placement_balances_the_flanks() -> None:
    legal = [{"kind": "final", "left": "KS", "right": "2H"}, {"kind": "final", "left": "2H", "right": "KS"}]
    assert bot.choose_final(["AS", "3S", "4S"], ["5H", "6H", "7H"], legal) == legal[0]


def test_vanguards_take_the_lowest_score_then_the_strongest_link() -> None:
    left, right = ["AS", "4S", "5S", "KS"], ["2H", "3H", "JH", "QH"]
    assert bot.difference(left, right) == 2
    legal = [{"kind": "vanguards", "left": ["AS", "4S"], "right": ["2H", "3H"]}]
    legal.append({"kind": "vanguards", "left": ["AS", "KS"], "right": ["2H", "QH"]})
    assert bot.choose_vanguards(left, right, legal) == legal[0]
    balanced_left, balanced_right = ["AS", "4S", "KS"], ["2H", "3H", "QH", "AD"]
    assert bot.choose_vanguards(balanced_left, balanced_right, legal) == legal[1]


def test_no_link_is_played_when_it_is_the_only_choice() -> None:
    assert bot.choose_vanguards(["AS"], ["AH"], [{"kind": "no_link"}]) == {"kind": "no_link"}


def test_field_without_link_costs_more_than_any_linked_field() -> None:
    linked = bot.field_cost(["AS", "4S", "KS", "KD"], ["2H", "3H", "7H", "2D"])
    unlinked = bot.field_cost(["AS", "AH"], ["AD", "AC"])
    assert linked < bot.NO_LINK_COST <= unlinked


def test_setup_keeps_a_balanced_field_reachable() -> None:
    hand = ["AS", "2H", "3H", "4S", "KC"]
    legal = [
        {"kind": "setup", "left": ["3H", "4S", "KC"], "right": []},
        {"kind": "setup", "left": ["KC"], "right": ["AS", "4S"]},
    ]
    assert bot.choose_setup(hand, legal) == legal[1]


def bet_observation(to_call: int, pot: int, lap: int = 0) -> dict:
    return {"seat": 0, "pot": pot, "lap": lap, "bet": {"to_call": [to_call, 0]}}


@pytest.mark.parametrize(
    ("cost", "to_call", "expected"), [(0, 8, "raise"), (5, 8, "call"), (60, 8, "fold"), (60, 1, "call")]
)
def test_answers_depend_on_the_field_and_the_price(cost: int, to_call: int, expected: str) -> None:
    legal = [{"kind": "call"}, {"kind": "fold"}, {"kind": "raise", "amount": 2}]
    answer = bot.choose_answer(bet_observation(to_call, pot=12), legal, cost, "final_bet")
    assert answer["kind"] == expected


def test_own_turn_never_folds() -> None:
    legal = [{"kind": "check"}, {"kind": "bet", "amount": 2}, {"kind": "fold"}]
    assert bot.choose_bet({}, legal, cost=500) == {"kind": "check"}
    assert bot.choose_bet({}, legal, cost=0)["kind"] == "bet"


@pytest.mark.parametrize(("players", "games"), [(2, 16), (3, 9), (4, 8)])
def test_beats_random_clearly(players: int, games: int) -> None:
    wins = heuristic_wins("scauver", bot.choose, players, games)
    assert wins >= 0.8 * games, f"won {wins} of {games} {players}-player games against random"


def test_every_decision_is_legal_over_many_states() -> None:
    from referee.games import load_game

    rng = random.Random(5)
    state = load_game("scauver").new_game(3, seed=11, config={"round_cap": 40})
    while not state.is_over():
        for seat in state.to_move():
            legal = state.legal_actions(seat)
            action = bot.choose(state.observation(seat), legal) if seat == 0 else rng.choice(legal)
            assert action in legal
            state.apply(seat, action)

"""Scauver: each decision of referee/games/scauver.md pinned by a test, and random games checked for invariants."""

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.games import ConfigError, IllegalAction, load_game
from referee.games._scauver_links import (
    CARD_VALUE,
    FACE_DECK,
    NUMERIC_DECK,
    LinkStrength,
    link_problem,
    link_strength,
    valid_links,
)
from referee.games.scauver import FLANK_SUBSETS, Phase, ScauverState, flank_choices

GAME = load_game("scauver")

# Fields used by the scripted showdowns (left flank, right flank), 8 distinct cards each.
EVEN_SPADES = (["AS", "2S", "6S", "KS"], ["3S", "4S", "5S", "7S"])  # 19 : 19, links of value 10 and 9 among others
EVEN_HEARTS = (["AH", "2H", "6H", "KH"], ["3H", "4H", "5H", "7H"])
EVEN_DIAMONDS = (["AD", "2D", "6D", "KD"], ["3D", "4D", "5D", "7D"])
EVEN_CLUBS = (["AC", "2C", "6C", "KC"], ["3C", "4C", "5C", "7C"])
WIDE_HEARTS = (["AH", "2H", "3H", "4H"], ["5H", "6H", "7H", "JH"])  # 10 : 26, best link 5 x 16 = 80
WIDE_DIAMONDS = (["AD", "2D", "3D", "4D"], ["5D", "6D", "7D", "JD"])
NO_LINK_38_6 = (["KS", "KH", "QS", "QH"], ["AS", "AH", "2S", "2H"])  # no link, difference 32
NO_LINK_34_6 = (["JD", "JC", "QD", "QC"], ["AD", "AC", "2D", "2C"])  # no link, difference 28


def new(players: int = 2, seed: int = 1, deal: Any = None, **config: Any) -> ScauverState:
    config.setdefault("first_dealer", 0)
    state = GAME.new_game(players, seed=seed, config=config, deal=deal)
    assert isinstance(state, ScauverState)
    return state


def scripted_deal(fields: list[tuple[list[str], list[str]]], dealer: int = 0) -> dict[str, Any]:
    """A one-round deal that lets every seat build `fields[seat]`: setup L0 L1 | R0, laps L2, R1, R2, final L3 | R3."""
    players = len(fields)
    order = [(dealer + 1 + i) % players for i in range(players)]
    hands = [[left[0], left[1], right[0], left[3], right[3]] for left, right in fields]
    draws = [fields[seat][flank][index] for flank, index in ((0, 2), (1, 1), (1, 2)) for seat in order]
    return {"rounds": [{"hands": hands, "draws": draws}]}


def build_fields(state: ScauverState, fields: list[tuple[list[str], list[str]]]) -> None:
    """Play the scripted deal up to the showdown, everybody checking."""
    for seat in state.to_move():
        left, right = fields[seat]
        state.apply(seat, {"kind": "setup", "left": left[:2], "right": right[:1]})
    while state.phase is not Phase.SHOWDOWN:
        (seat,) = state.to_move()
        left, right = fields[seat]
        if state.phase in (Phase.BET, Phase.FINAL_BET):
            state.apply(seat, {"kind": "check"})
        elif state.phase is Phase.PLACE:
            (card,) = [card for card in state.hands[seat] if card not in (left[3], right[3])]
            state.apply(seat, {"kind": "place", "card": card, "flank": "left" if card in left else "right"})
        else:
            state.apply(seat, {"kind": "final", "left": left[3], "right": right[3]})
    assert [(sorted(state.left[s]), sorted(state.right[s])) for s in range(state.players)] == [
        (sorted(left), sorted(right)) for left, right in fields
    ]


def showdown(
    fields: list[tuple[list[str], list[str]]], choices: list[dict[str, Any]], **config: Any
) -> tuple[ScauverState, dict[str, Any]]:
    config.setdefault("round_cap", 1)
    state = new(len(fields), deal=scripted_deal(fields), **config)
    build_fields(state, fields)
    for seat, choice in enumerate(choices):
        state.apply(seat, choice)
    outcome = state.observation(0)["last_round"]
    assert outcome is not None and outcome["round"] == 1
    return state, outcome


def link(left: list[str], right: list[str]) -> dict[str, Any]:
    return {"kind": "vanguards", "left": left, "right": right}


def finish_setup(state: ScauverState) -> None:
    for seat in state.to_move():
        state.apply(seat, state.legal_actions(seat)[0])


def act(state: ScauverState, kind: str, **fields: Any) -> int:
    (seat,) = state.to_move()
    state.apply(seat, {"kind": kind, **fields})
    return seat


def bet_amounts(state: ScauverState, kind: str) -> list[int]:
    (seat,) = state.to_move()
    return [action["amount"] for action in state.legal_actions(seat) if action["kind"] == kind]


# Cards.


def test_deck_has_forty_cards_with_their_values() -> None:
    assert len(set(FACE_DECK)) == len(set(NUMERIC_DECK)) == 40
    assert [CARD_VALUE[card] for card in ("AS", "7H", "JD", "QC", "KS")] == [1, 7, 8, 9, 10]
    assert [CARD_VALUE[card] for card in ("8D", "9C", "10S")] == [8, 9, 10]


def test_numeric_deck_deals_8_9_10_ids() -> None:
    state = new(4, numeric_deck=True)
    cards = {card for hand in state.hands for card in hand} | set(state.deck)
    assert cards == set(NUMERIC_DECK)


# Links.


def test_one_card_to_one_card_is_never_a_link() -> None:
    assert link_problem(["5S"], ["5H"]) == "the vanguards share a card value"
    assert all(len(left) + len(right) > 2 for left, right in valid_links(*EVEN_SPADES))


def test_vanguards_sharing_a_value_are_no_link() -> None:
    assert link_problem(["2S", "3S"], ["2H", "3H"]) == "the vanguards share a card value"
    assert link_problem(["2S", "3S"], ["AH", "4H"]) is None
    assert (["2S", "3S"], ["AH", "4H"]) in valid_links(["2S", "3S", "9S", "9H"], ["AH", "4H", "KD", "KH"])


def test_vanguards_of_different_values_are_no_link() -> None:
    assert link_problem(["KS"], ["3S", "6S"]) == "the vanguards' values differ (10 left, 9 right)"
    assert "1 to 3 cards" in (link_problem(["AS", "2S", "3S", "4S"], ["KS"]) or "")


def brute_force_links(left: list[str], right: list[str]) -> set[tuple[tuple[str, ...], tuple[str, ...]]]:
    found = set()
    for size_left in (1, 2, 3):
        for size_right in (1, 2, 3):
            for vanguard_left in combinations(left, size_left):
                for vanguard_right in combinations(right, size_right):
                    values_left = {CARD_VALUE[card] for card in vanguard_left}
                    values_right = {CARD_VALUE[card] for card in vanguard_right}
                    total = sum(CARD_VALUE[card] for card in vanguard_left)
                    if total == sum(CARD_VALUE[card] for card in vanguard_right) and not values_left & values_right:
                        found.add((tuple(sorted(vanguard_left)), tuple(sorted(vanguard_right))))
    return found


@settings(max_examples=150, deadline=None)
@given(st.permutations(FACE_DECK))
def test_valid_links_are_exactly_the_brute_force_ones(deck: list[str]) -> None:
    left, right = deck[:4], deck[4:8]
    listed = [(tuple(sorted(a)), tuple(sorted(b))) for a, b in valid_links(left, right)]
    assert len(listed) == len(set(listed))
    assert set(listed) == brute_force_links(left, right)


def test_no_link_field_lists_only_no_link() -> None:
    assert valid_links(*NO_LINK_38_6) == []


# Strength hierarchy.


def test_strength_size_first() -> None:
    assert link_strength(["KS"], ["3S", "7S"]) > link_strength(["AS", "2S", "6S"], ["4S", "5S"])


def test_strength_length_order_2_1_2_2_3_1_3_2_3_3() -> None:
    ladder = [
        (["3S", "7S"], ["KH"]),
        (["3S", "7S"], ["4H", "6H"]),
        (["AS", "2S", "7S"], ["KH"]),
        (["AS", "2S", "7S"], ["4H", "6H"]),
        (["AS", "2S", "7S"], ["3H", "3D", "4H"]),
    ]
    strengths = [link_strength(left, right) for left, right in ladder]
    assert [strength.size for strength in strengths] == [10] * 5
    assert [strength.length for strength in strengths] == [0, 1, 2, 3, 4]
    assert strengths == sorted(strengths)
    assert link_strength(["KH"], ["3S", "7S"]).length == 0


def test_strength_height_greater_vanguard_first_then_lesser() -> None:
    assert link_strength(["3S", "7S"], ["KH"]) > link_strength(["4S", "6S"], ["KH"])
    assert link_strength(["5S", "4S", "AS"], ["8H", "2H"]) > link_strength(["5S", "4S", "AS"], ["7H", "3H"])


def test_strength_equal_lengths_greater_is_the_higher_cards() -> None:
    assert link_strength(["6S", "4S"], ["7H", "3H"]) == LinkStrength(10, 1, (7, 3, 6, 4))
    assert link_strength(["7H", "3H"], ["6S", "4S"]) == LinkStrength(10, 1, (7, 3, 6, 4))
    assert link_strength(["7H", "3H"], ["8S", "2S"]) > link_strength(["7H", "3H"], ["6S", "4S"])


# Scoring and the pot.


def test_scoring_with_links_lowest_score_wins() -> None:
    state, outcome = showdown([EVEN_SPADES, WIDE_HEARTS], [link(["KS"], ["3S", "7S"]), link(["AH", "4H"], ["5H"])])
    assert outcome["scores"] == [0, 80]
    assert outcome["winners"] == [0] and outcome["won"] == [4, 0] and not outcome["by_fold"]
    assert state.chips == [102, 98]


def test_player_without_link_ranks_below_any_link() -> None:
    _, outcome = showdown([NO_LINK_38_6, WIDE_DIAMONDS], [{"kind": "no_link"}, link(["AD", "4D"], ["5D"])])
    assert outcome["scores"] == [None, 80] and outcome["winners"] == [1]
    assert outcome["choices"][0] == {"kind": "no_link"}


def test_among_players_without_link_smaller_difference_wins() -> None:
    _, outcome = showdown([NO_LINK_38_6, NO_LINK_34_6], [{"kind": "no_link"}, {"kind": "no_link"}])
    assert outcome["winners"] == [1]


def test_equal_scores_broken_by_link_strength() -> None:
    _, outcome = showdown(
        [EVEN_SPADES, EVEN_HEARTS], [link(["AS", "2S", "6S"], ["4S", "5S"]), link(["KH"], ["3H", "7H"])]
    )
    assert outcome["scores"] == [0, 0] and outcome["winners"] == [1]


def test_full_tie_splits_the_pot_odd_chips_to_the_dealers_left() -> None:
    fields = [EVEN_SPADES, EVEN_HEARTS, EVEN_DIAMONDS, EVEN_CLUBS]
    choices = [link([left[3]], [right[0], right[3]]) for left, right in fields]
    state, outcome = showdown(fields, choices, amphora=3)
    assert outcome["pot"] == 6 and outcome["winners"] == [0, 1, 2, 3]
    assert outcome["won"] == [1, 3, 1, 1]
    assert state.chips == [98, 100, 101, 101]


def test_no_link_is_refused_when_a_link_exists_and_vanguards_are_checked() -> None:
    state = new(2, deal=scripted_deal([EVEN_SPADES, NO_LINK_34_6]))
    build_fields(state, [EVEN_SPADES, NO_LINK_34_6])
    assert state.legal_actions(1) == [{"kind": "no_link"}]
    assert {"kind": "no_link"} not in state.legal_actions(0)
    for bad in ({"kind": "no_link"}, link(["KS"], ["3S", "6S"]), link(["3S"], ["KS"]), {"kind": "check"}):
        with pytest.raises(IllegalAction):
            state.apply(0, bad)
    state.apply(0, link(["KS"], ["7S", "3S"]))
    assert state.observation(0)["my_choice"] == link(["KS"], ["3S", "7S"])
    assert state.observation(1)["my_choice"] is None


# Betting.


def test_amphora_posting_dealer_and_left_with_2_3_4_players() -> None:
    for players in (2, 3, 4):
        for dealer in range(players):
            state = new(players, first_dealer=dealer)
            posted = [(entry["seat"], entry["amount"]) for entry in state.betting]
            assert posted == [(dealer, 2), ((dealer + 1) % players, 2)]
            assert state.pot == 4 and sum(state.chips) == 100 * players - 4
            assert state.order[0] == (dealer + 1) % players


def test_table_stakes_cap_limits_bets_and_raises() -> None:
    state = new(2, starting_chips=10)
    finish_setup(state)
    assert act(state, "fold") == 1
    assert state.observation(0)["last_round"]["won"] == [4, 0]
    assert state.chips == [10, 6] and state.round == 2 and state.dealer == 1  # [12, 8] less the amphoras
    finish_setup(state)
    assert state.cap == 8
    assert bet_amounts(state, "bet") == [2, 4, 6]
    with pytest.raises(IllegalAction, match="not offered"):
        state.apply(0, {"kind": "bet", "amount": 8})
    act(state, "bet", amount=6)
    assert bet_amounts(state, "raise") == []
    assert state.legal_actions(1) == [{"kind": "call"}, {"kind": "fold"}]
    act(state, "call")
    assert state.chips == [4, 0] and state.pot == 16 and state.phase is Phase.PLACE


def test_raise_cap_stops_raises() -> None:
    state = new(2)
    finish_setup(state)
    act(state, "bet", amount=2)
    for _ in range(3):
        assert bet_amounts(state, "raise") == [2, 4, 6, 8]
        act(state, "raise", amount=4)
    assert bet_amounts(state, "raise") == []
    with pytest.raises(IllegalAction, match="no more raises"):
        act(state, "raise", amount=2)
    assert act(state, "call") == 1
    assert state.put == [16, 16] and state.phase is Phase.PLACE and state.to_move() == [1]


def test_raise_reopens_answers_for_the_bettor() -> None:
    state = new(3)
    finish_setup(state)
    assert act(state, "bet", amount=2) == 1
    assert act(state, "raise", amount=2) == 2
    assert state.to_move() == [0]
    assert act(state, "call") == 0
    assert act(state, "call") == 1
    assert state.phase is Phase.PLACE and state.to_move() == [1]
    assert [entry["kind"] for entry in state.betting] == ["amphora", "amphora", "bet", "raise", "call", "call"]


def test_fold_on_own_turn_skips_the_player_for_the_round() -> None:
    state = new(3)
    finish_setup(state)
    assert act(state, "fold") == 1
    assert not state.in_round[1] and state.to_move() == [2] and state.phase is Phase.BET
    for _ in range(2):
        act(state, "check")
        (seat,) = state.to_move()
        state.apply(seat, state.legal_actions(seat)[0])
    assert state.to_move() == [2] and len(state.hands[1]) == 3 and state.observation(0)["lap"] == 2


def test_last_player_in_wins_at_once() -> None:
    state = new(3)
    finish_setup(state)
    act(state, "bet", amount=4)
    act(state, "fold")
    act(state, "fold")
    outcome = state.observation(2)["last_round"]
    assert outcome["by_fold"] and outcome["winners"] == [1] and outcome["pot"] == 8
    assert outcome["won"] == [0, 8, 0]
    assert state.chips == [98, 100, 98] and state.round == 2 and state.phase is Phase.SETUP  # less round 2's amphoras


def test_final_bet_exchange_ends_the_betting() -> None:
    state = new(2, deal=scripted_deal([EVEN_SPADES, WIDE_HEARTS]))
    fields = [EVEN_SPADES, WIDE_HEARTS]
    for seat in state.to_move():
        state.apply(seat, {"kind": "setup", "left": fields[seat][0][:2], "right": fields[seat][1][:1]})
    while state.phase is not Phase.FINAL_BET:
        (seat,) = state.to_move()
        state.apply(seat, state.legal_actions(seat)[0])
    act(state, "bet", amount=2)
    act(state, "call")
    assert state.phase is Phase.SHOWDOWN and state.to_move() == [0, 1]


# Rounds, elimination, end and ranking.


def test_dealer_rotates_and_skips_eliminated_players() -> None:
    state = new(3, starting_chips=2)
    finish_setup(state)
    act(state, "fold")  # seat 1
    act(state, "fold")  # seat 2: seat 0 takes the two amphoras
    assert state.observation(0)["last_round"]["won"] == [4, 0, 0]
    assert state.chips == [2, 0, 0] and state.pot == 4
    assert state.round == 2 and state.dealer == 2 and state.order == [0, 2]
    assert state.observation(0)["eliminated"] == [False, True, False]


def test_elimination_below_the_amphora_ends_the_game() -> None:
    state = new(2, starting_chips=2)
    finish_setup(state)
    act(state, "fold")
    assert state.is_over() and state.to_move() == [] and state.round == 1
    assert state.result() == {"scores": [4, 0], "ranks": [1, 2]}
    with pytest.raises(IllegalAction, match="game is over"):
        state.apply(0, {"kind": "check"})


def test_round_cap_ends_the_game_and_chips_rank() -> None:
    state = new(3, round_cap=1)
    finish_setup(state)
    act(state, "fold")
    act(state, "fold")
    assert state.is_over() and state.round == 1
    assert state.result() == {"scores": [102, 98, 100], "ranks": [1, 3, 2]}


def test_tournament_mode_grows_the_amphora() -> None:
    state = new(2, growth_every=2, growth_factor=3)
    assert [state.amphora_for(number) for number in (1, 2, 3, 4, 5)] == [2, 2, 6, 6, 18]


def test_ranking_by_elimination_round_then_chips() -> None:
    state = new(4, starting_chips=10, growth_every=1)
    for folds in (3, 3, 2):
        finish_setup(state)
        for _ in range(folds):
            act(state, "fold")
    assert state.is_over() and state.round == 3
    assert state.eliminated_before == [4, 4, 3, None]
    assert state.result() == {"scores": [4, 12, 6, 18], "ranks": [3, 2, 4, 1]}


def test_equal_standing_shares_a_rank() -> None:
    state = new(3)
    state.eliminated_before = [5, 5, None]
    state.chips = [1, 1, 298]
    assert state.result()["ranks"] == [2, 2, 1]


# Interface: deals, actions, observations, clones.


def test_explicit_deal_fixes_hands_and_draws() -> None:
    state = new(2, deal=scripted_deal([EVEN_SPADES, WIDE_HEARTS]))
    assert state.hands[0] == ["AS", "2S", "3S", "7S", "KS"]
    assert state.deck[::-1][:6] == ["3H", "6S", "6H", "4S", "7H", "5S"]


def test_explicit_deal_ignores_the_hand_of_an_eliminated_seat() -> None:
    hands = [FACE_DECK[0:5], FACE_DECK[5:10], FACE_DECK[10:15]]
    deal = {"rounds": [{"hands": [list(hand) for hand in hands]}] * 2}
    state = new(3, starting_chips=2, deal=deal)
    finish_setup(state)
    act(state, "fold")
    act(state, "fold")
    assert state.round == 2 and state.eliminated_before[1] == 2
    assert state.hands == [list(hands[0]), [], list(hands[2])]
    assert sorted(state.deck + state.hands[0] + state.hands[2]) == sorted(FACE_DECK)


@pytest.mark.parametrize(
    ("deal", "message"),
    [
        ([], "rounds"),
        ({"rounds": [{"hands": [["AS"] * 5]}]}, "hands"),
        ({"rounds": [{"hands": [["AS", "2S", "3S", "4S"], ["5S", "6S", "7S", "JS", "QS"]]}]}, "5 cards"),
        ({"rounds": [{"hands": [["AS", "2S", "3S", "4S", "5S"], ["5S", "6S", "7S", "JS", "QS"]]}]}, "twice"),
        ({"rounds": [{"hands": [["AS", "2S", "3S", "4S", "10S"], ["5S", "6S", "7S", "JS", "QS"]]}]}, "not a card"),
        ({"rounds": [{"hands": [["AS", "2S", "3S", "4S", ["5S"]], ["6S", "7S", "JS", "QS", "KS"]]}]}, "not a card"),
        ({"rounds": [{"hands": [["AS", "2S", "3S", "4S", "5S"], ["6S", "7S", "JS", "QS", "KS"]], "x": 1}]}, "map"),
    ],
)
def test_explicit_deal_is_validated(deal: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        new(2, deal=deal)


def test_bad_config_is_refused() -> None:
    with pytest.raises(ConfigError, match="first_dealer"):
        new(2, first_dealer=3)
    with pytest.raises(ConfigError, match="bet_min_amphoras"):
        new(2, bet_min_amphoras=3, bet_max_amphoras=2)
    with pytest.raises(ConfigError, match="starting_chips"):
        new(2, starting_chips=1)


def test_setup_lists_every_placement_of_three_cards_once() -> None:
    state = new(4)
    actions = state.legal_actions(2)
    assert len(actions) == 80
    placements = {(frozenset(action["left"]), frozenset(action["right"])) for action in actions}
    assert len(placements) == 80
    assert all(len(action["left"]) + len(action["right"]) == 3 for action in actions)


def test_setup_choices_stay_hidden_until_everybody_has_chosen() -> None:
    state = new(3)
    state.apply(0, {"kind": "setup", "left": state.hands[0][:3], "right": []})
    seen_by_1 = state.observation(1)
    assert seen_by_1["fields"][0] == {"left": [], "right": []}
    assert state.observation(0)["fields"][0]["left"] == state.left[0]
    with pytest.raises(IllegalAction, match="not to move"):
        state.apply(0, state.legal_actions(1)[0])
    state.apply(1, state.legal_actions(1)[0])
    state.apply(2, state.legal_actions(2)[0])
    assert state.observation(1)["fields"][0]["left"] == state.left[0]


def test_illegal_actions_name_the_broken_rule() -> None:
    state = new(2)
    hand = state.hands[0]
    for bad, message in [
        ({"kind": "setup", "left": hand[:4], "right": []}, "exactly 3"),
        ({"kind": "setup", "left": [hand[0], hand[0]], "right": [hand[1]]}, "twice"),
        ({"kind": "setup", "left": ["XX"], "right": hand[:2]}, "not in your hand"),
        ({"kind": "check"}, "setup"),
        ({"kind": "setup", "left": hand[:2], "right": hand[2:3], "extra": 1}, "unexpected"),
    ]:
        with pytest.raises(IllegalAction, match=message):
            state.apply(0, bad)
    finish_setup(state)
    with pytest.raises(IllegalAction, match="integer"):
        act(state, "bet", amount="2")
    act(state, "check")
    assert state.left[1] == [] and len(state.right[1]) == 3
    with pytest.raises(IllegalAction, match="already holds"):
        act(state, "place", card=state.hands[1][0], flank="right")
    with pytest.raises(IllegalAction, match="not in your hand"):
        act(state, "place", card=state.hands[0][0], flank="left")


def test_same_seed_and_actions_give_the_same_game_and_clones_are_independent() -> None:
    first = play_random(3, seed=5, chooser=random.Random(9))
    again = GAME.replay(3, 5, first.history, config={"first_dealer": -1})
    assert again.observation(0) == first.observation(0) and again.result() == first.result()
    state = new(3)
    twin = state.clone()
    finish_setup(twin)
    assert state.phase is Phase.SETUP and twin.phase is Phase.BET
    assert state.observation(1) != twin.observation(1)


# Random games.


def play_random(
    players: int, seed: int, chooser: random.Random, check: Any = None, patient: bool = False, **config: Any
) -> ScauverState:
    """A random game; `patient` players never fold, so that rounds reach the showdown."""
    config.setdefault("first_dealer", -1)
    state = GAME.new_game(players, seed=seed, config=config)
    assert isinstance(state, ScauverState)
    while not state.is_over():
        for seat in state.to_move():
            legal = state.legal_actions(seat)
            action = chooser.choice([a for a in legal if a["kind"] != "fold"] if patient else legal)
            if check is not None:
                check(state, seat)
            state.apply(seat, action)
    return state


def hidden_from(state: ScauverState, seat: int) -> set[str]:
    hidden = {card for other in range(state.players) if other != seat for card in state.hands[other]}
    if state.phase is Phase.SETUP:
        hidden |= {card for other in range(state.players) if other != seat for card in state.left[other]}
        hidden |= {card for other in range(state.players) if other != seat for card in state.right[other]}
    return hidden | set(state.deck)


def strings_in(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set().union(*(strings_in(item) for item in value.values()))
    if isinstance(value, list):
        return set().union(*(strings_in(item) for item in value))
    return set()


def mutated(action: dict[str, Any]) -> dict[str, Any]:
    if "amount" in action:
        return {**action, "amount": action["amount"] + 1}
    if action["kind"] == "place":
        return {**action, "card": "QQ"}
    if action["kind"] in ("setup", "vanguards"):
        return {**action, "left": action["left"] + ["QQ"]}
    return {**action, "extra": True}


@pytest.mark.parametrize(("patient", "round_cap"), [(False, 60), (True, 8)])
@pytest.mark.parametrize("players", [2, 3, 4])
@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32), choices=st.integers(0, 2**32))
def test_random_games_keep_every_invariant(
    players: int, patient: bool, round_cap: int, seed: int, choices: int
) -> None:
    total = 100 * players
    deck = Counter(FACE_DECK)

    def check(state: ScauverState, seat: int) -> None:
        assert sum(state.chips) + state.pot == total and min(state.chips) >= 0
        assert state.pot == sum(state.put)
        cards = state.deck + [c for s in range(players) for c in state.hands[s] + state.left[s] + state.right[s]]
        assert Counter(cards) == deck
        seen = {key: value for key, value in state.observation(seat).items() if key != "last_round"}
        assert not strings_in(seen) & hidden_from(state, seat)
        assert max(len(state.left[seat]), len(state.right[seat])) <= 4
        legal = state.legal_actions(seat)
        assert all(state.legal_actions(other) == [] for other in range(players) if other not in state.to_move())
        for action in legal[:5]:
            state.clone().apply(seat, action)
        with pytest.raises(IllegalAction):
            state.apply(seat, mutated(legal[-1]))

    state = play_random(players, seed, random.Random(choices), check, patient, round_cap=round_cap)
    assert state.round <= round_cap
    if patient:
        assert state.last_outcome is not None and not state.last_outcome.by_fold
    again = GAME.replay(players, seed, state.history, config={"round_cap": round_cap})
    assert [again.observation(seat) for seat in range(players)] == [state.observation(seat) for seat in range(players)]
    assert sum(state.chips) == total
    result = state.result()
    assert result["scores"] == state.chips and sorted(result["ranks"])[0] == 1
    assert (
        len([seat for seat in range(players) if state.eliminated_before[seat] is None]) == 1 or state.round == round_cap
    )


def test_the_dealt_cards_of_a_game_with_eliminations_deal_it_again() -> None:
    """Seats eliminated before a round still get a hand in `dealt` (cards the round never draws), so the
    explicit deal is valid, and it plays the same game."""
    game = load_game("scauver")
    config = {"amphora": 20, "starting_chips": 100}
    eliminations = 0
    for seed in range(12):
        state = game.new_game(4, seed=seed, config=config)
        chooser = random.Random(seed)
        while not state.is_over():
            for seat in state.to_move():
                state.apply(seat, chooser.choice(state.legal_actions(seat)))
        rounds = state.dealt["rounds"]
        assert len(rounds) == state.round
        eliminations += sum(state.eliminated_before[seat] is not None for seat in range(4))
        twin = game.replay(4, seed, state.history, config=config, deal=state.dealt)
        assert twin.result() == state.result() and twin.dealt == state.dealt
        for entry in rounds:
            cards = [card for hand in entry["hands"] for card in hand] + entry["draws"]
            assert len(cards) == len(set(cards)) == 40
    assert eliminations > 0


def test_flank_choices_are_the_flank_subsets_of_the_hand() -> None:
    hand = ["AS", "3H", "5D", "7C", "KS"]
    assert flank_choices(hand) == [[hand[index] for index in indices] for indices in FLANK_SUBSETS]

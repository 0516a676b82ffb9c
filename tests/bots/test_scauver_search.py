"""The Scauver search bot: its determinizations agree with what its seat sees, bets shift them towards strong
hands, its playout policy is the heuristic, it is deterministic given its seed (iteration mode), it plays legal
moves over whole games and outlasts random seats, and in real matches at 100 ms a move it never runs out of time;
the bot's process keeps the policy's caches out of the garbage collector's runs."""

from __future__ import annotations

import random
import subprocess
import sys
from collections import Counter
from typing import Any

import pytest
from clock_match import MOVE_TIME_MS, TIME_BANK_MS, search_timings_at_100_ms
from policy_duel import play, random_policy

from bots.python import ismcts, scauver_heuristic, scauver_policy, scauver_search
from bots.python.scauver_policy import values
from referee.botspec import resolve_bot
from referee.games import load_game

GAME = load_game("scauver")
DECK_SIZE = 40


def positions(players: int, seed: int, share: float, rounds: int = 30) -> list[tuple[Any, int]]:
    """States along a game of the heuristic (even seats) against random seats (odd), which fold, bet and get
    eliminated, at decisions of a seat to move."""
    state = GAME.new_game(players, seed=seed, config={"round_cap": rounds})
    chooser = random.Random(seed)
    found = []
    while not state.is_over():
        for seat in state.to_move():
            legal = state.legal_actions(seat)
            if chooser.random() < share:
                found.append((state.clone(), seat))
            observation = state.observation(seat)
            action = scauver_heuristic.choose(observation, legal) if seat % 2 == 0 else chooser.choice(legal)
            state.apply(seat, action)
    return found


def cards_everywhere(view: dict[str, Any]) -> int:
    fields = sum(len(field["left"]) + len(field["right"]) for field in view["fields"])
    return fields + sum(view["hand_sizes"]) + view["deck_left"]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_determinization_shows_the_seat_what_it_sees(players: int) -> None:
    """The sample's seats are the players not eliminated; at the searching seat's decision it has the same hand,
    the same fields card for card, the same hand sizes (but those of seats still choosing their setup or
    vanguards), pot, stakes, betting log, phase and legal actions, and a whole deck of 40 cards."""
    checked = Counter[str]()
    for state, seat in positions(players, seed=players, share=0.12):
        observation = state.observation(seat)
        determinizer = scauver_search.ScauverDeterminizer(observation, state.config)
        for sample_seed in range(2):
            sample = determinizer.sample(random.Random(sample_seed))
            seen = sample.observation(determinizer.seat)
            real = determinizer.seats
            assert seen["hand"] == observation["hand"]
            assert seen["phase"] == observation["phase"]
            assert sample.legal_actions(determinizer.seat) == state.legal_actions(seat)
            assert set(observation["to_move"]) <= {real[other] for other in seen["to_move"]}
            assert [real[entry["seat"]] for entry in seen["betting"]] == [
                entry["seat"] for entry in observation["betting"]
            ]
            assert seen["pot"] == observation["pot"] and seen["cap"] == observation["cap"]
            assert seen["deck_left"] == observation["deck_left"]
            assert cards_everywhere(seen) == DECK_SIZE
            if observation["phase"] != "setup":  # a seat's chosen setup is hidden from the others until all chose
                assert cards_everywhere(observation) == DECK_SIZE
            for compact, other in enumerate(real):
                assert seen["put"][compact] == observation["put"][other]
                assert seen["in_round"][compact] == observation["in_round"][other]
                if observation["phase"] != "setup":
                    assert seen["fields"][compact] == observation["fields"][other]
                if observation["phase"] not in ("setup", "showdown"):
                    assert seen["hand_sizes"][compact] == observation["hand_sizes"][other]
            assert set(seen["hand"]).isdisjoint(
                card for field in seen["fields"] for card in field["left"] + field["right"]
            )
            checked[observation["phase"]] += 1
    assert {"setup", "bet", "answer", "place", "final", "final_bet", "showdown"} <= set(checked)


def test_eliminated_seats_leave_the_sample() -> None:
    found = [
        (state, seat)
        for state, seat in positions(4, seed=9, share=0.2, rounds=60)
        if any(state.observation(seat)["eliminated"])
    ]
    assert found
    state, seat = found[-1]
    observation = state.observation(seat)
    determinizer = scauver_search.ScauverDeterminizer(observation, state.config)
    assert len(determinizer.seats) == observation["eliminated"].count(False) < 4
    assert determinizer.sample(random.Random(0)).observation(determinizer.seat)["hand"] == observation["hand"]


def test_bets_make_strong_hands_likelier() -> None:
    """A seat that bet and raised is dealt hands the heuristic would bet with more often than a seat that only
    checked, in the same position (the likelihood favours them; nothing is ruled out)."""
    state, seat = next(
        (state, seat)
        for state, seat in positions(2, seed=4, share=1.0)
        if state.observation(seat)["phase"] == "place" and state.observation(seat)["lap"] == 2
    )
    observation = state.observation(seat)
    other = 1 - seat

    def mean_cost(kinds: list[str]) -> float:
        determinizer = scauver_search.ScauverDeterminizer(observation, state.config)
        determinizer.evidence[other] = kinds
        field = observation["fields"][other]
        left, right = tuple(sorted(values(field["left"]))), tuple(sorted(values(field["right"])))
        costs = []
        for sample_seed in range(200):
            hand = determinizer.sample(random.Random(sample_seed)).observation(other)["hand"]
            costs.append(scauver_policy.betting_cost(left, right, tuple(sorted(values(hand)))))
        return sum(costs) / len(costs)

    assert mean_cost(["bet", "raise"]) < mean_cost([])
    assert scauver_search.bet_likelihood("bet", 0) > scauver_search.bet_likelihood("bet", 40) > 0


def test_without_reading_the_hands_of_seats_that_bet_are_dealt_by_chance() -> None:
    """With reading off (the default since version 2; `--reading` is version 1), a seat that bet is dealt as if
    it had not: its hands are those of a determinizer without evidence, sample for sample, where reading deals it
    others."""

    def other_bet(state: Any, seat: int) -> bool:
        view = state.observation(seat)
        bets = [entry for entry in view["betting"] if entry["seat"] != seat and entry["kind"] in ("bet", "raise")]
        return view["phase"] == "place" and bool(bets)

    state, seat = next((state, seat) for state, seat in positions(2, seed=4, share=1.0) if other_bet(state, seat))
    observation = state.observation(seat)
    other = 1 - seat
    reading = scauver_search.ScauverDeterminizer(observation, state.config, reading=True)
    plain = scauver_search.ScauverDeterminizer(observation, state.config, reading=False)
    cleared = scauver_search.ScauverDeterminizer(observation, state.config, reading=True)
    cleared.evidence = [[] for _ in cleared.seats]
    assert reading.evidence[other] and not any(plain.evidence)

    def hands(determinizer: scauver_search.ScauverDeterminizer) -> list[list[str]]:
        return [determinizer.sample(random.Random(seed)).observation(other)["hand"] for seed in range(30)]

    assert hands(plain) == hands(cleared) != hands(reading)


def test_reading_is_the_command_lines_choice() -> None:
    assert scauver_search.bot_from_args(["--reading"]).reading is True
    assert scauver_search.bot_from_args(["--no-reading", "--seed", "3"]).reading is False


def round_seen(number: int, betting: list[dict[str, Any]], last: dict[str, Any] | None) -> dict[str, Any]:
    return {"round": number, "betting": betting, "last_round": last}


def showdown(fields: list[dict[str, list[str]]], by_fold: bool = False) -> dict[str, Any]:
    return {"round": 1, "by_fold": by_fold, "fields": fields, "choices": [{"kind": "no_link"}] * len(fields)}


def test_bets_that_proved_weak_at_the_showdown_make_a_seat_a_bluffer() -> None:
    """Seat 1 bet in round 1 and showed a field without a link: its bluff rate rises above the prior; seat 0,
    which bet with a balanced linked field, falls below it; a round won by a fold teaches nothing."""
    strong = {"left": ["AS", "4S", "5S", "KS"], "right": ["2H", "3H", "6H", "QH"]}
    weak = {"left": ["AS", "AH", "AD", "2S"], "right": ["KS", "KH", "KD", "QS"]}
    assert (
        scauver_policy.field_cost((1, 4, 5, 10), (2, 3, 6, 9))
        == 0
        == scauver_heuristic.field_cost(strong["left"], strong["right"])
    )
    bets = [{"seat": 0, "kind": "bet", "amount": 4}, {"seat": 1, "kind": "raise", "amount": 2}]
    memory = scauver_search.BetMemory()
    memory.observe(round_seen(1, bets, None))
    memory.observe(round_seen(2, [], showdown([strong, weak])))
    assert memory.bluff_rate(1) > scauver_search.BLUFF_PRIOR_RATE > memory.bluff_rate(0)
    folded = scauver_search.BetMemory()
    folded.observe(round_seen(1, bets, None))
    folded.observe(round_seen(2, [], showdown([strong, weak], by_fold=True)))
    assert folded.bluff_rate(1) == folded.bluff_rate(0) == scauver_search.BLUFF_PRIOR_RATE
    assert scauver_search.bet_likelihood("bet", 50, memory.bluff_rate(1)) > scauver_search.bet_likelihood("bet", 50)


@pytest.mark.parametrize("players", [2, 4])
def test_the_playout_policy_is_the_heuristic(players: int) -> None:
    for state, seat in positions(players, seed=20 + players, share=0.3):
        observation, legal = state.observation(seat), state.legal_actions(seat)
        assert scauver_policy.choose(observation, legal) == scauver_heuristic.choose(observation, legal)


def test_the_prior_puts_the_heuristic_first_and_keeps_every_action() -> None:
    for state, seat in positions(3, seed=5, share=0.1):
        observation, legal = state.observation(seat), state.legal_actions(seat)
        ranked = scauver_search.ranked_by_heuristic(observation, legal)
        assert ranked[0] == scauver_heuristic.choose(observation, legal)
        assert sorted(map(repr, ranked)) == sorted(map(repr, legal))


def whole_game(players: int, seed: int, bot_seed: int, iterations: int, rounds: int) -> list[dict[str, Any]]:
    """The search bot's actions over a game at seat 0 against heuristic seats; every one checked legal."""
    bot = scauver_search.ScauverSearchBot(bot_seed, iterations=iterations)
    state = GAME.new_game(players, seed=seed, config={"round_cap": rounds})
    actions = []
    while not state.is_over():
        for seat in state.to_move():
            observation, legal = state.observation(seat), state.legal_actions(seat)
            if seat == 0:
                action = bot.act(observation, legal)
                assert action in legal
                assert bot.last is None or bot.last.iterations == iterations
                actions.append(action)
            else:
                action = scauver_heuristic.choose(observation, legal)
            state.apply(seat, action)
    return actions


def test_the_same_seed_plays_the_same_game_and_another_seed_may_not() -> None:
    plays = [whole_game(2, seed=3, bot_seed=bot_seed, iterations=20, rounds=6) for bot_seed in (5, 5, 6)]
    assert plays[0] == plays[1]
    assert plays[0] != plays[2]


@pytest.mark.parametrize("players", [2, 4])
def test_whole_games_against_random_seats_are_legal_and_won(players: int) -> None:
    """Every decision of whole games (no round cap: a game ends by eliminations) is one the engine lists, and
    the search outlasts the random seats (fixed seeds, iteration mode: the result cannot vary between runs)."""
    for seed in range(2):
        seat = seed % players
        policies = [
            checked_bot(seed) if other == seat else random_policy(random.Random(seed)) for other in range(players)
        ]
        assert play("scauver", policies, seed)["ranks"][seat] == 1


def checked_bot(seed: int) -> Any:
    """The search bot's decisions (16 iterations each), every one checked legal."""
    bot = scauver_search.ScauverSearchBot(seed, iterations=16)

    def checked(observation: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
        action = bot.act(observation, legal)
        assert action in legal
        return action

    return checked


def test_a_spent_clock_still_answers_with_the_heuristic() -> None:
    state, seat = next(
        (s, seat) for s, seat in positions(4, seed=3, share=0.5) if s.observation(seat)["phase"] == "bet"
    )
    bot = scauver_search.ScauverSearchBot(1)
    bot.on_clock(0, 0)
    observation, legal = state.observation(seat), state.legal_actions(seat)
    assert bot.act(observation, legal) == scauver_heuristic.choose(observation, legal)


def test_a_move_time_too_short_to_search_plays_the_heuristic_at_once() -> None:
    """At 60 ms a move without a bank (10 ms of thinking, leaving 50 ms unspent), the 16 iterations a search
    needs are out of reach at the first guess of an iteration's cost: the bot does not search at all; with a
    longer move time it does."""
    state, seat = next(
        (s, seat) for s, seat in positions(2, seed=6, share=0.5) if s.observation(seat)["phase"] == "place"
    )
    observation, legal = state.observation(seat), state.legal_actions(seat)
    bot = scauver_search.ScauverSearchBot(1)
    bot.on_clock(60, 0)
    trusted_s = ismcts.MIN_TRUSTED_ITERATIONS * scauver_search.FIRST_ITERATION_GUESS_S
    assert ismcts.budget_from_clock(60, 0).seconds < trusted_s
    assert bot.act(observation, legal) == scauver_heuristic.choose(observation, legal)
    assert bot.last is None
    bot.iteration_s = scauver_search.FIRST_ITERATION_GUESS_S
    bot.on_clock(1000, 0)
    bot.act(observation, legal)
    assert bot.last is not None


def test_search_resolves_per_game() -> None:
    assert resolve_bot("search", "scauver").command[-1] == "bots.python.scauver_search"
    assert resolve_bot("scauver-search", "scout").command[-1] == "bots.python.scauver_search"
    assert resolve_bot("search", "scout").command[-1] == "bots.python.scout_search"


@pytest.mark.parametrize("players", [2, 4])
def test_real_matches_at_100_ms_a_move_never_time_out(players: int) -> None:
    """Two games against random bots at move_time_ms=100 with a 2 s bank (the round cap keeps them short): no
    timeout nor any other fault, and decisions were made (the bot aims at 30% of the move time)."""
    for timing in search_timings_at_100_ms("scauver", "bots.python.scauver_search", players, {"round_cap": 12}):
        assert timing.decisions > 10
        assert timing.max_ms < MOVE_TIME_MS + TIME_BANK_MS


CACHES_WALKED = """
import gc, sys
from bots.python import scauver_policy, scauver_search

def fill_and_count(bot, **_):
    for a in range(1, 14):
        for b in range(1, 14):
            for c in range(1, 14):
                scauver_policy.projected_cost(tuple(sorted((a, b))), (c,), (a, c))
    gc.collect()
    cached = (scauver_policy.field_cost, scauver_policy.projected_cost)
    caches = [found for f in cached for found in gc.get_referents(f) if type(found) is dict and len(found) > 1000]
    walked = {id(tracked) for tracked in gc.get_objects()}
    print(len(caches), sum(id(cache) in walked for cache in caches))
    return 0

scauver_search.run_bot = fill_and_count
scauver_search.main(sys.argv[1:])
"""


@pytest.mark.parametrize(("options", "walked"), [([], 0), (["--no-freeze-caches"], 2)])
def test_the_bot_process_keeps_its_caches_from_the_collector(options: list[str], walked: int) -> None:
    """Started as a bot, the process has the collector's runs skip the two big caches, however full they get;
    with --no-freeze-caches (version 2, the control), a run walks both."""
    found = subprocess.run(
        [sys.executable, "-c", CACHES_WALKED, *options], capture_output=True, text=True, check=True, timeout=120
    )
    assert found.stdout.split() == ["2", str(walked)]

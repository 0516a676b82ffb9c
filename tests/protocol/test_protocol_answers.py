"""PROTOCOL.md's answers to client authors ("SCOUT: what client authors ask") hold in the engine: the Scout &
Show example's two history entries, the card a scout entry records, the left end, turn order, and the
running round score."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from referee.games import load_game

DOC = (Path(__file__).resolve().parents[2] / "protocol" / "PROTOCOL.md").read_text()
ANSWERS = DOC[DOC.index("#### SCOUT: what client authors ask") : DOC.index("### Scauver")]


def _after_the_example_request():
    """The state of PROTOCOL.md's SCOUT example request: 3 players, seed 4, seat 0 showed [2, 9]."""
    state = load_game("scout").new_game(3, seed=4)
    for seat in state.to_move():
        state.apply(seat, {"kind": "orient", "flip": False})
    state.apply(0, {"kind": "show", "start": 2, "length": 1})
    return state


def test_the_scout_and_show_example_logs_the_two_entries_shown() -> None:
    state = _after_the_example_request()
    state.apply(1, {"kind": "scout", "end": "left", "flip": True, "insert": 12, "and_show": True})
    assert state.observation(1)["must_show"] and state.to_move() == [1]
    assert {action["kind"] for action in state.legal_actions(1)} == {"show"}
    state.apply(1, {"kind": "show", "start": 12, "length": 1})
    [block] = re.findall(r"```\n(.*?)```", ANSWERS, flags=re.DOTALL)
    shown = [json.loads(line) for line in block.strip().splitlines()]
    observation = state.observation(1)
    assert observation["history"][-2:] == shown
    assert shown[0]["card"] == [9, 2] and observation["active_set"] == [[9, 2]]
    assert (observation["captured"], observation["chips"], observation["hand_sizes"]) == (
        [0, 0, 0],
        [1, 0, 0],
        [11, 12, 12],
    )
    counts = zip(observation["captured"], observation["chips"], observation["hand_sizes"], strict=True)
    running = [captured + chips - in_hand for captured, chips, in_hand in counts]
    assert running == [-10, -12, -12] and "-10, -12, -12" in ANSWERS


def test_left_is_index_zero_and_a_scout_records_the_card_as_inserted() -> None:
    rng = random.Random(5)
    checked = 0
    for seed in range(40):
        state = load_game("scout").new_game(4, seed=seed)
        while not state.is_over() and checked < 200:
            (seat, *_) = state.to_move()
            before = state.observation(seat)
            action = rng.choice(state.legal_actions(seat))
            state.apply(seat, action)
            if action["kind"] != "scout" or state.observation(seat)["round"] != before["round"]:
                continue
            taken = before["active_set"][0 if action["end"] == "left" else -1]
            entry = state.observation(seat)["history"][-1]
            assert entry["card"] == (taken[::-1] if action["flip"] else taken)
            assert state.observation(seat)["hand"][action["insert"]] == entry["card"]
            checked += 1
    assert checked == 200


def test_play_goes_to_the_left_and_rounds_start_one_seat_further() -> None:
    state = load_game("scout").new_game(4, seed=3, config={"first_player": 2})
    starters = []
    while not state.is_over():
        observation = state.observation(0)
        if observation["phase"] == "orient":
            starters.append(observation["round_starter"])
            for seat in state.to_move():
                state.apply(seat, {"kind": "orient", "flip": False})
            continue
        (seat,) = state.to_move()
        plain = [a for a in state.legal_actions(seat) if a["kind"] == "show" or not a["and_show"]]
        state.apply(seat, plain[0])
        if not state.is_over() and state.observation(0)["phase"] == "play" and state.observation(0)["history"]:
            assert state.to_move() == [(seat + 1) % 4]
    assert starters == [2, 3, 0, 1]

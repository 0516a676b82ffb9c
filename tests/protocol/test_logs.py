"""Logs sent as deltas (protocol/logs.py): what a bot rebuilds is the engine's observation, whatever happens."""

from __future__ import annotations

import copy
import random

import msgpack
import pytest

from protocol import codec
from protocol.logs import LOG_FROM, LogGap, LogReceiver, LogSender
from referee.games import load_game


def _wire(observation: dict, log_from: dict) -> dict:
    """The request as a bot decodes it."""
    return msgpack.unpackb(codec.encode_request(1, observation, [], 1000, 0, log_from), raw=False)


@pytest.mark.parametrize(
    ("name", "players"), [("scout", 2), ("scout", 4), ("scout", 5), ("scauver", 2), ("scauver", 4)]
)
def test_rebuilt_observations_equal_the_engines_across_rounds_games_and_simultaneous_decisions(
    name: str, players: int
) -> None:
    game = load_game(name)
    receivers = [LogReceiver() for _ in range(players)]
    fresh_by_round: set[tuple[int, int, int]] = set()
    deltas = 0
    for game_index in range(3):
        state = game.new_game(players, seed=game_index)
        senders = [LogSender(game.info.log_keys) for _ in range(players)]
        chooser = random.Random(game_index)
        while not state.is_over():
            movers = state.to_move()
            requests = {}
            for seat in movers:
                expected = state.observation(seat)
                observation = copy.deepcopy(expected)
                log_from = senders[seat].trim(observation)
                if not any(log_from.values()):
                    fresh_by_round.add((game_index, seat, expected["round"]))
                deltas += any(log_from.values())
                requests[seat] = (_wire(observation, log_from), expected)
            for seat, (request, expected) in requests.items():
                receivers[seat].restore(request["observation"], request[LOG_FROM])
                assert request["observation"] == expected
            for seat in movers:
                state.apply(seat, chooser.choice(state.legal_actions(seat)))
    assert deltas
    assert all((g, seat, 1) in fresh_by_round for g, seat, _ in fresh_by_round), "every game starts with whole logs"


def test_a_new_round_sends_the_log_in_full() -> None:
    sender = LogSender(("log",))
    assert sender.trim({"round": 1, "log": [1, 2]}) == {"log": 0}
    observation = {"round": 1, "log": [1, 2, 3]}
    assert sender.trim(observation) == {"log": 2}
    assert observation["log"] == [3]
    observation = {"round": 2, "log": [9]}
    assert sender.trim(observation) == {"log": 0}
    assert observation["log"] == [9]


def test_resend_sends_the_log_in_full_at_the_next_request() -> None:
    sender = LogSender(("log",))
    sender.trim({"round": 1, "log": [1, 2]})
    sender.resend()
    observation = {"round": 1, "log": [1, 2, 3]}
    assert sender.trim(observation) == {"log": 0}
    assert observation["log"] == [1, 2, 3]


def test_a_delta_that_does_not_continue_the_log_is_a_gap() -> None:
    receiver = LogReceiver()
    receiver.restore({"log": [1, 2]}, {"log": 0})
    with pytest.raises(LogGap, match="continues from entry 3"):
        receiver.restore({"log": [4]}, {"log": 3})
    with pytest.raises(LogGap, match="no log"):
        LogReceiver().restore({"log": [4]}, {"log": 1})


def test_a_bot_changing_its_observation_does_not_change_the_next_one() -> None:
    receiver = LogReceiver()
    first = {"log": [1, 2]}
    receiver.restore(first, {"log": 0})
    first["log"].append("mine")
    second = {"log": [3]}
    receiver.restore(second, {"log": 2})
    assert second["log"] == [1, 2, 3]


def test_tuples_stay_tuples() -> None:
    receiver = LogReceiver()
    observation = {"log": (1, 2)}
    receiver.restore(observation, {"log": 0})
    observation = {"log": (3,)}
    receiver.restore(observation, {"log": 2})
    assert observation["log"] == (1, 2, 3)

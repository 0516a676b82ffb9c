"""The scripted referee (protocol/scripted.py): whole scripts through the SDK's loop, log deltas, and every
contract breach it catches."""

from __future__ import annotations

import functools
import random
from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from bots.python.random_bot import choose as random_choice
from protocol import codec
from protocol.logs import LOG_FROM
from protocol.scripted import (
    ActionNotLegal,
    ContractBreach,
    Decision,
    MalformedMessage,
    MissingReply,
    OutOfTurn,
    ScriptedReferee,
    ScriptError,
    ScriptItem,
    WrongRequestId,
    game_over,
    game_start,
    play_script,
    request,
    welcome,
)
from protocol.sdk import SessionEnd
from referee.games import load_game


def engine_game(name: str, players: int, seat: int, seed: int, game_index: int = 0) -> list[Any]:
    """The script of one seeded random game as `seat` sees it: game_start, its decisions with whole
    observations, game_over. The script is fixed in advance, so the engine plays `seat` too; the scripted
    referee only checks that the bot's answers are legal."""
    state = load_game(name).new_game(players, seed=seed)
    chooser = random.Random(seed)
    script: list[Any] = [game_start(name, seat, players, match_id="engine", game_index=game_index)]
    while not state.is_over():
        for mover in state.to_move():
            legal = state.legal_actions(mover)
            if mover == seat:
                script.append(request(state.observation(seat), legal))
            state.apply(mover, chooser.choice(legal))
    result = state.result()
    script.append(game_over(result["scores"], result["ranks"], seat))
    return script


def decisions_of(script: list[Any]) -> list[Decision]:
    return [item for item in script if isinstance(item, Decision)]


def sent_requests(referee: ScriptedReferee) -> list[dict[str, Any]]:
    messages = [msgspec.msgpack.decode(frame) for frame in referee.delivered]
    return [message for message in messages if message.get("type") == codec.REQUEST]


class RecordingBot:
    def __init__(self) -> None:
        self.observations: list[dict[str, Any]] = []

    def act(self, observation: dict[str, Any], legal_actions: list[Any]) -> Any:
        self.observations.append(observation)
        return legal_actions[-1]


GAMES = [("scout", 3, 1), ("scout", 5, 4), ("scauver", 2, 0), ("scauver", 4, 2)]


@pytest.mark.parametrize(("name", "players", "seat"), GAMES)
def test_the_sdk_random_bot_plays_whole_engine_games(name: str, players: int, seat: int) -> None:
    script = [welcome(), *engine_game(name, players, seat, seed=3), *engine_game(name, players, seat, 4, 1)]
    referee = ScriptedReferee(script, log_keys=load_game(name).info.log_keys)
    assert referee.run(random_choice, "random") is SessionEnd.BYE
    hello, *replies = referee.received
    assert isinstance(hello, codec.Hello) and hello.name == "random"
    assert len(replies) == len(decisions_of(script)) == len(referee.actions)
    assert [reply.id for reply in replies] == list(range(1, len(replies) + 1))  # type: ignore[union-attr]


@pytest.mark.parametrize(("name", "players", "seat"), GAMES)
def test_log_deltas_rebuild_exactly_the_observations_given(name: str, players: int, seat: int) -> None:
    script = [welcome(), *engine_game(name, players, seat, seed=5), *engine_game(name, players, seat, 6, 1)]
    given = [dict(decision.observation) for decision in decisions_of(script)]
    bot = RecordingBot()
    referee = ScriptedReferee(script, log_keys=load_game(name).info.log_keys)
    referee.run(bot)
    assert bot.observations == given
    assert [dict(decision.observation) for decision in decisions_of(script)] == given
    requests = sent_requests(referee)
    assert any(any(request[LOG_FROM].values()) for request in requests), "no request was sent as a delta"
    assert not any(requests[0][LOG_FROM].values())


def test_without_log_keys_observations_go_whole_and_without_log_from() -> None:
    script = [welcome(), *engine_game("scout", 3, 0, seed=1)]
    bot = RecordingBot()
    referee = ScriptedReferee(script)
    referee.run(bot)
    assert bot.observations == [decision.observation for decision in decisions_of(script)]
    assert all(LOG_FROM not in request for request in sent_requests(referee))


def test_raw_messages_go_verbatim_and_raw_requests_are_checked_and_numbered_after() -> None:
    history = [{"seat": 0, "kind": "orient", "flip": False}, {"seat": 1, "kind": "orient", "flip": True}]
    raw = {
        "type": "request",
        "id": 41,
        "observation": {"round": 1, "history": history[1:]},
        "legal_actions": [{"kind": "a"}],
        "time_left_ms": 5,
        "bank_left_ms": 0,
        LOG_FROM: {"history": 1},
        "from_the_future": True,
    }
    bot = RecordingBot()
    first, last = (
        request({"round": 1, "history": history[:1]}, [{"kind": "b"}]),
        request({"round": 2, "history": []}, [{}]),
    )
    referee = ScriptedReferee([welcome(), first, raw, last], log_keys=("history",))
    referee.run(bot)
    assert codec.decode_value(referee.delivered[2]) == raw
    assert bot.observations[1] == {"round": 1, "history": history}
    assert [reply.id for reply in referee.received[1:]] == [1, 41, 42]  # type: ignore[union-attr]


def test_an_empty_script_is_a_hello_answered_by_bye() -> None:
    referee = ScriptedReferee([])
    assert referee.run(random_choice, "quiet", "2", token="t") is SessionEnd.BYE
    assert referee.received == [codec.Hello(1, "t", "quiet", "2")]
    assert referee.delivered == [codec.BYE_FRAME]


def test_game_over_ranks_default_to_competition_ranks() -> None:
    assert game_over([3, 1, 3, 2])["result"] == {"scores": [3, 1, 3, 2], "ranks": [1, 4, 1, 3]}


# Bots broken in one way each. SDK bots break it through their decision; raw loops drive the transport by hand.

LEGAL = [{"kind": "orient", "flip": False}, {"kind": "orient", "flip": True}]
SCRIPT: list[ScriptItem] = [
    welcome(),
    game_start("scout"),
    request({"round": 1}, LEGAL),
    request({"round": 1}, LEGAL),
    game_over([1, 0]),
]
HELLO = codec.encode({"type": "hello", "protocol": 1, "token": "", "name": "raw"})


def action(request_id: int, chosen: Any = LEGAL[0]) -> bytes:
    return codec.encode({"type": "action", "id": request_id, "action": chosen})


def next_request(referee: ScriptedReferee) -> dict[str, Any]:
    while (message := msgspec.msgpack.decode(referee.recv()))["type"] != codec.REQUEST:
        pass
    return message


def invents_an_action(observation: dict, legal_actions: list) -> dict:
    return {"kind": "pass"}


def says_one_for_true(observation: dict, legal_actions: list) -> dict:
    return {"kind": "orient", "flip": 1}


def answers_a_string(observation: dict, legal_actions: list) -> Any:
    return "orient"


def answers_bytes(observation: dict, legal_actions: list) -> dict:
    return {"kind": "orient", "flip": b"\x01"}


def answers_a_novel(observation: dict, legal_actions: list) -> dict:
    return {"kind": "orient", "flip": False, "why": ["words"] * 40_000}


def answers_another_id(referee: ScriptedReferee) -> None:
    referee.send(HELLO)
    referee.send(action(next_request(referee)["id"] + 1))


def answers_twice(referee: ScriptedReferee) -> None:
    referee.send(HELLO)
    request_id = next_request(referee)["id"]
    referee.send(action(request_id))
    referee.send(action(request_id))


def reads_on_without_answering(referee: ScriptedReferee) -> None:
    referee.send(HELLO)
    next_request(referee)
    referee.recv()


def leaves_without_answering(referee: ScriptedReferee) -> None:
    referee.send(HELLO)
    next_request(referee)


def says_hello_twice(referee: ScriptedReferee) -> None:
    referee.send(HELLO)
    referee.send(HELLO)


def acts_before_hello(referee: ScriptedReferee) -> None:
    referee.send(action(1))


def waits_before_hello(referee: ScriptedReferee) -> None:
    referee.recv()


def sends_garbage(referee: ScriptedReferee) -> None:
    referee.send(HELLO)
    referee.send(b"\xc1\xc1")


def speaks_protocol_two(referee: ScriptedReferee) -> None:
    referee.send(codec.encode({"type": "hello", "protocol": 2, "token": "", "name": "future"}))


def keeps_the_contract(referee: ScriptedReferee) -> None:
    referee.send(HELLO)
    while (message := msgspec.msgpack.decode(referee.recv()))["type"] != codec.BYE:
        if message["type"] == codec.REQUEST:
            referee.send(action(message["id"]))


def reads_after_bye(referee: ScriptedReferee) -> None:
    keeps_the_contract(referee)
    referee.recv()


def with_sdk(bot: Callable[[dict, list], Any]) -> Callable[[ScriptedReferee], object]:
    @functools.wraps(bot)
    def run(referee: ScriptedReferee) -> None:
        referee.run(bot)

    return run


def by_hand(loop: Callable[[ScriptedReferee], None]) -> Callable[[ScriptedReferee], object]:
    @functools.wraps(loop)
    def run(referee: ScriptedReferee) -> None:
        loop(referee)
        referee.finish()

    return run


BREACHES = [
    (with_sdk(invents_an_action), ActionNotLegal, r"\{'kind': 'pass'\}, which is not among its 2 legal actions"),
    (with_sdk(says_one_for_true), ActionNotLegal, "'flip': 1}, which is not among"),
    (with_sdk(answers_a_string), MalformedMessage, "'action' of type dict, got 'orient'"),
    (with_sdk(answers_bytes), MalformedMessage, "value of type bytes is not allowed"),
    (with_sdk(answers_a_novel), MalformedMessage, "over the limit of 65536"),
    (by_hand(answers_another_id), WrongRequestId, "answered request 2, but the open request is 1"),
    (by_hand(answers_twice), OutOfTurn, "answered request 1, but no request is open"),
    (by_hand(reads_on_without_answering), MissingReply, "reads on without answering request 1"),
    (by_hand(leaves_without_answering), MissingReply, "without an answer to request 1"),
    (by_hand(says_hello_twice), OutOfTurn, "hello twice"),
    (by_hand(acts_before_hello), OutOfTurn, "action before saying hello"),
    (by_hand(waits_before_hello), OutOfTurn, "waits for the referee before saying hello"),
    (by_hand(sends_garbage), MalformedMessage, "not one msgpack value"),
    (by_hand(speaks_protocol_two), MalformedMessage, "says protocol 2, the referee speaks 1"),
    (by_hand(reads_after_bye), OutOfTurn, "after the session ended"),
]


@pytest.mark.parametrize(("play", "breach", "message"), BREACHES, ids=[play.__name__ for play, *_ in BREACHES])
def test_each_breach_of_the_contract_raises_its_exception(
    play: Callable[[ScriptedReferee], object], breach: type[ContractBreach], message: str
) -> None:
    with pytest.raises(breach, match=message):
        play(ScriptedReferee(SCRIPT))


def test_breaches_are_assertion_errors_and_say_what_the_codec_rejected() -> None:
    with pytest.raises(AssertionError) as caught:
        play_script(answers_bytes, SCRIPT)
    assert isinstance(caught.value.__cause__, codec.ProtocolViolation)


def test_a_loop_by_hand_that_keeps_the_contract_passes() -> None:
    referee = ScriptedReferee(SCRIPT)
    by_hand(keeps_the_contract)(referee)
    assert referee.actions == [LEGAL[0], LEGAL[0]]


@pytest.mark.parametrize(
    ("script", "log_keys", "message"),
    [
        ([welcome(), "game_start"], (), "a script item is a request"),
        ([request({"round": 1}, LEGAL)], ("history",), r"needs \['history'\]"),
        ([request({"history": []}, LEGAL)], ("history",), r"needs \['round'\]"),
        ([request({"round": 1}, [])], (), "at least one legal action"),
    ],
)
def test_a_script_that_cannot_be_played_is_refused_before_the_bot_runs(
    script: list[Any], log_keys: tuple[str, ...], message: str
) -> None:
    with pytest.raises(ScriptError, match=message):
        ScriptedReferee(script, log_keys=log_keys)


def test_each_game_starts_its_logs_afresh_as_the_referee_does() -> None:
    """Game 2 is in round 1 again with a longer log: a sender kept from game 1 would send a delta from entry 2
    and the bot would rebuild game 1's entries into game 2's log."""
    first, second = [{"seat": 0, "n": 1}, {"seat": 1, "n": 2}], [{"seat": 1, "n": 3}, {"seat": 0, "n": 4}, {}]
    decisions = [request({"round": 1, "history": first}, LEGAL), request({"round": 1, "history": second}, LEGAL)]
    bot = RecordingBot()
    script: list[ScriptItem] = [
        welcome(),
        game_start("scout"),
        decisions[0],
        game_over([1, 0]),
        game_start("scout", 1),
        decisions[1],
    ]
    ScriptedReferee(script, log_keys=("history",)).run(bot)
    assert [observation["history"] for observation in bot.observations] == [first, second]

"""The Python SDK: its wire against a fake referee over real sockets (fake_referee.py), and the logic of its
message loop against the scripted referee (protocol/scripted.py), which drives the same loop with no socket."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from fake_referee import REQUESTS, TOKEN, FakeReferee, ScriptError, wait_exit

from bots.python.random_bot import choose as random_choice
from protocol import limits
from protocol.scripted import ScriptedReferee, ScriptItem, game_over, game_start, play_script, request, welcome
from protocol.sdk import GameStart, SessionEnd, run_bot

ROOT = Path(__file__).resolve().parents[2]


def in_thread(referee: FakeReferee, bot: Any, **kwargs: Any) -> Future:
    pool = ThreadPoolExecutor(max_workers=1)
    future = pool.submit(run_bot, bot, "test-bot", "9.9", endpoint=referee.endpoint, **kwargs)
    pool.shutdown(wait=False)
    return future


def last_choice(observation: dict, legal_actions: list[dict]) -> dict:
    return legal_actions[-1]


class RecordingBot:
    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def on_game_start(self, info: GameStart) -> None:
        self.events.append(("start", info))

    def act(self, observation: dict, legal_actions: list[dict]) -> dict:
        self.events.append(("act", observation))
        return legal_actions[0]

    def on_game_over(self, result: dict) -> None:
        self.events.append(("over", result))


def test_function_bot_answers_every_request_and_ends_on_bye(referee: FakeReferee) -> None:
    session = in_thread(referee, last_choice, token=TOKEN)
    actions = referee.play_script(games=2)
    assert session.result(timeout=10) is SessionEnd.BYE
    assert actions == [legal[-1] for _, legal in REQUESTS] * 2


def test_hello_carries_protocol_token_name_and_version(referee: FakeReferee) -> None:
    session = in_thread(referee, last_choice, token=TOKEN)
    referee.play_script(games=1)
    session.result(timeout=10)
    assert referee.received[0] == {
        "type": "hello",
        "protocol": limits.PROTOCOL_VERSION,
        "token": TOKEN,
        "name": "test-bot",
        "version": "9.9",
    }


def scripted_games(games: int) -> list[ScriptItem]:
    """FakeReferee.play_script's messages, as a script."""
    script: list[ScriptItem] = [welcome()]
    for index in range(games):
        script.append(game_start("scout", index % 3, 3, match_id="m-1", game_index=index))
        script += [request(observation, legal) for observation, legal in REQUESTS]
        script.append(game_over([3, 1, 2]))
    return script


def test_object_bot_hooks_see_game_start_observations_and_result() -> None:
    bot = RecordingBot()
    assert ScriptedReferee(scripted_games(2)).run(bot) is SessionEnd.BYE
    kinds = [kind for kind, _ in bot.events]
    assert kinds == (["start"] + ["act"] * len(REQUESTS) + ["over"]) * 2
    starts = [info for kind, info in bot.events if kind == "start"]
    assert [(info.game, info.seat, info.players, info.game_index) for info in starts] == [
        ("scout", 0, 3, 0),
        ("scout", 1, 3, 1),
    ]
    assert starts[0].limits["max_message_bytes"] == limits.MAX_MESSAGE_BYTES
    assert bot.events[2][1] == REQUESTS[1][0]
    assert bot.events[1 + len(REQUESTS)][1] == {"scores": [3, 1, 2], "ranks": [1, 3, 2]}


class ClockedBot(RecordingBot):
    def on_clock(self, time_left_ms: int, bank_left_ms: int) -> None:
        self.events.append(("clock", (time_left_ms, bank_left_ms)))


def test_on_clock_gets_each_requests_clock_just_before_act() -> None:
    bot = ClockedBot()
    (observation, legal), (second, second_legal) = REQUESTS[0], REQUESTS[1]
    script: list[ScriptItem] = [
        welcome(),
        game_start("scout", 0, 3),
        request(observation, legal, time_left_ms=100, bank_left_ms=2000),
        request(second, second_legal, time_left_ms=250, bank_left_ms=1500),
    ]
    assert ScriptedReferee(script).run(bot) is SessionEnd.BYE
    assert [kind for kind, _ in bot.events] == ["start", "clock", "act", "clock", "act"]
    assert [value for kind, value in bot.events if kind == "clock"] == [(100, 2000), (250, 1500)]


def test_unknown_and_undecodable_messages_are_ignored(capsys: pytest.CaptureFixture) -> None:
    script: list[ScriptItem] = [welcome(), b"\xc1\xc1", {"type": "from_the_future", "x": 1}, request(*REQUESTS[0])]
    referee = ScriptedReferee(script)
    assert referee.run(last_choice) is SessionEnd.BYE
    assert referee.actions == [REQUESTS[0][1][-1]]
    assert "from_the_future" in capsys.readouterr().err


def test_wrong_token_is_refused_with_a_message(referee: FakeReferee, capsys: pytest.CaptureFixture) -> None:
    session = in_thread(referee, last_choice, token="not-the-token")
    with pytest.raises(ScriptError, match="wrong token"):
        referee.handshake()
    assert session.result(timeout=10) is SessionEnd.REFUSED
    assert "refused" in capsys.readouterr().err


def test_silent_referee_is_given_up(tmp_path: Path) -> None:
    end = run_bot(last_choice, "lonely", endpoint=f"ipc://{tmp_path}/nobody.ipc", token=TOKEN, silence_s=0.5)
    assert end is SessionEnd.REFEREE_GONE


def test_missing_endpoint_is_reported(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.delenv(limits.ENV_ENDPOINT, raising=False)
    assert run_bot(last_choice, "lost") is SessionEnd.NO_ENDPOINT
    assert limits.ENV_ENDPOINT in capsys.readouterr().err


def test_a_bot_that_is_not_a_bot_is_rejected() -> None:
    with pytest.raises(TypeError, match="a bot is a function"):
        run_bot(42, "nothing", endpoint="ipc:///nonexistent")  # type: ignore[arg-type]


def start_random_bot(referee: FakeReferee) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "bots.python.random_bot"],
        cwd=ROOT,
        env=referee.environment(),
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def test_random_bot_program_plays_the_script_and_exits_zero(referee: FakeReferee) -> None:
    bot = start_random_bot(referee)
    actions = referee.play_script(games=3)
    assert wait_exit(bot) == 0
    assert len(actions) == 3 * len(REQUESTS)
    assert referee.received[0]["name"] == "random"


def test_random_bot_exits_when_refused(capsys: pytest.CaptureFixture) -> None:
    referee = ScriptedReferee([{"type": "refused", "reason": "wrong token"}, welcome()])
    assert referee.run(random_choice, "random") == SessionEnd.REFUSED == 2
    assert "wrong token" in capsys.readouterr().err


def test_arrays_as_tuples_decodes_arrays_as_tuples_and_replies_the_same() -> None:
    seen: list[Any] = []

    def keep_and_choose_last(observation: dict, legal_actions: Any) -> dict:
        seen.append((observation, legal_actions))
        return legal_actions[-1]

    replies = play_script(keep_and_choose_last, scripted_games(1), arrays_as_tuples=True)
    assert [reply.action for reply in replies[1:]] == [legal[-1] for _, legal in REQUESTS]  # type: ignore[union-attr]
    observation, legal = seen[0]
    assert type(legal) is tuple and type(observation["hand"]) is tuple

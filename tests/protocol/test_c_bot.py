"""The C random bot (bots/c) builds with its Makefile and follows the wire contract."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from fake_referee import REQUESTS, FakeReferee, ScriptError, wait_exit


def start(bot: Path, referee: FakeReferee, token: str | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [str(bot)], env=referee.environment(token), stdin=subprocess.DEVNULL, stderr=subprocess.PIPE
    )


def test_c_bot_plays_the_script_and_exits_on_bye(c_bot: Path, referee: FakeReferee) -> None:
    bot = start(c_bot, referee)
    actions = referee.play_script(games=2, extra_messages=[{"type": "from_the_future"}])
    assert wait_exit(bot) == 0
    assert len(actions) == 2 * len(REQUESTS)
    assert referee.received[0]["type"] == "hello"
    assert referee.received[0]["name"] == "c-random"


def test_c_bot_ignores_junk_and_malformed_requests(c_bot: Path, referee: FakeReferee) -> None:
    bot = start(c_bot, referee)
    identity = referee.handshake()
    referee.socket.send_multipart([identity, b"\xc1 not msgpack"])
    referee.send(identity, {"no_type": True})
    referee.send(identity, {"type": "request", "id": 1, "observation": {}, "legal_actions": []})
    assert referee.request(identity, 2, *REQUESTS[2]) in REQUESTS[2][1]
    referee.send(identity, {"type": "bye"})
    assert wait_exit(bot) == 0
    assert b"ignored" in bot.stderr.read()


def test_c_bot_copies_nested_actions_verbatim(c_bot: Path, referee: FakeReferee) -> None:
    bot = start(c_bot, referee)
    identity = referee.handshake()
    legal = [{"kind": "vanguards", "left": ["AS", "7H"], "right": [], "weight": -3, "ok": True, "x": None}]
    assert referee.request(identity, 2**40, {}, legal) == legal[0]
    referee.send(identity, {"type": "bye"})
    assert wait_exit(bot) == 0


def test_c_bot_exits_when_refused(c_bot: Path, referee: FakeReferee) -> None:
    bot = start(c_bot, referee, token="forged")
    with pytest.raises(ScriptError):
        referee.handshake()
    assert wait_exit(bot) == 2
    assert b"wrong token" in bot.stderr.read()

"""The Node.js random bot (bots/js) follows the wire contract. Needs `npm ci --prefix bots/js`."""

from __future__ import annotations

import subprocess

import pytest
from fake_referee import REQUESTS, FakeReferee, ScriptError, wait_exit


def start(js_bot: list[str], referee: FakeReferee, token: str | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        js_bot,
        env=referee.environment(token),
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def test_js_bot_plays_the_script_and_exits_on_bye(js_bot: list[str], referee: FakeReferee) -> None:
    bot = start(js_bot, referee)
    actions = referee.play_script(games=2, extra_messages=[{"type": "from_the_future"}])
    assert wait_exit(bot) == 0
    assert len(actions) == 2 * len(REQUESTS)
    assert referee.received[0]["name"] == "js-random"


def test_js_bot_ignores_junk_and_copies_large_ids_and_nested_actions(js_bot: list[str], referee: FakeReferee) -> None:
    bot = start(js_bot, referee)
    identity = referee.handshake()
    referee.socket.send_multipart([identity, b"\xc1 not msgpack"])
    referee.send(identity, {"no_type": True})
    referee.send(identity, {"type": "request", "id": 1, "observation": {}, "legal_actions": []})
    legal = [{"kind": "vanguards", "left": ["AS", "7H"], "right": [], "weight": -(2**40), "ok": True, "x": None}]
    assert referee.request(identity, 2**53 + 1, {}, legal) == legal[0]
    referee.send(identity, {"type": "bye"})
    assert wait_exit(bot) == 0
    assert b"ignored" in bot.stderr.read()


def test_js_bot_exits_when_refused(js_bot: list[str], referee: FakeReferee) -> None:
    bot = start(js_bot, referee, token="forged")
    with pytest.raises(ScriptError):
        referee.handshake()
    assert wait_exit(bot) == 2
    assert b"wrong token" in bot.stderr.read()

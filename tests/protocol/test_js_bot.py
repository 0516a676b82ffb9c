"""The Node.js random bot (bots/js) follows the wire contract. Needs `npm ci --prefix bots/js`."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from fake_referee import REQUESTS, FakeReferee, ScriptError, wait_exit

ROOT = Path(__file__).resolve().parents[2]
BOT_DIR = ROOT / "bots" / "js"

pytestmark = [
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed"),
    pytest.mark.skipif(
        not (BOT_DIR / "node_modules" / "zeromq").is_dir(),
        reason="the JS bot's packages are not installed (npm ci --prefix bots/js)",
    ),
]


@pytest.fixture
def referee(tmp_path: Path):
    fake = FakeReferee(f"ipc://{tmp_path}/referee.ipc")
    yield fake
    fake.close()


def start(referee: FakeReferee, token: str | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        ["node", str(BOT_DIR / "random_bot.js")],
        env=referee.environment(token),
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def test_js_bot_plays_the_script_and_exits_on_bye(referee: FakeReferee) -> None:
    bot = start(referee)
    actions = referee.play_script(games=2, extra_messages=[{"type": "from_the_future"}])
    assert wait_exit(bot) == 0
    assert len(actions) == 2 * len(REQUESTS)
    assert referee.received[0]["name"] == "js-random"


def test_js_bot_ignores_junk_and_copies_large_ids_and_nested_actions(referee: FakeReferee) -> None:
    bot = start(referee)
    identity = referee.handshake()
    referee.socket.send_multipart([identity, b"\xc1 not msgpack"])
    referee.send(identity, {"no_type": True})
    referee.send(identity, {"type": "request", "id": 1, "observation": {}, "legal_actions": []})
    legal = [{"kind": "vanguards", "left": ["AS", "7H"], "right": [], "weight": -(2**40), "ok": True, "x": None}]
    assert referee.request(identity, 2**53 + 1, {}, legal) == legal[0]
    referee.send(identity, {"type": "bye"})
    assert wait_exit(bot) == 0
    assert b"ignored" in bot.stderr.read()


def test_js_bot_exits_when_refused(referee: FakeReferee) -> None:
    bot = start(referee, token="forged")
    with pytest.raises(ScriptError):
        referee.handshake()
    assert wait_exit(bot) == 2
    assert b"wrong token" in bot.stderr.read()

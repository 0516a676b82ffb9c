"""The C random bot (bots/c) builds with its Makefile and follows the wire contract."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from fake_referee import REQUESTS, FakeReferee, ScriptError, wait_exit

ROOT = Path(__file__).resolve().parents[2]
BOT_DIR = ROOT / "bots" / "c"


def missing_toolchain() -> str | None:
    for tool in ("make", "cc", "pkg-config"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    probe = subprocess.run(["pkg-config", "--exists", "libzmq"], check=False)
    if probe.returncode != 0:
        return "libzmq is not installed (apt-get install libzmq3-dev)"
    probe = subprocess.run("pkg-config --exists msgpack-c || pkg-config --exists msgpack", shell=True, check=False)
    if probe.returncode != 0:
        return "msgpack-c is not installed (apt-get install libmsgpack-dev)"
    return None


@pytest.fixture(scope="module")
def c_bot() -> Path:
    reason = missing_toolchain()
    if reason is not None:
        pytest.skip(f"cannot build the C bot: {reason}")
    build = subprocess.run(["make", "-C", str(BOT_DIR)], capture_output=True, text=True, check=False)
    assert build.returncode == 0, build.stdout + build.stderr
    return BOT_DIR / "random_bot"


@pytest.fixture
def referee(tmp_path: Path):
    fake = FakeReferee(f"ipc://{tmp_path}/referee.ipc")
    yield fake
    fake.close()


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

"""The Python SDK plays a remote seat directly (protocol.sdk_remote), without `referee connect`: real processes on
loopback, `referee play ... --listen --keys` and an SDK bot given the address and its keys in the environment."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from protocol.curve_keys import new_key_pair
from protocol.sdk import SessionEnd, run_bot

CLI = [sys.executable, "-c", "from tournaments.cli import main; main()"]
LIMIT_S = 120
THINKING_BOT = """
import sys, time
from protocol.sdk import run_bot

asked = 0

def choose(observation, legal_actions):
    global asked
    asked += 1
    if asked <= 3:
        time.sleep(1.0)
    return legal_actions[0]

raise SystemExit(run_bot(choose, name="direct"))
"""


@pytest.fixture
def keys(tmp_path: Path) -> Path:
    new_key_pair("referee", tmp_path / "organiser")
    for name in ("alice", "mallory"):
        new_key_pair(name, tmp_path / name)
    (tmp_path / "organiser" / "alice.key").write_bytes((tmp_path / "alice" / "alice.key").read_bytes())
    return tmp_path


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _play(keys: Path, port: int, games: int) -> subprocess.Popen[str]:
    command = [
        *CLI,
        *("play", "scout", "remote:alice", "random", "random", "random"),
        *("--listen", f"tcp://127.0.0.1:{port}", "--keys", str(keys / "organiser")),
        *("--log-dir", str(keys / "logs"), "--games", str(games), "--move-time", "5000"),
        *("--json", "--no-sandbox"),
    ]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _sdk_bot(keys: Path, port: int, who: str, code: str) -> subprocess.CompletedProcess[str]:
    """An SDK bot told where the referee is and which keys to use by the environment alone."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("REFEREE_")}
    env |= {
        "REFEREE_REMOTE": f"tcp://127.0.0.1:{port}",
        "REFEREE_KEY": str(keys / who / f"{who}.key_secret"),
        "REFEREE_SERVER_KEY": str(keys / "organiser" / "referee.key"),
    }
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=LIMIT_S, check=False
    )


def test_an_sdk_bot_connecting_directly_plays_a_four_seat_match_and_answers_pings_while_it_thinks(
    keys: Path,
) -> None:
    """Three games (the referee asks for a fresh session between rotations: the bot says hello again on the same
    connection). The bot thinks a whole second on its first three decisions: the pings sent with those requests
    are answered at once by the SDK's link thread, so no round trip the referee measured comes near a second."""
    port = _free_port()
    play = _play(keys, port, games=3)
    try:
        bot = _sdk_bot(keys, port, "alice", THINKING_BOT)
        output, errors = play.communicate(timeout=LIMIT_S)
    finally:
        play.kill()
    assert play.returncode == 0, errors
    assert bot.returncode == SessionEnd.BYE, bot.stderr
    games = json.loads(output)["games"]
    assert len(games) == 3
    for game in games:
        alice = game["seats"].index("alice")
        assert game["isolation"] == "remote" and game["faults"] == []
        assert game["timing"][alice]["decisions"] > 0
    log = (keys / "logs" / "alice.log").read_text()
    assert log.count("waiting for its key") >= 2, log
    most = [float(ms) for ms in re.findall(r"round trip median [0-9.]+ ms, most ([0-9.]+) ms", log)]
    assert most and max(most) < 500, log


def test_an_sdk_bot_whose_key_is_not_listed_is_told_so(keys: Path) -> None:
    port = _free_port()
    play = _play(keys, port, games=1)
    try:
        bot = _sdk_bot(keys, port, "mallory", "from protocol.sdk import run_bot; raise SystemExit(run_bot(min, 'm'))")
    finally:
        play.kill()
        play.wait()
    assert bot.returncode == SessionEnd.NO_REFEREE
    assert "not on the referee's allow-list" in bot.stderr


def test_a_remote_seat_without_its_keys_is_told_what_is_missing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("REFEREE_ENDPOINT", "REFEREE_KEY", "REFEREE_SERVER_KEY"):
        monkeypatch.delenv(name, raising=False)
    assert run_bot(min, "m", remote="tcp://127.0.0.1:1") is SessionEnd.NO_REFEREE
    assert "REFEREE_KEY and REFEREE_SERVER_KEY" in capsys.readouterr().err


def test_a_key_file_that_is_not_one_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("REFEREE_ENDPOINT", raising=False)
    (tmp_path / "junk.key_secret").write_text("not a key\n")
    status = run_bot(
        min, "m", remote="tcp://127.0.0.1:1", key=tmp_path / "junk.key_secret", server_key=tmp_path / "junk.key_secret"
    )
    assert status is SessionEnd.NO_REFEREE
    assert "junk.key_secret" in capsys.readouterr().err

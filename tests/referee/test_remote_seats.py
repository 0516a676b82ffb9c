"""Remote seats on loopback, with real processes: `referee play --listen` and `referee connect` as subprocesses.

A remote bot plays a match against local bots and its games say isolation remote; clients without CURVE, with a
key not on the allow-list or with a wrong server key get no byte of the game, and the referee logs why; a seat
whose author never connects forfeits with a startup fault charged to it alone; a remote bot that sends junk or
floods is charged to its own seat."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgpack
import pytest
import zmq
import zmq.auth
from click.testing import CliRunner

from protocol.curve_keys import new_key_pair
from tournaments.bench.latency import DelayProxy
from tournaments.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "bots"
CLI = [sys.executable, "-c", "from tournaments.cli import main; main()"]
LIMIT_S = 120


@pytest.fixture
def keys(tmp_path: Path) -> Path:
    """The organiser's folder (the referee's pair and alice's public key); alice's and mallory's own pairs in
    sibling folders."""
    organiser = tmp_path / "organiser"
    new_key_pair("referee", organiser)
    new_key_pair("alice", tmp_path / "alice")
    new_key_pair("mallory", tmp_path / "mallory")
    (organiser / "alice.key").write_bytes((tmp_path / "alice" / "alice.key").read_bytes())
    return tmp_path


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_listening(port: int, process: subprocess.Popen[str]) -> None:
    """Until the referee accepts TCP connections at `port` (or exits)."""
    deadline = time.monotonic() + LIMIT_S
    while time.monotonic() < deadline and process.poll() is None:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError("the referee never listened")


def _play(keys: Path, port: int, *bots: str, options: tuple[str, ...] = ()) -> subprocess.Popen[str]:
    command = [
        *CLI,
        "play",
        "scout",
        *bots,
        "--listen",
        f"tcp://127.0.0.1:{port}",
        "--keys",
        str(keys / "organiser"),
        "--log-dir",
        str(keys / "logs"),
        "--json",
        "--no-sandbox",
        *options,
    ]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _connect(keys: Path, port: int, who: str, *bot: str, server: str = "organiser/referee.key") -> list[str]:
    return [
        *CLI,
        "connect",
        f"tcp://127.0.0.1:{port}",
        "--key",
        str(keys / who / f"{who}.key_secret"),
        "--server-key",
        str(keys / server),
        "--wait",
        "30",
        "--",
        *bot,
    ]


def _finish(process: subprocess.Popen[str]) -> tuple[str, str]:
    try:
        return process.communicate(timeout=LIMIT_S)
    finally:
        process.kill()


def _games(output: str) -> list[dict[str, Any]]:
    return list(json.loads(output)["games"])


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        process.kill()
        process.wait()


def _remote_match(
    keys: Path, processes: list[subprocess.Popen[str]], bot: str, games: int = 2
) -> tuple[list[dict[str, Any]], str, subprocess.CompletedProcess[str]]:
    """A SCOUT match of remote:alice (playing `bot` through referee connect) and three local random bots."""
    port = _free_port()
    play = _play(keys, port, "remote:alice", "random", "random", "random", options=("--games", str(games)))
    processes.append(play)
    connect = subprocess.run(
        _connect(keys, port, "alice", bot), capture_output=True, text=True, timeout=LIMIT_S, check=False
    )
    output, errors = _finish(play)
    assert play.returncode == 0, errors
    return _games(output), errors, connect


def test_a_remote_bot_plays_a_four_seat_match_against_local_bots(
    keys: Path, processes: list[subprocess.Popen[str]]
) -> None:
    games, errors, connect = _remote_match(keys, processes, "random")
    assert connect.returncode == 0, connect.stderr + connect.stdout
    assert "done:" in connect.stdout
    assert len(games) == 2
    for game in games:
        assert "alice" in game["seats"] and len(game["seats"]) == 4
        assert game["isolation"] == "remote" and game["sandboxed"] is False
        assert game["faults"] == []
        assert game["timing"][game["seats"].index("alice")]["decisions"] > 0
    assert "refused" not in errors


def test_clients_without_curve_or_with_a_key_not_listed_get_nothing_and_the_referee_says_why(
    keys: Path, processes: list[subprocess.Popen[str]]
) -> None:
    port = _free_port()
    play = _play(keys, port, "remote:alice", "random", "random", options=("--games", "1", "--startup-time", "8"))
    processes.append(play)
    _wait_listening(port, play)
    context = zmq.Context()
    referee_public, _ = zmq.auth.load_certificate(keys / "organiser" / "referee.key")
    alice = zmq.auth.load_certificate(keys / "alice" / "alice.key_secret")
    mallory = zmq.auth.load_certificate(keys / "mallory" / "mallory.key_secret")

    def client(pair: tuple[bytes, bytes | None] | None, server: bytes | None) -> zmq.Socket[bytes]:
        dealer = context.socket(zmq.DEALER)
        dealer.setsockopt(zmq.LINGER, 0)
        if pair is not None:
            dealer.curve_publickey, dealer.curve_secretkey = pair[0], pair[1] or b""
            dealer.curve_serverkey = server or b""
        dealer.connect(f"tcp://127.0.0.1:{port}")
        dealer.send(msgpack.packb({"type": "hello", "protocol": 1, "token": "x", "name": "intruder"}))
        return dealer

    clients = [client(None, None), client(mallory, referee_public), client(alice, mallory[0])]
    try:
        time.sleep(3)
        assert [dealer.poll(0) for dealer in clients] == [0, 0, 0]
    finally:
        for dealer in clients:
            dealer.close(0)
        context.term()
    output, errors = _finish(play)
    assert play.returncode == 0, errors
    assert "a client without CURVE" in errors
    assert f"its key {mallory[0].decode()} is not on the allow-list" in errors
    assert "the CURVE handshake did not verify" in errors
    (game,) = _games(output)
    assert [(f["seat"], f["cause"]) for f in game["faults"]] == [(game["seats"].index("alice"), "startup-timeout")]


def test_connect_with_a_key_not_listed_is_told_it_was_refused(
    keys: Path, processes: list[subprocess.Popen[str]]
) -> None:
    port = _free_port()
    play = _play(keys, port, "remote:alice", "random", options=("--games", "1", "--startup-time", "20"))
    processes.append(play)
    connect = subprocess.run(
        _connect(keys, port, "mallory", "random"), capture_output=True, text=True, timeout=LIMIT_S, check=False
    )
    assert connect.returncode == 1
    assert "not on the referee's allow-list" in connect.stderr + connect.stdout
    play.kill()


def test_a_remote_seat_that_never_connects_forfeits_alone(keys: Path, processes: list[subprocess.Popen[str]]) -> None:
    port = _free_port()
    play = _play(keys, port, "random", "remote:alice", "random", options=("--games", "3", "--startup-time", "2"))
    processes.append(play)
    output, errors = _finish(play)
    assert play.returncode == 0, errors
    games = _games(output)
    assert len(games) == 3
    for game in games:
        alice = game["seats"].index("alice")
        assert [(f["seat"], f["cause"]) for f in game["faults"]] == [(alice, "startup-timeout")]
        assert game["ranks"][alice] == max(game["ranks"])
        assert game["isolation"] == "remote"


def test_a_remote_bot_sending_junk_is_charged_to_its_own_seat(
    keys: Path, processes: list[subprocess.Popen[str]]
) -> None:
    games, _, connect = _remote_match(keys, processes, str(FIXTURES / "not_msgpack.py"), games=1)
    (game,) = games
    alice = game["seats"].index("alice")
    assert game["faults"], "junk went unnoticed"
    assert {(f["seat"], f["kind"]) for f in game["faults"]} == {(alice, "protocol_error")}
    assert connect.returncode == 0, connect.stderr


def test_a_remote_bot_flooding_is_charged_to_no_other_seat_and_stalls_no_one(
    keys: Path, processes: list[subprocess.Popen[str]]
) -> None:
    games, _, connect = _remote_match(keys, processes, str(FIXTURES / "flood.py"), games=2)
    assert len(games) == 2
    for game in games:
        alice = game["seats"].index("alice")
        assert {f["seat"] for f in game["faults"]} <= {alice}
        others = [t["decisions"] for seat, t in enumerate(game["timing"]) if seat != alice]
        assert min(others) > 0
    assert connect.returncode == 0, connect.stderr


def test_a_remote_seat_whose_connection_closes_mid_match_crashes_alone(
    keys: Path, processes: list[subprocess.Popen[str]]
) -> None:
    """The relay stops just after the first game, early in the second of the same rotation (the remote bot takes
    a tenth of a second a move): the closed connection is a crash of its seat, and its later games startup faults."""
    port = _free_port()
    options = ("--games", "6", "--startup-time", "3", "--reconnect-grace", "0")
    play = _play(keys, port, "remote:alice", "random", "random", options=options)
    connect = subprocess.Popen(
        _connect(keys, port, "alice", str(FIXTURES / "thinks_briefly.py")),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    processes += [play, connect]
    assert play.stderr is not None
    progress = []
    for line in play.stderr:
        progress.append(line)
        if "played" in line:
            break
    connect.send_signal(signal.SIGTERM)
    connect.wait(timeout=LIMIT_S)
    output, errors = _finish(play)
    assert play.returncode == 0, "".join(progress) + errors
    first, *rest = _games(output)
    assert first["faults"] == []
    later = [fault for game in rest for fault in game["faults"]]
    assert {(game["seats"][f["seat"]]) for game in rest for f in game["faults"]} == {"alice"}
    assert later[0]["kind"] == "crash", later
    assert "the connection of alice closed" in errors


@pytest.mark.parametrize(
    "arguments, words",
    [
        (["remote:alice", "random", "random"], "needs --listen"),
        (["random", "random", "random", "--listen", "tcp://127.0.0.1:1"], "no BOT is one"),
        (["random", "random", "random", "--lag-quota", "500"], "--lag-quota is for remote:NAME seats"),
        (["remote:alice", "random", "random", "--lag-quota", "-1"], "--lag-quota"),
        (["random", "random", "random", "--reconnect-grace", "5"], "--reconnect-grace is for remote:NAME seats"),
        (["remote:alice", "random", "random", "--reconnect-grace", "-1"], "--reconnect-grace"),
        (["remote:referee", "random", "random"], "the referee's own key"),
        (["remote:a/b", "random", "random"], "remote:NAME"),
    ],
)
def test_remote_seats_without_what_they_need_are_usage_errors(arguments: list[str], words: str) -> None:
    result = CliRunner().invoke(main, ["play", "scout", *arguments, "--no-sandbox"])
    assert result.exit_code != 0 and words in result.output, result.output


def test_a_remote_seat_without_a_key_in_the_folder_is_named(keys: Path) -> None:
    arguments = ["remote:alice", "remote:bob", "random", "--listen", "tcp://127.0.0.1:1"]
    result = CliRunner().invoke(main, ["play", "scout", *arguments, "--keys", str(keys / "organiser")])
    assert result.exit_code == 1 and "no public key for remote seat(s) bob" in result.output, result.output


def test_an_address_already_taken_is_a_one_line_error(keys: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        arguments = ["remote:alice", "random", "random", "--listen", f"tcp://127.0.0.1:{port}"]
        result = CliRunner().invoke(
            main, ["play", "scout", *arguments, "--keys", str(keys / "organiser"), "--no-sandbox", "--games", "1"]
        )
    assert result.exit_code == 1 and "cannot listen for remote seats" in result.output, result.output


def test_round_trips_are_measured_and_a_delay_shows_in_them(keys: Path, processes: list[subprocess.Popen[str]]) -> None:
    port = _free_port()
    play = _play(keys, port, "remote:alice", "random", "random", options=("--games", "1", "--move-time", "5000"))
    processes.append(play)
    proxy = DelayProxy(port, 0.05)
    try:
        connect = subprocess.run(
            _connect(keys, proxy.port, "alice", "random"), capture_output=True, text=True, timeout=LIMIT_S, check=False
        )
        output, errors = _finish(play)
    finally:
        proxy.close()
    assert play.returncode == 0 and connect.returncode == 0, errors + connect.stderr
    assert _games(output)[0]["faults"] == []
    log = (keys / "logs" / "alice.log").read_text()
    medians = [float(ms) for ms in re.findall(r"round trip median ([0-9.]+) ms", log)]
    assert medians, log
    assert min(medians) >= 2 * 50, log


def _slow_link_game(keys: Path, share: float, options: tuple[str, ...]) -> dict[str, Any]:
    """One game of remote:alice (a bot thinking `share` of its move time, behind 50 ms each way) and two local
    random bots: its replay."""
    port = _free_port()
    replays = keys / "replays"
    play = _play(
        keys, port, "remote:alice", "random", "random", options=("--games", "1", "--replay-dir", str(replays), *options)
    )
    proxy = DelayProxy(port, 0.05)
    try:
        bot = (sys.executable, str(FIXTURES / "thinks_a_share.py"), str(share))
        connect = subprocess.run(
            _connect(keys, proxy.port, "alice", *bot), capture_output=True, text=True, timeout=LIMIT_S, check=False
        )
        output, errors = _finish(play)
    finally:
        play.kill()
        proxy.close()
    assert play.returncode == 0 and connect.returncode == 0, errors + connect.stderr
    (replay,) = replays.glob("*.json")
    return dict(json.loads(replay.read_text()))


def _actions_of(replay: dict[str, Any], name: str, before: int | None = None) -> list[dict[str, Any]]:
    seat = [entry["bot"] for entry in replay["seats"]].index(name)
    return [action for action in replay["actions"][:before] if action["seat"] == seat and action["by"] == "bot"]


def test_a_bot_thinking_within_its_time_behind_a_slow_link_forfeits_nothing_and_its_lag_is_recorded(
    keys: Path,
) -> None:
    """60% of 200 ms plus a 100 ms round trip is past the move time (and there is no bank): only the lag credited
    from the quota keeps the bot in time."""
    replay = _slow_link_game(keys, 0.6, ("--move-time", "200", "--time-bank", "0", "--lag-quota", "3000"))
    assert replay["faults"] == [] and not any(replay["forfeited"])
    alice = _actions_of(replay, "alice")
    assert len(alice) >= 3
    assert all(action["ms"] > 200 for action in alice)
    assert sum(action["credit_ms"] for action in alice) > 0
    lags = sorted(action["lag_ms"] for action in alice)
    assert 2 * 50 <= lags[len(lags) // 2] <= 2 * 50 + 150, lags
    for action in alice:
        assert action["think_ms"] == pytest.approx(max(0.0, action["ms"] - action["lag_ms"]), abs=0.01)
        assert 0 <= action["credit_ms"] <= action["lag_ms"]
    local = [action for action in replay["actions"] if action["seat"] != alice[0]["seat"]]
    assert local and all("lag_ms" not in action for action in local)


def test_a_bot_thinking_past_its_time_forfeits_once_its_lag_quota_has_run_out(keys: Path) -> None:
    quota = 200
    options = ("--move-time", "300", "--time-bank", "600", "--lag-quota", str(quota))
    replay = _slow_link_game(keys, 1.2, options)
    seat = [entry["bot"] for entry in replay["seats"]].index("alice")
    (fault,) = [fault for fault in replay["faults"] if fault["seat"] == seat]
    assert fault["cause"] in {"decision-timeout", "late-answer", "no-answer"}, fault
    assert replay["forfeited"][seat]
    credits = [action["credit_ms"] for action in _actions_of(replay, "alice", fault["before_action"])]
    assert sum(credits) == pytest.approx(quota, abs=0.01), credits

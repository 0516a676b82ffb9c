"""(Unsandboxed: the flooders record their pids in the test's folder, which the sandbox hides; test_sandbox_attacks
floods from inside the sandbox.) A bot that floods the referee with connections: 1,500 idle connections from forked
children (more than the usual open-files limit of 1024 the referee once had, and which made libzmq abort it). The
referee completes every game, charges the flooding seat a protocol error naming the flood, stops its processes (so
the connections close), and the other seat plays unharmed; no process is left. Also through `referee play` started
with a soft open-files limit of 1024, which the referee raises to its hard limit."""

from __future__ import annotations

import concurrent.futures
import json
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from referee_helpers import (
    FIXTURE_BOTS,
    alive,
    fixture_bot,
    match_spec,
    recorded_pids,
    require_tcp_peer_lookup,
    substitute,
)

from protocol import limits
from referee.isolation.process import session_members
from referee.match import run_match
from referee.records import FaultKind, Limits, MatchRecord
from referee.wire.connection import Transport
from referee.wire.open_files import ROOM_FOR_FLOODS

GAME = "scauver"
FLOOD_LIMITS = Limits(move_time_ms=10_000, startup_time_s=30.0, log_cap_bytes=64 * 1024)
"""Clocks far beyond what the flood takes, so that only the flood can be what the flooding seat is charged with."""
FLOOD_NAMED = "a flood of connections"
CONNECTING_THREADS = 16
"""Threads this test connects from: a tcp connect that finds the referee's backlog full waits a second for its
SYN to be sent again, and the threads wait those seconds side by side."""


def _check_no_survivors(pid_dir: Path, at_least: int = 2) -> None:
    pids = recorded_pids(pid_dir)
    assert len(pids) >= at_least, "the bots of the match recorded no pids"
    assert not [pid for pid in pids if alive(pid)]
    for pid in pids:
        assert not session_members(pid)


def _check_flood_charged(record: MatchRecord, flooder: str) -> None:
    assert len(record.games) == len(record.spec.games)
    for played in record.games:
        seat = played.seats.index(flooder)
        (fault,) = played.faults
        assert (fault.seat, fault.kind) == (seat, FaultKind.PROTOCOL_ERROR), played.faults
        assert FLOOD_NAMED in fault.detail and f"at most {limits.MAX_CONNECTIONS_PER_BOT}" in fault.detail
        assert played.timings[1 - seat].decisions > 0


@pytest.mark.parametrize("transport", list(Transport), ids=[transport.value for transport in Transport])
@pytest.mark.parametrize("flooder", ["connection_flood", "connection_flood_at_hello"])
def test_a_connection_flood_is_charged_and_stopped(flooder: str, transport: Transport, pid_dir: Path) -> None:
    if transport is Transport.TCP:
        require_tcp_peer_lookup()
    spec = match_spec(GAME, [fixture_bot(flooder), "random"], games=2, seed=3, limits=FLOOD_LIMITS, sandbox=False)
    record = run_match(spec, transport=transport)
    _check_flood_charged(record, flooder)
    if flooder == "connection_flood":
        (first,) = record.games[0].faults
        assert not first.detail.startswith("not running"), "charged in the game it flooded in"
    _check_no_survivors(pid_dir)


def test_a_flood_forfeits_the_game_under_the_substitute_policy_too(pid_dir: Path) -> None:
    spec = match_spec(
        GAME, [fixture_bot("connection_flood"), "random"], games=1, seed=3, limits=substitute(FLOOD_LIMITS, budget=3),
        sandbox=False,
    )
    (played,) = run_match(spec).games
    seat = played.seats.index("connection_flood")
    (fault,) = played.faults
    assert FLOOD_NAMED in fault.detail
    assert played.ranks[seat] == 2 and played.ranks[1 - seat] == 1
    _check_no_survivors(pid_dir)


def _low_soft_limit(soft: int) -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _require_room_above(soft: int) -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < ROOM_FOR_FLOODS:
        pytest.skip(f"the hard open-files limit here ({hard}) leaves no room above a soft limit of {soft} to show")


@pytest.mark.parametrize("transport", list(Transport), ids=[transport.value for transport in Transport])
def test_referee_play_started_with_a_soft_limit_of_1024_survives_the_flood(transport: Transport, pid_dir: Path) -> None:
    _require_room_above(1024)
    if transport is Transport.TCP:
        require_tcp_peer_lookup()
    command = _referee_play(transport, str(FIXTURE_BOTS / "connection_flood.py"), "random")
    completed = subprocess.run(
        command, capture_output=True, text=True, timeout=300, preexec_fn=lambda: _low_soft_limit(1024), check=False
    )
    assert completed.returncode == 0, completed.stderr
    report = json.loads(completed.stdout)
    games, flooder = report["games"], report["bots"][0]["name"]  # named by its hello
    assert len(games) == 2
    for played in games:
        seat = played["seats"].index(flooder)
        (fault,) = played["faults"]
        assert (fault["seat"], fault["kind"]) == (seat, "protocol_error")
        assert FLOOD_NAMED in fault["detail"]
        assert played["timing"][1 - seat]["decisions"] > 0
    _check_no_survivors(pid_dir)


def _referee_play(transport: Transport, *bots: str) -> list[str]:
    return [
        sys.executable,
        "-c",
        "from tournaments.cli import main; main()",
        "play",
        GAME,
        *bots,
        "--games=2",
        "--move-time=10000",
        "--startup-time=60",
        f"--transport={transport.value}",
        "--no-sandbox",
        "--json",
    ]


def _wait_for(path: Path, process: subprocess.Popen[str], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"no {path.name} within {timeout_s} s"
        time.sleep(0.01)


@pytest.mark.parametrize("transport", list(Transport), ids=[transport.value for transport in Transport])
def test_connections_no_bot_holds_are_charged_to_no_one_and_the_raised_limit_holds_them(
    transport: Transport, pid_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process outside the match (this test) holds 1,500 connections to a referee started with a soft limit of
    1024: no bot is charged (none holds them), and the referee plays on, in the room its raised limit gives (at
    the soft limit it was started with, libzmq aborts it)."""
    _require_room_above(1024)
    if transport is Transport.TCP:
        require_tcp_peer_lookup()
    monkeypatch.syspath_prepend(str(FIXTURE_BOTS))
    from _flood import FLOOD_CONNECTIONS, open_connection

    command = _referee_play(transport, str(FIXTURE_BOTS / "shares_endpoint.py"), "random")
    referee = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=lambda: _low_soft_limit(1024)
    )
    held: list[socket.socket] = []
    try:
        _wait_for(pid_dir / "endpoint", referee)
        endpoint = (pid_dir / "endpoint").read_text()
        with concurrent.futures.ThreadPoolExecutor(CONNECTING_THREADS) as threads:
            held = list(threads.map(lambda _: open_connection(endpoint), range(FLOOD_CONNECTIONS)))
        (pid_dir / "flooded").touch()
        stdout, stderr = referee.communicate(timeout=300)
    finally:
        referee.kill()
        referee.wait()
        for connection in held:
            connection.close()
    assert referee.returncode == 0, stderr
    assert "held by no bot of the match" in stderr
    games = json.loads(stdout)["games"]
    assert len(games) == 2
    for played in games:
        assert played["faults"] == []
        assert all(timing["decisions"] > 0 for timing in played["timing"])
    _check_no_survivors(pid_dir, at_least=1)


RAISE_IN_A_CHILD = """
import resource, sys
from referee.wire.open_files import raise_open_files_limit
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
assert soft == int(sys.argv[1]), soft
raised = raise_open_files_limit()
assert raise_open_files_limit() == raised
print(raised, *resource.getrlimit(resource.RLIMIT_NOFILE))
"""


def test_the_referee_raises_its_soft_open_files_limit_to_its_hard_limit() -> None:
    _require_room_above(256)
    completed = subprocess.run(
        [sys.executable, "-c", RAISE_IN_A_CHILD, "256"],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=lambda: _low_soft_limit(256),
        check=True,
    )
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert completed.stdout.split() == [str(hard)] * 3
    assert completed.stderr == ""


def test_a_low_hard_limit_is_warned_of() -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 512:
        pytest.skip(f"the hard open-files limit here ({hard}) is below the 512 this test sets")
    completed = subprocess.run(
        [sys.executable, "-c", "from referee.wire.open_files import raise_open_files_limit as r; print(r())"],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (512, 512)),
        check=True,
    )
    assert completed.stdout.split() == ["512"]
    assert "may open only 512 files" in completed.stderr and "ulimit -Hn" in completed.stderr

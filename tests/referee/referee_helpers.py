"""Helpers for referee tests: fixture bot paths, small match specs, and checks that no process of a match is
left alive."""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from referee.botspec import resolve_bot, unique_names
from referee.deals import DealKey
from referee.isolation.process import Containment, containment
from referee.isolation.proctable import read_process
from referee.records import BotSpec, FaultPolicy, Limits, MatchSpec
from referee.seating import first_games
from referee.wire import peers
from referee.wire.connection import Router

FIXTURE_BOTS = Path(__file__).resolve().parents[1] / "fixtures" / "bots"

TEST_LIMITS = Limits(move_time_ms=5000, startup_time_s=30.0, log_cap_bytes=64 * 1024)
"""Clocks that no bot of these tests comes near unless it overruns on purpose: a bot that answers at once can
still take over a second under heavy load (seen: 1.5 s beside `referee bench league` and two busy loops), and
a test must not depend on load. Only a hang waits them out."""
TIMEOUT_LIMITS = Limits(move_time_ms=1000, startup_time_s=30.0, log_cap_bytes=64 * 1024)
"""For tests whose bot overruns its clock on purpose, which waits the clock out at each timeout: short enough
to keep them quick, long enough for the other bots, which answer at once, on a loaded machine."""


def fixture_bot(name: str) -> BotSpec:
    return BotSpec(name, (sys.executable, str(FIXTURE_BOTS / f"{name}.py")))


def match_spec(
    game: str,
    bots: Sequence[BotSpec | str],
    games: int = 1,
    seed: int = 1,
    limits: Limits = TEST_LIMITS,
    **extra: object,
) -> MatchSpec:
    """The first `games` games of the balanced match of `bots`, dealt from the public key of `seed`."""
    specs = unique_names([bot if isinstance(bot, BotSpec) else resolve_bot(bot, game) for bot in bots])
    return MatchSpec(
        match_id=f"test-{game}-{seed}",
        game=game,
        bots=specs,
        games=first_games(len(specs), games, DealKey.from_seed(seed)),
        limits=limits,
        **extra,  # type: ignore[arg-type]
    )


def distinct_deals(spec: MatchSpec) -> MatchSpec:
    """`spec` with every game a deal of its own (seatings kept): one generation, so one process per bot serves
    every game (referee.match.generations)."""
    key = DealKey.from_seed(len(spec.games))
    games = tuple(dataclasses.replace(game, seed=key.deal_seed(game.index)) for game in spec.games)
    return dataclasses.replace(spec, games=games)


def substitute(limits: Limits = TEST_LIMITS, budget: int = 3) -> Limits:
    return Limits(
        move_time_ms=limits.move_time_ms,
        startup_time_s=limits.startup_time_s,
        log_cap_bytes=limits.log_cap_bytes,
        fault_policy=FaultPolicy.SUBSTITUTE,
        fault_budget=budget,
    )


def alive(pid: int) -> bool:
    """True if `pid` is a live process (zombies count as dead: they run nothing)."""
    process = read_process(pid)
    return process is not None and process.state != "Z"


def recorded_pids(directory: Path) -> list[int]:
    return [int(path.read_text()) for path in directory.glob("*.pid")]


def marked(spec: BotSpec, nonce: str) -> BotSpec:
    """`spec` with FIXTURE_NONCE=`nonce` declared (every process of the bot inherits it, so a test finds them
    all afterwards, in whatever namespace or uid they run)."""
    return dataclasses.replace(spec, env=(*spec.env, ("FIXTURE_NONCE", nonce)))


def require_pid_namespace() -> None:
    """Skip the test unless bots get their own PID namespace here; fail instead if REFEREE_REQUIRE_PID_NAMESPACE
    is set (a CI that runs as root on Linux, where a skip would hide a lost containment)."""
    if containment().containment is Containment.PID_NAMESPACE:
        return
    reason = (
        "this machine cannot give a bot its own PID namespace (no util-linux unshare, or neither root nor "
        "unprivileged user namespaces), so a bot's daemon can escape its match"
    )
    if os.environ.get("REFEREE_REQUIRE_PID_NAMESPACE"):
        pytest.fail(reason)
    pytest.skip(reason)


def require_tcp_peer_lookup() -> None:
    """Skip the test where the referee cannot find the process behind a tcp connection (neither sock_diag nor
    /proc/net/tcp)."""
    if not peers.tcp_lookup_possible():
        pytest.skip("neither sock_diag nor /proc/net/tcp here: on tcp the token alone binds a connection")


def tcp_peer_pid(fd: int, likely: Sequence[int] = (), deadline: peers.Deadline = peers.NO_DEADLINE) -> int | None:
    """The pid of a process holding the client end of the loopback TCP connection `fd` (as Router.sender finds
    it), or None if the client is gone."""
    client = peers.tcp_client(fd)
    return None if client is None else peers.tcp_client_holder(client, likely, deadline=deadline)


def wait_for_message(router: Router, timeout_s: float = 5.0) -> bool:
    """Wait until a message is waiting on `router` (its wait also returns for connection events and exits)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if router.wait(deadline)[0]:
            return True
    return False

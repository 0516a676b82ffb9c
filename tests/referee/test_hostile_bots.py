"""Hostile bots: each fixture bot breaks the protocol in exactly one way. For each, the match completes, the
fault (if the misbehaviour is one) is charged to the right seat with the right kind, the other seats' game
goes on, every replay verifies, and afterwards no process of the match is alive: in the sandbox and without it.

The other tests here run their bots unsandboxed (sandbox=False): they check the containment of that path, and
their fixture bots report through the test's folder (pids, stolen messages), which a sandbox hides. The token
thieves read a sibling's token in /proc, which a sandboxed bot cannot see at all."""

from __future__ import annotations

import dataclasses
import functools
import secrets
from pathlib import Path

import pytest
from attack_helpers import marked_processes
from referee_helpers import (
    TEST_LIMITS,
    TIMEOUT_LIMITS,
    alive,
    fixture_bot,
    marked,
    match_spec,
    recorded_pids,
    require_pid_namespace,
    require_tcp_peer_lookup,
    substitute,
)
from sandbox_checks import require_sandbox

from referee import replay
from referee.isolation.proctable import session_members
from referee.match import run_match
from referee.records import FaultKind, GameRecord, Limits
from referee.session import BotTransport
from referee.wire.connection import LookupBudget, Router, Transport

GAME = "scauver"

# fixture bot -> the fault kind it must be charged with (None: no fault, its misbehaviour is tolerated).
HOSTILE = {
    "never_answers": FaultKind.TIMEOUT,
    "late_once": FaultKind.TIMEOUT,
    "crash_at_start": FaultKind.CRASH,
    "crash_mid_game": FaultKind.CRASH,
    "exits_mid_game": FaultKind.CRASH,
    "not_msgpack": FaultKind.PROTOCOL_ERROR,
    "no_type": FaultKind.PROTOCOL_ERROR,
    "huge_message": FaultKind.PROTOCOL_ERROR,
    "illegal_action": FaultKind.ILLEGAL_ACTION,
    "stale_id": FaultKind.TIMEOUT,
    "double_reply": None,
    "flood": FaultKind.PROTOCOL_ERROR,
    "wrong_token": FaultKind.PROTOCOL_ERROR,
    "token_thief": FaultKind.PROTOCOL_ERROR,
    "daemon_thief": FaultKind.PROTOCOL_ERROR,
    "loud_stderr": None,
    "forks_sleeper": None,
    "daemonizes": None,
}
NEEDS_PID_NAMESPACE = {"daemonizes", "daemon_thief"}
"""Bots whose processes only a PID namespace per bot can end, or tie to their bot
(see referee.isolation.containment)."""
HARMLESS_IN_THE_SANDBOX = {"token_thief", "daemon_thief"}
"""Bots that find no sibling's token to steal in the sandbox (they see only their own processes), so they just
play."""


def _hostile_seat(record: GameRecord, name: str) -> int:
    return record.seats.index(name)


def _check_no_survivors(pid_dir: Path) -> None:
    pids = recorded_pids(pid_dir)
    assert pids, "the fixture bot recorded no pid"
    survivors = [pid for pid in pids if alive(pid)]
    assert not survivors, f"processes of the match still alive: {survivors}"
    for pid in pids:
        assert not session_members(pid)


@pytest.mark.parametrize("sandbox", [True, False], ids=["sandboxed", "unsandboxed"])
@pytest.mark.parametrize("game", ["scout", "scauver"])
@pytest.mark.parametrize("bot", list(HOSTILE), ids=list(HOSTILE))
def test_hostile_bot_is_contained(bot: str, game: str, sandbox: bool, pid_dir: Path, tmp_path: Path) -> None:
    if sandbox:
        require_sandbox()
    elif bot in NEEDS_PID_NAMESPACE:
        require_pid_namespace()
    nonce = secrets.token_hex(16)
    spec = match_spec(
        game,
        [marked(fixture_bot(bot), nonce), "random", "random"],
        games=2,
        seed=11,
        limits=TIMEOUT_LIMITS if HOSTILE[bot] is FaultKind.TIMEOUT else TEST_LIMITS,
        log_dir=str(tmp_path / "logs"),
        replay_dir=str(tmp_path / "replays"),
        sandbox=sandbox,
    )
    record = run_match(spec)
    survivors = marked_processes(nonce)

    assert len(record.games) == 2
    assert all(played.sandboxed is sandbox for played in record.games)
    expected = None if sandbox and bot in HARMLESS_IN_THE_SANDBOX else HOSTILE[bot]
    for played in record.games:
        seat = _hostile_seat(played, bot)
        kinds = {fault.kind for fault in played.faults if fault.seat == seat}
        assert all(fault.seat == seat for fault in played.faults), played.faults
        if expected is None:
            assert not played.faults
            assert played.timings[seat].decisions > 0
        else:
            assert kinds == {expected}, played.faults
            assert played.ranks[seat] == max(played.ranks)
        others = [other for other in range(len(played.seats)) if other != seat]
        assert all(played.timings[other].decisions > 0 for other in others)
        replay.verify(replay.load(played.replay_path))
    assert not survivors, f"processes of the match still alive: {survivors}"
    if not sandbox:
        _check_no_survivors(pid_dir)


def test_the_log_of_a_loud_bot_is_capped_for_the_whole_match(pid_dir: Path, tmp_path: Path) -> None:
    """Four games, two rotations: the bot is started twice, and its one log holds at most one cap in all."""
    spec = match_spec(GAME, [fixture_bot("loud_stderr"), "random"], games=4, log_dir=str(tmp_path))
    record = run_match(spec)
    assert record.bots[0].starts == 2
    log = tmp_path / "loud_stderr.log"
    assert spec.limits.log_cap_bytes <= log.stat().st_size < spec.limits.log_cap_bytes + 100
    assert log.read_bytes().endswith(b"bytes]\n")


def test_late_once_under_substitute_plays_on(pid_dir: Path) -> None:
    spec = match_spec(GAME, [fixture_bot("late_once"), "random"], limits=substitute(TIMEOUT_LIMITS), sandbox=False)
    (game,) = run_match(spec).games
    assert [fault.kind for fault in game.faults] == [FaultKind.TIMEOUT]
    assert game.timings[0].decisions > 1
    _check_no_survivors(pid_dir)


def test_substitute_forfeits_at_the_budget(pid_dir: Path) -> None:
    spec = match_spec(GAME, [fixture_bot("illegal_action"), "random"], limits=substitute(budget=2))
    (game,) = run_match(spec).games
    assert [fault.kind for fault in game.faults] == [FaultKind.ILLEGAL_ACTION] * 2
    assert game.ranks == (2, 1)


def test_a_crashed_bot_is_restarted_for_the_next_game(pid_dir: Path) -> None:
    spec = match_spec(GAME, [fixture_bot("crash_mid_game"), "random"], games=3, sandbox=False)
    record = run_match(spec)
    assert [len(game.faults) for game in record.games] == [1, 1, 1]
    assert all(game.timings[game.seats.index("crash_mid_game")].decisions == 2 for game in record.games)
    assert len(recorded_pids(pid_dir)) == 3
    _check_no_survivors(pid_dir)


def test_a_bot_that_fails_its_handshake_forfeits_every_game(pid_dir: Path) -> None:
    spec = match_spec(GAME, [fixture_bot("crash_at_start"), "random"], games=3, sandbox=False)
    record = run_match(spec)
    assert all([fault.kind for fault in game.faults] == [FaultKind.CRASH] for game in record.games)
    assert len(recorded_pids(pid_dir)) == 1


@pytest.mark.parametrize(
    "bot, words", [("crash_mid_game", "crashing mid-game, on purpose"), ("crash_at_start", "crashing at start")]
)
def test_a_crash_is_reported_with_the_bots_last_output(bot: str, words: str, pid_dir: Path) -> None:
    (game,) = run_match(match_spec(GAME, [fixture_bot(bot), "random"])).games
    (fault,) = game.faults
    assert fault.kind is FaultKind.CRASH
    assert "exited with status 1" in fault.detail and words in fault.detail


def test_no_process_outlives_a_match_that_fails_in_the_referee(pid_dir: Path) -> None:
    class Boom(RuntimeError):
        pass

    def explode(record: GameRecord) -> None:
        raise Boom("the caller's callback failed")

    spec = match_spec(
        GAME,
        [fixture_bot("forks_sleeper"), fixture_bot("never_answers")],
        games=3,
        limits=TIMEOUT_LIMITS,
        sandbox=False,
    )
    with pytest.raises(Boom):
        run_match(spec, on_game=explode)
    assert len(recorded_pids(pid_dir)) == 3
    _check_no_survivors(pid_dir)


def test_a_bot_that_never_says_hello_times_out_at_startup(pid_dir: Path) -> None:
    limits = Limits(move_time_ms=TEST_LIMITS.move_time_ms, startup_time_s=1.0)
    spec = match_spec(GAME, [fixture_bot("never_connects"), "random"], games=2, limits=limits, sandbox=False)
    record = run_match(spec)
    for game in record.games:
        (fault,) = game.faults
        assert (fault.seat, fault.kind) == (game.seats.index("never_connects"), FaultKind.TIMEOUT)
        assert "startup limit" in fault.detail
    _check_no_survivors(pid_dir)


@pytest.mark.parametrize("transport", list(Transport), ids=[transport.value for transport in Transport])
@pytest.mark.parametrize("victim", ["hello_after_theft", "random"])
def test_a_stolen_token_neither_binds_nor_harms_its_owner(victim: str, transport: Transport, pid_dir: Path) -> None:
    """token_thief says hello with its sibling's token before its own hello and again in each game: before the
    sibling's hello (hello_after_theft waits for the attempt) or after it (a random bot is quicker). Every
    attempt is refused and charged to the thief (whose seat then forfeits that game: a thief process per
    rotation, each forfeiting its one game before its first request), the sibling plays every game without a
    fault, and nothing but
    refusals reaches the stolen connection (no welcome, no game_start, no request: not the sibling's hand).
    On tcp too: there the referee finds the sender through /proc/net/tcp."""
    if transport is Transport.TCP:
        require_tcp_peer_lookup()
    sibling = fixture_bot(victim) if victim != "random" else victim
    spec = match_spec(GAME, [fixture_bot("token_thief"), sibling], games=2, seed=5, sandbox=False)
    record = run_match(spec, transport=transport)

    for played in record.games:
        thief = played.seats.index("token_thief")
        assert played.faults and all(fault.seat == thief for fault in played.faults), played.faults
        assert all(fault.kind is FaultKind.PROTOCOL_ERROR for fault in played.faults), played.faults
        assert all("another bot's token" in fault.detail for fault in played.faults), played.faults
        assert played.timings[1 - thief].decisions > 0
    stolen = sorted(pid_dir.glob("stolen-*.types"))
    assert len(stolen) == 2, "a thief process per rotation: the deal is played once from each seat"
    for attempts in stolen:
        received = attempts.read_text().split()
        assert received and set(received) == {"refused"}, received
    _check_no_survivors(pid_dir)


@pytest.mark.parametrize("transport", list(Transport), ids=[transport.value for transport in Transport])
def test_a_daemon_that_left_its_bots_session_is_charged_for_a_stolen_token(transport: Transport, pid_dir: Path) -> None:
    """daemon_thief's daemons (double fork, setsid()) say hello with the sibling's token: each attempt is refused
    and charged to daemon_thief's seat, since the daemon is in daemon_thief's PID namespace; the sibling plays
    on unharmed. On tcp a daemon is no bot's program, so finding it searches every process's fds, which costs
    as much CPU time as the machine has processes (~5 ms for ~110 here): the default lookup budget (20 ms at
    once) then decides whether it is found, so the test gives it a budget no machine's size can spend (what a
    spent budget does is tested in test_lookup_budget.py)."""
    require_pid_namespace()
    bots = BotTransport.local(transport)
    if transport is Transport.TCP:
        require_tcp_peer_lookup()
        ample = LookupBudget(share=1.0, burst_s=10.0)
        bots = dataclasses.replace(bots, open_wire=functools.partial(Router, transport, lookup_budget=ample))
    spec = match_spec(GAME, [fixture_bot("daemon_thief"), "random"], games=2, seed=5, sandbox=False)
    record = run_match(spec, transport=bots)

    received = [line for path in pid_dir.glob("stolen-*.types") for line in path.read_text().split()]
    for played in record.games:
        thief = played.seats.index("daemon_thief")
        assert len(played.faults) == 1, (played.faults, received)
        (fault,) = played.faults
        assert (fault.seat, fault.kind) == (thief, FaultKind.PROTOCOL_ERROR), played.faults
        assert "another bot's token" in fault.detail
        assert played.timings[1 - thief].decisions > 0
    assert received == ["refused", "refused"], received
    _check_no_survivors(pid_dir)

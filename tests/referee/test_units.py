"""The referee's small parts on their own: forfeit ranks, BOT resolution, token bindings, bot processes (capped
logs, killing a whole session). Seating and deal seeds: test_seating.py."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import zmq
from referee_helpers import alive, require_pid_namespace, require_tcp_peer_lookup, wait_for_message

from protocol import limits
from referee.botspec import UnknownBot, resolve_bot, unique_names
from referee.faults import FaultBook, SeatStatus, forfeit_ranks, forfeit_scores
from referee.isolation import process as process_module
from referee.isolation.process import BotProcess, BotStartError, Containment, Wrapper
from referee.isolation.proctable import (
    kill_with_sessions,
    live_processes,
    pid_namespaces,
    read_process,
    session_members,
)
from referee.records import BotSpec, FaultCause, FaultFacts, FaultKind, FaultPolicy
from referee.wire.connection import Bindings, HandshakeRefused, Peer, Router, TokenTheft, Transport


@pytest.mark.parametrize(
    "ranks, forfeited, expected",
    [
        ([1, 2, 3, 4], [False] * 4, [1, 2, 3, 4]),
        ([1, 2, 3, 4], [True, False, False, False], [4, 1, 2, 3]),
        ([1, 2, 3, 4], [True, False, True, False], [4, 1, 4, 2]),
        ([1, 1, 3], [False, False, True], [1, 1, 3]),
        ([2, 1, 1], [False, True, False], [2, 3, 1]),
        ([3, 1, 1], [False, True, False], [2, 3, 1]),
        ([1, 2], [True, True], [2, 2]),
        ([1, 2, 2], [True, True, True], [3, 3, 3]),
        ([4, 3, 2, 1], [False, True, True, False], [2, 4, 4, 1]),
    ],
)
def test_forfeited_seats_share_the_last_rank(ranks: list[int], forfeited: list[bool], expected: list[int]) -> None:
    """Rank n for every forfeit, so a forfeited seat never ranks 1 (not even when every seat forfeited)."""
    assert forfeit_ranks(ranks, forfeited) == expected
    assert all(rank == len(ranks) for rank, lost in zip(expected, forfeited, strict=True) if lost)


@pytest.mark.parametrize(
    "scores, forfeited, expected",
    [
        ([3, 9, -2], [False, True, False], [3, -2, -2]),
        ([0, 200], [False, True], [0, 0]),
        ([5, 7], [True, True], [5, 5]),
        ([1, 2, 3], [False] * 3, [1, 2, 3]),
        ([-4, 6, 6, 1], [True, False, False, True], [-4, 6, 6, -4]),
    ],
)
def test_forfeited_seats_score_the_lowest_score_of_the_table(
    scores: list[int], forfeited: list[bool], expected: list[int]
) -> None:
    assert forfeit_scores(scores, forfeited) == expected


def test_fault_policies() -> None:
    seats = [SeatStatus(0, "a", 0), SeatStatus(1, "b", 0)]
    book = FaultBook(FaultPolicy.SUBSTITUTE, 2, seats, seed=1)
    book.record(0, FaultCause.DECISION_TIMEOUT, FaultFacts(request_id=1, allowed_ms=5))
    assert book.forfeited() == [False, False]
    book.record(0, FaultCause.ILLEGAL_ACTION, FaultFacts(request_id=2, note="wrong"))
    assert book.forfeited() == [True, False]
    book.record(1, FaultCause.EXITED, FaultFacts(exit_status=1))
    assert book.forfeited() == [True, True]
    forfeit = FaultBook(FaultPolicy.FORFEIT, 3, [SeatStatus(0, "a", 0)], seed=1)
    forfeit.record(0, FaultCause.DECISION_TIMEOUT, FaultFacts(request_id=1, allowed_ms=5))
    assert forfeit.forfeited() == [True]
    assert [fault.kind for fault in book.faults] == [FaultKind.TIMEOUT, FaultKind.ILLEGAL_ACTION, FaultKind.CRASH]


def test_fallback_choices_are_seeded() -> None:
    legal = [{"kind": "x", "n": n} for n in range(50)]
    picks = [FaultBook(FaultPolicy.FORFEIT, 1, [SeatStatus(0, "a", 0)], 7).fallback_action(0, legal) for _ in range(2)]
    assert picks[0] == picks[1]


def test_built_in_bots_resolve_to_python_modules() -> None:
    assert resolve_bot("random", "scout").command == (sys.executable, "-m", "bots.python.random_bot")
    heuristic = resolve_bot("heuristic", "scauver")
    assert heuristic.name == "scauver-heuristic"
    assert heuristic.command[-1] == "bots.python.scauver_heuristic"


def test_paths_scripts_and_command_lines_resolve(tmp_path: Path) -> None:
    script = tmp_path / "mybot.py"
    script.write_text("print('hi')\n")
    assert resolve_bot(str(script), "scout") == BotSpec("mybot", (sys.executable, str(script)))
    program = tmp_path / "fast-bot"
    program.write_text("#!/bin/sh\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    assert resolve_bot(str(program), "scout").command == (str(program),)
    command = resolve_bot(f"sh {program} --level 3", "scout")
    assert command.command == ("sh", str(program), "--level", "3")


@pytest.mark.parametrize(
    "argument, message",
    [
        ("nobody", "no bot 'nobody'"),
        ("./not/there.py", "no such bot program"),
        ("no-such-program --flag", "is not on PATH"),
        ("'unbalanced", "cannot split"),
        ("", "empty"),
    ],
)
def test_unknown_bots_are_refused_with_a_reason(argument: str, message: str) -> None:
    with pytest.raises(UnknownBot, match=message):
        resolve_bot(argument, "scout")


def test_a_file_that_is_not_executable_is_refused(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.write_text("data")
    with pytest.raises(UnknownBot, match="not executable"):
        resolve_bot(str(plain), "scout")
    with pytest.raises(UnknownBot, match="no built-in heuristic"):
        resolve_bot("heuristic", "chess")


def test_repeated_names_are_told_apart() -> None:
    specs = unique_names([BotSpec("random", ("a",)), BotSpec("x", ("b",)), BotSpec("random", ("c",))])
    assert [spec.name for spec in specs] == ["random#1", "x", "random#2"]


def test_bindings_bind_each_token_once() -> None:
    bindings = Bindings()
    token = bindings.issue(0)
    other = bindings.issue(1)
    assert token != other and len(token) == 32
    assert bindings.bind(b"a", 1, token) == 0
    with pytest.raises(HandshakeRefused, match="already bound"):
        bindings.bind(b"b", 1, token)
    with pytest.raises(HandshakeRefused, match="unknown token"):
        bindings.bind(b"b", 1, "forged")
    with pytest.raises(HandshakeRefused, match="protocol 2"):
        bindings.bind(b"b", 2, other)
    assert bindings.owner(b"a") == 0 and bindings.identity(0) == b"a"
    renewed = bindings.issue(0)
    assert bindings.owner(b"a") is None
    with pytest.raises(HandshakeRefused):
        bindings.bind(b"c", 1, token)
    assert bindings.bind(b"c", 1, renewed) == 0


def test_bindings_bind_a_token_only_for_a_connection_of_its_owner() -> None:
    bindings = Bindings()
    token = bindings.issue(0)
    bindings.issue(1)
    with pytest.raises(TokenTheft) as theft:
        bindings.bind(b"a", 1, token, peer=1)
    assert (theft.value.thief, theft.value.victim) == (1, 0)
    with pytest.raises(HandshakeRefused, match="not made by the process"):
        bindings.bind(b"a", 1, token, peer=Peer.STRANGER)
    assert bindings.owner(b"a") is None
    assert bindings.bind(b"a", 1, token, peer=0) == 0
    with pytest.raises(TokenTheft):
        bindings.bind(b"b", 1, token, peer=1)


@pytest.mark.parametrize("transport", list(Transport), ids=[transport.value for transport in Transport])
def test_the_router_tells_the_sender_of_unbound_messages(transport: Transport, tmp_path: Path) -> None:
    if transport is Transport.TCP:
        require_tcp_peer_lookup()
    bindings = Bindings()
    likely: list[int] = []
    router = Router(transport, tmp_path, bindings.bound, lambda: likely)
    dealer = zmq.Context.instance().socket(zmq.DEALER)
    try:
        dealer.connect(router.endpoint)
        assert router.checks_peers
        dealer.send(b"first")
        assert wait_for_message(router)
        (first,) = router.receive()
        assert first.frames == [b"first"]
        assert router.sender(first) == os.getpid()
        bindings.bind(first.identity, 1, bindings.issue(0))
        dealer.send(b"second")
        assert wait_for_message(router)
        (second,) = router.receive()
        assert (second.frames, second.peer_pid, second.tcp_client) == ([b"second"], None, None)
    finally:
        dealer.close(0)
        router.close()


@pytest.fixture(params=list(Containment), ids=[mode.name.lower() for mode in Containment])
def containment_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Containment:
    """Run the test with bots in their own PID namespace, and again with the session-only fallback."""
    if request.param is Containment.PID_NAMESPACE:
        require_pid_namespace()
    else:
        monkeypatch.setattr(process_module, "containment", lambda: Wrapper(Containment.SESSION))
    return request.param


def _start(tmp_path: Path, code: str, cap: int = 1000) -> BotProcess:
    return BotProcess.start([sys.executable, "-c", code], dict(os.environ), tmp_path / "bot.log", cap, memory_mb=512)


def _wait_for(condition: object, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(0.02)


def test_a_bot_log_is_capped_and_the_bot_never_blocks(tmp_path: Path, containment_mode: Containment) -> None:
    process = _start(tmp_path, "import sys\nfor _ in range(2000): sys.stdout.write('y' * 1000 + '\\n')\n", cap=5000)
    _wait_for(process.exited)
    assert process.exited() and process.describe_exit() == "exited with status 0"
    process.kill()
    log = (tmp_path / "bot.log").read_bytes()
    assert log.startswith(b"yyy") and log.endswith(b"[log truncated at 5000 bytes]\n")
    assert len(log) < 5100


def test_kill_ends_every_process_of_the_session_even_a_new_process_group(
    tmp_path: Path, containment_mode: Containment
) -> None:
    code = (
        "import os, time\n"
        "for _ in range(2):\n"
        "    if os.fork() == 0:\n"
        "        os.setpgid(0, 0)\n"
        "        time.sleep(60)\n"
        "time.sleep(60)\n"
    )
    process = _start(tmp_path, code)
    assert process.containment is containment_mode
    expected = 4 if containment_mode is Containment.PID_NAMESPACE else 3  # unshare leads the session there
    _wait_for(lambda: len(session_members(process.pid)) == expected)
    members = session_members(process.pid)
    assert len(members) == expected
    process.kill()
    assert not any(alive(pid) for pid in members)
    assert not process.exited() or "SIGKILL" in process.describe_exit()


def test_a_bot_in_a_namespace_names_it_for_a_process_that_left_its_session(tmp_path: Path) -> None:
    """The daemon (double fork, setsid()) is in no session of the bot's, but in the bot's namespace; so is a
    process of a namespace nested in the bot's. This process is in neither."""
    require_pid_namespace()
    code = (
        "import os, sys, time\n"
        "if os.fork() == 0:\n"
        "    if os.fork() != 0:\n"
        "        os._exit(0)\n"
        "    os.setsid()\n"
        "    sleeper = [sys.executable, '-c', 'import time; time.sleep(60)']\n"
        "    os.execvp('unshare', ['unshare', '--pid', '--fork', '--', *sleeper])\n"
        "time.sleep(60)\n"
    )
    process = _start(tmp_path, code)
    try:
        _wait_for(lambda: process.namespace() is not None)
        namespace = process.namespace()
        assert namespace is not None and namespace not in pid_namespaces(os.getpid())
        init, unshare = process.program_pids()
        assert unshare == process.pid and read_process(init).ppid == process.pid  # type: ignore[union-attr]
        _wait_for(lambda: len(_outside_session(process)) == 2)
        daemon, nested = sorted(_outside_session(process), key=lambda pid: len(pid_namespaces(pid)))
        assert pid_namespaces(daemon)[0] == namespace
        assert pid_namespaces(nested)[1] == namespace and len(pid_namespaces(nested)) == 3
    finally:
        process.kill()


def _outside_session(process: BotProcess) -> list[int]:
    """The processes of the bot's namespace that are not in its session."""
    namespace = process.namespace()
    return [
        entry.pid
        for entry in live_processes()
        if entry.session != process.pid and namespace in pid_namespaces(entry.pid)
    ]


def test_a_bot_without_a_namespace_names_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process_module, "containment", lambda: Wrapper(Containment.SESSION))
    process = _start(tmp_path, "import time; time.sleep(60)")
    try:
        assert process.namespace() is None
        assert process.program_pids() == [process.pid]
    finally:
        process.kill()


def test_live_processes_reads_this_process_and_kill_with_sessions_ends_a_forgotten_session() -> None:
    me = next(process for process in live_processes() if process.pid == os.getpid())
    assert (me.ppid, me.session) == (os.getppid(), os.getsid(0))
    code = "import os, time\nif os.fork() == 0:\n    time.sleep(60)\ntime.sleep(60)\n"
    leader = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    _wait_for(lambda: len(session_members(leader.pid)) == 2)
    members = session_members(leader.pid)
    assert len(members) == 2
    kill_with_sessions([leader.pid])
    leader.wait(10)
    _wait_for(lambda: not any(alive(pid) for pid in members))
    assert not any(alive(pid) for pid in members)


def test_the_memory_limit_applies(tmp_path: Path, containment_mode: Containment) -> None:
    process = _start(tmp_path, "b = bytearray(900 * 1024 * 1024)")
    _wait_for(process.exited)
    assert process.describe_exit() == "exited with status 1"
    process.kill()
    assert b"MemoryError" in (tmp_path / "bot.log").read_bytes()


def test_the_open_files_limit_applies(tmp_path: Path, containment_mode: Containment) -> None:
    code = "import resource\nprint(*resource.getrlimit(resource.RLIMIT_NOFILE))\n"
    process = _start(tmp_path, code)
    _wait_for(process.exited)
    process.kill()
    cap = process_module.open_files_cap()
    assert cap <= limits.MAX_OPEN_FILES
    assert (tmp_path / "bot.log").read_text().split() == [str(cap), str(cap)]


@pytest.mark.parametrize("program", ["/no/such/program", "no-such-program", "./no-such-program"])
def test_a_missing_program_is_a_start_error(program: str, tmp_path: Path, containment_mode: Containment) -> None:
    with pytest.raises(BotStartError, match="cannot start"):
        BotProcess.start([program], {"PATH": str(tmp_path)}, tmp_path / "bot.log", 100, cwd=str(tmp_path))


def test_a_program_found_in_the_bots_path_and_cwd_starts(tmp_path: Path, containment_mode: Containment) -> None:
    script = tmp_path / "bot"
    script.write_text(f"#!{sys.executable}\nprint('started')\n")
    script.chmod(0o755)
    for program in ("bot", "./bot"):
        process = BotProcess.start([program], {"PATH": str(tmp_path)}, tmp_path / "bot.log", 100, cwd=str(tmp_path))
        _wait_for(process.exited)
        assert process.describe_exit() == "exited with status 0"
        process.kill()
    assert (tmp_path / "bot.log").read_text() == "started\nstarted\n"


def test_a_bot_killed_by_a_signal_is_reported_so(tmp_path: Path, containment_mode: Containment) -> None:
    process = _start(tmp_path, "import ctypes\nctypes.string_at(0)\n")
    _wait_for(process.exited)
    assert process.describe_exit() == "was killed by SIGSEGV (signal 11)"
    process.kill()


def test_in_a_pid_namespace_a_daemon_of_the_bot_dies_with_it(tmp_path: Path) -> None:
    """A double fork and setsid() leave the session (the fallback cannot find the daemon); the namespace holds."""
    require_pid_namespace()
    daemon_pid = tmp_path / "daemon.pid"
    code = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    if os.fork() != 0:\n"
        "        os._exit(0)\n"
        "    os.setsid()\n"
        f"    open({str(daemon_pid)!r}, 'w').write(os.readlink('/proc/self'))\n"
        "    time.sleep(60)\n"
        "time.sleep(60)\n"
    )
    process = _start(tmp_path, code)
    _wait_for(lambda: daemon_pid.exists() and daemon_pid.read_text() != "")
    daemon = int(daemon_pid.read_text())
    entry = read_process(daemon)
    assert entry is not None and entry.session == daemon != process.pid
    process.kill()
    assert not alive(daemon)


def test_in_a_pid_namespace_a_bot_dies_with_a_referee_killed_without_a_bye(tmp_path: Path) -> None:
    """The bot sees no parent in its namespace (getppid() is 0), so it could not notice; the namespace ends."""
    require_pid_namespace()
    bot = "import os, time\nopen('bot.pid', 'w').write(os.readlink('/proc/self'))\ntime.sleep(60)\n"
    referee = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from referee.isolation.process import BotProcess\n"
        f"BotProcess.start([sys.executable, '-c', {bot!r}], {{}}, Path('bot.log'), 1000, cwd='.')\n"
        "time.sleep(60)\n"
    )
    fake_referee = subprocess.Popen([sys.executable, "-c", referee], cwd=tmp_path)
    pid_file = tmp_path / "bot.pid"
    _wait_for(lambda: pid_file.exists() and pid_file.read_text() != "")
    bot_pid = int(pid_file.read_text())
    assert alive(bot_pid)
    fake_referee.kill()
    fake_referee.wait()
    _wait_for(lambda: not alive(bot_pid))
    assert not alive(bot_pid)

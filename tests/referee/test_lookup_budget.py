"""The bound on the time spent finding who made new tcp connections: the budget on an injected clock, the
deadline a lookup gets, a hello refused with no one charged when the budget is spent, and the check of the bot
a hello's token names, which costs no budget: with the budget spent (as a flood of connections would spend it)
every bot still binds its own connection, and a stolen token is still refused."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import zmq
from referee_helpers import fixture_bot, match_spec, require_tcp_peer_lookup, tcp_peer_pid, wait_for_message

from protocol import codec, limits
from referee.isolation import sandbox
from referee.match import run_match
from referee.session import BotTransport, Session
from referee.wire import peers, sock_diag
from referee.wire.connection import (
    Bindings,
    HandshakeRefused,
    Incoming,
    LookupBudget,
    LookupBudgetSpent,
    Peer,
    Router,
    Transport,
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _budget(clock: FakeClock, share: float, burst_s: float) -> LookupBudget:
    """A budget whose wall clock and work clock are both `clock`: a lookup's work takes all its time."""
    return LookupBudget(share=share, burst_s=burst_s, clock=clock, work_clock=clock)


def _lookup(clock: FakeClock, takes_s: float, deadlines: list[float]) -> Callable[[peers.Deadline], int | None]:
    def lookup(deadline: peers.Deadline) -> int:
        deadlines.append(deadline.at)
        clock.now += takes_s
        return 7

    return lookup


def test_lookups_run_until_the_burst_is_spent_then_refill_at_the_share() -> None:
    clock = FakeClock()
    budget = _budget(clock, share=0.01, burst_s=0.01)
    deadlines: list[float] = []
    for _ in range(3):
        assert budget.run(_lookup(clock, 0.004, deadlines)) == 7
    # Each lookup may run until the bucket would be empty; 40 us came back during the 4 ms of each of the first two.
    assert deadlines == [pytest.approx(100 + d, abs=1e-9) for d in (0.01, 0.004 + 0.00604, 0.008 + 0.00208)]
    assert clock.now == pytest.approx(100.012)  # the third overdrew the bucket by 1.92 ms
    with pytest.raises(LookupBudgetSpent):
        budget.run(_lookup(clock, 0.004, deadlines))
    clock.now += 0.1
    with pytest.raises(LookupBudgetSpent):
        budget.run(_lookup(clock, 0.0, deadlines))
    assert len(deadlines) == 3
    clock.now += 0.1
    assert budget.run(_lookup(clock, 0.0, deadlines)) == 7
    assert deadlines[-1] == pytest.approx(clock.now + 0.00012, abs=1e-9)


def test_a_quiet_spell_refills_no_more_than_the_burst() -> None:
    clock = FakeClock()
    budget = _budget(clock, share=0.5, burst_s=0.01)
    deadlines: list[float] = []
    clock.now += 3600
    budget.run(_lookup(clock, 0.0, deadlines))
    assert deadlines == [pytest.approx(clock.now + 0.01)]


def test_a_failed_lookup_is_paid_for_too() -> None:
    clock = FakeClock()
    budget = _budget(clock, share=0.0, burst_s=0.01)

    def expires(deadline: peers.Deadline) -> int:
        clock.now = deadline.at
        deadline.check()
        raise AssertionError("a deadline that has come must expire")

    with pytest.raises(peers.LookupExpired):
        budget.run(expires)
    with pytest.raises(LookupBudgetSpent):
        budget.run(_lookup(clock, 0.0, []))


def test_only_a_lookups_work_is_paid_for_not_the_time_it_waits_for_a_core() -> None:
    """On a loaded machine a lookup of a few ms of work can take tens of ms of wall time (other processes run
    meanwhile): the budget pays the work (the referee's CPU time), so such a lookup neither expires nor leaves
    the budget spent for the next hello."""
    wall, work = FakeClock(), FakeClock()
    budget = LookupBudget(share=0.0, burst_s=0.009, clock=wall, work_clock=work)

    def preempted(deadline: peers.Deadline) -> int:
        work.now += 0.002
        wall.now += 0.05
        deadline.check()
        return 7

    assert [budget.run(preempted) for _ in range(4)] == [7] * 4
    with pytest.raises(peers.LookupExpired):
        budget.run(preempted)


def test_the_budget_counts_the_referees_cpu_time_by_default() -> None:
    """With the real clocks: a lookup that waits (sleeps) far longer than the burst costs the budget next to
    nothing."""
    budget = LookupBudget(share=0.0, burst_s=0.01)

    def waits(deadline: peers.Deadline) -> int:
        time.sleep(0.05)
        deadline.check()
        return 7

    assert budget.run(waits) == 7
    assert budget.run(waits) == 7


def test_a_lookup_past_its_deadline_expires() -> None:
    require_tcp_peer_lookup()
    with socket.create_server(("127.0.0.1", 0)) as listener:
        client = socket.create_connection(listener.getsockname())
        server, _ = listener.accept()
    with client, server:
        with pytest.raises(peers.LookupExpired):
            tcp_peer_pid(server.fileno(), likely=[os.getpid()], deadline=peers.Deadline(time.monotonic() - 1))
        assert tcp_peer_pid(server.fileno(), likely=[os.getpid()]) == os.getpid()


def test_a_hello_when_the_budget_is_spent_is_refused_saying_why() -> None:
    bindings = Bindings()
    token = bindings.issue(0)
    with pytest.raises(HandshakeRefused, match="too many new connections"):
        bindings.bind(b"a", limits.PROTOCOL_VERSION, token, peer=Peer.OVER_BUDGET)
    assert bindings.owner(b"a") is None
    assert bindings.bind(b"a", limits.PROTOCOL_VERSION, token, peer=0) == 0


def _spent() -> LookupBudget:
    return LookupBudget(share=0.0, burst_s=0.0)


def _tcp_with_the_budget_spent() -> BotTransport:
    """Bots over tcp whose router's budget is spent from the start, as a flood of connections leaves it."""
    return dataclasses.replace(
        BotTransport.local(Transport.TCP), open_wire=functools.partial(Router, Transport.TCP, lookup_budget=_spent())
    )


def test_a_spent_budget_leaves_the_sender_unknown_and_charges_no_one(tmp_path: Path) -> None:
    require_tcp_peer_lookup()
    spec = match_spec("scout", [fixture_bot("recorder"), fixture_bot("recorder")])
    dealer = zmq.Context.instance().socket(zmq.DEALER)
    with Session(spec, tmp_path, _tcp_with_the_budget_spent(), sandbox.probe()) as match_session:
        token = match_session.bindings.issue(0)
        try:
            dealer.connect(match_session.wire.endpoint)
            hello = {"type": "hello", "protocol": limits.PROTOCOL_VERSION, "token": token, "name": "x"}
            dealer.send(codec.encode(hello))
            assert wait_for_message(match_session.wire)
            (incoming,) = match_session.wire.receive()
            assert incoming.tcp_client is not None
            refusals: list[str] = []
            assert match_session.admit(incoming, refusals) is None
            assert dealer.poll(5000)
            answer = codec.decode_value(dealer.recv())
            assert answer["type"] == "refused" and "too many new connections" in answer["reason"]
            assert refusals == []
            assert all(p.refusal is None and not p.thefts for p in match_session.participants)
            assert match_session.bindings.identity(0) is None
        finally:
            dealer.close(0)


def test_ipc_senders_are_known_whatever_the_budget(tmp_path: Path) -> None:
    router = Router(Transport.IPC, tmp_path, Bindings().bound, lookup_budget=_spent())
    with contextlib.closing(router), _connected(router, b"first") as incoming:
        assert (incoming.peer_pid, router.sender(incoming)) == (os.getpid(), os.getpid())


@contextlib.contextmanager
def _connected(router: Router, frame: bytes) -> Iterator[Incoming]:
    """What `router` receives of `frame` sent from a new connection of this process (open for the block)."""
    dealer = zmq.Context.instance().socket(zmq.DEALER)
    try:
        dealer.connect(router.endpoint)
        dealer.send(frame)
        assert wait_for_message(router)
        (incoming,) = router.receive()
        yield incoming
    finally:
        dealer.close(0)


def _require_free_claim_checks() -> None:
    require_tcp_peer_lookup()
    if not sock_diag.available():
        pytest.skip("the claimed bot is checked at no cost only where the kernel answers sock_diag queries")


def test_the_claimed_bots_programs_are_checked_at_no_cost_to_the_budget(tmp_path: Path) -> None:
    require_tcp_peer_lookup()
    if not sock_diag.available():
        pytest.skip("the kernel does not answer sock_diag queries here")
    router = Router(Transport.TCP, tmp_path, Bindings().bound, lambda: [os.getpid()], lookup_budget=_spent())
    with contextlib.closing(router), _connected(router, b"hello") as incoming:
        assert router.sender(incoming, [os.getppid(), os.getpid()]) == os.getpid()
        with pytest.raises(LookupBudgetSpent):
            router.sender(incoming, [os.getppid()])
        with pytest.raises(LookupBudgetSpent):
            router.sender(incoming)


def test_every_bot_binds_its_own_connection_when_the_budget_is_spent(tmp_path: Path) -> None:
    _require_free_claim_checks()
    spec = match_spec("scout", ["random", "random", fixture_bot("slow_answers")])
    with Session(spec, tmp_path, _tcp_with_the_budget_spent(), sandbox.probe()) as match_session:
        match_session.start()
        assert [p.down for p in match_session.participants] == [None, None, None]
        assert all(match_session.bindings.identity(p.index) is not None for p in match_session.participants)


def test_a_stolen_token_is_refused_uncharged_when_the_budget_is_spent_and_its_owner_plays_on(pid_dir: Path) -> None:
    """token_thief says hello with its sibling's token before the sibling's hello and in each game: the sibling's
    programs do not hold that connection, and who does is not searched (no budget left), so the hello is refused
    and no one is charged; both bots bind their own connections and play every game without a fault."""
    _require_free_claim_checks()
    bots = [fixture_bot("token_thief"), fixture_bot("hello_after_theft")]
    spec = match_spec("scauver", bots, games=2, seed=5, sandbox=False)  # tcp; the thief reads /proc
    record = run_match(spec, transport=_tcp_with_the_budget_spent())

    for played in record.games:
        assert not played.faults, played.faults
        assert all(timing.decisions > 0 for timing in played.timings)
    stolen = sorted(pid_dir.glob("stolen-*.types"))
    assert len(stolen) == 2, "a thief process per rotation: the deal is played once from each seat"
    for attempts in stolen:
        received = attempts.read_text().split()
        assert len(received) >= 2 and set(received) == {"refused"}, received

"""Reconnection within a game and the cap on connections per key, on loopback with real processes.

A proxy between `referee connect` and the referee is cut mid-game: restored within the grace, the session resumes
and the game ends with no fault; left cut past the grace, the seat has crashed (connection-lost) and no other seat
is charged or stalled. A key holder who opens connection after connection is refused at the handshake while the
key's live connection plays on. The KeyGate's rules are also checked on their own, on a clock of the test's."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import msgpack
import pytest
import zmq
import zmq.auth
from test_remote_seats import FIXTURES, LIMIT_S, _connect, _finish, _free_port, _games, _play

from protocol.curve_keys import load_pair, new_key_pair
from protocol.remote_client import RelayOutcome, relay
from protocol.remote_sockets import FRESH, PING, RESUME, RESUMED, client_socket, control
from referee.wire.connection import Incoming, Transport
from referee.wire.remote import ATTEMPTS_BURST, ATTEMPTS_PER_S, IDENTIFY_S, MAX_SILENT, KeyGate, RemoteRouter, Verdict


@pytest.fixture
def keys(tmp_path: Path) -> Path:
    """The organiser's folder (the referee's pair and alice's public key), alice's own pair beside it."""
    new_key_pair("referee", tmp_path / "organiser")
    new_key_pair("alice", tmp_path / "alice")
    (tmp_path / "organiser" / "alice.key").write_bytes((tmp_path / "alice" / "alice.key").read_bytes())
    return tmp_path


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        process.kill()
        process.wait()


CHUNKS_BEFORE_CUT = 12
"""Chunks the referee has sent through the proxy before it is cut: the game has begun (a request each, or so)."""


class CuttableProxy:
    """A TCP proxy on loopback that can be cut (every connection through it aborted, no new one accepted) and
    restored at the same port. Its asyncio loop runs in a thread of its own (the test's thread may run one)."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = _free_port()
        self.chunks_down = 0
        self._writers: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.restore()

    def _run(self, coroutine: object) -> None:
        asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(30)  # type: ignore[arg-type]

    def restore(self) -> None:
        self._run(self._listen())

    def cut(self) -> None:
        self._run(self._cut())

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(self._client, "127.0.0.1", self.port)

    async def _cut(self) -> None:
        assert self._server is not None
        self._server.close()
        for writer in self._writers:
            writer.transport.abort()
        self._writers.clear()
        await self._server.wait_closed()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.transport.abort()
            return
        self._writers |= {writer, upstream_writer}
        await asyncio.gather(
            self._pipe(reader, upstream_writer, down=False),
            self._pipe(upstream_reader, writer, down=True),
            return_exceptions=True,
        )

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, down: bool) -> None:
        try:
            while chunk := await reader.read(65536):
                writer.write(chunk)
                self.chunks_down += down
        finally:
            writer.transport.abort()

    def wait_for_traffic(self, chunks: int) -> None:
        deadline = time.monotonic() + LIMIT_S
        while self.chunks_down < chunks:
            assert time.monotonic() < deadline, "the game never began"
            time.sleep(0.02)

    def close(self) -> None:
        if self._server is not None and self._server.is_serving():
            self.cut()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


def _through_proxy(
    keys: Path, processes: list[subprocess.Popen[str]], options: tuple[str, ...]
) -> tuple[subprocess.Popen[str], subprocess.Popen[str], CuttableProxy]:
    """A SCOUT match of remote:alice (a bot thinking a tenth of a second a move, through the proxy) and two local
    random bots; the referee, the relay and the proxy, running."""
    port = _free_port()
    play = _play(keys, port, "remote:alice", "random", "random", options=options)
    processes.append(play)
    proxy = CuttableProxy(port)
    connect = subprocess.Popen(
        _connect(keys, proxy.port, "alice", str(FIXTURES / "thinks_briefly.py")),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    processes.append(connect)
    return play, connect, proxy


def test_a_connection_cut_and_restored_within_the_grace_resumes_the_game_with_no_fault(
    keys: Path, processes: list[subprocess.Popen[str]]
) -> None:
    options = ("--games", "1", "--move-time", "8000", "--reconnect-grace", "30")
    play, connect, proxy = _through_proxy(keys, processes, options)
    try:
        proxy.wait_for_traffic(CHUNKS_BEFORE_CUT)
        proxy.cut()
        time.sleep(1.0)
        proxy.restore()
        output, errors = _finish(play)
        said, complaints = _finish(connect)
    finally:
        proxy.close()
    assert play.returncode == 0, errors
    assert connect.returncode == 0, said + complaints + errors
    (game,) = _games(output)
    assert game["faults"] == [], game["faults"]
    assert game["timing"][game["seats"].index("alice")]["decisions"] > 0
    assert "the connection of alice closed" in errors
    assert "alice reconnected after" in errors
    assert "reconnected to the referee" in said + complaints
    log = (keys / "logs" / "alice.log").read_text()
    assert "reconnected after" in log and "no reconnection" not in log


def test_a_connection_cut_past_the_grace_is_a_crash_of_that_seat_alone(
    keys: Path, processes: list[subprocess.Popen[str]]
) -> None:
    options = ("--games", "3", "--move-time", "8000", "--reconnect-grace", "1", "--startup-time", "2")
    play, connect, proxy = _through_proxy(keys, processes, options)
    try:
        proxy.wait_for_traffic(CHUNKS_BEFORE_CUT)
        proxy.cut()
        output, errors = _finish(play)
        said, complaints = _finish(connect)
    finally:
        proxy.close()
    assert play.returncode == 0, errors
    assert connect.returncode == 1 and "did not come back within 1 s" in said + complaints
    first, *later = _games(output)
    alice = first["seats"].index("alice")
    assert [(f["seat"], f["kind"], f["cause"]) for f in first["faults"]] == [(alice, "crash", "connection-lost")]
    assert "reconnect grace of 1 s" in first["faults"][0]["detail"]
    assert first["ranks"][alice] == max(first["ranks"])
    for game in [first, *later]:
        assert {game["seats"][f["seat"]] for f in game["faults"]} == {"alice"}
        others = [t["decisions"] for seat, t in enumerate(game["timing"]) if game["seats"][seat] != "alice"]
        assert min(others) > 0
    assert "the connection of alice closed" in errors


def test_a_key_holder_connecting_in_a_loop_is_refused_and_stalls_no_one(
    keys: Path, processes: list[subprocess.Popen[str]]
) -> None:
    """While alice's `referee connect` plays, another client with alice's key opens connection after connection,
    each saying hello: each is refused at the handshake (its key has a live connection, or has tried too often),
    gets nothing, and the match goes on with no fault."""
    port = _free_port()
    play = _play(keys, port, "remote:alice", "random", "random", options=("--games", "2"))
    connect = subprocess.Popen(
        _connect(keys, port, "alice", str(FIXTURES / "thinks_briefly.py")),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    processes += [play, connect]
    assert connect.stdout is not None
    for line in connect.stdout:
        if "connected to the referee" in line:
            break
    referee_public, _ = zmq.auth.load_certificate(keys / "organiser" / "referee.key")
    alice_public, alice_secret = zmq.auth.load_certificate(keys / "alice" / "alice.key_secret")
    context = zmq.Context()
    heard = []
    hello = msgpack.packb({"type": "hello", "protocol": 1, "token": "x", "name": "again"})
    try:
        for _ in range(3 * ATTEMPTS_BURST):
            dealers = []
            for _ in range(5):
                dealer = context.socket(zmq.DEALER)
                dealer.setsockopt(zmq.LINGER, 0)
                dealer.curve_publickey, dealer.curve_secretkey = alice_public, alice_secret or b""
                dealer.curve_serverkey = referee_public
                dealer.connect(f"tcp://127.0.0.1:{port}")
                dealer.send(hello)
                dealers.append(dealer)
            time.sleep(0.05)
            heard += [dealer.poll(0) for dealer in dealers]
            for dealer in dealers:
                dealer.close(0)
    finally:
        context.term()
    output, errors = _finish(play)
    said, complaints = _finish(connect)
    assert play.returncode == 0, errors
    assert connect.returncode == 0, said + complaints
    assert not any(heard)
    assert "refused a connection of alice: it already has a live connection" in errors
    games = _games(output)
    assert len(games) == 2
    for game in games:
        assert game["faults"] == [], game["faults"]
        assert min(t["decisions"] for t in game["timing"]) > 0


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


ALICE = b"A" * 40


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def gate(clock: Clock) -> KeyGate:
    return KeyGate({ALICE: "alice", b"B" * 40: "bob"}, clock)


def test_a_key_not_listed_is_unknown(gate: KeyGate) -> None:
    assert gate.callback(b"C" * 40) is Verdict.UNKNOWN


def test_one_live_connection_per_key_and_a_reconnection_once_it_closed(gate: KeyGate, clock: Clock) -> None:
    assert gate.callback(ALICE) is Verdict.ADMITTED
    assert gate.spoke("alice", 7)
    clock.now += 60
    assert gate.callback(ALICE) is Verdict.BUSY
    assert gate.callback(b"B" * 40) is Verdict.ADMITTED
    assert not gate.spoke("alice", 8)
    gate.closed(7)
    assert gate.callback(ALICE) is Verdict.ADMITTED
    assert gate.spoke("alice", 8)


def test_an_admitted_connection_that_never_speaks_holds_its_place_for_a_while_only(gate: KeyGate, clock: Clock) -> None:
    assert gate.callback(ALICE) is Verdict.ADMITTED
    clock.now += IDENTIFY_S / 2
    assert gate.callback(ALICE) is Verdict.BUSY
    clock.now += IDENTIFY_S
    assert gate.callback(ALICE) is Verdict.ADMITTED


def test_attempts_past_the_budget_are_refused_until_it_refills(gate: KeyGate, clock: Clock) -> None:
    """Each connection closes before the next: the place is free every time, and the budget alone refuses."""

    def attempt(fd: int) -> Verdict:
        verdict = gate.callback(ALICE)
        if verdict is Verdict.ADMITTED:
            assert gate.spoke("alice", fd)
            gate.closed(fd)
        return verdict

    verdicts = [attempt(fd) for fd in range(ATTEMPTS_BURST + 1)]
    assert verdicts == [Verdict.ADMITTED] * ATTEMPTS_BURST + [Verdict.BUSY]
    clock.now += 1 / ATTEMPTS_PER_S
    assert attempt(100) is Verdict.ADMITTED
    assert attempt(101) is Verdict.BUSY


def test_a_key_whose_connections_get_in_and_say_nothing_is_refused_after_a_few(gate: KeyGate, clock: Clock) -> None:
    """Each such connection stays open, holding a file of the referee's: a key may leave MAX_SILENT of them."""
    for _ in range(MAX_SILENT + 1):
        assert gate.callback(ALICE) is Verdict.ADMITTED
        clock.now += IDENTIFY_S
    assert gate.callback(ALICE) is Verdict.BUSY
    assert gate.callback(b"B" * 40) is Verdict.ADMITTED


class _Wire:
    """A RemoteRouter on loopback with a client speaking for `referee connect` (CURVE DEALER sockets of alice's
    key), the match's bindings played by a dict."""

    def __init__(self, tmp_path: Path, grace_s: float) -> None:
        new_key_pair("referee", tmp_path)
        new_key_pair("alice", tmp_path)
        self.alice = load_pair(tmp_path / "alice.key_secret")
        self.referee = load_pair(tmp_path / "referee.key_secret")
        self.bound: dict[bytes, int] = {}
        self.router = RemoteRouter(
            "tcp://127.0.0.1:*",
            self.referee,
            {self.alice.public: "alice"},
            Transport.IPC,
            tmp_path,
            self.bound,
            grace_s=grace_s,
        )
        self.router.tokens["alice"] = "token"
        self.lost: list[tuple[str, float]] = []
        self.router.disconnected = lambda seat, grace: self.lost.append((seat, grace))
        self.notes: list[str] = []
        self.router.note = lambda seat, line: self.notes.append(line)
        self.context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()

    def connect(self) -> zmq.Socket[bytes]:
        client = client_socket(self.context, self.alice, self.referee.public)
        client.connect(self.router.listening)
        return client

    def pump_until_heard(self, count: int) -> list[Incoming]:
        heard: list[Incoming] = []
        deadline = time.monotonic() + LIMIT_S
        while len(heard) < count:
            assert time.monotonic() < deadline, heard
            heard += self.pump(lambda: True, once=True)
        return heard

    def pump(self, until: Callable[[], bool], once: bool = False) -> list[Incoming]:
        """Run the referee's side until `until()`; the messages it passed on."""
        heard: list[Incoming] = []
        deadline = time.monotonic() + LIMIT_S
        while once or not until():
            assert time.monotonic() < deadline, "the wire never got there"
            message, _, _ = self.router.wait(time.monotonic() + 0.05)
            if message:
                heard += self.router.receive()
            if once:
                break
        return heard

    def close(self) -> None:
        self.router.close()
        self.context.term()


def _frames(client: zmq.Socket[bytes], count: int) -> list[list[bytes]]:
    """The next `count` messages to `client` but pings (answered)."""
    got: list[list[bytes]] = []
    while len(got) < count:
        assert client.poll(LIMIT_S * 1000), got
        frames = client.recv_multipart()
        if len(frames) == 2 and frames[0] == PING:
            client.send_multipart(frames)
        else:
            got.append(frames)
    return got


HELLO = msgpack.packb({"type": "hello", "protocol": 1, "token": "placeholder", "name": "alice"})


def _begun(wire: _Wire) -> tuple[zmq.Socket[bytes], bytes]:
    """A connection that began a session and said hello, bound: the client, and its identity at the referee."""
    client = wire.connect()
    client.send_multipart(control(RESUME, 0))
    wire.pump(lambda: client.poll(0) != 0)
    assert _frames(client, 1) == [control(FRESH, round(wire.router.grace_s * 1000))]
    client.send(HELLO)
    (hello,) = wire.pump_until_heard(1)
    assert hello.vouched and msgpack.unpackb(hello.frames[0])["token"] == "token"
    wire.bound[hello.identity] = 0
    return client, hello.identity


def test_a_resumed_session_gets_the_frames_it_lacks_once_and_the_referee_those_it_lacks(tmp_path: Path) -> None:
    """The client got "one" of "one" and "two", and sent a reply the referee never got; the connection drops and
    "three" is sent meanwhile. Resumed, the client gets "two" and "three" (not "one" again), the referee says it
    has one frame (the hello), and the reply sent again reaches the match under the same identity."""
    wire = _Wire(tmp_path, grace_s=60)
    try:
        first, identity = _begun(wire)
        wire.router.send(identity, b"one")
        wire.router.send(identity, b"two")
        assert _frames(first, 1) == [[b"one"]]
        first.close(0)
        wire.pump(lambda: any("the connection closed" in line for line in wire.notes))
        wire.router.send(identity, b"three")
        second = wire.connect()
        second.send_multipart(control(RESUME, 1))
        wire.pump(lambda: second.poll(0) != 0)
        assert _frames(second, 3) == [control(RESUMED, 1), [b"two"], [b"three"]]
        second.send(b"reply")
        (reply,) = wire.pump_until_heard(1)
        assert (reply.identity, reply.frames) == (identity, [b"reply"])
        wire.router.send(identity, b"four")
        assert _frames(second, 1) == [[b"four"]]
        assert not wire.lost
        second.close(0)
    finally:
        wire.close()


def test_past_the_grace_the_seat_is_lost_and_a_late_resume_begins_afresh(tmp_path: Path) -> None:
    wire = _Wire(tmp_path, grace_s=0.5)
    try:
        first, _ = _begun(wire)
        first.close(0)
        wire.pump(lambda: bool(wire.lost))
        assert wire.lost == [("alice", 0.5)]
        late = wire.connect()
        late.send_multipart(control(RESUME, 1))
        wire.pump(lambda: late.poll(0) != 0)
        assert _frames(late, 1) == [control(FRESH, 500)]
        late.close(0)
    finally:
        wire.close()


def test_connect_turned_away_while_its_key_is_live_gets_in_once_that_connection_closes(tmp_path: Path) -> None:
    """libzmq does not retry a connection refused at its handshake: `referee connect` must, or a relay that came
    back while the referee still took its old connection for alive would never get in."""
    wire = _Wire(tmp_path, grace_s=5)
    said: list[str] = []
    outcomes: list[RelayOutcome] = []
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]

    def run() -> None:
        outcomes.append(
            relay(wire.router.listening, wire.alice, wire.referee.public, sleeper, wait_s=LIMIT_S, say=said.append)
        )

    try:
        holder, _ = _begun(wire)
        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        wire.pump(lambda: any("already has a live connection" in line for line in said))
        holder.close(0)
        wire.pump(lambda: bool(wire.lost) and any(line.startswith("connected") for line in said))
    finally:
        wire.close()
    thread.join(LIMIT_S)
    assert [outcome.bot_starts for outcome in outcomes] == [1], said
    assert wire.lost == [("alice", 5)]
    assert "the referee closed the connection: the match is over" in said

"""Red team (issue 31): a hostile student with many live leaderboards open (server-sent events) on a real Uvicorn
server. Each open stream once polled the database itself every half second, so a few hundred streams took the
thread pool from the workers' API; and a token could open any number. Now one poll serves every stream, one table
read serves every stream of one asker, and a token holds at most `streams_per_token` streams."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import uvicorn

from tournaments.ladder import Ladder, init_ladder, open_ladder
from tournaments.server.app import create_app
from tournaments.server.edge import Settings

POLL_S = 0.05
BOUND_S = 60.0


@dataclass
class Live:
    port: int
    ladder: Ladder
    students: dict[str, str]
    reads: dict[str, int]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def live(tmp_path: Path) -> Iterator[Live]:
    """The real app on a real Uvicorn in a thread, the ladder's change counter and table reads counted."""
    created = init_ladder(tmp_path / "ladder", "scout", 3, ["heuristic"])
    with open_ladder(created.folder) as ladder:
        students = ladder.invite(["ann", "bob"])
        reads = {"changes": 0, "table": 0}
        changes, table = ladder.changes, ladder.table

        def counted_changes() -> int:
            reads["changes"] += 1
            return changes()

        def counted_table(*args: object) -> object:
            reads["table"] += 1
            return table(*args)  # type: ignore[arg-type]

        ladder.changes = counted_changes  # type: ignore[method-assign]
        ladder.table = counted_table  # type: ignore[method-assign,assignment]
        settings = Settings(scratch=tmp_path, poll_seconds=POLL_S, streams_per_token=20)
        app = create_app(ladder, settings)
        port = _free_port()
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + BOUND_S
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.started, "the server did not start"
        try:
            yield Live(port, ladder, students, reads)
        finally:
            app.state.edge.closing.set()
            server.should_exit = True
            thread.join(BOUND_S)


def open_stream(live: Live, token: str | None) -> tuple[socket.socket, bytes]:
    """A raw connection asking for /api/events; the socket (left open) and what came until the first event (or
    the whole answer, for a refusal)."""
    connection = socket.create_connection(("127.0.0.1", live.port), timeout=BOUND_S)
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    connection.sendall(f"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}\r\n".encode())
    received = b""
    while b"event: table" not in received and b'"error"' not in received:
        chunk = connection.recv(65536)
        if not chunk:
            break
        received += chunk
    return connection, received


def status(received: bytes) -> int:
    return int(received.split(b" ", 2)[1])


def test_a_token_opens_at_most_its_streams_and_a_closed_one_frees_its_place(live: Live) -> None:
    ann = live.students["ann"]
    opened = [open_stream(live, ann) for _ in range(20)]
    assert [status(received) for _, received in opened] == [200] * 20
    refused, answer = open_stream(live, ann)
    assert status(answer) == 429 and b"retry-after: " in answer.lower() and b"live streams" in answer
    refused.close()
    other, received = open_stream(live, live.students["bob"])
    assert status(received) == 200, "another student's streams are counted apart"
    spectator, received = open_stream(live, None)
    assert status(received) == 200
    opened[0][0].close()
    deadline = time.monotonic() + BOUND_S
    while time.monotonic() < deadline:
        again, received = open_stream(live, ann)
        if status(received) == 200:
            break
        again.close()
        time.sleep(0.1)
    assert status(received) == 200, "a closed stream's place is given back"
    for connection in [again, other, spectator, *(connection for connection, _ in opened[1:])]:
        connection.close()


def test_many_open_streams_share_one_poll_and_one_table_read_per_asker(live: Live) -> None:
    tokens = [live.students["ann"], live.students["bob"], None]
    opened = [open_stream(live, token) for token in tokens for _ in range(15)]
    assert all(status(received) == 200 for _, received in opened)
    tables_before = live.reads["table"]
    polls_before, started = live.reads["changes"], time.monotonic()
    time.sleep(40 * POLL_S)
    polls = live.reads["changes"] - polls_before
    elapsed = time.monotonic() - started
    assert polls <= 2 * elapsed / POLL_S + 5, f"{polls} reads of the counter in {elapsed:.2f} s for 45 streams"

    live.ladder.deadline_snapshot()  # a change of the table: every stream is sent it
    for connection, _ in opened:
        connection.settimeout(BOUND_S)
        received = b""
        while received.count(b"event: table") < 1:
            received += connection.recv(65536)
    assert live.reads["table"] - tables_before <= len(tokens), "one table read per asker, not per stream"
    for connection, _ in opened:
        connection.close()

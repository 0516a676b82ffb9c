"""The connection cap's bookkeeping, on events fed by hand: connections counted for the bot whose process made
them, the others looked up by who holds their client end once enough of them are open, a bot over the cap
named once, and fds that ZeroMQ closes and reuses."""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator

import pytest

from protocol import limits
from referee.records import FaultCause, FaultFacts, describe
from referee.wire import sock_diag
from referee.wire.connection_cap import CENSUS_BATCH, Client, ConnectionCap, Flood

BOT_PID = {101: 0, 102: 0, 201: 1}
"""Pids of the bots' processes in these tests: bot 0 has two, bot 1 one."""


def _owner_of_pid(pid: int) -> int | None:
    return BOT_PID.get(pid)


def test_connections_a_bots_process_made_count_for_it_and_the_bot_over_the_cap_is_named_once() -> None:
    clients = {fd: Client(connector=101 if fd % 2 else 102) for fd in range(10, 10 + limits.MAX_CONNECTIONS_PER_BOT)}
    clients[99] = Client(connector=201)
    read: list[int] = []

    def read_client(fd: int) -> Client:
        read.append(fd)
        return clients[fd]

    cap = ConnectionCap(read_client, dict, _owner_of_pid)
    for fd in clients:
        cap.accepted(fd)
    assert cap.settle() == []
    assert (cap.held(0), cap.held(1), cap.open) == (limits.MAX_CONNECTIONS_PER_BOT, 1, len(clients))
    clients[7] = Client(connector=102)
    cap.accepted(7)
    assert cap.settle() == [Flood(0, limits.MAX_CONNECTIONS_PER_BOT + 1)]
    flooded = FaultFacts(count=17, most=limits.MAX_CONNECTIONS_PER_BOT)
    assert "a flood of connections" in describe(FaultCause.CONNECTION_FLOOD, flooded)
    cap.accepted(8)
    clients[8] = Client(connector=101)
    assert cap.settle() == []  # named once
    for fd in [7, 8, *range(10, 14)]:
        cap.closed(fd)
    assert cap.settle() == []
    assert (cap.held(0), cap.open) == (limits.MAX_CONNECTIONS_PER_BOT - 4, len(clients) - 6)
    assert sorted(read) == sorted(clients)


def test_a_connection_that_closed_before_it_was_read_is_never_read_and_a_reused_fd_is_a_new_connection() -> None:
    read: list[int] = []

    def read_client(fd: int) -> Client:
        read.append(fd)
        return Client(connector=201)

    cap = ConnectionCap(read_client, dict, _owner_of_pid)
    cap.accepted(5)
    cap.closed(5)
    cap.accepted(6)
    assert cap.settle() == []
    assert (read, cap.open, cap.held(1)) == ([6], 1, 1)
    cap.closed(6)
    cap.accepted(6)
    cap.settle()
    assert (read, cap.open, cap.held(1)) == ([6, 6], 1, 1)
    cap.closed(42)  # never accepted (an event from before the monitor's start): nothing to forget
    assert cap.open == 1


@contextlib.contextmanager
def _unix_pairs(count: int) -> Iterator[list[tuple[socket.socket, socket.socket]]]:
    """`count` connected unix socket pairs: (the referee's end, the client's end)."""
    pairs = [socket.socketpair() for _ in range(count)]
    try:
        yield pairs
    finally:
        for ours, theirs in pairs:
            ours.close()
            theirs.close()


def _require_unix_diag() -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        try:
            sock_diag.unix_peer_inode(os.fstat(ours.fileno()).st_ino)
        except sock_diag.SockDiagUnavailable as error:
            pytest.skip(f"the kernel does not answer unix_diag queries here: {error}")


def test_connections_no_bots_process_made_are_looked_up_by_their_holder_once_enough_are_open() -> None:
    """Connections whose maker is gone or no bot's (a bot's child that passed them on and exited): their client
    ends are found held by bot 1, except one held by no bot and one whose client end closed."""
    _require_unix_diag()
    count = limits.MAX_CONNECTIONS_PER_BOT + 3
    with _unix_pairs(count) as pairs:
        fds = {ours.fileno(): (ours, theirs) for ours, theirs in pairs}
        looks: list[int] = []
        stranger, closing = pairs[0][1], pairs[1][1]
        held_by_bot = {os.fstat(theirs.fileno()).st_ino: 1 for _, theirs in pairs[2:]}

        def bot_sockets() -> dict[int, int]:
            looks.append(len(looks))
            return held_by_bot

        def read_client(fd: int) -> Client:
            return Client(server_inode=os.fstat(fd).st_ino, connector=999)

        cap = ConnectionCap(read_client, bot_sockets, _owner_of_pid)
        for fd in list(fds)[: CENSUS_BATCH - 1]:
            cap.accepted(fd)
        assert cap.settle() == []
        assert looks == []  # not enough open connections to look
        for fd in list(fds)[CENSUS_BATCH - 1 :]:
            cap.accepted(fd)
        closing.close()
        assert stranger.fileno() >= 0
        assert cap.settle() == [Flood(1, count - 2)]
        assert looks == [0]
        assert (cap.held(0), cap.held(1), cap.open) == (0, count - 2, count)  # 2 held by no bot


def test_a_match_of_bots_holding_their_one_connection_never_looks() -> None:
    def bot_sockets() -> dict[int, int]:
        raise AssertionError("looked up who holds connections of well-behaved bots")

    cap = ConnectionCap(lambda fd: Client(), bot_sockets)
    for fd in range(limits.MAX_CONNECTIONS_PER_BOT - 1):
        cap.accepted(fd)
        assert cap.settle() == []

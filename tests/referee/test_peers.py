"""Finding the process behind a connection: /proc/net/tcp parsing, the socket lookup, and the pids it finds for
real connections (in this process and in another), by sock_diag and by the /proc/net/tcp fallback."""

from __future__ import annotations

import ipaddress
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from referee_helpers import require_tcp_peer_lookup, tcp_peer_pid

from referee.wire import sock_diag
from referee.wire.peers import (
    SOCKET_TABLES,
    Endpoint,
    SocketTableError,
    TcpClient,
    held_socket_inodes,
    holder_among,
    holds,
    ipc_peer_pid,
    parse_endpoint,
    parse_socket_line,
    parse_socket_table,
    quick_socket_inode,
    socket_holder,
    socket_inode,
    table_socket_inode,
    tcp_client,
    tcp_client_holder,
    tcp_client_inodes,
)

TCP_SAMPLE = """\
  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:A1B2 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0 100 0 0 10 0
   1: 0100007F:C350 0100007F:A1B2 01 00000000:00000000 00:00000000 00000000     0        0 5151 1 0 20 4 30 10 -1
   2: 0100007F:A1B2 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 6262 1 0 20 4 30 10 -1
   3: 0100007F:D000 0100007F:A1B2 06 00000000:00000000 03:00000123 00000000     0        0 0 3 0
   4: this line is not a socket
"""
_TCP6_COUNTERS = "00000000:00000000 00:00000000 00000000     0        0"
TCP6_SAMPLE = "\n".join(
    [
        "  sl  local_address                         remote_address                        st tx_queue rx_queue ...",
        f"   0: 0000000000000000FFFF00000100007F:C351 0000000000000000FFFF00000100007F:A1B2 01 {_TCP6_COUNTERS} 7373 1",
        f"   1: 00000000000000000000000001000000:0016 00000000000000000000000000000000:0000 0A {_TCP6_COUNTERS} 8484 1",
    ]
)
LOOPBACK = ipaddress.ip_address("127.0.0.1")
SERVER = Endpoint(LOOPBACK, 0xA1B2)


@pytest.mark.parametrize(
    "text, byteorder, expected",
    [
        ("0100007F:1F90", "little", Endpoint(LOOPBACK, 8080)),
        ("7F000001:1F90", "big", Endpoint(LOOPBACK, 8080)),
        ("0101A8C0:0050", "little", Endpoint(ipaddress.ip_address("192.168.1.1"), 80)),
        ("0000000000000000FFFF00000100007F:0050", "little", Endpoint(LOOPBACK, 80)),
        ("00000000000000000000000001000000:0016", "little", Endpoint(ipaddress.ip_address("::1"), 22)),
        ("00000000000000000000000000000001:0016", "big", Endpoint(ipaddress.ip_address("::1"), 22)),
    ],
)
def test_an_address_of_proc_net_tcp_reads_as_the_kernel_prints_it(
    text: str, byteorder: str, expected: Endpoint
) -> None:
    assert parse_endpoint(text, byteorder) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize("text", ["0100007F", "100007F:1F90", "0100007G:1F90", "0100007F:", "0100007F:XYZ"])
def test_a_malformed_address_is_refused(text: str) -> None:
    with pytest.raises(SocketTableError):
        parse_endpoint(text)


def test_a_socket_table_reads_row_by_row_skipping_odd_lines() -> None:
    rows = list(parse_socket_table(TCP_SAMPLE, "little"))
    assert [row.inode for row in rows] == [4242, 5151, 6262, 0]
    assert rows[1].local == Endpoint(LOOPBACK, 0xC350) and rows[1].remote == SERVER
    with pytest.raises(SocketTableError):
        parse_socket_line("   4: this line is not a socket")
    (mapped, _) = parse_socket_table(TCP6_SAMPLE, "little")
    assert (mapped.local, mapped.remote, mapped.inode) == (Endpoint(LOOPBACK, 0xC351), SERVER, 7373)


@pytest.mark.skipif(sys.byteorder != "little", reason="the samples are printed as a little-endian kernel does")
def test_the_client_socket_is_the_row_with_both_ends_in_its_order(tmp_path: Path) -> None:
    tcp, tcp6 = tmp_path / "tcp", tmp_path / "tcp6"
    tcp.write_text(TCP_SAMPLE)
    tcp6.write_text(TCP6_SAMPLE)
    tables = (tcp, tcp6, tmp_path / "missing")
    assert table_socket_inode(Endpoint(LOOPBACK, 0xC350), SERVER, tables) == 5151
    assert table_socket_inode(SERVER, Endpoint(LOOPBACK, 0xC350), tables) == 6262
    assert table_socket_inode(Endpoint(LOOPBACK, 0xC351), SERVER, tables) == 7373
    assert table_socket_inode(Endpoint(LOOPBACK, 0xD000), SERVER, tables) is None  # TIME_WAIT: no process holds it
    assert table_socket_inode(Endpoint(LOOPBACK, 0xC352), SERVER, tables) is None


def test_a_unix_socket_names_the_process_that_connected() -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        assert ipc_peer_pid(ours.fileno()) == os.getpid()
    assert ipc_peer_pid(ours.fileno()) is None


@pytest.fixture(params=["sock_diag", "proc_net_tcp"])
def inode_lookup(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the test with the socket found by sock_diag, and again by the /proc/net/tcp fallback (forced)."""
    if request.param == "sock_diag":
        if not sock_diag.available():
            pytest.skip("the kernel does not answer sock_diag queries here (no NETLINK_SOCK_DIAG or tcp_diag)")
    else:
        if not any(table.is_file() for table in SOCKET_TABLES):
            pytest.skip("no /proc/net/tcp here")
        monkeypatch.setattr(sock_diag, "available", lambda: False)
    require_tcp_peer_lookup()
    return str(request.param)


def _accepted(client_code: str) -> tuple[socket.socket, subprocess.Popen[bytes]]:
    listener = socket.create_server(("127.0.0.1", 0))
    with listener:
        port = listener.getsockname()[1]
        client = subprocess.Popen([sys.executable, "-c", client_code, str(port)])
        listener.settimeout(10)
        connection, _ = listener.accept()
    return connection, client


def test_a_loopback_tcp_connection_names_the_process_holding_its_client_socket(inode_lookup: str) -> None:
    code = "import socket, sys, time\ns = socket.create_connection(('127.0.0.1', int(sys.argv[1])))\ntime.sleep(60)\n"
    connection, client = _accepted(code)
    try:
        assert tcp_peer_pid(connection.fileno()) == client.pid
        assert tcp_peer_pid(connection.fileno(), likely=[os.getpid(), client.pid]) == client.pid
    finally:
        client.kill()
        client.wait()
        connection.close()


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_a_client_of_this_process_and_a_gone_client_are_told_apart(inode_lookup: str, host: str) -> None:
    try:
        listener = socket.create_server((host, 0), family=socket.AF_INET6 if ":" in host else socket.AF_INET)
    except OSError as error:
        pytest.skip(f"no {host} loopback here: {error}")
    with listener:
        client = socket.create_connection(listener.getsockname()[:2])
        connection, _ = listener.accept()
    with connection:
        assert tcp_peer_pid(connection.fileno()) == os.getpid()
        client.close()
        deadline = time.monotonic() + 5
        while tcp_peer_pid(connection.fileno()) is not None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert tcp_peer_pid(connection.fileno()) is None


def test_the_holder_of_a_socket_is_found_by_its_fd_links() -> None:
    with socket.socket() as held:
        inode = os.fstat(held.fileno()).st_ino
        assert holds(os.getpid(), f"socket:[{inode}]")
        assert socket_holder(inode, likely=[os.getppid()]) == os.getpid()
        assert socket_holder(inode, skip=[os.getpid()]) is None
        assert holder_among(inode, [os.getppid(), os.getpid()]) == os.getpid()
        assert holder_among(inode, [os.getppid()]) is None
    assert socket_holder(inode) is None


def test_the_client_end_read_at_receive_time_finds_the_client_later(inode_lookup: str) -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        client = socket.create_connection(listener.getsockname())
        connection, _ = listener.accept()
    with client, connection:
        ends = tcp_client(connection.fileno())
        assert ends == TcpClient(Endpoint.of(*client.getsockname()), Endpoint.of(*client.getpeername()))
        expected = os.fstat(client.fileno()).st_ino if inode_lookup == "sock_diag" else None
        assert quick_socket_inode(ends) == expected
        assert tcp_client_holder(ends, likely=[os.getppid()]) == os.getpid()


def test_a_query_the_kernel_refuses_falls_back_to_proc_net_tcp(monkeypatch: pytest.MonkeyPatch) -> None:
    if not any(table.is_file() for table in SOCKET_TABLES):
        pytest.skip("no /proc/net/tcp here")

    def refused(*ends: object) -> int | None:
        raise sock_diag.SockDiagUnavailable("refused")

    monkeypatch.setattr(sock_diag, "available", lambda: True)
    monkeypatch.setattr(sock_diag, "tcp_socket_inode", refused)
    with socket.create_server(("127.0.0.1", 0)) as listener:
        client = socket.create_connection(listener.getsockname())
        connection, _ = listener.accept()
    with client, connection:
        local = Endpoint.of(*client.getsockname()[:2])
        remote = Endpoint.of(*client.getpeername()[:2])
        assert socket_inode(local, remote) == os.fstat(client.fileno()).st_ino
        assert tcp_peer_pid(connection.fileno(), likely=[os.getpid()]) == os.getpid()


def test_the_sockets_a_process_holds_are_read_from_its_fd_links() -> None:
    with socket.socket() as held:
        inode = os.fstat(held.fileno()).st_ino
        assert inode in set(held_socket_inodes(os.getpid()))
    assert inode not in set(held_socket_inodes(os.getpid()))


def test_the_inodes_of_many_tcp_clients_are_found_at_once(inode_lookup: str) -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        clients = [socket.create_connection(listener.getsockname()) for _ in range(3)]
        accepted = [listener.accept()[0] for _ in clients]
    try:
        ends = [tcp_client(connection.fileno()) for connection in accepted]
        assert all(end is not None for end in ends)
        expected = {end: os.fstat(client.fileno()).st_ino for end, client in zip(ends, clients, strict=True)}
        clients[0].close()
        del expected[ends[0]]
        assert tcp_client_inodes(end for end in ends if end is not None) == expected
    finally:
        for connection in [*clients, *accepted]:
            connection.close()

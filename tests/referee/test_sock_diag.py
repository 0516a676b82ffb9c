"""The sock_diag query: its request and reply layouts, and the sockets it finds for real connections."""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import os
import socket
import struct
from collections.abc import Iterator

import pytest

from referee.wire import sock_diag
from referee.wire.sock_diag import (
    NLMSG_ERROR,
    SOCK_DIAG_BY_FAMILY,
    DiagSocket,
    SockDiagUnavailable,
    decode_reply,
    encode_request,
    tcp_socket_inode,
)

LOOPBACK = ipaddress.ip_address("127.0.0.1")
LOOPBACK6 = ipaddress.ip_address("::1")


def _reply(kind: int, payload: bytes, sequence: int = 7) -> bytes:
    return struct.pack("=IHHII", 16 + len(payload), kind, 0, sequence, 0) + payload


def _diag_msg(family: int, source: bytes, source_port: int, destination: bytes, port: int, inode: int) -> bytes:
    sockid = struct.pack("!HH16s16s", source_port, port, source, destination) + struct.pack("=I2I", 0, 0, 0)
    return struct.pack("=BBBB", family, 1, 0, 0) + sockid + struct.pack("=5I", 0, 0, 0, 1000, inode)


def test_a_request_names_the_socket_by_its_ends_in_network_order() -> None:
    request = encode_request((LOOPBACK, 0xC350), (LOOPBACK, 0xA1B2), sequence=7)
    assert len(request) == 16 + 56
    assert struct.unpack_from("=IHHII", request) == (72, SOCK_DIAG_BY_FAMILY, 1, 7, 0)
    assert struct.unpack_from("=BBBxI", request, 16) == (socket.AF_INET, socket.IPPROTO_TCP, 0, 0xFFFFFFFF)
    assert request[24:28] == bytes([0xC3, 0x50, 0xA1, 0xB2])
    assert request[28:44] == bytes([127, 0, 0, 1]) + bytes(12)
    assert request[44:60] == bytes([127, 0, 0, 1]) + bytes(12)
    assert request[60:] == struct.pack("=I", 0) + b"\xff" * 8
    request6 = encode_request((LOOPBACK6, 1), (LOOPBACK6, 2), sequence=8)
    assert request6[16] == socket.AF_INET6 and request6[28:44] == LOOPBACK6.packed
    with pytest.raises(ValueError):
        encode_request((LOOPBACK, 1), (LOOPBACK6, 2), sequence=9)


def test_a_reply_reads_as_the_socket_it_describes() -> None:
    mapped = ipaddress.ip_address("::ffff:127.0.0.1").packed
    v4 = _diag_msg(socket.AF_INET, LOOPBACK.packed.ljust(16, b"\0"), 0xC350, LOOPBACK.packed.ljust(16, b"\0"), 80, 42)
    dual = _diag_msg(socket.AF_INET6, mapped, 0xC350, mapped, 80, 43)
    expected = DiagSocket((LOOPBACK, 0xC350), (LOOPBACK, 80), state=1, inode=42)
    assert decode_reply(_reply(SOCK_DIAG_BY_FAMILY, v4 + b"\x08\x00\x01\x00attr"), 7) == expected
    assert decode_reply(_reply(SOCK_DIAG_BY_FAMILY, dual), 7) == DiagSocket((LOOPBACK, 0xC350), (LOOPBACK, 80), 1, 43)


def test_no_such_socket_is_none_and_any_other_answer_is_unavailable() -> None:
    assert decode_reply(_reply(NLMSG_ERROR, struct.pack("=i", -errno.ENOENT)), 7) is None
    unreadable = [
        _reply(NLMSG_ERROR, struct.pack("=i", -errno.EPERM)),
        _reply(SOCK_DIAG_BY_FAMILY, b"short"),
        _reply(0x3, struct.pack("=i", 0)),
        _reply(SOCK_DIAG_BY_FAMILY, _diag_msg(socket.AF_UNIX, bytes(16), 1, bytes(16), 2, 3)),
        _reply(NLMSG_ERROR, struct.pack("=i", -errno.ENOENT), sequence=6),
        b"tiny",
    ]
    for reply in unreadable:
        with pytest.raises(SockDiagUnavailable):
            decode_reply(reply, 7)


def _require_sock_diag() -> None:
    if not sock_diag.available():
        pytest.skip("the kernel does not answer sock_diag queries here (no NETLINK_SOCK_DIAG or tcp_diag)")


def _ends(connected: socket.socket) -> tuple[sock_diag.Address, sock_diag.Address]:
    local, remote = connected.getsockname(), connected.getpeername()
    return (ipaddress.ip_address(local[0]), local[1]), (ipaddress.ip_address(remote[0]), remote[1])


@contextlib.contextmanager
def _connection(
    family: socket.AddressFamily, host: str, client_host: str | None = None
) -> Iterator[tuple[socket.socket, socket.socket]]:
    """A connected client and server of this process; the client connects to `client_host` if given (from an
    IPv6 socket: a dual-stack client speaking IPv4-mapped addresses)."""
    try:
        listener = socket.create_server((host, 0), family=family, dualstack_ipv6=client_host is not None)
    except (OSError, ValueError) as error:
        pytest.skip(f"no {host} loopback here: {error}")
    with listener, socket.socket(socket.AF_INET6 if client_host else family) as client:
        client.connect((client_host or host, listener.getsockname()[1]))
        server, _ = listener.accept()
        with server:
            yield client, server


@pytest.mark.parametrize(
    "family, host, client_host",
    [
        (socket.AF_INET, "127.0.0.1", None),
        (socket.AF_INET6, "::1", None),
        (socket.AF_INET6, "::", "::ffff:127.0.0.1"),
    ],
    ids=["ipv4", "ipv6", "dual-stack-client"],
)
def test_both_ends_of_a_loopback_connection_are_found_by_their_four_tuple(
    family: socket.AddressFamily, host: str, client_host: str | None
) -> None:
    _require_sock_diag()
    with _connection(family, host, client_host) as (client, server):
        assert tcp_socket_inode(*_ends(client)) == os.fstat(client.fileno()).st_ino
        assert tcp_socket_inode(*_ends(server)) == os.fstat(server.fileno()).st_ino
        (address, port), ours = _ends(server)
        assert tcp_socket_inode((address, port + 1 if port < 65535 else port - 1), ours) is None


def test_a_listener_is_not_taken_for_a_connection() -> None:
    _require_sock_diag()
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        assert tcp_socket_inode((LOOPBACK, port), (LOOPBACK, 40000 if port != 40000 else 40001)) is None


def test_a_kernel_that_refuses_the_query_says_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*args: object) -> socket.socket:
        raise PermissionError(errno.EPERM, "not permitted")

    monkeypatch.setattr(sock_diag.socket, "socket", refused)
    with pytest.raises(SockDiagUnavailable):
        tcp_socket_inode((LOOPBACK, 1), (LOOPBACK, 2))
    sock_diag.available.cache_clear()
    try:
        assert not sock_diag.available()
    finally:
        sock_diag.available.cache_clear()


def test_a_unix_request_asks_one_socket_for_its_peer() -> None:
    request = sock_diag.encode_unix_request(0x1234, sequence=9)
    length, kind, flags, sequence, _ = struct.unpack_from("=IHHII", request)
    assert (length, kind, flags, sequence) == (len(request), SOCK_DIAG_BY_FAMILY, sock_diag.NLM_F_REQUEST, 9)
    family, protocol, states, inode, show, *cookie = struct.unpack_from("=BBxxIII2I", request, 16)
    assert (family, protocol, states, inode, show) == (socket.AF_UNIX, 0, 0xFFFFFFFF, 0x1234, sock_diag.UDIAG_SHOW_PEER)
    assert cookie == [0xFFFFFFFF, 0xFFFFFFFF]


def _unix_msg(inode: int, *attributes: tuple[int, bytes]) -> bytes:
    message = struct.pack("=BBBxI2I", socket.AF_UNIX, socket.SOCK_STREAM, 1, inode, 0, 0)
    for kind, value in attributes:
        attribute = struct.pack("=HH", 4 + len(value), kind) + value
        message += attribute + b"\0" * (-len(attribute) % 4)
    return message


def test_a_unix_reply_gives_the_peer_attribute_wherever_it_is() -> None:
    peer = struct.pack("=I", 777)
    name = (0, b"/tmp/a.sock\0")
    assert sock_diag.decode_unix_peer(_unix_msg(5, name, (sock_diag.UNIX_DIAG_PEER, peer)), 5) == 777
    assert sock_diag.decode_unix_peer(_unix_msg(5, (sock_diag.UNIX_DIAG_PEER, peer), (6, b"\0")), 5) == 777
    assert sock_diag.decode_unix_peer(_unix_msg(5, name), 5) is None
    with pytest.raises(SockDiagUnavailable):
        sock_diag.decode_unix_peer(_unix_msg(6, (sock_diag.UNIX_DIAG_PEER, peer)), 5)
    with pytest.raises(SockDiagUnavailable):
        sock_diag.decode_unix_peer(b"\0" * 8, 5)


def test_the_peer_of_a_real_unix_connection_is_its_other_end() -> None:
    ours, theirs = socket.socketpair()
    with ours:
        try:
            found = sock_diag.unix_peer_inode(os.fstat(ours.fileno()).st_ino)
        except SockDiagUnavailable as error:
            pytest.skip(f"the kernel does not answer unix_diag queries here: {error}")
        assert found == os.fstat(theirs.fileno()).st_ino
        theirs.close()
        assert sock_diag.unix_peer_inode(os.fstat(ours.fileno()).st_ino) is None
    assert sock_diag.unix_peer_inode(1) is None  # no such socket

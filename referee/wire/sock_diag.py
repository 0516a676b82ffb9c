"""Ask the kernel for one TCP socket by its four-tuple (NETLINK_SOCK_DIAG, the inet_diag query `ss` uses), or for
the peer of one unix socket by its inode (the unix_diag query of `ss -x`).

One request names the socket exactly (no NLM_F_DUMP): the kernel looks it up in its hash tables and answers
one inet_diag_msg, or an error (ENOENT: no such socket). That costs tens of microseconds, where reading
/proc/net/tcp walks every socket of the machine and costs milliseconds. ENOENT also means "no tcp_diag
module" on a kernel without it, so whether the query works at all is probed once on a connection of our own
(`available`); referee.wire.peers falls back to /proc/net/tcp where it does not.

Layouts (linux/netlink.h, linux/sock_diag.h, linux/inet_diag.h, linux/unix_diag.h): integers are in host byte
order, except the ports and addresses of struct inet_diag_sockid, which are in network byte order (the bytes of
the wire).
"""

from __future__ import annotations

import errno
import functools
import ipaddress
import itertools
import os
import socket
import struct
from dataclasses import dataclass

from protocol.errors import EnvironmentProblem

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
"""The message type of a sock_diag request for one address family (linux/sock_diag.h)."""
NLM_F_REQUEST = 0x1
NLMSG_ERROR = 0x2
NLMSG_DONE = 0x3
TCP_LISTEN = 10
_ALL_STATES = 0xFFFFFFFF
"""idiag_states is a bit mask of TCP states (1 << state); an exact lookup ignores it, all are asked."""
_NO_COOKIE = 0xFFFFFFFF
"""INET_DIAG_NOCOOKIE, in both words of idiag_cookie: match the socket by its addresses alone."""
_REPLY_BYTES = 8192

_NLMSGHDR = struct.Struct("=IHHII")
"""struct nlmsghdr, host order: nlmsg_len (header included), nlmsg_type, nlmsg_flags, nlmsg_seq, nlmsg_pid."""
_REQUEST_HEAD = struct.Struct("=BBBxI")
"""The head of struct inet_diag_req_v2, host order: sdiag_family, sdiag_protocol, idiag_ext (no extra
attributes asked: 0), a pad byte, idiag_states. Its struct inet_diag_sockid `id` follows."""
_SOCKID_ENDS = struct.Struct("!HH16s16s")
"""The ends of struct inet_diag_sockid, network order: idiag_sport, idiag_dport, idiag_src[4], idiag_dst[4]
(__be32 words, i.e. the address bytes as sent; an IPv4 address fills the first 4 bytes, the rest are 0)."""
_SOCKID_TAIL = struct.Struct("=I2I")
"""The rest of struct inet_diag_sockid, host order: idiag_if (0: any interface), idiag_cookie[2]."""
_MSG_HEAD = struct.Struct("=BBBB")
"""The head of struct inet_diag_msg: idiag_family, idiag_state, idiag_timer, idiag_retrans. Its
inet_diag_sockid `id` follows (as above), then the tail."""
_MSG_TAIL = struct.Struct("=5I")
"""The tail of struct inet_diag_msg, host order: idiag_expires, idiag_rqueue, idiag_wqueue, idiag_uid,
idiag_inode (0 for a socket no process holds, e.g. in TIME_WAIT)."""
_UNIX_REQUEST = struct.Struct("=BBxxIII2I")
"""struct unix_diag_req, host order: sdiag_family, sdiag_protocol (0), pad, udiag_states, udiag_ino, udiag_show,
udiag_cookie[2]."""
_UNIX_MSG = struct.Struct("=BBBxI2I")
"""struct unix_diag_msg, host order: udiag_family, udiag_type, udiag_state, pad, udiag_ino, udiag_cookie[2]; its
attributes (struct rtattr each, 4-byte aligned) follow."""
_RTATTR = struct.Struct("=HH")
"""struct rtattr: rta_len (header included), rta_type."""
UDIAG_SHOW_PEER = 0x4
UNIX_DIAG_PEER = 2
_PEER_INODE = struct.Struct("=I")
_ERROR = struct.Struct("=i")
"""The head of struct nlmsgerr: `error`, 0 or a negative errno."""
_SOCKID_BYTES = _SOCKID_ENDS.size + _SOCKID_TAIL.size
_DIAG_MSG_BYTES = _MSG_HEAD.size + _SOCKID_BYTES + _MSG_TAIL.size

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Address = tuple[IPAddress, int]
"""An address and a port."""

_sequence = itertools.count(1)


class SockDiagUnavailable(EnvironmentProblem, OSError):
    """The kernel does not answer this sock_diag query (no NETLINK_SOCK_DIAG, no tcp_diag, not permitted, or
    an answer that does not read as one)."""


@dataclass(frozen=True, slots=True)
class DiagSocket:
    """What an inet_diag_msg says of a socket: its ends (as its own process sees them), state and inode."""

    source: Address
    destination: Address
    state: int
    inode: int


def unmapped(address: IPAddress) -> IPAddress:
    """An IPv4-mapped IPv6 address as the IPv4 address it maps; any other address as it is."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _family(address: IPAddress) -> socket.AddressFamily:
    return socket.AF_INET if address.version == 4 else socket.AF_INET6


def encode_request(source: Address, destination: Address, sequence: int) -> bytes:
    """A SOCK_DIAG_BY_FAMILY request (nlmsghdr + inet_diag_req_v2) for the TCP socket whose local end is
    `source` and remote end `destination` (both of one address family)."""
    (source_address, source_port), (destination_address, destination_port) = source, destination
    if source_address.version != destination_address.version:
        raise ValueError(f"the two ends of a socket are of one address family: {source} and {destination}")
    body = (
        _REQUEST_HEAD.pack(_family(source_address), socket.IPPROTO_TCP, 0, _ALL_STATES)
        + _SOCKID_ENDS.pack(source_port, destination_port, source_address.packed, destination_address.packed)
        + _SOCKID_TAIL.pack(0, _NO_COOKIE, _NO_COOKIE)
    )
    header = _NLMSGHDR.pack(_NLMSGHDR.size + len(body), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST, sequence, 0)
    return header + body


def _address(family: int, packed: bytes) -> IPAddress:
    if family == socket.AF_INET:
        return ipaddress.IPv4Address(packed[:4])
    if family == socket.AF_INET6:
        return ipaddress.IPv6Address(packed)
    raise SockDiagUnavailable(f"a sock_diag answer of address family {family}")


def decode_socket(message: bytes) -> DiagSocket:
    """An inet_diag_msg (the payload after the nlmsghdr; attributes after it are ignored). IPv4-mapped IPv6
    addresses (a dual-stack socket speaking IPv4) are read as the IPv4 addresses they map."""
    if len(message) < _DIAG_MSG_BYTES:
        raise SockDiagUnavailable(f"an inet_diag_msg of {len(message)} bytes")
    family, state, _, _ = _MSG_HEAD.unpack_from(message)
    source_port, destination_port, source, destination = _SOCKID_ENDS.unpack_from(message, _MSG_HEAD.size)
    inode = _MSG_TAIL.unpack_from(message, _MSG_HEAD.size + _SOCKID_BYTES)[4]
    return DiagSocket(
        (unmapped(_address(family, source)), source_port),
        (unmapped(_address(family, destination)), destination_port),
        state,
        inode,
    )


def _reply_payload(reply: bytes, sequence: int) -> bytes | None:
    """The payload of a SOCK_DIAG_BY_FAMILY answer to request `sequence`, or None for ENOENT (no such socket).
    Raises SockDiagUnavailable for any other error or an answer that is not one."""
    if len(reply) < _NLMSGHDR.size:
        raise SockDiagUnavailable(f"a netlink answer of {len(reply)} bytes")
    length, kind, _, answered, _ = _NLMSGHDR.unpack_from(reply)
    if answered != sequence or not _NLMSGHDR.size <= length <= len(reply):
        raise SockDiagUnavailable(f"a netlink answer to request {answered} of {length} bytes (asked {sequence})")
    payload = reply[_NLMSGHDR.size : length]
    if kind == NLMSG_ERROR:
        code = -_ERROR.unpack_from(payload)[0] if len(payload) >= _ERROR.size else errno.EIO
        if code == errno.ENOENT:
            return None
        raise SockDiagUnavailable(code, f"sock_diag refused the query: {os.strerror(code)}")
    if kind != SOCK_DIAG_BY_FAMILY:
        raise SockDiagUnavailable(f"a netlink answer of type {kind}")
    return payload


def decode_reply(reply: bytes, sequence: int) -> DiagSocket | None:
    """The socket an exact-lookup reply describes, or None for ENOENT (no such socket). Raises
    SockDiagUnavailable for any other error or an answer that is not one."""
    payload = _reply_payload(reply, sequence)
    return None if payload is None else decode_socket(payload)


def _ask(request: bytes) -> bytes:
    try:
        with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_SOCK_DIAG) as netlink:
            netlink.send(request)
            return netlink.recv(_REPLY_BYTES, socket.MSG_DONTWAIT)
    except OSError as error:
        raise SockDiagUnavailable(error.errno, f"no sock_diag answer: {error}") from error


def query(source: Address, destination: Address) -> DiagSocket | None:
    """Ask the kernel for the TCP socket with local end `source` and remote end `destination` (as its own
    process sees them), in this network namespace. Never blocks: the kernel answers before send returns."""
    sequence = next(_sequence)
    return decode_reply(_ask(encode_request(source, destination, sequence)), sequence)


def encode_unix_request(inode: int, sequence: int) -> bytes:
    """A SOCK_DIAG_BY_FAMILY request (nlmsghdr + unix_diag_req) for the unix socket `inode`, asking its peer."""
    body = _UNIX_REQUEST.pack(socket.AF_UNIX, 0, _ALL_STATES, inode, UDIAG_SHOW_PEER, _NO_COOKIE, _NO_COOKIE)
    header = _NLMSGHDR.pack(_NLMSGHDR.size + len(body), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST, sequence, 0)
    return header + body


def decode_unix_peer(message: bytes, inode: int) -> int | None:
    """The peer inode a unix_diag_msg of socket `inode` gives (its UNIX_DIAG_PEER attribute), or None if it has
    none (a listener, or a connection whose other end is closed)."""
    if len(message) < _UNIX_MSG.size:
        raise SockDiagUnavailable(f"a unix_diag_msg of {len(message)} bytes")
    if _UNIX_MSG.unpack_from(message)[3] != inode:
        raise SockDiagUnavailable(f"a unix_diag_msg of socket {_UNIX_MSG.unpack_from(message)[3]} (asked {inode})")
    offset = _UNIX_MSG.size
    while offset + _RTATTR.size <= len(message):
        length, kind = _RTATTR.unpack_from(message, offset)
        if length < _RTATTR.size:
            break
        if kind == UNIX_DIAG_PEER and length >= _RTATTR.size + _PEER_INODE.size:
            return _PEER_INODE.unpack_from(message, offset + _RTATTR.size)[0] or None
        offset += (length + 3) & ~3
    return None


def unix_peer_inode(inode: int) -> int | None:
    """The inode of the socket at the other end of the unix stream socket `inode` (for a socket the referee
    accepted: the client's), or None if there is no such socket or it has no peer. Raises SockDiagUnavailable
    (no unix_diag here)."""
    sequence = next(_sequence)
    payload = _reply_payload(_ask(encode_unix_request(inode, sequence)), sequence)
    return None if payload is None else decode_unix_peer(payload, inode)


def tcp_socket_inode(source: Address, destination: Address) -> int | None:
    """The inode of the connected TCP socket with ends `source` and `destination` (as its own process sees
    them), or None if there is none or no process holds it. Raises SockDiagUnavailable."""
    source, destination = (unmapped(source[0]), source[1]), (unmapped(destination[0]), destination[1])
    found = query(source, destination)
    if found is None or found.state == TCP_LISTEN or (found.source, found.destination) != (source, destination):
        return None
    return found.inode or None


@functools.cache
def available() -> bool:
    """True if sock_diag finds a loopback TCP connection of this process (probed once: a kernel without the
    tcp_diag module answers every query with ENOENT, as for a socket that does not exist)."""
    try:
        with (
            socket.create_server(("127.0.0.1", 0)) as listener,
            socket.create_connection(listener.getsockname()) as client,
        ):
            server, _ = listener.accept()
            with server:
                host, port = client.getsockname()[:2]
                peer_host, peer_port = client.getpeername()[:2]
                inode = tcp_socket_inode(
                    (ipaddress.ip_address(host), port), (ipaddress.ip_address(peer_host), peer_port)
                )
                return inode == os.fstat(client.fileno()).st_ino
    except OSError:
        return False

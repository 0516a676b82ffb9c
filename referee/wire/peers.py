"""Which process made a connection the referee accepted, from the connection's file descriptor.

On ipc the kernel says (SO_PEERCRED: the process that called connect()). On tcp it does not, but the referee
binds loopback only, so the client's socket is on this machine: it is the socket whose local end is our peer's
address and port and whose remote end is ours, and its owner is a process with an fd linking to
`socket:[INODE]`. The kernel finds that socket by its four-tuple (referee.wire.sock_diag, tens of microseconds);
where it cannot (no NETLINK_SOCK_DIAG or tcp_diag), it is the row of /proc/net/tcp (or tcp6, for a dual-stack
client socket speaking IPv4-mapped addresses) with those ends, a read that walks every socket of the machine
(milliseconds). The scan of /proc/*/fd for the holder is costly too, so it is done only for connections not
bound yet (at hello time), and first over the processes the caller names as likely; `holder_among` searches
only given processes (the bot a hello claims to be: as long as their fds, see referee.wire.connection). Where the
machine has neither, `tcp_lookup_possible` is False.

A socket shared by several processes (fork after connect) is attributed to the first holder found; on ipc the
kernel reports the process that connected.
"""

from __future__ import annotations

import contextlib
import ipaddress
import itertools
import math
import os
import socket
import struct
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from protocol.errors import EnvironmentProblem
from referee.wire import sock_diag

_UCRED = struct.Struct("3i")
"""struct ucred: pid, uid, gid."""
_PROC = Path("/proc")
SOCKET_TABLES = (_PROC / "net" / "tcp", _PROC / "net" / "tcp6")
_WORD_HEX = 8

ByteOrder = Literal["little", "big"]
IPAddress = sock_diag.IPAddress


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One end of a TCP connection; an IPv4-mapped IPv6 address is stored as the IPv4 address it maps."""

    address: IPAddress
    port: int

    @classmethod
    def of(cls, address: str, port: int) -> Endpoint:
        return cls(sock_diag.unmapped(ipaddress.ip_address(address)), port)


@dataclass(frozen=True, slots=True)
class SocketRow:
    """One socket of /proc/net/tcp or tcp6: its two ends and its inode (0 for a socket no process holds)."""

    local: Endpoint
    remote: Endpoint
    inode: int


class SocketTableError(EnvironmentProblem, ValueError):
    """A line of /proc/net/tcp that does not read as a socket."""


class LookupExpired(EnvironmentProblem, TimeoutError):
    """The search for the process behind a connection reached its deadline."""


@dataclass(frozen=True, slots=True)
class Deadline:
    """When a search for the process behind a connection must stop: at `at` on `clock` (the referee's monotonic
    clock unless the caller counts in another time, as the lookup budget counts in the referee's CPU time)."""

    at: float = math.inf
    clock: Callable[[], float] = time.monotonic

    def check(self) -> None:
        if self.clock() >= self.at:
            raise LookupExpired("the search for the process behind a connection reached its deadline")


NO_DEADLINE = Deadline()


def parse_endpoint(text: str, byteorder: ByteOrder = sys.byteorder) -> Endpoint:
    """An `ADDRESS:PORT` of /proc/net/tcp{,6}. The kernel prints the address as 32-bit words, each as the number
    the host reads from the network-order bytes (so on a little-endian host 127.0.0.1 is 0100007F), and the
    port as a plain hex number."""
    address_hex, _, port_hex = text.partition(":")
    if len(address_hex) not in (8, 32) or not port_hex:
        raise SocketTableError(f"not an address:port of /proc/net/tcp: {text!r}")
    try:
        words = [int(address_hex[i : i + _WORD_HEX], 16) for i in range(0, len(address_hex), _WORD_HEX)]
        packed = b"".join(word.to_bytes(4, byteorder) for word in words)
        return Endpoint(sock_diag.unmapped(ipaddress.ip_address(packed)), int(port_hex, 16))
    except ValueError as error:
        raise SocketTableError(f"not an address:port of /proc/net/tcp: {text!r}") from error


def parse_socket_line(line: str, byteorder: ByteOrder = sys.byteorder) -> SocketRow:
    """One socket line of /proc/net/tcp{,6}: `sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout
    inode ...`."""
    fields = line.split()
    if len(fields) < 10 or not fields[9].isdigit():
        raise SocketTableError(f"not a socket line of /proc/net/tcp: {line!r}")
    return SocketRow(parse_endpoint(fields[1], byteorder), parse_endpoint(fields[2], byteorder), int(fields[9]))


def parse_socket_table(text: str, byteorder: ByteOrder = sys.byteorder) -> Iterator[SocketRow]:
    """The sockets of a /proc/net/tcp{,6} text. The first line is a header; a line that does not read as a
    socket is skipped (one odd line must not hide the others)."""
    for line in text.splitlines()[1:]:
        try:
            row = parse_socket_line(line, byteorder)
        except SocketTableError:
            continue
        yield row


def tcp_lookup_possible(tables: Iterable[Path] = SOCKET_TABLES) -> bool:
    return sock_diag.available() or any(table.is_file() for table in tables)


def socket_inode(local: Endpoint, remote: Endpoint, tables: Iterable[Path] = SOCKET_TABLES) -> int | None:
    """The inode of the socket whose ends are `local` and `remote` (as its own process sees them), or None:
    asked of the kernel by sock_diag where it answers, else read from `tables`."""
    if sock_diag.available():
        with contextlib.suppress(sock_diag.SockDiagUnavailable):
            return sock_diag.tcp_socket_inode((local.address, local.port), (remote.address, remote.port))
    return table_socket_inode(local, remote, tables)


def table_socket_inode(local: Endpoint, remote: Endpoint, tables: Iterable[Path] = SOCKET_TABLES) -> int | None:
    """The inode of the socket whose ends are `local` and `remote`, read from /proc/net/tcp{,6}, or None."""
    rows = _socket_rows(tables)
    return next((row.inode for row in rows if row.inode and row.local == local and row.remote == remote), None)


def _socket_rows(tables: Iterable[Path]) -> Iterator[SocketRow]:
    """The sockets of each of `tables` in turn (one that cannot be read is skipped)."""
    for table in tables:
        try:
            text = table.read_text()
        except OSError:
            continue
        yield from parse_socket_table(text)


def _all_pids() -> Iterator[int]:
    return (int(entry.name) for entry in os.scandir(_PROC) if entry.name.isdigit())


def _fd_links(pid: int) -> Iterator[str]:
    """What the fds of process `pid` link to, read one by one (none once the process is gone)."""
    fd_dir = _PROC / str(pid) / "fd"
    try:
        with os.scandir(fd_dir) as fds:
            for fd in fds:
                with contextlib.suppress(OSError):
                    yield os.readlink(fd.path)
    except OSError:
        return


def held_socket_inodes(pid: int) -> Iterator[int]:
    """The inodes of the sockets process `pid` holds (none once it is gone)."""
    for target in _fd_links(pid):
        if target.startswith("socket:[") and target.endswith("]") and target[8:-1].isdigit():
            yield int(target[8:-1])


def holds(pid: int, link: str, deadline: Deadline = NO_DEADLINE) -> bool:
    """True if process `pid` has an fd whose /proc link reads `link` (False if the process is gone). Raises
    LookupExpired at `deadline`: a process can hold very many fds."""
    for target in _fd_links(pid):
        if target == link:
            return True
        deadline.check()
    return False


def socket_holder(
    inode: int, likely: Iterable[int] = (), deadline: Deadline = NO_DEADLINE, skip: Iterable[int] = ()
) -> int | None:
    """A process holding the socket `inode`: the `likely` pids are tried first, then every process but those in
    `skip` (already searched). Raises LookupExpired at `deadline`."""
    link = f"socket:[{inode}]"
    tried: set[int] = set(skip)
    for pid in itertools.chain(likely, _all_pids()):
        if pid in tried:
            continue
        tried.add(pid)
        deadline.check()
        if holds(pid, link, deadline):
            return pid
    return None


def holder_among(inode: int, pids: Iterable[int]) -> int | None:
    """The first of `pids` that holds the socket `inode`, or None: a search as long as those processes' fds."""
    link = f"socket:[{inode}]"
    return next((pid for pid in pids if holds(pid, link)), None)


def ipc_peer_pid(fd: int) -> int | None:
    """The pid of the process that connected the unix socket `fd` (SO_PEERCRED, read on a duplicate: the fd
    belongs to ZeroMQ's I/O thread), or None."""
    try:
        with socket.fromfd(fd, socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            credentials = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
    except OSError:
        return None
    pid = _UCRED.unpack(credentials)[0]
    return pid if pid > 0 else None


@dataclass(frozen=True, slots=True)
class TcpClient:
    """The client end of a loopback TCP connection the referee accepted, as the client's process sees it: its own
    address and port (`local`) and the referee's (`remote`). Fixed for the connection's life, so it can be read
    while the fd ZeroMQ reports (ZMQ_SRCFD) is valid and used to find the client's socket later."""

    local: Endpoint
    remote: Endpoint


def tcp_client(fd: int) -> TcpClient | None:
    """The client end of the loopback TCP connection `fd` (read on a duplicate: the fd belongs to ZeroMQ's I/O
    thread), or None if it cannot be read (the connection is gone)."""
    try:
        duplicate = os.dup(fd)
    except OSError:
        return None
    try:
        connection = socket.socket(fileno=duplicate)
    except OSError:
        os.close(duplicate)
        return None
    try:
        with connection:
            ours = Endpoint.of(*connection.getsockname()[:2])
            peer = Endpoint.of(*connection.getpeername()[:2])
    except (OSError, TypeError, ValueError):
        return None
    return TcpClient(local=peer, remote=ours)


def quick_socket_inode(client: TcpClient) -> int | None:
    """The inode of `client`'s socket if the kernel answers a sock_diag query (tens of microseconds), else None:
    None also where only /proc/net/tcp could tell, a read that costs milliseconds (see `socket_inode`)."""
    if not sock_diag.available():
        return None
    try:
        return sock_diag.tcp_socket_inode(
            (client.local.address, client.local.port), (client.remote.address, client.remote.port)
        )
    except sock_diag.SockDiagUnavailable:
        return None


def tcp_client_inodes(clients: Iterable[TcpClient], tables: Iterable[Path] = SOCKET_TABLES) -> dict[TcpClient, int]:
    """The inodes of the sockets of `clients` that still exist: asked of sock_diag one by one (tens of
    microseconds each), or, where the kernel does not answer, read from one pass over /proc/net/tcp{,6}."""
    clients = list(clients)
    if sock_diag.available():
        with contextlib.suppress(sock_diag.SockDiagUnavailable):
            found = {}
            for client in clients:
                inode = sock_diag.tcp_socket_inode(
                    (client.local.address, client.local.port), (client.remote.address, client.remote.port)
                )
                if inode is not None:
                    found[client] = inode
            return found
    wanted = {(client.local, client.remote): client for client in clients}
    found = {}
    for row in _socket_rows(tables):
        wanted_client = wanted.get((row.local, row.remote))
        if wanted_client is not None and row.inode:
            found[wanted_client] = row.inode
    return found


def tcp_client_holder(
    client: TcpClient,
    likely: Iterable[int] = (),
    tables: Iterable[Path] = SOCKET_TABLES,
    deadline: Deadline = NO_DEADLINE,
    skip: Iterable[int] = (),
) -> int | None:
    """The pid of a process holding `client`'s socket, or None if it is gone or not on this machine: the `likely`
    pids first, then every process but those in `skip`. `likely` is consumed only once the socket is found.
    Raises LookupExpired if the search is still on at `deadline`."""
    inode = socket_inode(client.local, client.remote, tables)
    return None if inode is None else socket_holder(inode, likely, deadline, skip)

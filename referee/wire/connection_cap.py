"""The connections each bot holds to the match's ROUTER socket, so that no bot can exhaust the referee's file
descriptors: every connection the ROUTER accepts costs the referee one, and a bot whose processes held more
connections than the referee may have files open made libzmq abort the whole referee ("Too many open files").

ZeroMQ reports each connection the ROUTER accepts and each one that closes, with the connection's fd, on a
socket monitor that Router.wait reads only when it has events: nothing here runs per decision. On ipc the
kernel tells which process connected (SO_PEERCRED), and a connection made by a process of a bot counts for
that bot at once. Every other connection (all of them on tcp, where finding the client's process costs
milliseconds) is looked up only when it matters, many at once: once CENSUS_BATCH of them are open, the
referee finds the client's end of each (on ipc the peer of the accepted unix socket, asked of the kernel by
unix_diag; on tcp the socket with the client's four-tuple, referee.wire.peers) and the bot whose processes hold it
(BotSockets, from the session, which knows every process of each bot), so a connection passed on, or kept by a
child after the process that made it exited, is still found. A bot found with more than
limits.MAX_CONNECTIONS_PER_BOT open connections is named once (Flood): the session charges it and stops its
processes, which closes their connections. A connection whose client end is gone is closing (its event will
follow); one that no bot holds (a process outside the match made it) is no one's: counted, no one charged. A
match of bots that hold their one connection each never takes a look.

A connection is known by what was read of it while its fd was valid (the fd is ZeroMQ's, closed and reused as
connections come and go): `settle` reads every connection accepted since the last events, and a connection
that closed meanwhile is never read.
"""

from __future__ import annotations

import collections
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from protocol import limits
from referee.wire import peers, sock_diag

CENSUS_BATCH = limits.MAX_CONNECTIONS_PER_BOT
"""Open connections accepted since the last look that make the referee look up who holds them: the smallest
number at which a bot could be over the cap (its own connection and this many more)."""

_log = logging.getLogger(__name__)


BotSockets = Callable[[], Mapping[int, int]]
"""The sockets the processes of the match's bots hold: socket inode -> index of the bot."""


@dataclass(frozen=True, slots=True)
class Flood:
    """A bot found holding more connections to the referee than the cap."""

    owner: int
    held: int


@dataclass(frozen=True, slots=True)
class Client:
    """What is known of the client's end of an accepted connection, read while its fd was valid: on ipc the inode
    of the accepted socket and the pid that connected, on tcp the client's four-tuple."""

    server_inode: int | None = None
    connector: int | None = None
    tcp: peers.TcpClient | None = None


OwnerOfPid = Callable[[int], "int | None"]
"""The bot (index) whose process `pid` is, or None."""


def read_ipc_client(fd: int) -> Client:
    try:
        server_inode = os.fstat(fd).st_ino
    except OSError:
        return Client()
    return Client(server_inode=server_inode, connector=peers.ipc_peer_pid(fd))


def read_tcp_client(fd: int) -> Client:
    return Client(tcp=peers.tcp_client(fd))


class ConnectionCap:
    """Open connections by holder. `accepted` and `closed` follow the monitor's events in order; `settle`, after
    each run of events, reads the new connections, counts those a bot's process made for that bot, looks up
    the holders of the others when CENSUS_BATCH of them are open, and returns the bots newly found over the
    cap."""

    def __init__(
        self,
        read_client: Callable[[int], Client],
        bot_sockets: BotSockets,
        owner_of_pid: OwnerOfPid = lambda pid: None,
        cap: int = limits.MAX_CONNECTIONS_PER_BOT,
        census_batch: int = CENSUS_BATCH,
    ) -> None:
        self._read_client = read_client
        self._bot_sockets = bot_sockets
        self._owner_of_pid = owner_of_pid
        self._cap = cap
        self._census_batch = census_batch
        self._unread: list[int] = []
        self._new: dict[int, Client] = {}
        """Open connections not looked up yet, by fd."""
        self._owner: dict[int, int | None] = {}
        """Open connections looked up, by fd: the bot that holds it, or None for no bot."""
        self._held: collections.Counter[int] = collections.Counter()
        self._named: set[int] = set()
        self._warned_of_strangers = False

    @property
    def open(self) -> int:
        return len(self._new) + len(self._owner)

    def held(self, owner: int) -> int:
        """The open connections found held by `owner` at the last look."""
        return self._held[owner]

    def accepted(self, fd: int) -> None:
        self._forget(fd)
        self._unread.append(fd)
        self._new[fd] = Client()

    def closed(self, fd: int) -> None:
        self._forget(fd)

    def _forget(self, fd: int) -> None:
        if self._new.pop(fd, None) is not None:
            return
        if fd in self._owner and (owner := self._owner.pop(fd)) is not None:
            self._held[owner] -= 1

    def settle(self) -> list[Flood]:
        self._read_new()
        if len(self._new) >= self._census_batch:
            self._census()
        floods = [
            Flood(owner, held) for owner, held in self._held.items() if held > self._cap and owner not in self._named
        ]
        self._named.update(flood.owner for flood in floods)
        return floods

    def _read_new(self) -> None:
        """Read the connections accepted since the last settle that are still open; count for its bot each one a
        process of a bot made (the connecting pids of one run of events are looked up once each)."""
        owners: dict[int, int | None] = {}
        for fd in self._unread:
            if fd not in self._new:
                continue
            client = self._read_client(fd)
            owner = None
            if client.connector is not None:
                if client.connector not in owners:
                    owners[client.connector] = self._owner_of_pid(client.connector)
                owner = owners[client.connector]
            if owner is None:
                self._new[fd] = client
            else:
                del self._new[fd]
                self._count(fd, owner)
        self._unread.clear()

    def _count(self, fd: int, owner: int | None) -> None:
        self._owner[fd] = owner
        if owner is not None:
            self._held[owner] += 1

    def _census(self) -> None:
        sockets = self._bot_sockets()
        new, self._new = self._new, {}
        tcp_inodes = peers.tcp_client_inodes(client.tcp for client in new.values() if client.tcp is not None)
        strangers = 0
        for fd, client in new.items():
            inode = self._client_inode(client, tcp_inodes)
            owner = None if inode is None else sockets.get(inode)
            strangers += inode is not None and owner is None
            self._count(fd, owner)
        if strangers >= self._census_batch and not self._warned_of_strangers:
            self._warned_of_strangers = True
            _log.warning("%d new connections to the referee are held by no bot of the match", strangers)

    @staticmethod
    def _client_inode(client: Client, tcp_inodes: Mapping[peers.TcpClient, int]) -> int | None:
        """The inode of the client's socket, or None if it is gone (or where the kernel does not say)."""
        if client.tcp is not None:
            return tcp_inodes.get(client.tcp)
        if client.server_inode is None:
            return None
        try:
            return sock_diag.unix_peer_inode(client.server_inode)
        except sock_diag.SockDiagUnavailable:
            return None

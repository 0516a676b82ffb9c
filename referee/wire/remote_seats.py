"""Remote seats (`remote:NAME`): bots that play from another machine, through `referee connect` there.

A match with remote seats runs on a BotTransport whose wire is a RemoteRouter (referee.wire.remote: the local
socket plus a CURVE server socket at the listen address, its allow-list the keys folder's NAME.key files) and
whose start of a remote seat starts no process: it hands the seat's fresh token to the wire and returns a
RemoteSeat, a BotHandle with nothing to freeze or kill. The match code treats both kinds alike but for the clock:
the seat's hello must come within the startup limit (else a startup fault charged to it alone, as for a local bot
that never says hello), its replies are timed by the referee's clock like any other, plus the lag credited from
its per-game quota (referee.wire.lag_quota), and faults are its seat's. Its games are recorded with isolation
`remote`. Local bots of the same match start as they always do.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from protocol import limits
from protocol.curve_keys import REFEREE_KEY, KeyFileError, KeyPair, allow_list, key_files, load_pair
from protocol.errors import BadInput
from protocol.remote_sockets import DEFAULT_RECONNECT_GRACE_S
from referee.wire.connection import Transport
from referee.wire.connection_cap import BotSockets, OwnerOfPid
from referee.wire.lag_quota import DEFAULT_LAG_QUOTA_MS
from referee.wire.remote import RemoteRouter

REMOTE_PREFIX = "remote:"
"""A remote seat's BOT argument is remote:NAME (referee.botspec), its command the one word remote:NAME."""


def _note(log_path: Path, line: str) -> None:
    """A line in the seat's log, for the organiser (and the detail of its crash)."""
    with contextlib.suppress(OSError), open(log_path, "a", encoding="utf-8") as log:
        log.write(line + "\n")


class RemoteSeatError(BadInput, ValueError):
    """A remote seat that cannot be played: no --listen, or no key for its name."""


def remote_name(command: Sequence[str]) -> str | None:
    """The seat name of a remote seat's command (referee.botspec: `remote:NAME`), None for a local bot's."""
    if len(command) == 1 and command[0].startswith(REMOTE_PREFIX):
        return command[0][len(REMOTE_PREFIX) :]
    return None


@dataclass(frozen=True, slots=True)
class ConnectionLost:
    """How a remote seat ended, read as a process's Ending is (referee.isolation.process, a room this one may not
    import): no status, no signal, its connection lost past the grace."""

    grace_s: float
    status: None = None
    signal: None = None


class RemoteSeat:
    """A remote seat's stand-in for a bot process: its pidfd (an eventfd) signals an exit when the connection bound
    to the seat closed (or its heartbeats stopped) and did not come back within the reconnect grace (`gone`), which
    the match charges as a crash of its seat (FaultCause.CONNECTION_LOST); a bot that goes silent on a live
    connection, or stays away past its clock, runs out of its clock (a timeout)."""

    def __init__(self, name: str, log_path: Path, release: Callable[[], object]) -> None:
        self.name = name
        self._fd = os.eventfd(0, os.EFD_CLOEXEC)
        self.log_path = log_path
        self._release = release
        self._killed = False
        self._gone: float | None = None

    def gone(self, grace_s: float) -> None:
        if self._killed or self._gone is not None:
            return
        self._gone = grace_s
        _note(self.log_path, f"remote seat {self.name}: the connection is lost")
        os.eventfd_write(self._fd, 1)

    pid = -1
    memory_mb = None
    jail = None

    @property
    def pidfd(self) -> int:
        return self._fd

    def exited(self) -> bool:
        return self._killed or self._gone is not None

    def ending(self) -> ConnectionLost | None:
        return None if self._gone is None else ConnectionLost(self._gone)

    def oom_killed(self) -> bool:
        return False

    def hold(self, frozen: bool) -> None:
        return None

    def kill(self) -> None:
        if not self._killed:
            self._killed = True
            self._release()
            os.close(self._fd)

    def program_pids(self) -> list[int]:
        return []

    def namespace(self) -> None:
        return None


@dataclass(frozen=True)
class RemoteSeats:
    """Where remote seats connect (`listen`, tcp://HOST:PORT) and with which keys: the referee's pair and the
    allow-list, both from one keys folder (protocol.curve_keys)."""

    listen: str
    referee: KeyPair
    allowed: Mapping[bytes, str]
    lag_quota_ms: int = DEFAULT_LAG_QUOTA_MS
    """Each remote seat's lag quota per game (referee.wire.lag_quota)."""
    grace_s: float = DEFAULT_RECONNECT_GRACE_S
    """How long a remote seat whose connection dropped is kept for it to come back (referee.wire.remote)."""
    wires: list[RemoteRouter] = field(default_factory=list)
    """The wires opened so far (one per match); the latest is the match being played."""
    seats: dict[str, RemoteSeat] = field(default_factory=dict)
    """The latest start of each remote seat."""

    @classmethod
    def from_folder(
        cls,
        listen: str,
        folder: Path,
        seats: Iterable[str],
        lag_quota_ms: int = DEFAULT_LAG_QUOTA_MS,
        grace_s: float = DEFAULT_RECONNECT_GRACE_S,
    ) -> RemoteSeats:
        """The keys in `folder`, checked: the referee's own pair, and a key for each of `seats`."""
        if not listen.startswith("tcp://"):
            raise RemoteSeatError(f"--listen takes tcp://HOST:PORT, not {listen!r}")
        referee = load_pair(key_files(folder, REFEREE_KEY)[1])
        allowed = allow_list(folder)
        missing = sorted(set(seats) - set(allowed.values()))
        if missing:
            raise KeyFileError(f"no public key for remote seat(s) {', '.join(missing)} in {folder} (NAME.key each)")
        return cls(listen, referee, allowed, lag_quota_ms, grace_s)

    def open_wire(
        self,
        workdir: Path,
        bound: Container[bytes],
        likely_peers: Callable[[], Iterable[int]],
        *,
        bot_sockets: BotSockets,
        owner_of_pid: OwnerOfPid,
    ) -> RemoteRouter:
        """The match's wire (an OpenWire): local bots on ipc, remote seats at `listen`."""
        wire = RemoteRouter(
            self.listen,
            self.referee,
            self.allowed,
            Transport.IPC,
            workdir,
            bound,
            likely_peers,
            bot_sockets=bot_sockets,
            owner_of_pid=owner_of_pid,
            lag_quota_ms=self.lag_quota_ms,
            grace_s=self.grace_s,
        )
        wire.disconnected = self._disconnected
        wire.note = self._note_seat
        self.wires.append(wire)
        return wire

    @staticmethod
    def _released(wire: RemoteRouter, name: str, log_path: Path) -> None:
        wire.tokens.pop(name, None)
        summary = wire.round_trips.summary(name)
        if summary is not None:
            _note(log_path, f"remote seat {name}: {summary} so far")

    def _disconnected(self, name: str, grace_s: float) -> None:
        seat = self.seats.get(name)
        if seat is not None:
            seat.gone(grace_s)

    def _note_seat(self, name: str, line: str) -> None:
        seat = self.seats.get(name)
        if seat is not None:
            _note(seat.log_path, line)

    def start_bot(self, local: Callable[..., Any]) -> Callable[..., Any]:
        """A StartBot (referee.isolation.process) that starts a remote seat here and any other bot with `local`."""

        def start(command: Sequence[str], env: Mapping[str, str], log_path: Path, *args: Any, **options: Any) -> Any:
            name = remote_name(command)
            if name is None:
                return local(command, env, log_path, *args, **options)
            wire = self.wires[-1]
            wire.tokens[name] = env[limits.ENV_TOKEN]
            _note(log_path, f"remote seat {name}: waiting for its key to connect to {self.listen}")
            seat = RemoteSeat(name, log_path, functools.partial(self._released, wire, name, log_path))
            self.seats[name] = seat
            return seat

        return start

"""How one match reaches its bots: the wire their messages travel, how their programs start, and the clock the
match is timed on (`BotTransport`). Session and the match loop take one from their caller, as they take the
sandbox's probe; run_match makes the real one (`BotTransport.local`): the match's ZeroMQ ROUTER socket
(referee.wire.connection.Router), bot processes (referee.isolation.process.BotProcess) and the monotonic clock.

A transport that plays its bots from scripts, on a clock of its own, runs the whole match loop (handshakes,
clocks, faults, fallbacks) without a socket or a process: tests/referee/scripted.py is one.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from referee.isolation.process import BotProcess
from referee.isolation.proctable import Namespace
from referee.isolation.sandbox import Jail, SandboxRequest
from referee.wire.connection import Incoming, Router, Transport
from referee.wire.connection_cap import BotSockets, Flood, OwnerOfPid

Clock = Callable[[], float]
"""Seconds on a clock that never goes back (time.monotonic); every deadline of a match is on it."""


class Wire(Protocol):
    """The match's socket and the wait for what happens next (see Router, the real one)."""

    @property
    def endpoint(self) -> str:
        """Where bots connect (REFEREE_ENDPOINT)."""

    @property
    def checks_peers(self) -> bool:
        """The process behind a connection can be found (`sender`); where not, a token alone binds."""

    def watch(self, fd: int) -> None:
        """Report the exit of the bot whose pidfd is `fd` (BotHandle.pidfd) in `wait`."""

    def unwatch(self, fd: int) -> None: ...

    def wait(self, deadline: float) -> tuple[bool, list[int], Sequence[Flood]]:
        """Block until a message arrives, a watched bot exits, a bot floods connections, or `deadline` (on the
        transport's clock) passes: (a message is waiting, the pidfds of bots that exited, the floods)."""

    def receive(self) -> Iterator[Incoming]:
        """The next message, if one is waiting."""

    def send(self, identity: bytes, frame: bytes) -> None:
        """Queue one frame for a connection; dropped if it is gone."""

    def sender(self, incoming: Incoming, claimant: Sequence[int] = ()) -> int | None:
        """The pid of the process behind a connection not bound yet (only where `checks_peers`)."""

    def close(self) -> None: ...


class OpenWire(Protocol):
    """Makes the match's wire in `workdir`. `bound` is the live set of bound identities (Bindings.bound); the
    callables tell which processes are the bots' (for finding who made a connection, and for the cap on each
    bot's connections)."""

    def __call__(
        self,
        workdir: Path,
        bound: Container[bytes],
        likely_peers: Callable[[], Iterable[int]],
        *,
        bot_sockets: BotSockets,
        owner_of_pid: OwnerOfPid,
    ) -> Wire: ...


class BotHandle(Protocol):
    """A started bot program (see BotProcess, the real one)."""

    @property
    def pid(self) -> int:
        """The leader of the bot's session."""

    @property
    def pidfd(self) -> int:
        """What Wire.watch watches for the bot's exit."""

    @property
    def memory_mb(self) -> int | None: ...

    @property
    def jail(self) -> Jail | None:
        """Its sandbox, if it runs in one."""

    def exited(self) -> bool: ...

    def describe_exit(self) -> str:
        """How it ended, in words ("exited with status 1", "was killed by SIGKILL (9)"...)."""

    def hold(self, frozen: bool) -> None:
        """Freeze it (it uses no CPU until thawed) or thaw it; nothing where it cannot be frozen."""

    def kill(self) -> None:
        """Kill every process of the bot, and return once they are gone."""

    def program_pids(self) -> list[int]:
        """The processes of the bot's program (where a connection's maker is looked for first)."""

    def namespace(self) -> Namespace | None:
        """The bot's PID namespace, if it has one."""


class StartBot(Protocol):
    """Starts a bot's `command` with exactly `env`, its output to `log_path` (BotStartError if it cannot)."""

    def __call__(
        self,
        command: Sequence[str],
        env: Mapping[str, str],
        log_path: Path,
        log_cap_bytes: int,
        *,
        memory_mb: int | None,
        cwd: str | None,
        sandbox: SandboxRequest | None,
    ) -> BotHandle: ...


@dataclass(frozen=True, slots=True)
class BotTransport:
    """What a match runs its bots on. `kind` is the socket's: sandboxed bots have no network, so they need ipc."""

    kind: Transport
    open_wire: OpenWire
    start_bot: StartBot
    clock: Clock = time.monotonic

    @classmethod
    def local(cls, kind: Transport = Transport.IPC) -> BotTransport:
        """Bot processes on this machine, connected to a ROUTER socket of `kind`."""
        return cls(kind, functools.partial(Router, kind), BotProcess.start)

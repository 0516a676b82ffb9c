"""What a remote seat costs the referee per decision, against a local one (`referee bench protocol --remote`).

Two matches of SDK random bots on one machine, the same deals: every seat local (ipc, unsandboxed, none frozen),
and every seat remote (`remote:NAME`: the RemoteRouter's CURVE socket on loopback tcp, each bot an SDK bot
connecting directly with its own key, protocol.sdk_remote). A decision's time is the interval between two
actions applied (from the replays), as in `referee bench protocol`: the referee's work plus a round trip. The
round trip alone is the floor: the same SDK bots answering the requests of the same games prepared in advance,
from a bare ROUTER on the same transport (a plain ipc ROUTER; a CURVE server ROUTER on tcp, made by
protocol.remote_sockets as the referee's is). The referee's own cost per decision is a run's median decision
less its floor's median; the bench pairs them run by run (`repeats`, interleaved, the machine's load changes),
and reports the least, the median and the most of each, and the ratio of the medians.

What the remote floor leaves in the referee's cost: the ping the referee sends after every request and the pong
it reads back (the floor sends none), the lag quota's grant and settlement, the User-Id and prefix of each remote
message. What it takes out: CURVE's encryption and tcp, on both ends, which the floor pays as the referee does.
"""

from __future__ import annotations

import contextlib
import os
import socket
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zmq
from zmq.auth.thread import ThreadAuthenticator

from protocol import codec
from protocol.curve_keys import REFEREE_KEY, key_files, load_pair, new_key_pair
from protocol.remote_sockets import ZAP_DOMAIN, server_socket
from protocol.sdk_remote import ENV_KEY, ENV_REMOTE, ENV_SERVER_KEY
from referee.botspec import resolve_bot
from referee.isolation.process import BotProcess
from referee.isolation.sandbox import Isolation
from referee.match import run_match
from referee.session import BotTransport
from referee.wire.connection import Transport
from referee.wire.remote_seats import RemoteSeats

from .protocol import Figures, decision_samples_us, prepared_round_trips_us, random_match, seated_requests

_PEER_SILENCE_MS = 30_000


@dataclass(frozen=True)
class Spread:
    """The least, the median and the most of a figure over the bench's runs, in microseconds."""

    least_us: float
    median_us: float
    most_us: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        return cls(min(values), statistics.median(values), max(values))


@dataclass(frozen=True)
class SeatKindRuns:
    """One kind of seat (local or remote) over the bench's runs."""

    decisions: Figures
    """Every decision of every run, pooled: the referee's work plus a round trip."""
    round_trip: Figures
    """The floor's round trips, pooled."""
    own: Spread
    """The referee's own cost per decision: each run's median decision less its floor's median."""
    count: int


@dataclass(frozen=True)
class RemoteProtocolBenchResult:
    game: str
    players: int
    games: int
    repeats: int
    local: SeatKindRuns
    remote: SeatKindRuns

    @property
    def runs_text(self) -> str:
        return f"{self.repeats} runs of {self.games} games each way"

    @property
    def ratio(self) -> float:
        """The referee's own cost per decision, remote over local (medians over the runs)."""
        return self.remote.own.median_us / self.local.own.median_us


def free_port() -> int:
    """A tcp port on loopback free a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def seat_keys(folder: Path, names: Sequence[str]) -> Path:
    """A keys folder as an organiser's (the referee's pair and each name's public key, with its secret beside it,
    as the bench plays both ends): the folder."""
    new_key_pair(REFEREE_KEY, folder)
    for name in names:
        new_key_pair(name, folder)
    return folder


def remote_bot_environment(folder: Path, name: str, endpoint: str) -> dict[str, str]:
    """The environment of an SDK bot playing remote:NAME directly (protocol.sdk_remote)."""
    inherited = {key: value for key, value in os.environ.items() if not key.startswith("REFEREE_")}
    return inherited | {
        ENV_REMOTE: endpoint,
        ENV_KEY: str(key_files(folder, name)[1]),
        ENV_SERVER_KEY: str(key_files(folder, REFEREE_KEY)[0]),
    }


@contextlib.contextmanager
def remote_bots(
    command: Sequence[str], folder: Path, names: Sequence[str], endpoint: str
) -> Iterator[list[subprocess.Popen[bytes]]]:
    """SDK bots playing remote:NAME for each of `names` at `endpoint`; they end when the referee closes the
    connection, and are killed if they have not within a few seconds of the block's end."""
    bots = [
        subprocess.Popen(
            command,
            env=remote_bot_environment(folder, name, endpoint),
            stdin=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for name in names
    ]
    try:
        yield bots
    finally:
        for bot in bots:
            with contextlib.suppress(subprocess.TimeoutExpired):
                bot.wait(10)
            bot.kill()
            bot.wait()


def remote_transport(folder: Path, endpoint: str, names: Sequence[str], lag_quota_ms: int) -> BotTransport:
    """The transport `referee play --listen ENDPOINT --keys FOLDER` makes for remote seats `names`."""
    seats = RemoteSeats.from_folder(endpoint, folder, names, lag_quota_ms)
    return BotTransport(Transport.IPC, seats.open_wire, seats.start_bot(BotProcess.start), isolation=Isolation.REMOTE)


def _names(players: int) -> list[str]:
    return [f"bench-{seat}" for seat in range(players)]


def remote_decisions_us(game: str, players: int, games: int, seed: int, folder: Path) -> list[float]:
    """Microseconds of each decision of a match of SDK random bots, every seat remote (on loopback)."""
    names = _names(players)
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    bots = tuple(resolve_bot(f"remote:{name}", game) for name in names)
    with tempfile.TemporaryDirectory(prefix="referee-bench-") as replay_dir:
        spec = random_match(game, players, games, seed, "bench-remote", bots=bots, replay_dir=replay_dir, sandbox=False)
        with remote_bots(resolve_bot("random", game).command, folder, names, endpoint):
            record = run_match(spec, transport=remote_transport(folder, endpoint, names, 0))
        return decision_samples_us(record)


def local_decisions_us(game: str, players: int, games: int, seed: int) -> list[float]:
    """The same match with every seat local: unsandboxed, so no bot is frozen (a remote one cannot be)."""
    with tempfile.TemporaryDirectory(prefix="referee-bench-") as replay_dir:
        spec = random_match(game, players, games, seed, "bench-local", replay_dir=replay_dir, sandbox=False)
        return decision_samples_us(run_match(spec))


@contextlib.contextmanager
def _curve_router(folder: Path, endpoint: str) -> Iterator[zmq.Socket[bytes]]:
    """A CURVE server ROUTER as the referee's (protocol.remote_sockets), admitting any key, bound at `endpoint`."""
    context: zmq.Context[Any] = zmq.Context()
    authenticator = ThreadAuthenticator(context)
    authenticator.start()
    authenticator.configure_curve(domain=ZAP_DOMAIN, location=zmq.auth.CURVE_ALLOW_ANY)
    router = server_socket(context, load_pair(key_files(folder, REFEREE_KEY)[1]))
    router.setsockopt(zmq.RCVTIMEO, _PEER_SILENCE_MS)
    router.bind(endpoint)
    try:
        yield router
    finally:
        router.close(0)
        authenticator.stop()
        context.term()


def remote_prepared_round_trips_us(game: str, players: int, games: int, seed: int, folder: Path) -> list[float]:
    """Microseconds of each round trip of requests prepared in advance from a bare CURVE ROUTER to SDK random
    bots connected directly (protocol.sdk_remote), one per seat: no engine, no encoding, no pings."""
    script: list[tuple[int, bytes]] = []
    for index in range(games):
        script += seated_requests(game, players, seed + index, first_id=len(script) + 1)
    welcome = codec.encode(codec.welcome(5000, 0, 10.0))
    clock = time.perf_counter
    samples = []
    command = resolve_bot("random", game).command
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    with remote_bots(command, folder, _names(players), endpoint), _curve_router(folder, endpoint) as router:
        identities: list[bytes] = []
        while len(identities) < players:
            identity, _ = router.recv_multipart()
            identities.append(identity)
            router.send_multipart((identity, welcome))
        send, recv = router.send_multipart, router.recv_multipart
        for seat, frame in script:
            started = clock()
            send((identities[seat], frame))
            recv()
            samples.append((clock() - started) * 1e6)
        for identity in identities:
            send((identity, codec.BYE_FRAME))
    return samples


def _kind(decisions: list[list[float]], floors: list[list[float]]) -> SeatKindRuns:
    own = [statistics.median(run) - statistics.median(floor) for run, floor in zip(decisions, floors, strict=True)]
    pooled = [sample for run in decisions for sample in run]
    return SeatKindRuns(
        Figures.of(pooled), Figures.of([sample for floor in floors for sample in floor]), Spread.of(own), len(pooled)
    )


def bench_remote_protocol(
    game: str = "scout", players: int = 4, games: int = 10, seed: int = 0, repeats: int = 5
) -> RemoteProtocolBenchResult:
    """Local and remote runs and their floors, interleaved `repeats` times, each repeat with its own deals."""
    local: list[list[float]] = []
    local_floor: list[list[float]] = []
    remote: list[list[float]] = []
    remote_floor: list[list[float]] = []
    with tempfile.TemporaryDirectory(prefix="referee-bench-keys-") as keys:
        folder = seat_keys(Path(keys), _names(players))
        for repeat in range(repeats):
            run_seed = seed + repeat
            local.append(local_decisions_us(game, players, games, run_seed))
            local_floor.append(prepared_round_trips_us(game, players, games, run_seed))
            remote.append(remote_decisions_us(game, players, games, run_seed, folder))
            remote_floor.append(remote_prepared_round_trips_us(game, players, games, run_seed, folder))
    return RemoteProtocolBenchResult(
        game, players, games, repeats, _kind(local, local_floor), _kind(remote, remote_floor)
    )

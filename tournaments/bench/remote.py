"""What a remote seat costs the referee per decision, against a local one (`referee bench protocol --remote`).

One match of SDK random bots, unsandboxed (a remote bot cannot be frozen, so no local one is), at a table of remote
and local seats side by side: each remote seat (`remote:NAME`) reaches the RemoteRouter's CURVE socket over
loopback tcp (an SDK bot connecting directly with its own key, protocol.sdk_remote), each local seat its ipc
socket. Their decisions alternate, so the machine's load (it changes from second to second on a shared machine)
weighs on both kinds alike. A decision's time is the interval between two actions applied (from the replays), as
in `referee bench protocol`: the referee's work plus the round trip of the seat that acted. The round trip alone is
the floor: the same SDK bots, seated the same way, answering the requests of the same games prepared in advance
from bare ROUTERs on the same transports (a plain ipc ROUTER; a CURVE server ROUTER on tcp, made by
protocol.remote_sockets as the referee's is). The referee's own cost per decision of a kind of seat is a run's
median decision of that kind less its floor's median; the bench reports the least, the median and the most over
its runs (`repeats`), and the ratio of the medians.

What the remote floor leaves in the referee's cost: its pings (at most one per connection every
referee.wire.remote.PING_INTERVAL_S) and the pongs it reads back (the floor sends none), the lag quota's grant and
settlement, the prefix of each remote message. What it takes out: CURVE's encryption and tcp, on both ends, which
the floor pays as the referee does. `mixed_prepared_round_trips_us(..., pings=True)` pings after every request,
as the referee did before that interval: what a ping per decision costs.
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
from protocol.remote_sockets import PING, ZAP_DOMAIN, server_socket
from protocol.sdk_remote import ENV_KEY, ENV_REMOTE, ENV_SERVER_KEY
from referee.botspec import resolve_bot, unique_names
from referee.isolation.process import BotProcess
from referee.isolation.sandbox import Isolation
from referee.match import run_match
from referee.session import BotTransport
from referee.wire.connection import Transport
from referee.wire.remote_seats import RemoteSeats

from .protocol import (
    Figures,
    bench_router,
    decision_samples_by_bot_us,
    random_match,
    seated_requests,
    start_sdk_bot,
    welcome_bots,
)

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
    outside_clock: Spread

    @property
    def pooled_own_us(self) -> float:
        return self.decisions.median_us - self.round_trip.median_us

    """Each run's median of the referee's work outside the decision's clock (a decision's interval less its `ms`):
    no round trip in it, so the load of other processes weighs on it least; the sending and receiving are not in
    it (they are inside the clock)."""


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
        return f"{self.repeats} runs of {self.games} games, remote and local seats alternating"

    @property
    def ratio(self) -> float:
        """The referee's own cost per decision, remote over local (medians over the runs)."""
        return self.remote.own.median_us / self.local.own.median_us

    @property
    def pooled_ratio(self) -> float:
        """The same over every run's decisions and floors pooled: each kind's median decision less its median
        round trip, remote over local."""
        return self.remote.pooled_own_us / self.local.pooled_own_us

    @property
    def outside_ratio(self) -> float:
        """The referee's work outside the clock, remote over local (medians over the runs)."""
        return self.remote.outside_clock.median_us / self.local.outside_clock.median_us


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


def _is_remote(seat: int) -> bool:
    return seat % 2 == 0


def _names(players: int) -> list[str]:
    """The remote seats' names (every other seat, from the first)."""
    return [f"bench-{seat}" for seat in range(players) if _is_remote(seat)]


def mixed_decisions_us(
    game: str, players: int, games: int, seed: int, folder: Path
) -> tuple[dict[bool, list[float]], dict[bool, list[float]]]:
    """Microseconds of each decision of a match of SDK random bots, every other seat remote (on loopback), by
    whether the seat that acted was remote; and of the referee's work outside the decision's clock."""
    names = _names(players)
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    specs = [resolve_bot(f"remote:bench-{seat}" if _is_remote(seat) else "random", game) for seat in range(players)]
    bots = unique_names(specs)
    with tempfile.TemporaryDirectory(prefix="referee-bench-") as replay_dir:
        spec = random_match(game, players, games, seed, "bench-remote", bots, replay_dir=replay_dir, sandbox=False)
        with remote_bots(resolve_bot("random", game).command, folder, names, endpoint):
            record = run_match(spec, transport=remote_transport(folder, endpoint, names, 0))
        return _by_kind(decision_samples_by_bot_us(record), names), _by_kind(
            decision_samples_by_bot_us(record, outside_clock=True), names
        )


def _by_kind(samples: dict[str, list[float]], remote_names: Sequence[str]) -> dict[bool, list[float]]:
    by_kind: dict[bool, list[float]] = {True: [], False: []}
    for bot, values in samples.items():
        by_kind[bot in remote_names] += values
    return by_kind


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


def mixed_prepared_round_trips_us(
    game: str, players: int, games: int, seed: int, folder: Path, pings: bool = False
) -> dict[bool, list[float]]:
    """Microseconds of each round trip of requests prepared in advance to SDK random bots seated as in
    `mixed_decisions_us`, by whether the seat is remote: from a bare ipc ROUTER to the local ones, from a bare CURVE
    ROUTER to the remote ones (connected directly, protocol.sdk_remote). No engine, no encoding; with `pings`, each
    request to a remote seat followed by a ping as the referee sends it, its pong read before the reply."""
    script: list[tuple[int, bytes]] = []
    for index in range(games):
        script += seated_requests(game, players, seed + index, first_id=len(script) + 1)
    command = resolve_bot("random", game).command
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    local_seats = [seat for seat in range(players) if not _is_remote(seat)]
    with contextlib.ExitStack() as stack:
        stack.enter_context(remote_bots(command, folder, _names(players), endpoint))
        curve = stack.enter_context(_curve_router(folder, endpoint))
        plain, plain_endpoint = stack.enter_context(bench_router("mixed.sock"))
        local_bots = [start_sdk_bot(command, plain_endpoint, f"bench-{seat}") for seat in local_seats]
        stack.callback(_stop, local_bots)
        local = welcome_bots(plain, len(local_seats))
        remote = iter(_welcome_remote(curve, len(_names(players))))
        routes = {
            seat: (curve, next(remote)) if _is_remote(seat) else (plain, local[f"bench-{seat}"])
            for seat in range(players)
        }
        return _time_script(script, routes, pings)


def _welcome_remote(router: zmq.Socket[bytes], bots: int) -> list[bytes]:
    welcome = codec.encode(codec.welcome(5000, 0, 10.0))
    identities: list[bytes] = []
    while len(identities) < bots:
        identity, _ = router.recv_multipart()
        identities.append(identity)
        router.send_multipart((identity, welcome))
    return identities


def _time_script(
    script: list[tuple[int, bytes]], routes: dict[int, tuple[zmq.Socket[bytes], bytes]], pings: bool
) -> dict[bool, list[float]]:
    clock = time.perf_counter
    samples: dict[bool, list[float]] = {True: [], False: []}
    for seat, frame in script:
        router, identity = routes[seat]
        remote = _is_remote(seat)
        started = clock()
        router.send_multipart((identity, frame))
        if pings and remote:
            router.send_multipart((identity, PING, seat.to_bytes(8, "big")))
        while len(router.recv_multipart()) != 2:
            pass
        samples[remote].append((clock() - started) * 1e6)
    for router, identity in routes.values():
        router.send_multipart((identity, codec.BYE_FRAME))
    return samples


def _stop(bots: list[subprocess.Popen[bytes]]) -> None:
    for bot in bots:
        with contextlib.suppress(subprocess.TimeoutExpired):
            bot.wait(5)
        bot.kill()
        bot.wait()


def _kind(decisions: list[list[float]], floors: list[list[float]], outside: list[list[float]]) -> SeatKindRuns:
    own = [statistics.median(run) - statistics.median(floor) for run, floor in zip(decisions, floors, strict=True)]
    pooled = [sample for run in decisions for sample in run]
    return SeatKindRuns(
        Figures.of(pooled),
        Figures.of([sample for floor in floors for sample in floor]),
        Spread.of(own),
        len(pooled),
        Spread.of([statistics.median(run) for run in outside]),
    )


def bench_remote_protocol(
    game: str = "scout", players: int = 4, games: int = 10, seed: int = 0, repeats: int = 5
) -> RemoteProtocolBenchResult:
    """Mixed matches and their floors (with and without pings), `repeats` times, each run with its own deals."""
    decisions: list[dict[bool, list[float]]] = []
    outside: list[dict[bool, list[float]]] = []
    floors: list[dict[bool, list[float]]] = []
    with tempfile.TemporaryDirectory(prefix="referee-bench-keys-") as keys:
        folder = seat_keys(Path(keys), _names(players))
        for repeat in range(repeats):
            run_seed = seed + repeat
            run, outside_run = mixed_decisions_us(game, players, games, run_seed, folder)
            decisions.append(run)
            outside.append(outside_run)
            floors.append(mixed_prepared_round_trips_us(game, players, games, run_seed, folder))

    def kind(remote: bool, floor_runs: list[dict[bool, list[float]]]) -> SeatKindRuns:
        return _kind(
            [run[remote] for run in decisions], [run[remote] for run in floor_runs], [run[remote] for run in outside]
        )

    return RemoteProtocolBenchResult(game, players, games, repeats, kind(False, floors), kind(True, floors))

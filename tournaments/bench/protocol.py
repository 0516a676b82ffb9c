"""How much the referee adds to a bare ZeroMQ round trip, and what reusing bot processes saves.

- raw: a ROUTER in this process sends the bytes of real requests of the game (recorded from a seeded random
  game, so sizes are typical) to a DEALER echo peer in another process, which sends each frame back.
  Nothing is decoded, built or checked: the floor of any referee over this transport.
- referee: a real match of the SDK random bot (`bots.python.random_bot`) through `run_match`, timed per
  decision as the interval between two actions applied (from the replays' `at_ms`, so process start-up is not
  counted): observation, legal actions, encode, send, the bot's decode, choice and encode, receive, validate,
  apply. Both timings are sampled per round trip; the ratio is of the medians (the means are printed too).
- prepared: the same SDK random bots answering requests prepared in advance (every request of seeded random
  games, encoded as the referee encodes them) from a bare ROUTER loop: the floor of any referee that speaks
  this protocol to these bots, since the bots' own work is in it and no referee work is. referee - prepared
  is the referee's own cost per decision.
- pondering: when the referee's bots are frozen while not on move (sandboxed, the default), the same matches
  again with the bots left running (`ponder`): referee - pondering is what freezing costs per decision.
- reuse: the same number of games played three ways: as one match in which every game is a new deal (one
  process per bot serves every game), as one match of duplicate deals, each played once per seat rotation
  (what leagues play: fresh processes for every rotation, so no process sees a deal twice), and as one match
  per game (processes started for every game).

The referee and reuse runs put their bots in the sandbox unless `sandbox=False` (the start of a sandboxed
bot costs more: bwrap, its cgroups and uid); the raw and prepared floors run their peers unsandboxed.
"""

from __future__ import annotations

import contextlib
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zmq

from protocol import codec, limits
from protocol.logs import LOG_FROM, LogReceiver, LogSender
from protocol.sdk import decode_message
from referee import replay
from referee.botspec import resolve_bot, unique_names
from referee.deals import DealKey
from referee.games import list_games, load_game
from referee.isolation import sandbox as sandboxing
from referee.match import run_match
from referee.records import BotSpec, GameSpec, Limits, MatchRecord, MatchSpec
from referee.seating import first_games

_PEER_SILENCE_MS = 30_000
"""How long a bench's ROUTER waits for its peers before giving up (zmq.Again)."""

_ECHO_PEER = """
import sys, zmq
context = zmq.Context()
socket = context.socket(zmq.DEALER)
socket.connect(sys.argv[1])
socket.send(b"ready")
recv, send = socket.recv, socket.send
while (frame := recv()) != b"stop":
    send(frame)
"""


@dataclass(frozen=True)
class WorkPerDecision:
    """In-process CPU microseconds per decision of the work the raw round trip does not do."""

    engine_us: float
    """legal_actions_view (what the referee encodes) + observation + apply."""
    encode_us: float
    """The referee trimming the logs to deltas and packing the request."""
    bot_decode_us: float
    """The bot unpacking it and restoring its logs (what the SDK does with every request)."""


@dataclass(frozen=True)
class Figures:
    """Mean and median of timing samples, in microseconds. On a shared machine the mean carries every
    scheduling delay of other people's work; the median is what the code itself costs."""

    mean_us: float
    median_us: float

    @classmethod
    def of(cls, samples: list[float]) -> Figures:
        return cls(statistics.mean(samples), statistics.median(samples))


@dataclass(frozen=True)
class ProtocolBenchResult:
    game: str
    players: int
    raw: Figures
    referee: Figures
    prepared: Figures
    request_bytes: float
    decisions: int
    games: int
    work: WorkPerDecision
    pondering: Figures | None = None
    """The same matches with bots left running while not on move, when the referee's froze them (sandboxed, no
    ponder): the referee's per decision less this is what freezing costs."""

    @property
    def own_us(self) -> float:
        """The referee's own cost per decision: its median less the prepared floor's."""
        return self.referee.median_us - self.prepared.median_us

    @property
    def freezing_us(self) -> float | None:
        """What freezing adds to the referee per decision (median frozen less median pondering)."""
        return None if self.pondering is None else self.referee.median_us - self.pondering.median_us

    @property
    def decisions_per_game(self) -> float:
        return self.decisions / self.games

    @property
    def ratio(self) -> float:
        return self.referee.median_us / self.raw.median_us

    @property
    def mean_ratio(self) -> float:
        return self.referee.mean_us / self.raw.mean_us

    @property
    def prepared_ratio(self) -> float:
        """The floor of the ratio: the bots' own work over the raw round trip, with no referee work."""
        return self.prepared.median_us / self.raw.median_us


@dataclass(frozen=True)
class ReuseRun:
    """One way of playing the bench's games: how long it took and how many bot processes it started."""

    games: int
    seconds: float
    starts: int

    @property
    def games_per_s(self) -> float:
        return self.games / self.seconds

    @property
    def starts_per_game(self) -> float:
        return self.starts / self.games


@dataclass(frozen=True)
class ReuseBenchResult:
    game: str
    players: int
    games: int
    decisions_per_game: float
    reused: ReuseRun
    """One match, every game a new deal: the bots are started once."""
    rotated: ReuseRun
    """One match of duplicate deals: the bots are started once per seat rotation."""
    restarted: ReuseRun
    """One match per game: the bots are started for every game."""

    @property
    def speedup(self) -> float:
        """Games/s with the processes reused over games/s with processes started for every game."""
        return self.reused.games_per_s / self.restarted.games_per_s

    @property
    def rotation_cost(self) -> float:
        """Games/s with the processes reused over games/s with fresh processes for every rotation: what the
        rule that no process sees a deal twice costs (1.0: nothing)."""
        return self.reused.games_per_s / self.rotated.games_per_s

    @property
    def start_s(self) -> float:
        """What starting and stopping the bots costs per game: the restarted run's extra time per game. The
        speed-up is (start_s + game time) / game time, so short games gain the most."""
        return 1 / self.restarted.games_per_s - 1 / self.reused.games_per_s


def _log_senders(game_name: str, players: int) -> list[LogSender] | None:
    keys = load_game(game_name).info.log_keys
    return [LogSender(keys) for _ in range(players)] if keys else None


def seated_requests(game_name: str, players: int, seed: int, first_id: int = 1) -> list[tuple[int, bytes]]:
    """(seat, request) for every decision of one seeded random game, in order, encoded as the referee sends
    them (logs as deltas, one sender per seat)."""
    state = load_game(game_name).new_game(players, seed=seed)
    senders = _log_senders(game_name, players)
    chooser = random.Random(seed)
    requests: list[tuple[int, bytes]] = []
    while not state.is_over():
        for seat in state.to_move():
            legal = state.legal_actions(seat)
            observation = state.observation(seat)
            log_from = senders[seat].trim(observation) if senders else None
            request_id = first_id + len(requests)
            requests.append((seat, codec.encode_request(request_id, observation, legal, 1000, 0, log_from)))
            state.apply(seat, chooser.choice(legal))
    return requests


def typical_requests(game_name: str, players: int, seed: int) -> list[bytes]:
    """The requests of one seeded random game, in order, encoded as the referee sends them (logs as deltas)."""
    return [frame for _, frame in seated_requests(game_name, players, seed)]


def work_per_decision(game_name: str, players: int, seed: int, games: int = 5) -> WorkPerDecision:
    """Time the engine, the request encoding and its decoding separately, over `games` seeded random games."""
    engine = encode = decode = 0.0
    decisions = 0
    clock = time.perf_counter
    for index in range(games):
        state = load_game(game_name).new_game(players, seed=seed + index)
        senders = _log_senders(game_name, players)
        receivers = [LogReceiver() for _ in range(players)]
        chooser = random.Random(seed + index)
        while not state.is_over():
            for seat in state.to_move():
                started = clock()
                legal = state.legal_actions_view(seat)
                observation = state.observation(seat)
                action = chooser.choice(legal)
                state.apply(seat, action)
                engine += clock() - started
                started = clock()
                log_from = senders[seat].trim(observation) if senders else None
                frame = codec.encode_request(decisions, observation, legal, 1000, 0, log_from)
                encode += clock() - started
                started = clock()
                request = decode_message(frame)
                if log_from is not None:
                    receivers[seat].restore(request["observation"], request[LOG_FROM])
                decode += clock() - started
                decisions += 1
    return WorkPerDecision(engine / decisions * 1e6, encode / decisions * 1e6, decode / decisions * 1e6)


@contextlib.contextmanager
def bench_router(socket_name: str) -> Iterator[tuple[zmq.Socket, str]]:
    """A ROUTER bound to a fresh ipc endpoint (its receives give up after _PEER_SILENCE_MS), and the endpoint."""
    with tempfile.TemporaryDirectory(prefix="referee-bench-") as workdir:
        context = zmq.Context()
        router = context.socket(zmq.ROUTER)
        router.setsockopt(zmq.LINGER, 0)
        router.setsockopt(zmq.RCVTIMEO, _PEER_SILENCE_MS)
        endpoint = f"ipc://{Path(workdir) / socket_name}"
        router.bind(endpoint)
        try:
            yield router, endpoint
        finally:
            router.close(0)
            context.term()


def raw_round_trips_us(requests: list[bytes], round_trips: int) -> list[float]:
    """Microseconds of each ROUTER -> DEALER -> ROUTER round trip of `requests` (cycled) with an echo peer."""
    clock = time.perf_counter
    samples = []
    with bench_router("raw.sock") as (router, endpoint):
        peer = subprocess.Popen([sys.executable, "-c", _ECHO_PEER, endpoint])
        try:
            identity, _ = router.recv_multipart()
            send, recv = router.send_multipart, router.recv_multipart
            for frame in requests[:100]:
                send((identity, frame))
                recv()
            count = len(requests)
            for index in range(round_trips):
                started = clock()
                send((identity, requests[index % count]))
                recv()
                samples.append((clock() - started) * 1e6)
            send((identity, b"stop"))
        finally:
            with contextlib.suppress(subprocess.TimeoutExpired):
                peer.wait(5)
            peer.kill()
            peer.wait()
    return samples


def prepared_round_trips_us(game: str, players: int, games: int, seed: int) -> list[float]:
    """Microseconds of each round trip of requests prepared in advance (`games` seeded random games) from a
    bare ROUTER to SDK random bots, one per seat, each request to its seat's bot: no engine, no encoding, no
    validation, no clock in the loop."""
    script: list[tuple[int, bytes]] = []
    for index in range(games):
        script += seated_requests(game, players, seed + index, first_id=len(script) + 1)
    command = resolve_bot("random", game).command
    clock = time.perf_counter
    samples = []
    with bench_router("prepared.sock") as (router, endpoint):
        bots = [start_sdk_bot(command, endpoint, f"bench-{seat}") for seat in range(players)]
        try:
            identities = welcome_bots(router, players)
            send, recv = router.send_multipart, router.recv_multipart
            for seat, frame in script:
                started = clock()
                send((identities[f"bench-{seat}"], frame))
                recv()
                samples.append((clock() - started) * 1e6)
            for identity in identities.values():
                send((identity, codec.BYE_FRAME))
        finally:
            for bot in bots:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    bot.wait(5)
                bot.kill()
                bot.wait()
    return samples


def start_sdk_bot(command: tuple[str, ...], endpoint: str, token: str) -> subprocess.Popen[bytes]:
    environment = {**os.environ, limits.ENV_ENDPOINT: endpoint, limits.ENV_TOKEN: token}
    return subprocess.Popen(command, env=environment, stdin=subprocess.DEVNULL)


def welcome_bots(router: zmq.Socket, bots: int) -> dict[str, bytes]:
    """Welcome every bot; its token (the seat's name) maps to its connection."""
    welcome = codec.encode(codec.welcome(5000, 0, 10.0))
    identities: dict[str, bytes] = {}
    while len(identities) < bots:
        identity, frame = router.recv_multipart()
        hello = codec.decode_bot_message(frame)
        if not isinstance(hello, codec.Hello):
            raise codec.SchemaError(f"a bench bot's first message must be hello, not {hello!r:.80}")
        identities[hello.token] = identity
        router.send_multipart((identity, welcome))
    return identities


def random_match(
    game: str, players: int, games: int, seed: int, match_id: str, bots: tuple[BotSpec, ...] = (), **extra: Any
) -> MatchSpec:
    """A match of SDK random bots (or `bots`): the first `games` games of the balanced match of the (public)
    seed."""
    bots = bots or unique_names([resolve_bot("random", game) for _ in range(players)])
    extra.setdefault("limits", Limits(move_time_ms=5000))
    return MatchSpec(match_id, game, bots, first_games(players, games, DealKey.from_seed(seed)), **extra)


def referee_decisions_us(
    game: str, players: int, games: int, seed: int, sandbox: bool = True, ponder: bool = False
) -> list[float]:
    """Microseconds of each decision of a match of SDK random bots: the time between two consecutive actions
    being applied (or between the start of the game and its first action), from the games' replays. Sandboxed
    bots are frozen while not on move unless `ponder` (the thaw and freeze of each decision are included)."""
    with tempfile.TemporaryDirectory(prefix="referee-bench-") as replay_dir:
        spec = random_match(
            game, players, games, seed, "bench-protocol", replay_dir=replay_dir, sandbox=sandbox, ponder=ponder
        )
        return decision_samples_us(run_match(spec))


def decision_samples_us(record: MatchRecord) -> list[float]:
    """Microseconds between two consecutive actions applied (or the start of the game and its first action) in
    every game of `record`, from its replays (still on disk)."""
    return [sample for samples in decision_samples_by_bot_us(record).values() for sample in samples]


def decision_samples_by_bot_us(record: MatchRecord, outside_clock: bool = False) -> dict[str, list[float]]:
    """`decision_samples_us`, by the name of the bot whose action ended each interval. With `outside_clock`, each
    bot's answer's interval less its `ms` (its time on the referee's clock, from just before the request is sent
    to the answer taken up): the referee's work outside any bot's clock (fallback actions left out)."""
    samples: dict[str, list[float]] = {}
    for game_record in record.games:
        loaded = replay.load(str(game_record.replay_path))
        names = [seat["bot"] for seat in loaded["seats"]]
        before = 0.0
        for move in loaded["actions"]:
            interval = move["at_ms"] - before
            before = move["at_ms"]
            if outside_clock:
                if move["ms"] is None:
                    continue
                interval -= move["ms"]
            samples.setdefault(names[move["seat"]], []).append(interval * 1000)
    return samples


def bench_protocol(
    game: str = "scout",
    players: int = 4,
    games: int = 20,
    seed: int = 0,
    repeats: int = 3,
    sandbox: bool = True,
    ponder: bool = False,
) -> ProtocolBenchResult:
    """Raw and referee timings, interleaved `repeats` times (the machine's load changes), pooled."""
    requests = typical_requests(game, players, seed)
    raw: list[float] = []
    referee: list[float] = []
    prepared: list[float] = []
    pondering: list[float] = []
    frozen = sandbox and not ponder and sandboxing.probe().cgroups.freezer
    for repeat in range(repeats):
        decisions = referee_decisions_us(game, players, games, seed + repeat, sandbox, ponder)
        referee += decisions
        raw += raw_round_trips_us(requests, len(decisions))
        prepared += prepared_round_trips_us(game, players, games, seed + repeat)
        if frozen:
            pondering += referee_decisions_us(game, players, games, seed + repeat, sandbox, ponder=True)
    return ProtocolBenchResult(
        game=game,
        players=players,
        raw=Figures.of(raw),
        referee=Figures.of(referee),
        prepared=Figures.of(prepared),
        request_bytes=statistics.mean(map(len, requests)),
        decisions=len(referee),
        games=games * repeats,
        work=work_per_decision(game, players, seed),
        pondering=Figures.of(pondering) if frozen else None,
    )


def _timed(specs: list[MatchSpec]) -> tuple[ReuseRun, list[MatchRecord]]:
    started = time.perf_counter()
    records = [run_match(spec) for spec in specs]
    seconds = time.perf_counter() - started
    games = sum(len(record.games) for record in records)
    return ReuseRun(games, seconds, sum(record.bot_starts for record in records)), records


def bench_reuse(
    game: str = "scout", players: int = 4, games: int = 100, seed: int = 0, sandbox: bool = True
) -> ReuseBenchResult:
    """`games` games of random bots with the seatings of a balanced match, played three ways: one match of
    `games` different deals (processes reused), the balanced match itself (each deal once per rotation, fresh
    processes per rotation), and one match per game."""
    rotated = random_match(game, players, games, seed, "bench-rotated", sandbox=sandbox)
    key = DealKey.from_seed(seed)
    distinct = tuple(GameSpec(spec.index, key.deal_seed(spec.index), spec.seating) for spec in rotated.games)
    reused = MatchSpec("bench-reuse", game, rotated.bots, distinct, limits=rotated.limits, sandbox=sandbox)
    reused_run, records = _timed([reused])
    rotated_run, _ = _timed([rotated])
    per_game = [
        MatchSpec(f"bench-restart-{spec.index}", game, rotated.bots, (spec,), limits=rotated.limits, sandbox=sandbox)
        for spec in distinct
    ]
    restarted_run, _ = _timed(per_game)
    decisions = sum(timing.decisions for game_record in records[0].games for timing in game_record.timings)
    return ReuseBenchResult(game, players, games, decisions / games, reused_run, rotated_run, restarted_run)


def reuse_tables(game: str | None = None, players: int | None = None) -> list[tuple[str, int]]:
    """(game, players) for every registered game and player count, or only those asked for."""
    tables = []
    for name in [game] if game else list_games():
        info = load_game(name).info
        counts = range(info.min_players, info.max_players + 1)
        tables += [(name, count) for count in counts if players is None or count == players]
    return tables

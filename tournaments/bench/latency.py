"""Remote seats' clocks behind a slow link (`referee bench remote-latency`): what the lag quota does at a delay.

A delay proxy on loopback (netem is not available on these machines) adds a delay with jitter to every chunk each
way between the referee's CURVE socket and a remote SDK bot that thinks a share of its move time
(tournaments.bench.thinking_bot, connecting directly: protocol.sdk_remote), seated against local random bots.
Matches of one game are played until the remote seat has answered the decisions asked for. Each run reports the
remote seat's faults and forfeited games, what the quota paid, the quota left when a game was forfeited, and the
lag the referee recorded against the round trip the proxy itself says it added (the mean it added each way,
summed), so the comparison does not depend on the machine's load.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from referee.botspec import resolve_bot
from referee.match import run_match
from referee.records import Limits

from .protocol import random_match
from .remote import free_port, remote_bots, remote_transport, seat_keys

REMOTE_NAME = "far"
_STARTUP_S = 30.0


class DelayProxy:
    """A TCP proxy on loopback that holds every chunk `delay_s` plus a uniform jitter of at most `jitter_s` either
    way (never below 0) before passing it on, in order, and keeps what it actually added each way. Its asyncio loop
    runs in a thread of its own (the caller's thread may already run one: Playwright's)."""

    def __init__(self, target_port: int, delay_s: float, jitter_s: float = 0.0, seed: int = 0) -> None:
        self.target_port = target_port
        self.delay_s = delay_s
        self.jitter_s = jitter_s
        self._random = random.Random(seed)
        self.added_s: dict[str, list[float]] = {"up": [], "down": []}
        self.loop = asyncio.new_event_loop()
        listening = threading.Event()
        self.thread = threading.Thread(target=self._serve, args=(listening,), name="delay-proxy", daemon=True)
        self.thread.start()
        if not listening.wait(30):
            raise RuntimeError("the delay proxy did not start")

    def _serve(self, listening: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self._client, "127.0.0.1", 0))
        self.port = int(server.sockets[0].getsockname()[1])
        listening.set()
        self.loop.run_forever()
        pending = asyncio.all_tasks(self.loop)
        for task in pending:
            task.cancel()
        self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        server.close()
        self.loop.close()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.close()
            return
        await asyncio.gather(self._pipe(reader, upstream_writer, "up"), self._pipe(upstream_reader, writer, "down"))

    def _hold_s(self) -> float:
        return max(0.0, self.delay_s + self._random.uniform(-self.jitter_s, self.jitter_s))

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, way: str) -> None:
        """Read chunks as they come; a writer of its own passes each on at its release time, in order."""
        queue: asyncio.Queue[tuple[float, float, bytes]] = asyncio.Queue()
        passing = asyncio.ensure_future(self._pass_on(queue, writer, self.added_s[way]))
        released = 0.0
        with contextlib.suppress(ConnectionError, OSError):
            while chunk := await reader.read(65536):
                arrived = self.loop.time()
                released = max(released, arrived + self._hold_s())
                queue.put_nowait((arrived, released, chunk))
        queue.put_nowait((released, released, b""))
        await passing

    async def _pass_on(
        self, queue: asyncio.Queue[tuple[float, float, bytes]], writer: asyncio.StreamWriter, added: list[float]
    ) -> None:
        """Write each chunk at its release time and keep what was actually added (the loop's own lateness too)."""
        with contextlib.suppress(ConnectionError, OSError):
            while True:
                arrived, released, chunk = await queue.get()
                await asyncio.sleep(max(0.0, released - self.loop.time()))
                if not chunk:
                    break
                writer.write(chunk)
                added.append(self.loop.time() - arrived)
        writer.close()

    def added_round_trip_ms(self) -> float:
        """The mean delay the proxy added each way, summed: what it added to a round trip."""
        return sum(statistics.mean(added) if added else 0.0 for added in self.added_s.values()) * 1000

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


@dataclass(frozen=True)
class LatencySettings:
    delay_ms: float
    """Added each way."""
    share: float
    """Of its move time, the remote bot thinks this much at every decision."""
    jitter_ms: float = 5.0
    move_ms: int = 100
    bank_ms: int = 2000
    quota_ms: int = 60_000
    decisions: int = 100
    """Play one-game matches until the remote seat has answered at least this many decisions."""
    players: int = 4
    seed: int = 0


def bank_120_ms(delay_ms: float) -> int:
    """The time bank of the bot thinking 120% of its move time: 1 s behind a delay (the quota must run out first),
    200 ms without one, so that at 20 ms past its move time a decision its bank runs out within any game."""
    return 1000 if delay_ms > 0 else 200


@dataclass(frozen=True)
class LatencyRun:
    settings: LatencySettings
    decisions: int
    """Answered by the remote bot (not by the fallback)."""
    games: int
    forfeited_games: int
    fault_causes: tuple[str, ...]
    """The remote seat's faults, by cause."""
    credit_ms: float
    """What the quota paid over all the games."""
    quota_left_at_faults_ms: tuple[float, ...]
    """For each game where the remote seat faulted: its quota left just before its first fault."""
    lags_ms: tuple[float, ...]
    """The lag the referee recorded at each decision."""
    added_round_trip_ms: float
    """What the proxy says it added to a round trip (its mean added delay each way, summed)."""

    @property
    def lag_median_ms(self) -> float:
        return statistics.median(self.lags_ms) if self.lags_ms else 0.0

    @property
    def lag_error_ms(self) -> float:
        """The recorded lag (median over the decisions) less what the proxy added."""
        return self.lag_median_ms - self.added_round_trip_ms

    @property
    def worst_lag_error_ms(self) -> float:
        """The largest difference, either way, between a decision's recorded lag and what the proxy added."""
        return max((abs(lag - self.added_round_trip_ms) for lag in self.lags_ms), default=0.0)


@dataclass
class _Tally:
    decisions: int = 0
    games: int = 0
    forfeited: int = 0
    credit_ms: float = 0.0

    def __post_init__(self) -> None:
        self.causes: list[str] = []
        self.quota_left: list[float] = []
        self.lags: list[float] = []

    def add(self, replay: dict[str, Any], quota_ms: int) -> None:
        seat = [entry["bot"] for entry in replay["seats"]].index(REMOTE_NAME)
        faults = [fault for fault in replay["faults"] if fault["seat"] == seat]
        first_fault = faults[0]["before_action"] if faults else None
        answered = [a for a in replay["actions"] if a["seat"] == seat and a["by"] == "bot"]
        self.games += 1
        self.forfeited += bool(replay["forfeited"][seat])
        self.decisions += len(answered)
        self.credit_ms += sum(action["credit_ms"] for action in answered)
        self.lags += [action["lag_ms"] for action in answered]
        self.causes += [fault["cause"] for fault in faults]
        if first_fault is not None:
            before = [a for a in replay["actions"][:first_fault] if a["seat"] == seat and a["by"] == "bot"]
            self.quota_left.append(quota_ms - sum(action["credit_ms"] for action in before))


def _one_game(settings: LatencySettings, folder: Path, game_seed: int, tally: _Tally) -> float:
    """One match of one game through a fresh proxy; what the proxy added to a round trip."""
    port = free_port()
    proxy = DelayProxy(port, settings.delay_ms / 1000, settings.jitter_ms / 1000, game_seed)
    bots = (resolve_bot(f"remote:{REMOTE_NAME}", "scout"),) + tuple(
        resolve_bot("random", "scout") for _ in range(settings.players - 1)
    )
    limits = Limits(move_time_ms=settings.move_ms, time_bank_ms=settings.bank_ms, startup_time_s=_STARTUP_S)
    command = (sys.executable, "-m", "tournaments.bench.thinking_bot", str(settings.share))
    try:
        with tempfile.TemporaryDirectory(prefix="referee-latency-") as replay_dir:
            spec = random_match(
                "scout",
                settings.players,
                1,
                game_seed,
                "latency",
                bots,
                replay_dir=replay_dir,
                limits=limits,
                sandbox=False,
            )
            transport = remote_transport(folder, f"tcp://127.0.0.1:{port}", [REMOTE_NAME], settings.quota_ms)
            with remote_bots(command, folder, [REMOTE_NAME], f"tcp://127.0.0.1:{proxy.port}"):
                record = run_match(spec, transport=transport)
            for game in record.games:
                tally.add(json.loads(Path(str(game.replay_path)).read_text()), settings.quota_ms)
        return proxy.added_round_trip_ms()
    finally:
        proxy.close()


def latency_run(settings: LatencySettings) -> LatencyRun:
    """Play one-game matches behind the proxy until the remote seat has answered `settings.decisions`."""
    tally = _Tally()
    added: list[float] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="referee-latency-keys-") as keys:
        folder = seat_keys(Path(keys), [REMOTE_NAME])
        while tally.decisions < settings.decisions:
            added.append(_one_game(settings, folder, settings.seed + tally.games, tally))
            if tally.games >= 50 or time.monotonic() - started > 600:
                break
    return LatencyRun(
        settings,
        tally.decisions,
        tally.games,
        tally.forfeited,
        tuple(tally.causes),
        tally.credit_ms,
        tuple(tally.quota_left),
        tuple(tally.lags),
        statistics.mean(added),
    )


def latency_runs(settings: Sequence[LatencySettings], parallel: bool = True) -> list[LatencyRun]:
    """Each run of `settings`, side by side in processes of their own where `parallel` (the runs mostly wait on
    their clocks and the proxy), in order."""
    if not parallel:
        return [latency_run(one) for one in settings]
    with ProcessPoolExecutor(max_workers=len(settings), mp_context=get_context("spawn")) as pool:
        return list(pool.map(latency_run, settings))

"""The class ladder under a class's load: `referee serve -j N` as a real process on SQLite, students submitting
through the HTTP API within a minute, and what they and the lecturer would see.

Measured: every verdict (all must come back), the time from a submission to its first rated game (median, p95),
the latency of /api/table polled by a thread of its own while all this goes on (p95), and the games per hour per
worker core once every verdict is in. Then, on the same machine, `referee tournament run`'s way of playing
(tournaments.bench.league) plays an equivalent league (the same bots, seats and deals per match, as many matches)
with as many workers: the ratio of the two rates is what the server costs (its web app, database and queue).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from protocol.errors import EnvironmentProblem
from tournaments.ladder import init_ladder, open_ladder
from tournaments.server.client import LadderClient, ServerRefused, ServerUnreachable

from .league import bench_league

BASELINES = ("heuristic", "random")
SUBMIT_WINDOW_S = 60.0
"""Students submit at evenly spaced moments within this (or within half the run, when that is shorter)."""
GRACE_S = 180.0
"""After the run, how long the bench still waits for verdicts and first games before it reports them missing."""
TABLE_POLL_S = 0.5
STUDENT_POLL_S = 2.0
BROKEN_EVERY = 5
"""Every fifth student (the third, the eighth, ...) submits a bot that raises before its hello."""

GOOD_BOT = """import random

from protocol.sdk import run_bot

choices = random.Random({seed})

if __name__ == "__main__":
    raise SystemExit(run_bot(lambda observation, legal_actions: choices.choice(legal_actions), name="{name}"))
"""
BROKEN_BOT = """from pathlib import Path

from protocol.sdk import run_bot

weights = Path("weights-{seed}.bin").read_bytes()

if __name__ == "__main__":
    raise SystemExit(run_bot(lambda observation, legal_actions: legal_actions[0], name="{name}"))
"""


@dataclass(frozen=True)
class StudentRun:
    name: str
    submitted: float
    """Seconds from the bench's start."""
    verdict: str | None
    """accepted or refused; None: none came back in time."""
    verdict_s: float | None
    """When the verdict came back, in seconds from the bench's start."""
    first_game_s: float | None
    """From the submission to the first rated game the student's version sat in; None: none (yet)."""


@dataclass(frozen=True)
class LadderBenchResult:
    students: tuple[StudentRun, ...]
    table_ms: tuple[float, ...]
    """Each /api/table poll's latency."""
    workers: int
    games: int
    """Rated games stored in the measured window (from every verdict in to the end of the run)."""
    window_s: float
    league_games: int
    league_s: float
    load_average: tuple[float, float, float]

    @property
    def verdicts(self) -> int:
        return sum(1 for student in self.students if student.verdict is not None)

    def count(self, verdict: str) -> int:
        return sum(1 for student in self.students if student.verdict == verdict)

    @property
    def first_games(self) -> list[float]:
        return sorted(s.first_game_s for s in self.students if s.first_game_s is not None)

    @property
    def ladder_rate(self) -> float:
        """Games per hour per worker core on the ladder."""
        return self.games / self.window_s * 3600 / self.workers if self.window_s > 0 else 0.0

    @property
    def league_rate(self) -> float:
        return self.league_games / self.league_s * 3600 / self.workers if self.league_s > 0 else 0.0

    @property
    def server_cost(self) -> float:
        """The share of the league's rate the ladder loses (0.05: 5 % fewer games per core-hour)."""
        return 1 - self.ladder_rate / self.league_rate if self.league_rate > 0 else 1.0


def percentile(values: list[float], share: float) -> float | None:
    """The nearest-rank percentile of `values` (None when there are none)."""
    if not values:
        return None
    ranked = sorted(values)
    return ranked[min(len(ranked) - 1, max(0, round(share * len(ranked)) - 1))]


def bench_ladder(students: int = 30, minutes: float = 5.0, workers: int = 2) -> LadderBenchResult:
    """A ladder in a temporary folder, served by `referee serve -j workers`; `students` submit, the ladder plays
    for `minutes` from the first submission; then the equivalent league."""
    with tempfile.TemporaryDirectory(prefix="bench-ladder-") as scratch:
        root = Path(scratch)
        created = init_ladder(root / "ladder", "scout", 3, list(BASELINES), seed=31)
        names = [f"student{index:03d}" for index in range(students)]
        with open_ladder(created.folder) as ladder:
            tokens = ladder.invite(names)
        folders = {name: _bot_folder(root / "bots", name, index) for index, name in enumerate(names)}
        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        server = _serve(created.folder, port, workers, root / "serve.log")
        try:
            _wait_for_health(url, server, root / "serve.log")
            run = _LadderRun(url, tokens, folders, minutes * 60)
            played = run.play()
        finally:
            _stop(server)
        accepted = [folders[s.name] for s in played.students if s.verdict == "accepted"]
        deals, per_match = _deals_per_match(created.folder)
        matches = max(2, round(played.games / per_match))
        league = _league_file(root / "league", accepted, deals, matches)
        league_run = bench_league(league, (workers,)).runs[0]
    return LadderBenchResult(
        played.students,
        played.table_ms,
        workers,
        played.games,
        played.window_s,
        league_run.games,
        league_run.seconds,
        os.getloadavg(),
    )


@dataclass(frozen=True)
class _Played:
    students: tuple[StudentRun, ...]
    table_ms: tuple[float, ...]
    games: int
    window_s: float


class _LadderRun:
    """The students' threads and the table's poller against one served ladder."""

    def __init__(self, url: str, tokens: dict[str, str], folders: dict[str, Path], seconds: float) -> None:
        self.url, self.tokens, self.folders, self.seconds = url, tokens, folders, seconds
        self.started = time.monotonic()
        self.started_at = datetime.now(UTC)
        self.done = threading.Event()
        self.table_ms: list[float] = []
        self.games: list[tuple[float, int]] = []
        self.results: dict[str, StudentRun] = {}

    def play(self) -> _Played:
        window = min(SUBMIT_WINDOW_S, self.seconds / 2)
        spacing = window / max(1, len(self.tokens))
        threads = [
            threading.Thread(target=self._student, args=(name, index * spacing), daemon=True)
            for index, name in enumerate(self.tokens)
        ]
        poller = threading.Thread(target=self._poll_table, daemon=True)
        poller.start()
        for thread in threads:
            thread.start()
        deadline = self.started + self.seconds
        while time.monotonic() < deadline:
            time.sleep(0.5)
        for thread in threads:
            thread.join(timeout=max(1.0, deadline + GRACE_S - time.monotonic()))
        self.done.set()
        poller.join(timeout=60)
        students = tuple(
            self.results.get(name, StudentRun(name, float("nan"), None, None, None)) for name in self.tokens
        )
        games, window_s = self._window(students)
        return _Played(students, tuple(self.table_ms), games, window_s)

    def _elapsed(self) -> float:
        return time.monotonic() - self.started

    def _student(self, name: str, at: float) -> None:
        """One student: submit at `at`, follow the version to its verdict and first game; a submission the server
        refuses, or a server gone, leaves the student without a verdict (the report counts it missing)."""
        time.sleep(max(0.0, at - self._elapsed()))
        submitted = self._elapsed()
        try:
            self._follow(name, submitted)
        except (ServerRefused, ServerUnreachable):
            self.results.setdefault(name, StudentRun(name, submitted, None, None, None))

    def _follow(self, name: str, submitted: float) -> None:
        client = LadderClient(self.url, self.tokens[name])
        submitted_at = datetime.now(UTC)
        version = _retrying(lambda: client.submit(self.folders[name]))
        verdict = None
        first = None
        give_up = self.seconds + GRACE_S
        while verdict is None and self._elapsed() < give_up:
            status = _retrying(lambda: client.version(version["id"]))["version"]["status"]
            verdict = status if status != "checking" else None
            if verdict is None:
                time.sleep(STUDENT_POLL_S)
        verdict_s = self._elapsed() if verdict is not None else None
        while verdict == "accepted" and first is None and self._elapsed() < give_up:
            games = _retrying(lambda: client.request("GET", f"/api/students/{name}/games").json())
            if games:
                stored = min(datetime.fromisoformat(game["stored"]) for game in games)
                first = max(0.0, (stored - submitted_at).total_seconds())
            else:
                time.sleep(STUDENT_POLL_S)
        self.results[name] = StudentRun(name, submitted, verdict, verdict_s, first)

    def _poll_table(self) -> None:
        client = LadderClient(self.url, None)
        while not self.done.is_set():
            began = time.perf_counter()
            try:
                table = client.request("GET", "/api/table").json()
            except (ServerRefused, ServerUnreachable):
                table = None
            if table is not None:
                self.table_ms.append((time.perf_counter() - began) * 1000)
                self.games.append((self._elapsed(), int(table["games"])))
            self.done.wait(TABLE_POLL_S)

    def _window(self, students: tuple[StudentRun, ...]) -> tuple[int, float]:
        """Games stored from the moment every verdict was in (the checks done, the workers only playing) to the
        last poll; the whole run when that moment never came or no game was stored after it (a short run)."""
        answered = [s.verdict_s for s in students if s.verdict_s is not None]
        begin = max(answered) if len(answered) == len(students) else 0.0
        inside = [(at, games) for at, games in self.games if at >= begin]
        inside = inside if len(inside) >= 2 and inside[-1][1] > inside[0][1] else self.games
        if len(inside) < 2:
            return 0, 0.0
        return inside[-1][1] - inside[0][1], inside[-1][0] - inside[0][0]


def _retrying(call: Callable[[], Any], attempts: int = 5) -> Any:
    """`call`, tried again after a pause when the server is briefly unreachable (it is under load)."""
    for attempt in range(attempts):
        try:
            return call()
        except ServerUnreachable:
            if attempt == attempts - 1:
                raise
            time.sleep(1 + attempt)
    raise AssertionError("unreachable")


def _bot_folder(root: Path, name: str, index: int) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    template = BROKEN_BOT if index % BROKEN_EVERY == 2 else GOOD_BOT
    (folder / "bot.py").write_text(template.format(seed=index, name=name))
    return folder


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _serve(folder: Path, port: int, workers: int, log: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-c", "from tournaments.cli import main; main()", "serve", str(folder)]
    with log.open("ab") as out:
        return subprocess.Popen(
            [*command, "--port", str(port), "-j", str(workers)],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _wait_for_health(url: str, server: subprocess.Popen[bytes], log: Path, bound_s: float = 120.0) -> None:
    client = LadderClient(url, None, timeout=5)
    until = time.monotonic() + bound_s
    while time.monotonic() < until:
        if server.poll() is not None:
            raise EnvironmentProblem(f"`referee serve` ended: {log.read_text(errors='replace')[-2000:]}")
        try:
            client.health()
            return
        except (ServerUnreachable, ServerRefused, OSError):
            time.sleep(0.25)
    raise EnvironmentProblem(f"`referee serve` did not answer /api/health within {bound_s:.0f} s")


def _stop(server: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the server's process group (its local workers too), SIGKILL if it lingers."""
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=60)


def _deals_per_match(folder: Path) -> tuple[int, int]:
    """The ladder's deals per match and games per match."""
    with open_ladder(folder) as ladder:
        league = ladder.file.league
        return league.deals_per_match, league.games_per_match


def _league_file(folder: Path, bots: list[Path], deals: int, matches: int) -> Path:
    """The league `referee tournament run` would play with the ladder's accepted bots (copied, one folder each,
    as a class's submissions) and baselines: same game, seats and deals per match; `matches` tables sampled from
    the round robin."""
    for bot in bots:
        shutil.copytree(bot, folder / "bots" / bot.name)
    lines = ['game = "scout"', "players = 3", "seed = 31", f"deals_per_match = {deals}", f"max_tables = {matches}"]
    lines += ["", "[[bots]]", 'each = "bots/*"', ""]
    for baseline in BASELINES:
        lines += ["[[bots]]", f'name = "{baseline}"', f'command = "{baseline}"', "baseline = true", ""]
    path = folder / "league.toml"
    path.write_text("\n".join(lines))
    return path


def report(result: LadderBenchResult) -> dict[str, Any]:
    """The result as plain numbers (JSON-ready)."""
    first = result.first_games

    def rounded(value: float | None, digits: int = 1) -> float | None:
        return None if value is None else round(value, digits)

    return {
        "students": len(result.students),
        "verdicts": result.verdicts,
        "accepted": result.count("accepted"),
        "refused": result.count("refused"),
        "first_game_s": {
            "placed": len(first),
            "median": rounded(statistics.median(first) if first else None),
            "p95": rounded(percentile(first, 0.95)),
        },
        "table_ms": {"polls": len(result.table_ms), "p95": rounded(percentile(list(result.table_ms), 0.95))},
        "workers": result.workers,
        "ladder": {
            "games": result.games,
            "seconds": round(result.window_s, 1),
            "per_core_hour": round(result.ladder_rate),
        },
        "league": {
            "games": result.league_games,
            "seconds": round(result.league_s, 1),
            "per_core_hour": round(result.league_rate),
        },
        "server_cost": round(result.server_cost, 3),
        "load_average": [round(load, 2) for load in result.load_average],
    }

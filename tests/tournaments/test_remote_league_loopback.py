"""A league with a remote seat, for real, on loopback: `referee tournament run` and `referee connect` as
subprocesses. Its 4-seat SCOUT games are stored with isolation remote and the remote seat's lag figures; a run
stopped mid-match and run again holds what a clean run holds, no game twice; a remote bot whose author never
connects forfeits with the startup fault."""

from __future__ import annotations

import json
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from protocol.curve_keys import new_key_pair

CLI = [sys.executable, "-c", "from tournaments.cli import main; main()"]
LIMIT_S = 300


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _league(folder: Path, port: int, startup_s: float = 10.0) -> Path:
    """4-seat SCOUT: three local bots and alice, remote; one table, 24 games."""
    folder.mkdir(parents=True, exist_ok=True)
    new_key_pair("referee", folder / "keys")
    new_key_pair("alice", folder / "alice")
    (folder / "keys" / "alice.key").write_bytes((folder / "alice" / "alice.key").read_bytes())
    bots = [("r1", "random"), ("r2", "random"), ("h1", "heuristic"), ("alice", "remote:alice")]
    text = "\n".join(
        [
            'game = "scout"',
            "players = 4",
            "seed = 3",
            "[limits]",
            f"startup_time_s = {startup_s}",
            "[remote]",
            f'listen = "tcp://127.0.0.1:{port}"',
            'keys = "keys"',
            *(f'[[bots]]\nname = "{name}"\ncommand = "{command}"' for name, command in bots),
        ]
    )
    path = folder / "league.toml"
    path.write_text(text + "\n")
    return path


class ConnectLoop:
    """alice's author: `referee connect` again each time it ends (it ends with each match), until stopped."""

    def __init__(self, folder: Path, port: int) -> None:
        self.command = self.command_for(folder, port)
        self.stopped = threading.Event()
        self.process: subprocess.Popen[bytes] | None = None
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    @staticmethod
    def command_for(folder: Path, port: int) -> list[str]:
        return [
            *CLI,
            "connect",
            f"tcp://127.0.0.1:{port}",
            "--key",
            str(folder / "alice" / "alice.key_secret"),
            "--server-key",
            str(folder / "keys" / "referee.key"),
            "--wait",
            "30",
            "--",
            "random",
        ]

    def _loop(self) -> None:
        while not self.stopped.is_set():
            self.process = subprocess.Popen(self.command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if self.stopped.is_set():
                self.process.kill()
            self.process.wait()

    def stop(self) -> None:
        self.stopped.set()
        if self.process is not None:
            self.process.kill()
        self.thread.join(LIMIT_S)


@pytest.fixture
def authors() -> Iterator[list[ConnectLoop]]:
    loops: list[ConnectLoop] = []
    yield loops
    for loop in loops:
        loop.stop()


def _run(league: Path, *options: str) -> subprocess.Popen[str]:
    command = [*CLI, "tournament", "run", str(league), "--no-sandbox", "-j", "2", "--bootstrap", "0", *options]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(process: subprocess.Popen[str]) -> tuple[str, str]:
    try:
        return process.communicate(timeout=LIMIT_S)
    finally:
        process.kill()


def _games(store: Path) -> list[tuple[str, int, str, tuple[str, ...]]]:
    """(match, game, isolation, the bots in seat order) of every stored game."""
    with sqlite3.connect(store) as db:
        rows = db.execute(
            "SELECT g.match_id, g.game_index, g.isolation, group_concat(s.bot, ' ') FROM games g "
            "JOIN (SELECT * FROM seats ORDER BY seat) s USING (match_id, game_index) "
            "GROUP BY g.match_id, g.game_index ORDER BY g.match_id, g.game_index"
        ).fetchall()
    return [(match, index, isolation, tuple(bots.split())) for match, index, isolation, bots in rows]


def _remote_rows(store: Path) -> list[tuple[str, int, str, int, float, float]]:
    with sqlite3.connect(store) as db:
        return db.execute(
            "SELECT r.match_id, r.game_index, s.bot, r.decisions, r.max_lag_ms, r.quota_left_ms "
            "FROM remote_timings r JOIN seats s USING (match_id, game_index, seat) ORDER BY 1, 2"
        ).fetchall()


def _stored_count(store: Path) -> int:
    if not store.exists():
        return 0
    try:
        with sqlite3.connect(store, timeout=10) as db:
            return int(db.execute("SELECT COUNT(*) FROM games").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The store of a clean run (alice connected throughout)."""
    folder = tmp_path_factory.mktemp("clean")
    port = _free_port()
    league = _league(folder, port)
    author = ConnectLoop(folder, port)
    try:
        yield _clean_run(league)
    finally:
        author.stop()


def _clean_run(league: Path) -> Path:
    out, err = _finish(_run(league, "--json"))
    document = json.loads(out)
    assert document["games"] == 24, err
    assert "1 match(es) with a remote seat are played first" in err
    assert document["isolation_games"]["remote"] == 24
    assert document["remote_seats"]["alice"]["games"] == 24
    assert document["remote_seats"]["alice"]["decisions"] > 0
    return league.with_suffix(".sqlite")


def test_a_league_with_a_remote_seat_stores_its_games_as_remote_with_lag(clean: Path) -> None:
    store = clean
    games = _games(store)
    assert len(games) == 24 and {isolation for _, _, isolation, _ in games} == {"remote"}
    assert all("alice" in seats and len(seats) == 4 for _, _, _, seats in games)
    rows = _remote_rows(store)
    assert [(match, index) for match, index, *_ in rows] == [(match, index) for match, index, *_ in games]
    assert {bot for _, _, bot, *_ in rows} == {"alice"}
    assert all(decisions > 0 and max_lag > 0 and 0 <= left <= 1000 for *_, decisions, max_lag, left in rows)
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT COUNT(*) FROM faults").fetchone() == (0,)


def test_a_stopped_league_with_a_remote_seat_resumes_to_what_a_clean_run_holds(
    tmp_path: Path, authors: list[ConnectLoop], clean: Path
) -> None:
    folder = tmp_path / "stopped"
    port = _free_port()
    league = _league(folder, port)
    authors.append(ConnectLoop(folder, port))
    store = folder / "league.sqlite"
    first = _run(league)
    deadline = time.monotonic() + LIMIT_S
    while _stored_count(store) < 4 and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    first.send_signal(signal.SIGINT)
    _, err = _finish(first)
    assert first.returncode == 130, err
    kept = _stored_count(store)
    assert 4 <= kept < 24, err
    out, err = _finish(_run(league))
    assert f"24 games scheduled, {kept} already in" in err
    assert f"Played {24 - kept} games" in err
    assert _games(store) == _games(clean)
    assert len(_remote_rows(store)) == 24


def test_a_remote_bot_whose_author_is_not_there_forfeits_with_the_startup_fault(tmp_path: Path) -> None:
    league = _league(tmp_path, _free_port(), startup_s=1.0)
    out, err = _finish(_run(league, "--json"))
    assert json.loads(out)["games"] == 24, err
    with sqlite3.connect(tmp_path / "league.sqlite") as db:
        faults = db.execute("SELECT bot, cause, COUNT(*) FROM faults GROUP BY bot, cause").fetchall()
        forfeits = db.execute("SELECT bot, SUM(forfeited) FROM seats GROUP BY bot ORDER BY bot").fetchall()
    assert faults == [("alice", "startup-timeout", 24)]
    assert dict(forfeits) == {"alice": 24, "h1": 0, "r1": 0, "r2": 0}


def test_play_json_gives_each_remote_seats_lag_figures(tmp_path: Path) -> None:
    port = _free_port()
    _league(tmp_path, port)
    author = subprocess.Popen(
        ConnectLoop.command_for(tmp_path, port), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        play = subprocess.Popen(
            [
                *CLI,
                "play",
                "scout",
                "remote:alice",
                "random",
                "random",
                "-n",
                "3",
                "--listen",
                f"tcp://127.0.0.1:{port}",
                "--keys",
                str(tmp_path / "keys"),
                "--no-sandbox",
                "--json",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        out, err = _finish(play)
    finally:
        author.kill()
        author.wait()
    games = json.loads(out)["games"]
    assert len(games) == 3, err
    for game in games:
        assert game["isolation"] == "remote" and len(game["remote"]) == 3
        seat = game["seats"].index("alice")
        figures = game["remote"][seat]
        assert figures["decisions"] == game["timing"][seat]["decisions"] > 0
        assert 0 < figures["median_lag_ms"] <= figures["max_lag_ms"]
        assert figures["credit_ms"] >= 0 and figures["quota_left_ms"] == pytest.approx(
            1000 - figures["credit_ms"], abs=0.002
        )
        assert [entry for index, entry in enumerate(game["remote"]) if index != seat] == [None, None]

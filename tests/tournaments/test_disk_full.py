"""A disk that fills up: a league whose store or replays are on it stops with exit 1 and a one-line message
that says the disk is full (nothing else on stderr but its progress: no traceback from its workers either),
keeps every game committed before (the store opens, and each stored game is whole, with its replay), and
leaves no bot running; a bot whose log fills the disk plays on. Each test fills a 2 MB tmpfs of its own (the
`small_disk` fixture)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from referee.isolation.process import read_process
from tournaments.cli import main
from tournaments.league.store import LeagueStore

pytestmark = pytest.mark.timeout(240)

FIXTURE_BOTS = Path(__file__).resolve().parents[1] / "fixtures" / "bots"
LEAGUE = """game = "scauver"
players = 2
seed = 2
deals_per_match = {deals}
{directories}

[[bots]]
name = "random-a"
command = "random"

[[bots]]
name = "random-b"
command = "random"

[[bots]]
name = "sleeper"
command = "{sleeper}"
"""
SLEEPER = FIXTURE_BOTS / "forks_sleeper.py"
"""Plays randomly and forks a child that sleeps forever: both record their pids, which must be gone after."""


def _league(directory: Path, deals: int, directories: str = "") -> Path:
    path = directory / "league.toml"
    path.write_text(LEAGUE.format(deals=deals, directories=directories, sleeper=SLEEPER))
    return path


def _run(pid_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`referee tournament run` in a process of its own, so that what its worker processes print is seen too;
    the fixture bots record their pids in `pid_dir` (so unsandboxed: the sandbox would hide it from them)."""
    command = [sys.executable, "-c", "from tournaments.cli import main; main()", "tournament", "run", *args]
    return subprocess.run(
        [*command, "--bootstrap", "0", "--no-sandbox"],
        capture_output=True,
        text=True,
        timeout=200,
        check=False,
        env={**os.environ, "FIXTURE_PID_DIR": str(pid_dir)},
    )


def _check_no_bot_left(pid_dir: Path, sleeper_played: bool = True) -> None:
    """No process the bots recorded runs; `sleeper_played`: the sleeper must have recorded its pids."""
    pids = [int(path.read_text()) for path in pid_dir.glob("*.pid")]
    assert pids or not sleeper_played, "the sleeper recorded no pid"
    assert not [pid for pid in pids if (process := read_process(pid)) is not None and process.state != "Z"]


def _check_stopped_with_one_line(result: subprocess.CompletedProcess[str], *words: str) -> str:
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr and "Exception ignored" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.replace("\r", "\n").splitlines() if line.strip()]
    error = lines[-1]
    assert error.startswith("Error:") and not [line for line in lines[:-1] if line.startswith("Error")], lines
    for word in words:
        assert word in error, error
    assert "rerun to resume" in error
    return error


def _check_whole_games(store_path: Path, players: int = 2) -> int:
    """Every game in the store has all its seats and timings; returns how many there are."""
    with LeagueStore(store_path, create=False) as store:
        count = store.game_count()
        assert len(store.games()) == count
    db = sqlite3.connect(store_path)
    try:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        for table in ("seats", "timings"):
            rows = db.execute(f"SELECT match_id, game_index, COUNT(*) FROM {table} GROUP BY match_id, game_index")
            per_game = {(match_id, index): seats for match_id, index, seats in rows}
            assert len(per_game) == count and set(per_game.values()) == {players}, table
        return count
    finally:
        db.close()


def test_a_full_replay_disk_stops_the_league_keeping_every_stored_game(small_disk, tmp_path: Path) -> None:
    league = _league(small_disk.path, deals=40, directories='replay_dir = "replays"')
    store = tmp_path / "league.sqlite"
    result = _run(tmp_path, str(league), "-j", "1", "--db", str(store))
    _check_stopped_with_one_line(result, "No space left on device", "the disk is full", "replays")
    stored = _check_whole_games(store)
    assert stored > 0
    replays = sorted((small_disk.path / "replays").iterdir())
    assert all(path.suffix == ".json" for path in replays), "a partial replay was left behind"
    db = sqlite3.connect(store)
    try:
        paths = [Path(path) for (path,) in db.execute("SELECT replay_path FROM games")]
    finally:
        db.close()
    assert len(paths) == stored and all(path.is_file() for path in paths)
    assert all(json.loads(path.read_text())["format"] == "card-referee-replay" for path in paths)
    _check_no_bot_left(tmp_path, sleeper_played=False)  # the disk may fill before the sleeper's first match


def test_a_full_store_disk_stops_the_league_keeping_every_committed_game(small_disk, tmp_path: Path) -> None:
    league = _league(small_disk.path, deals=400)
    small_disk.fill(leave_bytes=512 * 1024)
    result = _run(tmp_path, str(league), "-j", "2")
    _check_stopped_with_one_line(result, "database or disk is full", "free space on its disk")
    assert _check_whole_games(league.with_suffix(".sqlite")) > 0
    _check_no_bot_left(tmp_path)


def test_a_bot_whose_log_fills_the_disk_plays_on(small_disk, caplog: pytest.LogCaptureFixture) -> None:
    """loud_stderr prints 8 MB (the default log cap is 1 MB per game... per bot: more than this disk holds
    with the filler); its log stops at the full disk, and the match is played to its end, without a fault."""
    small_disk.fill(leave_bytes=256 * 1024)
    result = CliRunner().invoke(
        main,
        [
            "play",
            "scauver",
            str(FIXTURE_BOTS / "loud_stderr.py"),
            "random",
            "--games=2",
            "--move-time=5000",
            "--log-dir",
            str(small_disk.path),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    games = json.loads(result.stdout)["games"]
    assert len(games) == 2 and all(game["faults"] == [] for game in games)
    assert all(timing["decisions"] > 0 for game in games for timing in game["timing"])
    logs = [path for path in small_disk.path.glob("*.log") if path.stat().st_size > 0]
    assert logs and sum(path.stat().st_size for path in logs) <= 256 * 1024
    assert "stopped writing the bot log" in caplog.text and "No space left on device" in caplog.text


def test_referee_play_with_a_full_replay_disk_says_so(small_disk) -> None:
    small_disk.fill(leave_bytes=0)
    result = CliRunner().invoke(
        main, ["play", "scauver", "random", "random", "--games=2", "--replay-dir", str(small_disk.path / "replays")]
    )
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    (error,) = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert "cannot write replay" in error and "the disk is full" in error and "stopped after 0 of 2" in error

"""The README's main job, as a new user runs it: the example leagues of the built-in bots on both games, in a
subprocess, then their stored tables: every scheduled game played, and every heuristic bot rated above every
random bot with 95% intervals that do not overlap."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tournaments.league.league_file import load_league

EXAMPLES = Path(__file__).resolve().parents[2] / "tournaments" / "examples"
DEMO_LEAGUES = ("scout-4.toml", "scauver-2.toml")


def _referee(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", "from tournaments.cli import main; main()", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("demo")
    for name in DEMO_LEAGUES:
        shutil.copy(EXAMPLES / name, folder / name)
    run = _referee("tournament", "run", *DEMO_LEAGUES, cwd=folder)
    assert run.returncode == 0, run.stderr
    assert "Elo" in run.stdout
    return folder


@pytest.mark.parametrize("league", DEMO_LEAGUES)
def test_heuristics_rank_above_random_with_separate_intervals(played: Path, league: str) -> None:
    table = _referee("tournament", "table", league, "--json", cwd=played)
    assert table.returncode == 0, table.stderr
    ratings = json.loads(table.stdout)["ratings"]
    heuristics = [row for row in ratings if row["bot"].startswith("heuristic")]
    randoms = [row for row in ratings if row["bot"].startswith("random")]
    assert heuristics and randoms
    weakest_heuristic = min(row["ci95"][0] for row in heuristics)
    strongest_random = max(row["ci95"][1] for row in randoms)
    assert weakest_heuristic > strongest_random, ratings
    assert max(row["rank"] for row in heuristics) < min(row["rank"] for row in randoms)


def test_a_rerun_finds_every_game_stored(played: Path) -> None:
    rerun = _referee("tournament", "run", *DEMO_LEAGUES, cwd=played)
    assert rerun.returncode == 0, rerun.stderr
    for league in DEMO_LEAGUES:
        stem = league.removesuffix(".toml")
        assert f"{stem}: " in rerun.stdout + rerun.stderr
    scheduled = [line for line in (rerun.stdout + rerun.stderr).splitlines() if "games scheduled" in line]
    assert len(scheduled) == len(DEMO_LEAGUES)
    for line in scheduled:
        count = line.split("; ")[1].split(" games scheduled")[0]
        assert f"{count} already in" in line, line


@pytest.mark.parametrize("league", sorted(path.name for path in EXAMPLES.glob("*.toml")))
def test_every_example_league_file_loads_and_resolves_its_bots(league: str) -> None:
    """The files the README and bots/README.md tell people to run: each is a valid, balanced league whose bots
    are all built in (no file may name a bot the game has none of)."""
    loaded = load_league(EXAMPLES / league)
    assert len(loaded.bots) >= loaded.players
    for bot in loaded.bots:
        assert bot.spec.command, bot

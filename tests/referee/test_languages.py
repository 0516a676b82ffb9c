"""Real matches through `referee play` between bot programs in Python, C and Node.js, for both games.

Every bot must answer every request itself (no fault, no fallback), over ipc and tcp, and every game's
replay must re-simulate exactly. The C bot is built by its Makefile and the JS bot needs `npm ci --prefix
bots/js`; both are set up by .ci/run, so in CI these tests run rather than skip.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from tournaments.cli import main

GAMES_OPTIONS = {"scout": [], "scauver": ["-o", "round_cap=25"]}


def play(game: str, bots: list[str], replay_dir: Path, *options: str) -> dict:
    arguments = ["play", game, *bots, "--games", str(len(bots)), "--seed", "11", "--json"]
    arguments += ["--replay-dir", str(replay_dir), *GAMES_OPTIONS[game], *options]
    result = CliRunner().invoke(main, arguments, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def verify_replays(replay_dir: Path) -> None:
    files = sorted(str(path) for path in replay_dir.glob("*.json"))
    result = CliRunner().invoke(main, ["replay", "verify", "--json", *files], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert all(outcome["ok"] for outcome in json.loads(result.stdout))


def assert_clean_match(match: dict, bots: int) -> None:
    assert len(match["games"]) == bots
    for game in match["games"]:
        assert game["faults"] == [], game["faults"]
        assert sorted(set(game["ranks"])) == sorted(set(game["ranks"])) and min(game["ranks"]) == 1
        assert all(timing["decisions"] > 0 for timing in game["timing"]), game["timing"]


@pytest.mark.parametrize("game", ["scout", "scauver"])
def test_python_c_and_js_bots_play_a_full_rotation(game: str, c_bot: Path, js_bot: list[str], tmp_path: Path) -> None:
    bots = ["random", str(c_bot), shlex.join(js_bot), "heuristic"]
    match = play(game, bots, tmp_path)
    assert_clean_match(match, len(bots))
    seated = {name for record in match["games"] for name in record["seats"]}
    assert {"random", f"{game}-heuristic"} < seated and len(seated) == len(bots)
    verify_replays(tmp_path)


@pytest.mark.parametrize("game", ["scout", "scauver"])
def test_c_and_js_bots_play_over_tcp(game: str, c_bot: Path, js_bot: list[str], tmp_path: Path) -> None:
    match = play(game, [str(c_bot), shlex.join(js_bot)], tmp_path, "--transport", "tcp", "--no-sandbox")
    assert_clean_match(match, 2)
    verify_replays(tmp_path)


@pytest.mark.parametrize("game", ["scout", "scauver"])
def test_heuristic_wins_a_match_against_random_programs(game: str, tmp_path: Path) -> None:
    match = play(game, ["heuristic", "random", "random"], tmp_path, "--games", "6")
    assert_clean_match(match, 6)
    heuristic = f"{game}-heuristic"
    wins = sum(record["ranks"][record["seats"].index(heuristic)] == 1 for record in match["games"])
    assert wins >= 5, f"{heuristic} won {wins} of 6 games against two random bots"

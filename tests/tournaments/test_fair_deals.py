"""Nothing a bot receives or can guess deals the game: the fixture bot redealer tries every number in its ids
and every small seed (with the public derivations, old and new) and claims its opponents' hands whenever a
candidate deals it the hand it holds. Its claims are checked against the real deal, re-dealt by the engine
from the seed the referee recorded: under `referee play` without --seed and in a league with a small seed,
none is ever right; with `referee play --seed`, documented as public, every one is (so the bot's search is
real, and a public seed is public)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from referee.games import load_game
from tournaments.cli import main

REDEALER = Path(__file__).resolve().parents[1] / "fixtures" / "bots" / "redealer.py"
SLOW_SEARCH = ["--move-time", "20000", "--startup-time", "20"]
"""The redealer's search takes a few hundred ms at its first request: room for it on a loaded machine."""
SMALL_SEEDS_TRIED = 300 * 4 * 2


def claims(log_dir: Path) -> list[dict[str, Any]]:
    """The CLAIM lines of every bot log under `log_dir` (a league keeps one folder per match)."""
    lines = [line for log in sorted(log_dir.rglob("*.log")) for line in log.read_text().splitlines()]
    return [json.loads(line.removeprefix("CLAIM ")) for line in lines if line.startswith("CLAIM ")]


def dealt(game: str, players: int, seed: int) -> list[list[Any]]:
    state = load_game(game).new_game(players, seed)
    return [state.observation(seat)["hand"] for seat in range(players)]


def judged(claim: dict[str, Any], hands: list[list[Any]]) -> bool:
    """Whether the claim is right: every other seat's hand as claimed (False for no claim)."""
    assert claim["hand"] == hands[claim["seat"]], "the claim is about this game"
    assert claim["tried"] >= SMALL_SEEDS_TRIED, "the bot searched"
    others = {str(seat): hand for seat, hand in enumerate(hands) if seat != claim["seat"]}
    return claim["hands"] == others


def play(tmp_path: Path, *options: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    logs = tmp_path / "logs"
    arguments = ["play", "scout", str(REDEALER), "random", "random", "--json", "--log-dir", str(logs)]
    result = CliRunner().invoke(main, [*arguments, *SLOW_SEARCH, *options])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    found = claims(logs)
    assert len(found) == len(report["games"]) == 6
    return report, found


def verdicts(report: dict[str, Any], found: list[dict[str, Any]]) -> list[bool]:
    return [judged(claim, dealt("scout", 3, report["games"][claim["game_index"]]["seed"])) for claim in found]


def test_play_deals_from_a_secret_no_bot_can_guess(tmp_path: Path) -> None:
    report, found = play(tmp_path)
    assert verdicts(report, found) == [False] * 6
    assert all(claim["hands"] is None for claim in found), "no candidate even dealt the bot its own hand"


def test_a_public_seed_is_public(tmp_path: Path) -> None:
    report, found = play(tmp_path, "--seed", "37")
    assert verdicts(report, found) == [True] * 6


def test_a_league_with_a_small_seed_deals_from_its_store_key(tmp_path: Path) -> None:
    league = tmp_path / "league.toml"
    bots = [("redealer", f"{REDEALER}"), ("random-a", "random"), ("random-b", "random")]
    lines = ['game = "scout"', "players = 3", "seed = 7", 'log_dir = "logs"', "[limits]", "move_time_ms = 20000"]
    for name, command in bots:
        lines += ["[[bots]]", f'name = "{name}"', f'command = "{command}"']
    league.write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(main, ["tournament", "run", str(league), "-j", "1", "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    with sqlite3.connect(league.with_suffix(".sqlite")) as store:
        seeds = [seed for (seed,) in store.execute("SELECT seed FROM games")]
    found = claims(tmp_path / "logs")
    assert len(found) == len(seeds) == 6
    for claim in found:
        games = [
            hands for hands in (dealt("scout", 3, seed) for seed in set(seeds)) if hands[claim["seat"]] == claim["hand"]
        ]
        assert len(games) == 1, "the deal of the claim, found by the bot's own hand"
        assert not judged(claim, games[0])
        assert claim["hands"] is None

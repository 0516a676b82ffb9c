"""The CPU instructions a rules engine costs per game of random play, counted by valgrind.

Instruction counts do not depend on the machine's load, so they compare engines (and versions of one engine)
where timings on a shared machine cannot. The random-play loop is `engine.play_random_game`, the one
`referee bench engine` times. It runs twice under `valgrind --tool=cachegrind`, in a fresh interpreter each
time: once with the games and once with none; the difference is what the games cost, without the interpreter's
start and the imports.

Run as a module (`python -m tournaments.bench.instructions GAME PLAYERS GAMES SEED`), it plays the games and
prints what it played as JSON: that is the program valgrind runs.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass

from protocol.errors import EnvironmentProblem
from referee.games import load_game

from .engine import play_random_game

VALGRIND = "valgrind"
_INSTRUCTIONS_LINE = re.compile(r"I\s+refs:\s+([\d,]+)")


class InstructionCountError(EnvironmentProblem, RuntimeError):
    """valgrind is missing, or its run failed or printed no instruction count."""


@dataclass(frozen=True)
class PlayedGames:
    games: int
    rounds: int
    decisions: int


@dataclass(frozen=True)
class InstructionBenchResult:
    game: str
    players: int
    played: PlayedGames
    instructions: int
    """Of the games alone: the run with games minus the run without."""
    baseline_instructions: int
    """Of the run without games (interpreter start, imports, loading the game)."""

    @property
    def per_game(self) -> float:
        return self.instructions / self.played.games

    @property
    def per_decision(self) -> float:
        return self.instructions / self.played.decisions


def play_games(game_name: str, players: int, games: int, seed: int) -> PlayedGames:
    """`games` random games from seeds seed, seed + 1, ...; the choices drawn from one Random(seed)."""
    game = load_game(game_name)
    chooser = random.Random(seed)
    rounds = decisions = 0
    for number in range(games):
        state = play_random_game(game, players, seed + number, chooser)
        rounds += state.round
        decisions += len(state.history)
    return PlayedGames(games, rounds, decisions)


def count_instructions(game_name: str, players: int, games: int = 20, seed: int = 0) -> InstructionBenchResult:
    """The instructions of `games` random games (as `play_games` plays them), by two valgrind runs."""
    if shutil.which(VALGRIND) is None:
        raise InstructionCountError(
            "valgrind is not installed (it counts the instructions): install it (e.g. apt-get install valgrind)"
        )
    load_game(game_name).new_game(players, seed=seed)
    baseline, _ = _counted_run(game_name, players, 0, seed)
    total, played = _counted_run(game_name, players, games, seed)
    return InstructionBenchResult(game_name, players, played, total - baseline, baseline)


def _counted_run(game_name: str, players: int, games: int, seed: int) -> tuple[int, PlayedGames]:
    command = [
        VALGRIND,
        "--tool=cachegrind",
        "--cache-sim=no",
        "--branch-sim=no",
        "--cachegrind-out-file=/dev/null",
        sys.executable,
        "-m",
        __name__,
        game_name,
        str(players),
        str(games),
        str(seed),
    ]
    environment = {**os.environ, "PYTHONHASHSEED": "0"}
    completed = subprocess.run(command, capture_output=True, text=True, env=environment, check=False)
    if completed.returncode != 0:
        raise InstructionCountError(f"valgrind exited with {completed.returncode}: {completed.stderr[-2000:]}")
    match = _INSTRUCTIONS_LINE.search(completed.stderr)
    if match is None:
        raise InstructionCountError(f"valgrind printed no instruction count: {completed.stderr[-2000:]}")
    return int(match.group(1).replace(",", "")), PlayedGames(**json.loads(completed.stdout))


def _main(arguments: list[str]) -> None:
    game_name, players, games, seed = arguments[0], int(arguments[1]), int(arguments[2]), int(arguments[3])
    played = play_games(game_name, players, games, seed)
    print(json.dumps({"games": played.games, "rounds": played.rounds, "decisions": played.decisions}))


if __name__ == "__main__":
    _main(sys.argv[1:])

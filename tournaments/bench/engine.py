"""Random self-play of one game in-process: the speed of a rules engine as search bots and leagues see it.

Every decision lists the legal actions in full and applies a uniformly random one, as a random bot would.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from referee.games import load_game


@dataclass(frozen=True)
class EngineBenchResult:
    game: str
    players: int
    games: int
    rounds: int
    decisions: int
    seconds: float

    @property
    def decisions_per_second(self) -> float:
        return self.decisions / self.seconds

    @property
    def games_per_second(self) -> float:
        return self.games / self.seconds

    @property
    def rounds_per_second(self) -> float:
        return self.rounds / self.seconds


def bench_engine(game_name: str, players: int, min_seconds: float = 3.0, seed: int = 0) -> EngineBenchResult:
    """Play whole random games until at least `min_seconds` have passed."""
    game = load_game(game_name)
    chooser = random.Random(seed)
    games = rounds = decisions = 0
    started = time.perf_counter()
    elapsed = 0.0
    while elapsed < min_seconds:
        state = game.new_game(players, seed=seed + games)
        while not state.is_over():
            for seat in state.to_move():
                state.apply(seat, chooser.choice(state.legal_actions(seat)))
                decisions += 1
        games += 1
        rounds += state.round
        elapsed = time.perf_counter() - started
    return EngineBenchResult(game_name, players, games, rounds, decisions, elapsed)

"""Random self-play of one game in-process: the speed of a rules engine as search bots and leagues see it.

Every decision lists the legal actions in full and applies a uniformly random one, as a random bot would. The
random player reads them through `legal_actions_view`, the engine's read-only list that the referee (to send
them to a bot) and search bots' rollouts read too, so that no copy a reader does not need is counted: a
published engine is measured the same way with its own random player, which picks from its engine's list of
legal moves without copying them (myselph/scout-ai's `random.choice(info_state.possible_moves())`).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from referee.games import Game, GameState, load_game


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


def play_random_game(game: Game, players: int, seed: int, chooser: random.Random) -> GameState:
    """One whole game of random play: every decision lists the legal actions in full (the read-only view) and
    applies a random one. Returns the finished state (its history counts the decisions)."""
    state = game.new_game(players, seed=seed)
    while not state.is_over():
        for seat in state.to_move():
            state.apply(seat, chooser.choice(state.legal_actions_view(seat)))
    return state


def bench_engine(game_name: str, players: int, min_seconds: float = 3.0, seed: int = 0) -> EngineBenchResult:
    """Play whole random games until at least `min_seconds` have passed."""
    game = load_game(game_name)
    chooser = random.Random(seed)
    games = rounds = decisions = 0
    started = time.perf_counter()
    elapsed = 0.0
    while elapsed < min_seconds:
        state = play_random_game(game, players, seed + games, chooser)
        games += 1
        rounds += state.round
        decisions += len(state.history)
        elapsed = time.perf_counter() - started
    return EngineBenchResult(game_name, players, games, rounds, decisions, elapsed)


@dataclass(frozen=True)
class SearchBenchResult:
    """What a search bot does with an engine: clone a position, then play a clone to the end of its round."""

    clones: int
    clone_seconds: float
    playouts: int
    playout_decisions: int
    playout_seconds: float

    @property
    def clones_per_second(self) -> float:
        return self.clones / self.clone_seconds

    @property
    def playouts_per_second(self) -> float:
        return self.playouts / self.playout_seconds


def _positions(game_name: str, players: int, seed: int, count: int) -> list[GameState]:
    """Positions spread over random games: about one decision in ten."""
    game = load_game(game_name)
    chooser = random.Random(seed)
    positions: list[GameState] = []
    while len(positions) < count:
        state = game.new_game(players, seed=seed + len(positions))
        while not state.is_over() and len(positions) < count:
            if chooser.random() < 0.1:
                positions.append(state.clone())
            seat = chooser.choice(state.to_move())
            state.apply(seat, chooser.choice(state.legal_actions_view(seat)))
    return positions


def bench_search(game_name: str, players: int, min_seconds: float = 1.0, seed: int = 0) -> SearchBenchResult:
    """Clones of positions from random games for `min_seconds`, then playouts for as long: each clones a
    position and plays it to the end of its round (or of the game) with random actions from the read-only
    legal-action view, as a search bot's rollouts do."""
    positions = _positions(game_name, players, seed, 64)
    clones = 0
    started = time.perf_counter()
    while time.perf_counter() - started < min_seconds:
        for position in positions:
            position.clone()
        clones += len(positions)
    clone_seconds = time.perf_counter() - started
    chooser = random.Random(seed)
    playouts = decisions = 0
    started = time.perf_counter()
    while time.perf_counter() - started < min_seconds:
        state = positions[playouts % len(positions)].clone()
        round_ = state.round
        while not state.is_over() and state.round == round_:
            for seat in state.to_move():
                state.apply(seat, chooser.choice(state.legal_actions_view(seat)))
                decisions += 1
        playouts += 1
    return SearchBenchResult(clones, clone_seconds, playouts, decisions, time.perf_counter() - started)

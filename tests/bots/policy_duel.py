"""In-process games of one policy against random ones: tests a bot's decisions deterministically, without
processes or sockets (the bot programs themselves are tested in tests/referee against the real referee)."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from referee.games import load_game

Policy = Callable[[dict[str, Any], list[dict[str, Any]]], dict[str, Any]]


def play(game: str, policies: list[Policy], seed: int) -> dict[str, list[int]]:
    """One seeded game; returns its result."""
    state = load_game(game).new_game(len(policies), seed=seed)
    while not state.is_over():
        for seat in state.to_move():
            state.apply(seat, policies[seat](state.observation(seat), state.legal_actions(seat)))
    return state.result()


def random_policy(rng: random.Random) -> Policy:
    def choose(observation: dict[str, Any], legal_actions: list[dict[str, Any]]) -> dict[str, Any]:
        return rng.choice(legal_actions)

    return choose


def heuristic_wins(game: str, heuristic: Policy, players: int, games: int) -> int:
    """How many of `games` seeded games `heuristic` wins (rank 1) against random seats, its seat rotating."""
    wins = 0
    for seed in range(games):
        seat = seed % players
        policies = [heuristic if other == seat else random_policy(random.Random(seed)) for other in range(players)]
        wins += play(game, policies, seed)["ranks"][seat] == 1
    return wins

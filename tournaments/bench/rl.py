"""Random play through the learning environments (referee.games.rl, the `rl` extra) against the engine alone.

Each API plays whole games, one game of each in turn, until each has played for the given time, every
decision a uniformly random legal one: the
engine (legal actions listed, one applied: bench/engine.py), PettingZoo (`env.last()`, which builds the
observation vector and the mask, and the infos' action features, then `step`), and OpenSpiel (what a learner
reads at each decision: `observation_tensor`, `legal_actions()` and `legal_action_features()`, then
`apply_action`; chance nodes included but not counted as steps).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from protocol.errors import EnvironmentProblem
from referee.games import load_game

from .engine import play_random_game


@dataclass(frozen=True)
class ApiSpeed:
    api: str
    games: int
    steps: int
    seconds: float

    @property
    def steps_per_second(self) -> float:
        return self.steps / self.seconds


class MissingExtra(EnvironmentProblem, RuntimeError):
    """The `rl` extra (pettingzoo, gymnasium, open_spiel) is not installed."""


def _interleaved(plays: dict[str, Callable[[int], int]], min_seconds: float) -> list[ApiSpeed]:
    """Play one game through each API in turn until each has played for `min_seconds`: a change of the
    machine's load then weighs on every API alike, so the ratios hold where the absolute figures move."""
    games = dict.fromkeys(plays, 0)
    steps = dict.fromkeys(plays, 0)
    seconds = dict.fromkeys(plays, 0.0)
    number = 0
    while min(seconds.values()) < min_seconds:
        for api, play_one in plays.items():
            started = time.perf_counter()
            steps[api] += play_one(number)
            seconds[api] += time.perf_counter() - started
            games[api] += 1
        number += 1
    return [ApiSpeed(api, games[api], steps[api], seconds[api]) for api in plays]


def bench_rl(game: str, players: int, min_seconds: float = 3.0, seed: int = 0) -> list[ApiSpeed]:
    """Steps/s of random play through the engine, PettingZoo and OpenSpiel, in that order."""
    try:
        import pyspiel

        import referee.games.rl.openspiel  # noqa: F401  (registers the games)
        from referee.games.rl import pettingzoo_env
    except ImportError as error:
        raise MissingExtra(f"needs the rl extra (pip install -e '.[rl]'): {error}") from None
    rules = load_game(game)
    chooser = random.Random(seed)
    env = pettingzoo_env(game, players=players, action_features=True)

    def engine_game(number: int) -> int:
        return len(play_random_game(rules, players, seed + number, chooser).history)

    def pettingzoo_game(number: int) -> int:
        env.reset(seed=seed + number)
        steps = 0
        for _agent in env.agent_iter():
            observation, _reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            mask = observation["action_mask"]
            env.step(chooser.choice(mask.nonzero()[0].tolist()))
            steps += 1
        return steps

    spiel = pyspiel.load_game(f"python_{game}", {"players": players})

    def openspiel_game(_number: int) -> int:
        state = spiel.new_initial_state()
        steps = 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[chooser.randrange(len(outcomes))][0])
                continue
            state.observation_tensor(state.current_player())
            state.legal_action_features()
            state.apply_action(chooser.choice(state.legal_actions()))
            steps += 1
        return steps

    return _interleaved(
        {"engine": engine_game, "pettingzoo": pettingzoo_game, "openspiel": openspiel_game}, min_seconds
    )

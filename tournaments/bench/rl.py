"""Random play through the learning environments (referee.games.rl, the `rl` extra) against the engine alone.

Each API plays whole games, one game of each in turn, until each has played for the given time, every
decision a uniformly random legal one: the
engine (legal actions listed, one applied: bench/engine.py), PettingZoo (`env.last()`, which builds the
observation vector and the mask, and the infos' action features, read at every step, then `step`), OpenSpiel
(what a learner reads at each decision: `observation_tensor`, `legal_actions()` and `legal_action_features()`,
then `apply_action`; chance nodes included but not counted as steps), and the batched env (BATCH games stepped
together, observations, masks and action features as arrays; its "game" is one batch played until one of
its games ends, each batch step counting BATCH steps).

Times are the process's CPU time (time.process_time), not the wall clock: on a machine shared with other
work a long game is more often paused than a short one, which the wall clock would count against the slower
APIs. Per API the time of a step is also taken per game (its seconds over its steps): the minimum, median
and maximum over the games it played show how much the figure moves with the game's length.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from protocol.errors import EnvironmentProblem
from referee.games import load_game

from .engine import play_random_game

BATCH = 8
"""How many games the batched env steps together."""


@dataclass(frozen=True)
class ApiSpeed:
    api: str
    games: int
    steps: int
    seconds: float
    step_seconds: tuple[float, ...] = ()
    """Per game played, its seconds per step."""

    @property
    def steps_per_second(self) -> float:
        return self.steps / self.seconds

    @property
    def step_us(self) -> tuple[float, float, float]:
        """The minimum, median and maximum over games of the microseconds a step took."""
        times = self.step_seconds or (self.seconds / self.steps,)
        return min(times) * 1e6, statistics.median(times) * 1e6, max(times) * 1e6


class MissingExtra(EnvironmentProblem, RuntimeError):
    """The `rl` extra (pettingzoo, gymnasium, open_spiel) is not installed."""


def _interleaved(plays: dict[str, Callable[[int], int]], min_seconds: float) -> list[ApiSpeed]:
    """Play in rounds until each API has played for `min_seconds`: a round plays one game of each API still
    short of it, then more games of those whose game was shorter until each has played about as long as the
    round's longest game. The load of the moment then weighs on every API alike (so the ratios hold where the
    absolute figures move), and no API plays alone at the end."""
    games = dict.fromkeys(plays, 0)
    steps = dict.fromkeys(plays, 0)
    seconds = dict.fromkeys(plays, 0.0)
    per_step: dict[str, list[float]] = {api: [] for api in plays}
    number = 0

    def play(api: str) -> float:
        started = time.process_time()
        played = plays[api](number)
        took = time.process_time() - started
        steps[api] += played
        seconds[api] += took
        games[api] += 1
        per_step[api].append(took / max(played, 1))
        return took

    while min(seconds.values()) < min_seconds:
        short = [api for api in plays if seconds[api] < min_seconds]
        this_round = {api: play(api) for api in short}
        longest = max(this_round.values())
        for api in short:
            while this_round[api] < longest and seconds[api] < min_seconds:
                number += 1
                this_round[api] += play(api)
        number += 1
    return [ApiSpeed(api, games[api], steps[api], seconds[api], tuple(per_step[api])) for api in plays]


def bench_rl(game: str, players: int, min_seconds: float = 3.0, seed: int = 0) -> list[ApiSpeed]:
    """Steps/s of random play through the engine, PettingZoo, OpenSpiel and the batched env, in that order."""
    try:
        import pyspiel

        import referee.games.rl.openspiel  # noqa: F401  (registers the games)
        from referee.games.rl import pettingzoo_env
        from referee.games.rl.batched import BatchedEnv
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
            _observation, _reward, terminated, truncated, info = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            row = chooser.randrange(len(info["action_features"]))
            env.step(int(info["action_indices"][row]))
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

    batched = BatchedEnv(game, players, games=BATCH)
    picker = np.random.default_rng(seed)
    rows = np.arange(BATCH)

    def batched_games(number: int) -> int:
        batch = batched.reset(seed=seed + number * BATCH)
        steps = 0
        while not batch.dones.any():
            counts = (batch.action_indices >= 0).sum(axis=1)
            actions = batch.action_indices[rows, (picker.random(BATCH) * counts).astype(np.int64)]
            batch = batched.step(actions)
            steps += BATCH
        return steps

    return _interleaved(
        {"engine": engine_game, "pettingzoo": pettingzoo_game, "openspiel": openspiel_game, "batched": batched_games},
        min_seconds,
    )

"""N games of one table stepped together, numpy arrays out: for learners that act on a batch.

`BatchedEnv(game, players, games=N)` holds N games. Each has one seat to act at a time (simultaneous
decisions are taken seat by seat, lowest first, as in the PettingZoo env); `reset()` and `step(actions)`
return a `Batch` of arrays about the seat to act in every game:

    observations     float32 [N, feature_size]     features.py, the acting seat's vector
    masks            int8    [N, codec size]       its legal indices (codec.py)
    seats            int64   [N]                   the acting seat
    action_indices   int64   [N, K]                its legal indices in increasing order, -1 after the last
    action_features  float32 [N, K, width]         one row per index (action_features.py), zero after the last
    rewards          float32 [N, players]          each seat's reward for the game that ended at this step
    dones            bool    [N]                   a game ended at this step (and a new one was dealt)

K is the most legal actions of any game of this batch. A game that ends is replaced at once by the next
game of its own generator (auto-reset): its row then describes the new game's first decision, `rewards` holds
the ended game's rewards (reward "rank" or "score", as aec.py) and `results[i]` its engine result.

Game i draws its deals as `pettingzoo_env(...).reset(seed=seed + i)` does: seeded alike and given the same
actions, game i goes through the same decisions, observations, masks, features and rewards as that env
(tests/games/test_rl_batched.py checks it).
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import GameState, load_game
from ..base import MAX_SEED, ConfigError
from .action_features import action_feature_width, indexed_action_features
from .codec import codec_for, indexed_legal
from .features import OBSERVATIONS, fast_features, feature_size
from .rewards import RETURNS, rank_rewards, score_rewards


@dataclass(frozen=True)
class Batch:
    """What every game of a batch shows after a reset or a step (the module docstring lists the arrays)."""

    observations: np.ndarray
    masks: np.ndarray
    seats: np.ndarray
    action_indices: np.ndarray
    action_features: np.ndarray
    rewards: np.ndarray
    dones: np.ndarray
    results: tuple[dict[str, Any] | None, ...]


@dataclass
class _Decision:
    legal: dict[int, Any]
    indices: list[int]
    vector: np.ndarray
    rows: np.ndarray | None


class BatchedEnv:
    """`games` games of `game` at `players` seats (see the module docstring)."""

    def __init__(
        self,
        game: str,
        players: int = 4,
        games: int = 8,
        reward: str = "rank",
        action_features: bool = True,
        observation: str = "full",
        options: Mapping[str, Any] | None = None,
    ) -> None:
        rules = load_game(game)
        info = rules.info
        if type(players) is not int or not info.min_players <= players <= info.max_players:
            raise ConfigError(f"{game} is for {info.min_players} to {info.max_players} players, not {players!r}")
        if type(games) is not int or games < 1:
            raise ValueError(f"games is a positive integer, not {games!r}")
        if reward not in RETURNS:
            raise ValueError(f"reward is one of {RETURNS}, not {reward!r}")
        if observation not in OBSERVATIONS:
            raise ValueError(f"observation is one of {OBSERVATIONS}, not {observation!r}")
        self.rules = rules
        self.game = game
        self.players = players
        self.games = games
        self.reward = reward
        self.with_action_features = action_features
        self.compact = observation == "compact"
        self.config = rules.resolve_config(options)
        self.codec = codec_for(game, players, self.config)
        self.observation_size = feature_size(game, players, self.compact)
        self.feature_width = action_feature_width(game)
        self._rngs = [random.Random(secrets.randbits(64)) for _ in range(games)]
        self._states: list[GameState] = []
        self._decisions: list[_Decision] = []

    def reset(self, seed: int | Sequence[int] | None = None) -> Batch:
        """New games: game i's generator seeded with `seed + i` (or `seed[i]`), or kept as it is without one."""
        if seed is not None:
            seeds = [seed + index for index in range(self.games)] if isinstance(seed, int) else list(seed)
            if len(seeds) != self.games:
                raise ValueError(f"{len(seeds)} seeds for {self.games} games")
            self._rngs = [random.Random(one) for one in seeds]
        self._states = [self._new_game(index) for index in range(self.games)]
        self._decisions = [self._decision(state) for state in self._states]
        rewards = np.zeros((self.games, self.players), np.float32)
        return self._batch(rewards, np.zeros(self.games, bool), (None,) * self.games)

    def step(self, actions: Sequence[int] | np.ndarray) -> Batch:
        """Apply one index per game (each legal in its mask) for its seat to act; ended games are dealt anew."""
        if not self._states:
            raise RuntimeError("call reset() before step()")
        if len(actions) != self.games:
            raise ValueError(f"{len(actions)} actions for {self.games} games")
        rewards = np.zeros((self.games, self.players), np.float32)
        dones = np.zeros(self.games, bool)
        results: list[dict[str, Any] | None] = [None] * self.games
        for index, action in enumerate(actions):
            legal = self._decisions[index].legal
            chosen = legal.get(int(action))
            if chosen is None:
                raise ValueError(f"action {int(action)} is not legal in game {index} now (see its mask)")
            state = self._states[index]
            state.apply(state.to_move()[0], dict(chosen))
            if state.is_over():
                result = results[index] = state.result()
                values = rank_rewards(result["ranks"]) if self.reward == "rank" else score_rewards(result["scores"])
                rewards[index] = values
                dones[index] = True
                state = self._states[index] = self._new_game(index)
            self._decisions[index] = self._decision(state)
        return self._batch(rewards, dones, tuple(results))

    def _new_game(self, index: int) -> GameState:
        return self.rules.new_game(self.players, self._rngs[index].randint(0, MAX_SEED), self.config)

    def _decision(self, state: GameState) -> _Decision:
        seat = state.to_move()[0]
        observation = state.observation(seat)
        view = state.legal_actions_view(seat)
        legal = indexed_legal(self.codec, view, observation)
        indices = sorted(legal)
        vector = fast_features(self.game, observation, self.config, self.compact)
        rows = None
        if self.with_action_features:
            actions = [] if self.game == "scout" else [legal[index] for index in indices]
            rows = indexed_action_features(self.game, observation, indices, actions, self.config)
        return _Decision(legal, indices, vector, rows)

    def _batch(self, rewards: np.ndarray, dones: np.ndarray, results: tuple[dict[str, Any] | None, ...]) -> Batch:
        decisions = self._decisions
        most = max(len(decision.indices) for decision in decisions)
        observations = np.stack([decision.vector for decision in decisions])
        masks = np.zeros((self.games, self.codec.size), np.int8)
        indices = np.full((self.games, most), -1, np.int64)
        rows = np.zeros((self.games, most if self.with_action_features else 0, self.feature_width), np.float32)
        for game, decision in enumerate(decisions):
            count = len(decision.indices)
            masks[game, decision.indices] = 1
            indices[game, :count] = decision.indices
            if decision.rows is not None:
                rows[game, :count] = decision.rows
        seats = np.array([state.to_move()[0] for state in self._states], np.int64)
        return Batch(observations, masks, seats, indices, rows, rewards, dones, results)

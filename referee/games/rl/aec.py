"""SCOUT and Scauver as PettingZoo AEC environments, in the style of PettingZoo's classic card games.

Agents are `player_0` .. `player_{n-1}`, one per seat. `observe(agent)` is a dict {"observation": float32
vector (features.py), "action_mask": int8 vector over the fixed Discrete action space (codec.py)}, both
computed from `state.observation(seat)` alone, the map the referee would send that seat. The agent to act
also finds in `infos[agent]` that map itself ("observation") and the engine's legal actions
("legal_actions", in the engine's order; copies, free to change); other agents' infos are empty. With
`action_features` (the default) it also finds "action_indices", the legal indices in increasing order (the
mask's set positions), and "action_features", a float32 matrix with one row per index (action_features.py). The
observation map shares unchanging parts with the engine's state, as `state.observation` does: treat it as
read-only (`copy.deepcopy` it before changing it).

With `observation="compact"` the vector is features.py's compact one (far shorter: cards as numbers or
counts by value rather than one-hot).

Simultaneous decisions (SCOUT's orientation, Scauver's setup and showdown) are taken one seat after the
other, lowest seat first; the engine keeps a seat's choice out of every other seat's observation until all
have chosen, so a later seat learns nothing from an earlier one.

Rewards come once, when the game ends: with `reward="rank"` (the default) each agent gets the mean over the
other seats of +1 (it ranks better), 0 (tied) or -1 (worse), so the rewards sum to zero and lie in [-1, 1];
with `reward="score"` it gets its final score (SCOUT points, Scauver chips) minus the table's mean. Nothing
truncates: every game ends (Scauver by its `round_cap` at the latest).
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from .. import Game, GameState, load_game
from ..base import MAX_SEED, ConfigError
from .action_features import indexed_action_features
from .codec import codec_for, indexed_legal
from .features import OBSERVATIONS, fast_features, feature_size
from .rewards import RETURNS, rank_rewards, score_rewards

REWARDS = RETURNS
RENDER_MODES = ("human", "ansi")
"""Both are text: "ansi" returns the table as a string, "human" prints it (and returns None)."""


class CardGameEnv(AECEnv):
    """One game of SCOUT or Scauver per episode; see the module docstring for the conventions."""

    metadata = {"render_modes": list(RENDER_MODES), "name": "card_referee_v0", "is_parallelizable": False}

    def __init__(
        self,
        game: str,
        players: int,
        options: Mapping[str, Any] | None = None,
        render_mode: str | None = None,
        reward: str = "rank",
        action_features: bool = True,
        observation: str = "full",
    ) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode is None or one of {RENDER_MODES}, not {render_mode!r}")
        if reward not in REWARDS:
            raise ValueError(f"reward is one of {REWARDS}, not {reward!r}")
        self.game: Game = load_game(game)
        info = self.game.info
        if type(players) is not int or not info.min_players <= players <= info.max_players:
            raise ConfigError(f"{game} is for {info.min_players} to {info.max_players} players, not {players!r}")
        self.players = players
        self.config = self.game.resolve_config(options)
        self.render_mode = render_mode
        self.reward_kind = reward
        self.with_action_features = action_features
        if observation not in OBSERVATIONS:
            raise ValueError(f"observation is one of {OBSERVATIONS}, not {observation!r}")
        self.compact = observation == "compact"
        self.codec = codec_for(game, players, self.config)
        self.metadata = {**self.metadata, "name": f"{game}_{players}p_v0"}
        self.possible_agents = [f"player_{seat}" for seat in range(players)]
        size = feature_size(game, players, self.compact)
        self.observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(-1.0, 1.0, (size,), np.float32),
                    "action_mask": spaces.Box(0, 1, (self.codec.size,), np.int8),
                }
            )
            for agent in self.possible_agents
        }
        self.action_spaces = {agent: spaces.Discrete(self.codec.size) for agent in self.possible_agents}
        self._rng = random.Random(secrets.randbits(64))
        self.state_: GameState | None = None
        self._legal: dict[int, dict[str, Any]] = {}
        self._indices = np.zeros(0, np.int64)
        """The legal indices of the agent to act, in increasing order."""
        self._vectors: dict[str, np.ndarray] = {}
        self._seats = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        self._scout = game == "scout"
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.possible_agents}
        self._informed: str | None = None
        """The agent whose info holds the decision's observation and legal actions (the others' are empty)."""

    def __str__(self) -> str:
        return str(self.metadata["name"])

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # Episodes.

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """A new game; its deal seed comes from `seed` (a generator seeded once, so that successive resets
        deal new games reproducibly) or, without one, from the generator of the previous resets."""
        if seed is not None:
            self._rng = random.Random(seed)
        self.state_ = self.game.new_game(self.players, self._rng.randint(0, MAX_SEED), self.config)
        self.agents = self.possible_agents[:]
        self.rewards = {agent: 0.0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0.0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
        self.infos = {agent: {} for agent in self.agents}
        self._informed = None
        self._select()

    def _select(self) -> None:
        """Point agent_selection at the seat to act (the lowest one at a simultaneous decision) and fill its
        info, its action mask and the index of its legal actions: all from this decision alone (the seat's
        observation and the engine's read-only legal actions), nothing rebuilt from the game's history."""
        state = self._engine()
        self._vectors = {}
        if state.is_over():
            self.infos = {agent: {} for agent in self.agents}
            return
        seat = state.to_move()[0]
        agent = self.agent_selection = self.possible_agents[seat]
        observation = state.observation(seat)
        view = state.legal_actions_view(seat)
        legal = self._legal = indexed_legal(self.codec, view, observation)
        indices = sorted(legal)
        self._indices = np.array(indices, np.int64)
        info = {"observation": observation, "legal_actions": list(map(dict.copy, view))}
        if self.with_action_features:
            rows = [] if self._scout else [legal[index] for index in indices]
            info["action_indices"] = self._indices.copy()
            info["action_features"] = indexed_action_features(self.game.name, observation, indices, rows, self.config)
        infos = self.infos
        if self._informed is not None and self._informed in infos:
            infos[self._informed] = {}
        infos[agent] = info
        self._informed = agent

    def _engine(self) -> GameState:
        if self.state_ is None:
            raise RuntimeError("call reset() before using the environment")
        return self.state_

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        index = int(action)
        if index not in self._legal:
            raise ValueError(f"action {index} is not legal for {agent} now (see the action mask)")
        state = self._engine()
        state.apply(self._seats[agent], dict(self._legal[index]))
        self._cumulative_rewards[agent] = 0.0
        if state.is_over():
            self._finish(state)
        else:
            self._select()
        self._accumulate_rewards()

    def _finish(self, state: GameState) -> None:
        result = state.result()
        values = rank_rewards(result["ranks"]) if self.reward_kind == "rank" else score_rewards(result["scores"])
        self.rewards = dict(zip(self.possible_agents, values, strict=True))
        self.terminations = {agent: True for agent in self.agents}
        self.infos = {agent: {"result": result} for agent in self.agents}
        self._legal = {}
        self._vectors = {}

    def action_index(self, action: dict[str, Any]) -> int:
        """The index `step` takes for `action`, one of `infos[agent_selection]["legal_actions"]`: for a learner
        that picks among the engine's actions rather than from the mask."""
        info = self.infos[self.agent_selection]
        return self.codec.encode(action, info["observation"])

    def redealt(self, agent: str, rng: random.Random) -> GameState:
        """The game as `agent` may believe it is: the engine's `redeal` for its seat (the cards it has not seen,
        and the other seats' choices it has not been shown, drawn again by `rng`), for a search or a belief
        model; a new state, the environment's own is unchanged."""
        return self._engine().redeal(self.possible_agents.index(agent), rng)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The agent's vector and mask, built once per decision (and copied out, so a caller may change its
        arrays); the agent to act reads the observation its info holds."""
        vector = self._vectors.get(agent)
        state = self._engine()
        acting = not state.is_over() and agent == self.agent_selection
        if vector is None:
            observation = self.infos[agent]["observation"] if acting else state.observation(self._seats[agent])
            vector = self._vectors[agent] = fast_features(self.game.name, observation, self.config, self.compact)
        mask = np.zeros(self.codec.size, np.int8)
        if acting:
            mask[self._indices] = 1
        return {"observation": vector.copy(), "action_mask": mask}

    # Output.

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        text = render_text(self._engine())
        if self.render_mode == "human":
            print(text, end="")
            return None
        return text

    def close(self) -> None:
        self.state_ = None


def render_text(state: GameState) -> str:
    """A spectator's view of the whole table (every hand shown): the game, round, phase and each seat."""
    lines = [f"{state.game.name} at {state.players} seats, round {state.round}, to move {state.to_move()}"]
    for seat in range(state.players):
        observation = state.observation(seat)
        if state.game.name == "scout":
            hand = " ".join(f"{top}/{bottom}" for top, bottom in observation["hand"])
            extra = f"captured {observation['captured'][seat]} chips {observation['chips'][seat]}"
        else:
            hand = " ".join(observation["hand"])
            field = observation["fields"][seat]
            extra = f"field {' '.join(field['left'])} | {' '.join(field['right'])} chips {observation['chips'][seat]}"
        lines.append(f"  seat {seat}: {hand}  {extra}  score {state.result()['scores'][seat]}")
    last = state.observation(0)
    if state.game.name == "scout":
        table = " ".join(f"{top}/{bottom}" for top, bottom in last["active_set"])
        lines.append(f"  active set: {table or '-'} (owner {last['active_owner']})")
    else:
        lines.append(f"  pot {last['pot']}, phase {last['phase']}")
    return "\n".join(lines) + "\n"


ILLEGAL_REWARD = -1.0
"""What `wrapped` gives an agent whose action the mask refuses (the worst rank reward); the game then ends."""


def wrapped(raw: CardGameEnv, illegal_reward: float = ILLEGAL_REWARD) -> AECEnv:
    """`raw` inside PettingZoo's standard wrappers, as its classic games' `env()`: an illegal action ends the
    game (TerminateIllegalWrapper), an action outside the space is an error (AssertOutOfBoundsWrapper), and
    so is a call out of order, such as `step` before `reset` (OrderEnforcingWrapper)."""
    from pettingzoo.utils import wrappers

    env: AECEnv = wrappers.TerminateIllegalWrapper(raw, illegal_reward=illegal_reward)
    env = wrappers.AssertOutOfBoundsWrapper(env)
    return wrappers.OrderEnforcingWrapper(env)

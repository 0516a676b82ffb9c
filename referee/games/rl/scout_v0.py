"""SCOUT as a PettingZoo classic-style module: `env()` wrapped as PettingZoo's classic games are, `raw_env()` bare.

    from referee.games.rl import scout_v0
    env = scout_v0.env(players=4, render_mode="ansi")

`options` are the game's own (`referee games` lists them); aec.py documents the rest.
"""

from __future__ import annotations

from typing import Any

from pettingzoo import AECEnv

from .aec import ILLEGAL_REWARD, CardGameEnv, wrapped


def raw_env(
    players: int = 4,
    render_mode: str | None = None,
    reward: str = "rank",
    action_features: bool = True,
    observation: str = "full",
    **options: Any,
) -> CardGameEnv:
    return CardGameEnv(
        "scout",
        players,
        options,
        render_mode=render_mode,
        reward=reward,
        action_features=action_features,
        observation=observation,
    )


def env(
    players: int = 4,
    render_mode: str | None = None,
    reward: str = "rank",
    illegal_reward: float = ILLEGAL_REWARD,
    action_features: bool = True,
    observation: str = "full",
    **options: Any,
) -> AECEnv:
    raw = raw_env(players, render_mode, reward, action_features, observation, **options)
    return wrapped(raw, illegal_reward)

"""SCOUT and Scauver for reinforcement learning: PettingZoo and OpenSpiel adapters over the rules engines.

Pure adapters with no I/O, on the games floor: they import `referee.games` and third-party libraries only
(numpy, and pettingzoo/gymnasium or pyspiel, from the optional `rl` extra: `pip install -e '.[rl]'`).
`referee.games` itself never imports this package (its registry skips sub-packages), so the core install
needs none of them.

- `pettingzoo_env(game, players=N, **options)`: a PettingZoo AECEnv (aec.py); `scout_v0.env()` and
  `scauver_v0.env()` the same in PettingZoo's standard wrappers, as its classic games.
- `import referee.games.rl.openspiel`: registers `python_scout` and `python_scauver` with pyspiel.
- batched.py: `BatchedEnv`, N games stepped together with numpy arrays out (auto-reset).
- codec.py: the fixed integer encoding of every action; features.py: observations as float32 vectors;
  lengths.py: how many decisions a game can take (OpenSpiel's max_game_length).
- policy_file.py: a trained network and its encoder's settings in one .npz (`save_policy`, `load_policy`),
  which the `policy:FILE.npz` bot plays with the environment's own encoder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .aec import CardGameEnv

__all__ = ["pettingzoo_env"]


def pettingzoo_env(
    game: str,
    players: int = 4,
    render_mode: str | None = None,
    reward: str = "rank",
    action_features: bool = True,
    observation: str = "full",
    **options: Any,
) -> CardGameEnv:
    """A PettingZoo AEC environment of `game` ("scout" or "scauver") at `players` seats; `options` are the
    game's options (`referee games` lists them). `reward` is "rank" or "score" (aec.py explains both);
    `action_features` adds a row of features per legal action to the infos (action_features.py);
    `observation` is "full" or "compact" (features.py)."""
    from .aec import CardGameEnv

    return CardGameEnv(
        game,
        players,
        options,
        render_mode=render_mode,
        reward=reward,
        action_features=action_features,
        observation=observation,
    )

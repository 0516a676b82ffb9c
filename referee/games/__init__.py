"""Pure, deterministic rules engines behind one interface, and the registry that names them.

A game is one module in this package that defines `GAME`, an instance of a `base.Game` subclass; the
registry finds it by itself, so adding a game is adding one module. Sub-packages are not games: `rl` holds
the reinforcement-learning adapters, which need the optional `rl` extra and are never imported from here.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from .base import (
    Action,
    ConfigError,
    Game,
    GameError,
    GameInfo,
    GameState,
    IllegalAction,
    Observation,
    Option,
    UnknownGame,
    shared_ranks,
)

__all__ = [
    "Action",
    "ConfigError",
    "Game",
    "GameError",
    "GameInfo",
    "GameState",
    "IllegalAction",
    "Observation",
    "Option",
    "UnknownGame",
    "list_games",
    "load_game",
    "shared_ranks",
]

_NOT_GAMES = frozenset({"base"})


@cache
def _registry() -> dict[str, Game]:
    games: dict[str, Game] = {}
    for module_info in pkgutil.iter_modules(__path__):
        if module_info.ispkg or module_info.name in _NOT_GAMES or module_info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        game = getattr(module, "GAME", None)
        if isinstance(game, Game):
            games[game.name] = game
    return dict(sorted(games.items()))


def list_games() -> list[str]:
    """The names of every registered game, sorted."""
    return list(_registry())


def load_game(name: str) -> Game:
    """The game registered under `name`; raises UnknownGame naming the known ones."""
    try:
        return _registry()[name]
    except KeyError:
        raise UnknownGame(f"no game named {name!r}; known games: {', '.join(list_games())}") from None

"""Which narrator and which drawing script each game's pages use."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from referee.games._scauver_links import CARD_VALUE
from referee.replay import ReplayError

from .captions import Narrator
from .scauver import ScauverNarrator
from .scout import ScoutNarrator


@dataclass(frozen=True)
class GamePages:
    narrator: Narrator
    script: str
    """The asset that draws this game's board in the replay page."""
    constants: Mapping[str, Any] = field(default_factory=dict)
    """What that script needs from the rules (the engine's own values, so the page repeats no rule)."""


GAME_PAGES = {
    "scout": GamePages(ScoutNarrator(), "scout.js"),
    "scauver": GamePages(ScauverNarrator(), "scauver.js", {"card_values": CARD_VALUE}),
}


def game_pages(game: str) -> GamePages:
    try:
        return GAME_PAGES[game]
    except KeyError:
        raise ReplayError(f"no pages for the game {game!r}; pages exist for {', '.join(GAME_PAGES)}") from None

"""A learned value of a SCOUT position for the search's playouts: each seat's expected score for the round.

The search (bots/python/scout_search.py) cuts its playouts short and scores the position it reached. Scored as
if the round ended there (captured cards + chips - cards in hand), every card in hand costs one point, whether
it sits in a run that leaves in one Show or alone among cards nobody can join. This module predicts instead the
round score a seat ends with, from what that seat sees of the position (`seat_features`): its hand's shape (how
many Shows it needs, its longest set, whether it can beat the Active Set), the table (its pile, chips, who owns
the Active Set and how long it is, how soon the seat moves) and the other hands' sizes.

The predictor is a small network (one hidden layer, numpy) per table size, fitted by
bots/python/train_scout_value.py on the positions of self-play games, each labelled with the round score the seat
ended that round with. A value file is a numpy .npz: `features` (the names, checked on load) and, per table
size P, `w1_P`, `b1_P`, `w2_P`, `b2_P`, `mean_P`, `scale_P` (the inputs' standardization).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bots.python.scout_heuristic import shows_needed
from referee.games import GameState
from referee.games.scout import LENGTH_WEIGHT, best_strength, set_strength

FEATURES = (
    "in_hand",
    "captured",
    "chips",
    "shows_needed",
    "best_set_length",
    "can_beat_active",
    "owns_active",
    "owned_active_length",
    "active_length",
    "moves_next",
    "moves_after_one",
    "scout_show_used",
    "smallest_other_hand",
    "others_in_hand",
)

DEFAULT_PATH = Path(__file__).with_name("scout-value.npz")


def seat_features(observation: dict[str, Any]) -> list[float]:
    """What the observing seat sees of the position, as FEATURES (play phase; the orient phase reads as play)."""
    seat, players = observation["seat"], observation["players"]
    tops = [top for top, _ in observation["hand"]]
    active = [top for top, _ in observation["active_set"]]
    owner = observation["active_owner"]
    sizes = observation["hand_sizes"]
    movers = observation["to_move"]
    distance = (seat - movers[0]) % players if movers else players
    best = best_strength(tops) if tops else 0
    owns = owner == seat
    others = [size for other, size in enumerate(sizes) if other != seat]
    return [
        float(len(tops)),
        float(observation["captured"][seat]),
        float(observation["chips"][seat]),
        float(shows_needed(tops)),
        float(best // LENGTH_WEIGHT),
        float(not owns and best > set_strength(active)),
        float(owns),
        float(len(active) if owns else 0),
        float(len(active)),
        float(distance == 0),
        float(distance == 1),
        float(observation["scout_show_used"][seat]),
        float(min(others)),
        float(sum(others)),
    ]


@dataclass(frozen=True)
class SeatValueNetwork:
    """One table size's network: standardize, one tanh hidden layer, a linear output (points)."""

    mean: np.ndarray
    scale: np.ndarray
    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: np.ndarray

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        hidden = np.tanh(((rows - self.mean) / self.scale) @ self.w1 + self.b1)
        return hidden @ self.w2 + self.b2


class ScoutValue:
    """The round score each seat of a position is expected to end with, by table size."""

    def __init__(self, networks: dict[int, SeatValueNetwork]) -> None:
        self.networks = networks

    @classmethod
    def load(cls, path: str | Path = DEFAULT_PATH) -> ScoutValue:
        with np.load(path) as data:
            names = tuple(str(name) for name in data["features"])
            if names != FEATURES:
                raise ValueError(f"{path}: its features {names} are not this module's {FEATURES}: remake it")
            sizes = sorted(int(key.split("_")[1]) for key in data.files if key.startswith("w1_"))
            networks = {
                size: SeatValueNetwork(*(data[f"{part}_{size}"] for part in ("mean", "scale", "w1", "b1", "w2", "b2")))
                for size in sizes
            }
        return cls(networks)

    def save(self, path: str | Path) -> None:
        arrays: dict[str, np.ndarray] = {"features": np.array(FEATURES)}
        for size, network in self.networks.items():
            for part in ("mean", "scale", "w1", "b1", "w2", "b2"):
                arrays[f"{part}_{size}"] = getattr(network, part)
        np.savez(path, **arrays)  # type: ignore[arg-type]

    def covers(self, players: int) -> bool:
        return players in self.networks

    def seat_scores(self, state: GameState) -> list[float]:
        """Each seat's expected round score from `state` (a position of the play phase)."""
        rows = np.array([seat_features(state.observation(seat)) for seat in range(state.players)])
        return [float(value) for value in self.networks[state.players](rows)]

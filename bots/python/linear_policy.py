"""A linear softmax policy over a few features of each legal action, for SCOUT and Scauver.

The policy scores every legal action a of an observation by w . phi(observation, a) and picks a with
probability proportional to exp(score): small enough to train with numpy in minutes (bots/python/
train_policy.py, docs/tutorials/train-a-policy.md) and to play inside the referee's clock. phi reads only the
observation and the action, what the referee sends the seat.

A policy file is a numpy .npz with `game` (the game's name) and `weights` (one float per feature).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from referee.games.scout import LENGTH_WEIGHT, best_strength

Action = dict[str, Any]
Observation = dict[str, Any]

SCOUT_FEATURES = (
    "orient",
    "show",
    "scout",
    "scout_and_show",
    "shows_needed_after",
    "hand_after",
    "best_set_after",
    "show_length",
    "captures",
    "empties_hand",
    "scouted_number",
    "joins_a_neighbour",
)
SCAUVER_KINDS = ("setup", "check", "bet", "fold", "call", "raise", "place", "final", "vanguards", "no_link")
SCAUVER_FEATURES = (
    *SCAUVER_KINDS,
    "amount",
    "difference_after",
    "link_value",
    "link_score",
    *(f"{kind}_x_field" for kind in ("check", "bet", "fold", "call", "raise")),
)
FEATURES = {"scout": SCOUT_FEATURES, "scauver": SCAUVER_FEATURES}


def shows_needed(tops: Sequence[int]) -> int:
    """Shows a greedy left-to-right split into the longest valid sets takes to empty the hand."""
    count, index = 0, 0
    while index < len(tops):
        length = 1
        if index + 1 < len(tops) and abs(tops[index + 1] - tops[index]) <= 1:
            step = tops[index + 1] - tops[index]
            length = 2
            while index + length < len(tops) and tops[index + length] - tops[index + length - 1] == step:
                length += 1
        index += length
        count += 1
    return count


def _scout_features(observation: Observation, action: Action) -> list[float]:
    hand = observation["hand"]
    tops = [top for top, _bottom in hand]
    kind = action["kind"]
    out = [0.0] * len(SCOUT_FEATURES)
    if kind == "orient":
        after = [bottom for _top, bottom in reversed(hand)] if action["flip"] else tops
        out[0] = 1.0
    elif kind == "show":
        start, length = action["start"], action["length"]
        after = tops[:start] + tops[start + length :]
        out[1] = 1.0
        out[7] = length / 10
        out[8] = len(observation["active_set"]) / 10
        out[9] = float(not after)
    else:
        active = observation["active_set"]
        card = active[0] if action["end"] == "left" else active[-1]
        number = card[1] if action["flip"] else card[0]
        gap = action["insert"]
        after = tops[:gap] + [number] + tops[gap:]
        out[3 if action["and_show"] else 2] = 1.0
        out[10] = number / 10
        neighbours = tops[gap - 1 : gap] + tops[gap : gap + 1]
        out[11] = float(any(abs(number - other) <= 1 for other in neighbours))
    out[4] = shows_needed(after) / 10
    out[5] = len(after) / 12
    out[6] = best_strength(after) / (LENGTH_WEIGHT * 10)
    return out


_VALUES = {"A": 1, "J": 8, "Q": 9, "K": 10}


def card_value(card: str) -> int:
    rank = card[:-1]
    return _VALUES.get(rank) or int(rank)


def _difference(left: Sequence[str], right: Sequence[str]) -> int:
    return abs(sum(map(card_value, left)) - sum(map(card_value, right)))


def _field_quality(observation: Observation) -> float:
    """How good the seat's field looks, 0 (best) to 1: the flank difference so far, scaled."""
    field = observation["fields"][observation["seat"]]
    return min(_difference(field["left"], field["right"]) / 20, 1.0)


def _scauver_features(observation: Observation, action: Action) -> list[float]:
    kind = action["kind"]
    out = [0.0] * len(SCAUVER_FEATURES)
    out[SCAUVER_KINDS.index(kind)] = 1.0
    base = len(SCAUVER_KINDS)
    amphora = observation["amphora"]
    field = observation["fields"][observation["seat"]]
    left, right = list(field["left"]), list(field["right"])
    if kind in ("bet", "raise"):
        out[base] = action["amount"] / (4 * amphora)
    elif kind == "setup":
        left, right = left + action["left"], right + action["right"]
    elif kind == "place":
        (left if action["flank"] == "left" else right).append(action["card"])
    elif kind == "final":
        left, right = left + [action["left"]], right + [action["right"]]
    elif kind == "vanguards":
        value = sum(map(card_value, action["left"]))
        out[base + 2] = value / 20
        out[base + 3] = min(_difference(left, right) * value / 100, 1.0)
    out[base + 1] = min(_difference(left, right) / 20, 1.0)
    if kind in ("check", "bet", "fold", "call", "raise"):
        out[base + 4 + ("check", "bet", "fold", "call", "raise").index(kind)] = _field_quality(observation)
    return out


def action_features(game: str, observation: Observation, actions: Sequence[Action]) -> np.ndarray:
    """phi of every action, one row each."""
    of = _scout_features if game == "scout" else _scauver_features
    return np.array([of(observation, action) for action in actions], dtype=np.float64)


def softmax(scores: np.ndarray) -> np.ndarray:
    exps = np.exp(scores - scores.max())
    return exps / exps.sum()


@dataclass
class LinearPolicy:
    game: str
    weights: np.ndarray

    @classmethod
    def new(cls, game: str) -> LinearPolicy:
        return cls(game, np.zeros(len(FEATURES[game])))

    @classmethod
    def load(cls, path: str | Path) -> LinearPolicy:
        with np.load(path, allow_pickle=False) as data:
            game, weights = str(data["game"]), np.asarray(data["weights"], dtype=np.float64)
        if game not in FEATURES or weights.shape != (len(FEATURES[game]),):
            raise ValueError(f"{path}: not a linear policy of SCOUT or Scauver")
        return cls(game, weights)

    def save(self, path: str | Path) -> None:
        np.savez(path, game=np.array(self.game), weights=self.weights)

    def probabilities(self, observation: Observation, actions: Sequence[Action]) -> tuple[np.ndarray, np.ndarray]:
        """(the probability of each action, its features)."""
        phi = action_features(self.game, observation, actions)
        return softmax(phi @ self.weights), phi

    def greedy(self, observation: Observation, actions: Sequence[Action]) -> Action:
        """The most probable action: how the trained policy plays in a league."""
        probabilities, _phi = self.probabilities(observation, actions)
        return actions[int(np.argmax(probabilities))]

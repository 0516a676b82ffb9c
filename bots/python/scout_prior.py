"""A prior over a SCOUT seat's actions for the search's root, distilled from the search's own decisions.

The search (bots/python/scout_search.py) widens its root along a ranking of the legal actions and biases its first
visits towards the top of it. The heuristic ranks each action by its own value alone. This prior is a softmax over
the decision's options (every Show, the plain Scouts as one option and the Scout & Shows as another), each
described by a few numbers (SHOW_FEATURES, SCOUT_FEATURES), fitted by bots/python/train_scout_prior.py to the share
of root visits the search gave each option in self-play: the first step of expert iteration, the search teaching
the policy that guides it. The root's ranking (`ScoutPrior.ranked`) puts the options first, by the prior, a Scout
option as its best action by the heuristic, and then every other action in the heuristic's order.

A prior file is a numpy .npz: `show_features` and `scout_features` (the names, checked on load), and the weights
`show`, `scout` and `scout_show`.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

Action = dict[str, Any]

SHOW_FEATURES = (
    "bias",
    "length",
    "single",
    "whole_hand",
    "leads",
    "leads_length",
    "same_number",
    "highest_number",
    "breaks_a_longer_set",
    "active_length",
)
SCOUT_FEATURES = ("bias", "longest_show", "can_show", "hand_length", "active_length", "smallest_other_hand")
DEFAULT_PATH = Path(__file__).with_name("scout-prior.npz")


class OptionKind(enum.IntEnum):
    SHOW = 0
    SCOUT = 1
    SCOUT_AND_SHOW = 2


@dataclass(frozen=True)
class Option:
    """One choice the prior weighs: a Show (one action) or a kind of Scout (all its actions)."""

    kind: OptionKind
    features: tuple[float, ...]
    actions: tuple[int, ...]
    """Indices into the legal actions."""


def options(observation: dict[str, Any], legal_actions: Sequence[Action]) -> list[Option]:
    """The options of a play-phase decision, Shows in the order of `legal_actions`, then the Scouts."""
    tops = [top for top, _ in observation["hand"]]
    active_length = len(observation["active_set"])
    found: list[Option] = []
    scouts: list[int] = []
    scout_shows: list[int] = []
    longest = 0
    for index, action in enumerate(legal_actions):
        if action["kind"] == "show":
            features = show_features(tops, action["start"], action["length"], active_length)
            found.append(Option(OptionKind.SHOW, features, (index,)))
            longest = max(longest, action["length"])
        elif action["and_show"]:
            scout_shows.append(index)
        else:
            scouts.append(index)
    seat = observation["seat"]
    smallest = min(size for other, size in enumerate(observation["hand_sizes"]) if other != seat)
    features = (1.0, float(longest), float(longest > 0), len(tops) / 10, float(active_length), smallest / 10)
    if scouts:
        found.append(Option(OptionKind.SCOUT, features, tuple(scouts)))
    if scout_shows:
        found.append(Option(OptionKind.SCOUT_AND_SHOW, features, tuple(scout_shows)))
    return found


def show_features(tops: Sequence[int], start: int, length: int, active_length: int) -> tuple[float, ...]:
    """SHOW_FEATURES of showing `length` cards from `start` of a hand whose face-up numbers are `tops`."""
    end = start + length
    leads = float(active_length == 0)
    same = length > 1 and tops[start] == tops[start + 1]
    if length == 1:
        neighbours = [tops[place] for place in (start - 1, end) if 0 <= place < len(tops)]
        breaks = any(abs(number - tops[start]) <= 1 for number in neighbours)
    else:
        step = tops[start + 1] - tops[start]
        breaks = (start > 0 and tops[start] - tops[start - 1] == step) or (
            end < len(tops) and tops[end] - tops[end - 1] == step
        )
    return (
        1.0,
        float(length),
        float(length == 1),
        float(length == len(tops)),
        leads,
        leads * length,
        float(same),
        max(tops[start:end]) / 10,
        float(breaks),
        float(active_length),
    )


@dataclass(frozen=True)
class ScoutPrior:
    """The prior's weights, one vector per kind of option."""

    show: np.ndarray
    scout: np.ndarray
    scout_show: np.ndarray

    def logit(self, option: Option) -> float:
        weights = (self.show, self.scout, self.scout_show)[option.kind]
        return float(np.dot(weights, option.features))

    def ranked(
        self, observation: dict[str, Any], legal_actions: Sequence[Action], by_heuristic: Sequence[Action]
    ) -> list[Action]:
        """`by_heuristic` (the legal actions, best first by the heuristic) with the options moved to the front,
        best first by the prior, each kind of Scout as its best action by the heuristic."""
        if observation["phase"] != "play" or len(legal_actions) < 2:
            return list(by_heuristic)
        place = {id(action): rank for rank, action in enumerate(by_heuristic)}
        heads = []
        for option in options(observation, legal_actions):
            best = min((legal_actions[index] for index in option.actions), key=lambda action: place[id(action)])
            heads.append((-self.logit(option), place[id(best)], best))
        first = [action for _, _, action in sorted(heads, key=lambda head: head[:2])]
        taken = {id(action) for action in first}
        return first + [action for action in by_heuristic if id(action) not in taken]

    @classmethod
    def load(cls, path: str | Path = DEFAULT_PATH) -> ScoutPrior:
        with np.load(path) as data:
            for key, names in (("show_features", SHOW_FEATURES), ("scout_features", SCOUT_FEATURES)):
                found = tuple(str(name) for name in data[key])
                if found != names:
                    raise ValueError(f"{path}: its {key} {found} are not this module's {names}: remake it")
            prior = cls(data["show"], data["scout"], data["scout_show"])
        shapes = ((prior.show, SHOW_FEATURES), (prior.scout, SCOUT_FEATURES), (prior.scout_show, SCOUT_FEATURES))
        if any(weights.shape != (len(names),) for weights, names in shapes):
            raise ValueError(f"{path}: its weights do not match its features: remake it")
        return prior

    def save(self, path: str | Path) -> None:
        np.savez(
            path,
            show_features=np.array(SHOW_FEATURES),
            scout_features=np.array(SCOUT_FEATURES),
            show=self.show,
            scout=self.scout,
            scout_show=self.scout_show,
        )

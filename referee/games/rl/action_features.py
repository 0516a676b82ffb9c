"""A row of float32 features per legal action: what the action does, for learners that score each action
(as RLCard's Dou Dizhu) rather than pick a position in the Discrete space.

`action_features(game, observation, legal, config)` is a (len(legal), width) matrix, row i describing
legal[i], computed from the seat's observation alone. Every value lies in [0, 1].
docs/reference/rl-environments.md has a table of the columns per game; SCOUT_COLUMNS and SCAUVER_COLUMNS
name them in order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .. import Action, Observation
from ..scauver import CARD_VALUE
from .codec import LONGEST_SET, hand_cap
from .compiled import _fastscout

SCOUT_COLUMNS = (
    "orient",
    "show",
    "scout",
    "scout_and_show",
    "flip",
    "cards_shown",
    "match",
    "run",
    "show_number",
    "captures",
    "hand_after",
    "empties_hand",
    "scouted_number",
    "insert_position",
    "from_right",
    "joins_match",
    "joins_run",
    "active_after",
    "longest_set_after",
)

SCAUVER_KINDS = ("setup", "check", "call", "fold", "bet", "raise", "place", "final", "vanguards", "no_link")
SCAUVER_COLUMNS = (
    *SCAUVER_KINDS,
    "chips_in",
    "amphoras",
    "value_left",
    "value_right",
    "flank_gap_after",
    "left_size_after",
    "right_size_after",
    "link_value",
    "link_score",
    "vanguard_left",
    "vanguard_right",
)
MOST_VALUE = 10
FLANK = 4


STEPS = (-1, 0, 1)


class _ScoutDecision:
    """What every row of one decision shares: the hand's numbers and, to find the longest set after any
    Show or Scout in constant time, per position the longest set wholly left of it (`before`) and from it on
    (`after`), and the chains of each step that end there (`ending`) and start there (`starting`)."""

    def __init__(self, observation: Observation) -> None:
        tops = self.tops = [top for top, _ in observation["hand"]]
        self.active = observation["active_set"]
        self.cap = hand_cap(observation["players"])
        size = len(tops)
        self.ending = [dict.fromkeys(STEPS, 1) for _ in range(size)]
        self.starting = [dict.fromkeys(STEPS, 1) for _ in range(size)]
        for index in range(1, size):
            step = tops[index] - tops[index - 1]
            if step in STEPS:
                self.ending[index][step] = self.ending[index - 1][step] + 1
        for index in range(size - 2, -1, -1):
            step = tops[index + 1] - tops[index]
            if step in STEPS:
                self.starting[index][step] = self.starting[index + 1][step] + 1
        self.before = [0] * (size + 1)
        for index in range(size):
            self.before[index + 1] = max(self.before[index], *self.ending[index].values())
        self.after = [0] * (size + 1)
        for index in range(size - 1, -1, -1):
            self.after[index] = max(self.after[index + 1], *self.starting[index].values())

    def longest_with(self, top: int, at: int) -> int:
        """The longest set of the hand with `top` inserted at position `at`."""
        tops = self.tops
        best = max(self.before[at], self.after[at])
        for step in STEPS:
            left = self.ending[at - 1][step] if at > 0 and top - tops[at - 1] == step else 0
            right = self.starting[at][step] if at < len(tops) and tops[at] - top == step else 0
            best = max(best, 1 + left + right)
        return best

    def longest_without(self, start: int, length: int) -> int:
        """The longest set of the hand once cards start .. start + length - 1 have left it."""
        tops, end = self.tops, start + length
        best = max(self.before[start], self.after[end])
        if start > 0 and end < len(tops) and tops[end] - tops[start - 1] in STEPS:
            step = tops[end] - tops[start - 1]
            best = max(best, self.ending[start - 1][step] + self.starting[end][step])
        return best


def _scout_row(action: Action, decision: _ScoutDecision) -> list[float]:
    kind = action["kind"]
    row = [0.0] * len(SCOUT_COLUMNS)
    if kind == "orient":
        row[0], row[4] = 1.0, float(action["flip"])
        return row
    tops, active, cap = decision.tops, decision.active, decision.cap
    if kind == "show":
        start, length = action["start"], action["length"]
        shown = tops[start : start + length]
        rest = tops[:start] + tops[start + length :]
        row[1] = 1.0
        row[5] = length / LONGEST_SET
        row[6] = float(length > 1 and shown[0] == shown[1])
        row[7] = float(length > 1 and shown[0] != shown[1])
        row[8] = min(shown) / MOST_VALUE
        row[9] = len(active) / LONGEST_SET
        row[10] = len(rest) / cap
        row[11] = float(not rest)
        row[17] = length / LONGEST_SET
        row[18] = decision.longest_without(start, length) / LONGEST_SET
        return row
    card = active[0] if action["end"] == "left" else active[-1]
    top = card[1] if action["flip"] else card[0]
    at = action["insert"]
    neighbours = [tops[index] for index in (at - 1, at) if 0 <= index < len(tops)]
    row[2 + action["and_show"]] = 1.0
    row[4] = float(action["flip"])
    row[10] = (len(tops) + 1) / cap
    row[12] = top / MOST_VALUE
    row[13] = at / len(tops) if tops else 0.0
    row[14] = float(action["end"] == "right")
    row[15] = float(top in neighbours)
    row[16] = float(any(abs(top - other) == 1 for other in neighbours))
    row[17] = (len(active) - 1) / LONGEST_SET
    row[18] = decision.longest_with(top, at) / LONGEST_SET
    return row


def _values(cards: Sequence[str]) -> int:
    return sum(CARD_VALUE[card] for card in cards)


def _scauver_row(action: Action, observation: Observation, config: Mapping[str, Any]) -> list[float]:
    kind = action["kind"]
    row = [0.0] * len(SCAUVER_COLUMNS)
    row[SCAUVER_KINDS.index(kind)] = 1.0
    base = len(SCAUVER_KINDS)
    seat = observation["seat"]
    field = observation["fields"][seat]
    left, right = list(field["left"]), list(field["right"])
    cap = max(observation["cap"], 1)
    bet = observation["bet"]
    owed = bet["to_call"][seat] if bet else 0
    if kind in ("bet", "raise"):
        amphoras = action["amount"] // observation["amphora"]
        row[base] = min((owed + action["amount"]) / cap, 1.0)
        row[base + 1] = amphoras / config["bet_max_amphoras"]
    elif kind == "call":
        row[base] = min(owed / cap, 1.0)
    elif kind == "setup":
        left, right = left + list(action["left"]), right + list(action["right"])
        row[base + 2], row[base + 3] = _values(action["left"]) / 30, _values(action["right"]) / 30
    elif kind == "place":
        value = CARD_VALUE[action["card"]] / MOST_VALUE
        if action["flank"] == "left":
            left.append(action["card"])
            row[base + 2] = value
        else:
            right.append(action["card"])
            row[base + 3] = value
    elif kind == "final":
        other = next(card for card in observation["hand"] if card != action["left"])
        left, right = [*left, action["left"]], [*right, other]
        row[base + 2], row[base + 3] = CARD_VALUE[action["left"]] / MOST_VALUE, CARD_VALUE[other] / MOST_VALUE
    elif kind == "vanguards":
        link = _values(action["left"])
        row[base + 7] = link / 30
        row[base + 8] = min(abs(_values(left) - _values(right)) * link / 300, 1.0)
        row[base + 9], row[base + 10] = len(action["left"]) / 3, len(action["right"]) / 3
    row[base + 4] = min(abs(_values(left) - _values(right)) / 40, 1.0)
    row[base + 5], row[base + 6] = len(left) / FLANK, len(right) / FLANK
    return row


def action_feature_width(game: str) -> int:
    return len(SCOUT_COLUMNS) if game == "scout" else len(SCAUVER_COLUMNS)


def action_features(
    game: str, observation: Observation, legal: Sequence[Action], config: Mapping[str, Any]
) -> np.ndarray:
    """One row per action of `legal` (the seat's legal actions, `observation` its observation)."""
    if game == "scout":
        decision = _ScoutDecision(observation)
        rows = [_scout_row(action, decision) for action in legal]
    else:
        rows = [_scauver_row(action, observation, config) for action in legal]
    return np.array(rows, np.float32).reshape(len(rows), action_feature_width(game))


# The same SCOUT rows from the legal actions' indices (codec.py) alone, each row one tuple: what the
# environments use. `action_features` above is the reference, row by row from the actions;
# tests/games/test_rl_incremental.py checks that both give the same matrix at every decision of many games.

_GAP = -100
"""A number no card carries, padding the hand at both ends so that a missing neighbour never chains."""


def _chains(tops: list[int]) -> tuple[list[list[int]], list[list[int]], list[int], list[int]]:
    """Per step of STEPS, the chain of that step ending at each position and the one starting there (position
    i at i + 1, a zero at each end); the longest set wholly before each gap and from it on."""
    size = len(tops)
    down, level, up = [0] * (size + 2), [0] * (size + 2), [0] * (size + 2)
    before = [0] * (size + 1)
    previous = _GAP
    for index, top in enumerate(tops, 1):
        step = top - previous
        previous = top
        down[index] = down[index - 1] + 1 if step == -1 else 1
        level[index] = level[index - 1] + 1 if step == 0 else 1
        up[index] = up[index - 1] + 1 if step == 1 else 1
        before[index] = max(before[index - 1], down[index], level[index], up[index])
    ending = [down, level, up]
    down, level, up = [0] * (size + 2), [0] * (size + 2), [0] * (size + 2)
    after = [0] * (size + 1)
    following = _GAP
    for index in range(size, 0, -1):
        top = tops[index - 1]
        step = following - top
        following = top
        down[index] = down[index + 1] + 1 if step == -1 else 1
        level[index] = level[index + 1] + 1 if step == 0 else 1
        up[index] = up[index + 1] + 1 if step == 1 else 1
        after[index - 1] = max(after[index], down[index], level[index], up[index])
    return ending, [down, level, up], before, after


_ORIENT_ROWS = tuple(
    tuple(float(column in ("orient", "flip") if flip else column == "orient") for column in SCOUT_COLUMNS)
    for flip in (False, True)
)


def _scout_matrix(observation: Observation, indices: Sequence[int]) -> np.ndarray:
    hand = observation["hand"]
    active = observation["active_set"]
    cap = hand_cap(observation["players"])
    tops = [card[0] for card in hand]
    size = len(tops)
    padded = [_GAP, *tops, _GAP]
    ending, starting, before, after = _chains(tops)
    shows_end = 2 + cap * LONGEST_SET
    shown_before = len(active) / LONGEST_SET
    active_after = (len(active) - 1) / LONGEST_SET
    scouted_hand = (size + 1) / cap
    values: list[float] = []
    add = values.extend
    for index in indices:
        if index < 2:
            add(_ORIENT_ROWS[index])
        elif index < shows_end:
            start, length = divmod(index - 2, LONGEST_SET)
            length += 1
            end = start + length
            first, last = padded[start + 1], padded[end]
            match = length > 1 and first == padded[start + 2]
            best, later = before[start], after[end]
            if later > best:
                best = later
            step = padded[end + 1] - padded[start]
            if -1 <= step <= 1 and ending[step + 1][start] + starting[step + 1][end + 1] > best:
                best = ending[step + 1][start] + starting[step + 1][end + 1]
            add(
                (
                    0.0, 1.0, 0.0, 0.0, 0.0, length / LONGEST_SET, float(match), float(length > 1 and not match),
                    min(first, last) / MOST_VALUE, shown_before, (size - length) / cap, float(length == size),
                    0.0, 0.0, 0.0, 0.0, 0.0, length / LONGEST_SET, best / LONGEST_SET,
                )
            )  # fmt: skip
        else:
            slot, at = divmod(index - shows_end, cap + 1)
            and_show, flip, right = slot & 1, (slot >> 1) & 1, slot >> 2
            top = (active[-1] if right else active[0])[flip]
            left_number, right_number = padded[at], padded[at + 1]
            joins, follows = top - left_number, right_number - top
            left = ending[joins + 1][at] if -1 <= joins <= 1 else 0
            following = starting[follows + 1][at + 1] if -1 <= follows <= 1 else 0
            longest = 1 + (left + following if joins == follows else left if left > following else following)
            best, later = before[at], after[at]
            if later > best:
                best = later
            if longest > best:
                best = longest
            add(
                (
                    0.0, 0.0, float(not and_show), float(and_show), float(flip), 0.0, 0.0, 0.0, 0.0, 0.0,
                    scouted_hand, 0.0, top / MOST_VALUE, at / size if size else 0.0, float(right),
                    float(top in (left_number, right_number)),
                    float(abs(top - left_number) == 1 or abs(top - right_number) == 1), active_after,
                    best / LONGEST_SET,
                )
            )  # fmt: skip
    return np.array(values, np.float32).reshape(len(indices), len(SCOUT_COLUMNS))


def indexed_action_features(
    game: str,
    observation: Observation,
    indices: Sequence[int],
    legal: Sequence[Action],
    config: Mapping[str, Any],
) -> np.ndarray:
    """`action_features` of the legal actions `legal`, whose codec indices are `indices` (same order): SCOUT's
    rows from the indices alone (no action map read), Scauver's as `action_features` does."""
    if game == "scout":
        return scout_index_rows(observation, indices)
    return action_features(game, observation, legal, config)


def scout_index_rows(observation: Observation, indices: Sequence[int], compiled: bool = True) -> np.ndarray:
    """SCOUT's rows of the codec indices `indices` (increasing) of the seat's legal actions: by the C extension
    where it was built (compiled.py) and `compiled` is true, else by the Python above; the same numbers."""
    if not compiled or _fastscout is None:
        return _scout_matrix(observation, indices)
    out = np.empty((len(indices), len(SCOUT_COLUMNS)), np.float32)
    chosen = indices if type(indices) is list else list(indices)
    cap = hand_cap(observation["players"])
    _fastscout.scout_matrix(observation["hand"], observation["active_set"], chosen, cap, out)
    return out

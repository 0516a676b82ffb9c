"""Fixed integer encodings of every action of SCOUT and Scauver, per game and player count.

An environment offers a fixed `Discrete(size)` action space; at each decision the legal actions of the
engine map to distinct indices (the action mask), and an index maps back to exactly one legal action. The
encoding reads only what the seat's observation holds (positions in its own hand or flanks, the round's
amphora), so no codec can use what the seat may not see. Every legal action has an index and no two share
one: `tests/games/test_rl_codec.py` checks that over many seeded games at every player count.

SCOUT (H = the largest hand possible: 14 at two seats, 36, 44 and 45 cards at 3, 4 and 5 seats, all the
round's cards; S = 10, the longest set: a run holds at most the ten numbers and a match at most the nine
cards that carry one number):

    0, 1                                  orient, flip false / true
    2 + start * S + (length - 1)          show {start, length}, 0 <= start < H, 1 <= length <= S
    2 + H * S + ((end * 2 + flip) * 2 + and_show) * (H + 1) + insert
                                          scout {end: 0 left / 1 right, flip, and_show, insert 0..H}

Scauver (B = bet_max_amphoras - bet_min_amphoras + 1; amounts in amphoras of the round, which is a
bijection: every offered size is k amphoras for one k in bet_min..bet_max, and the chip amount is k times
the round's amphora):

    0..79                                 setup: scauver.SETUP_PATTERNS[i] over the positions of the (sorted)
                                          hand: pattern i puts hand cards FLANK_SUBSETS[left] left, [right] right
    80, 81, 82                            check, call, fold
    83 + (k - bet_min)                    bet k amphoras
    83 + B + (k - bet_min)                raise by k amphoras
    83 + 2B + position * 2 + flank        place hand[position] (0..2, the sorted hand) into left 0 / right 1
    89 + 2B + i                           final: hand[i] left, the other card right (i = 0, 1)
    91 + 2B + left * 14 + right           vanguards: VANGUARDS[left] of the left flank and VANGUARDS[right]
                                          of the right flank, positions in the flank sorted by card order
    287 + 2B                              no_link
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import combinations
from typing import Any, Protocol

from .. import Action, Observation
from ..scauver import CARD_ORDER, FLANK_SUBSETS, SETUP_PATTERNS
from ..scout import TABLES, TWO_PLAYER_CHIPS
from .compiled import _fastscout

LONGEST_SET = 10
"""The most cards a SCOUT set can hold: a run uses each number at most once, a match at most 9 cards."""

VANGUARDS: tuple[tuple[int, ...], ...] = tuple(
    indices for size in range(1, 4) for indices in combinations(range(4), size)
)
"""Every vanguard of a 4-card flank (1 to 3 cards), as positions in the flank sorted by card order."""


class ActionCodec(Protocol):
    """Maps the legal actions of one seat's decision to distinct indices in range(size) and back."""

    @property
    def size(self) -> int: ...

    def encode(self, action: Action, observation: Observation) -> int:
        """The index of a legal `action`, given the observation of the seat that takes it."""
        ...


def legal_index(codec: ActionCodec, legal: Sequence[Action], observation: Observation) -> dict[int, Action]:
    """Every legal action by its index; raises AssertionError if two legal actions share an index."""
    table = {codec.encode(action, observation): action for action in legal}
    assert len(table) == len(legal), "two legal actions share an index"
    return table


MEMO_LIMIT = 1 << 16
"""How many actions `indexed_legal` remembers before it forgets them all (SCOUT's engine shares about 2,400
templates, each remembered once per table, so play through the engine's own objects never reaches it)."""
_MEMOS: dict[int, dict[int, tuple[Action, int]]] = {}
"""Per hand cap, {id(action): (action, index)}."""


def indexed_legal(codec: ActionCodec, legal: Sequence[Action], observation: Observation) -> dict[int, Action]:
    """`legal_index` of a read-only `legal` (`legal_actions_view`), faster: SCOUT's index depends on the action
    alone, and its engine hands out the same shared templates at every decision, so each object's index is
    remembered by identity (the memo holds the object, so no other object can take its id while it is there;
    the C extension, where built, reads the memo: compiled.py)."""
    if not isinstance(codec, ScoutCodec):
        return legal_index(codec, legal, observation)
    memo = _MEMOS.get(codec.hand_cap)
    if memo is None:
        memo = _MEMOS[codec.hand_cap] = {}
    if _fastscout is not None:
        known = _fastscout.indexed(legal, memo)
        if known is not None:
            assert len(known) == len(legal), "two legal actions share an index"
            return known
    table = {}
    for action in legal:
        remembered = memo.get(id(action))
        if remembered is None or remembered[0] is not action:
            if len(memo) >= MEMO_LIMIT:
                memo.clear()
            remembered = memo[id(action)] = (action, codec.encode(action, observation))
        table[remembered[1]] = action
    assert len(table) == len(legal), "two legal actions share an index"
    return table


@cache
def hand_cap(players: int) -> int:
    """The most cards a SCOUT hand can hold: two seats scout at most their 3 chips' worth; with more seats a
    hand can grow to every card of the round."""
    table = TABLES[players]
    return table.hand_size + TWO_PLAYER_CHIPS if table.two_players else len(table.deck)


@dataclass(frozen=True)
class ScoutCodec:
    players: int
    hand_cap: int = 0
    size: int = 0

    @classmethod
    def of(cls, players: int) -> ScoutCodec:
        cap = hand_cap(players)
        return cls(players, cap, 2 + cap * LONGEST_SET + 8 * (cap + 1))

    def encode(self, action: Action, observation: Observation) -> int:
        kind = action["kind"]
        cap = self.hand_cap
        if kind == "show":
            start, length = action["start"], action["length"]
            assert 0 <= start < cap and 1 <= length <= LONGEST_SET, action
            return 2 + start * LONGEST_SET + length - 1
        if kind == "orient":
            return int(action["flip"])
        assert kind == "scout", action
        insert = action["insert"]
        assert 0 <= insert <= cap, action
        slot = ((action["end"] == "right") * 2 + action["flip"]) * 2 + action["and_show"]
        return 2 + cap * LONGEST_SET + slot * (cap + 1) + insert


SETUP_INDEX = {pattern: index for index, pattern in enumerate(SETUP_PATTERNS)}
FLANK_SUBSET_INDEX = {subset: index for index, subset in enumerate(FLANK_SUBSETS)}
VANGUARD_INDEX = {subset: index for index, subset in enumerate(VANGUARDS)}


def _positions(cards: Sequence[str], among: Sequence[str]) -> tuple[int, ...]:
    return tuple(sorted(among.index(card) for card in cards))


def _by_card_order(cards: Sequence[str]) -> list[str]:
    return sorted(cards, key=CARD_ORDER.__getitem__)


@dataclass(frozen=True)
class ScauverCodec:
    bet_min: int
    bet_max: int

    @classmethod
    def of(cls, config: Mapping[str, Any]) -> ScauverCodec:
        return cls(config["bet_min_amphoras"], config["bet_max_amphoras"])

    @property
    def sizes(self) -> int:
        return self.bet_max - self.bet_min + 1

    @property
    def size(self) -> int:
        return 288 + 2 * self.sizes

    def encode(self, action: Action, observation: Observation) -> int:
        kind = action["kind"]
        hand = observation["hand"]
        sizes = self.sizes
        if kind == "setup":
            left = FLANK_SUBSET_INDEX[_positions(action["left"], hand)]
            right = FLANK_SUBSET_INDEX[_positions(action["right"], hand)]
            return SETUP_INDEX[left, right]
        if kind in ("check", "call", "fold"):
            return 80 + ("check", "call", "fold").index(kind)
        if kind in ("bet", "raise"):
            amount, amphora = action["amount"], observation["amphora"]
            steps = amount // amphora
            assert steps * amphora == amount and self.bet_min <= steps <= self.bet_max, action
            return 83 + (kind == "raise") * sizes + steps - self.bet_min
        if kind == "place":
            return 83 + 2 * sizes + hand.index(action["card"]) * 2 + (action["flank"] == "right")
        if kind == "final":
            return 89 + 2 * sizes + hand.index(action["left"])
        if kind == "no_link":
            return 287 + 2 * sizes
        assert kind == "vanguards", action
        field = observation["fields"][observation["seat"]]
        left = VANGUARD_INDEX[_positions(action["left"], _by_card_order(field["left"]))]
        right = VANGUARD_INDEX[_positions(action["right"], _by_card_order(field["right"]))]
        return 91 + 2 * sizes + left * len(VANGUARDS) + right


def codec_for(game: str, players: int, config: Mapping[str, Any]) -> ScoutCodec | ScauverCodec:
    """The action encoding of `game` at `players` seats with the resolved `config`."""
    if game == "scout":
        return ScoutCodec.of(players)
    if game == "scauver":
        return ScauverCodec.of(config)
    raise ValueError(f"no action encoding for {game!r}")

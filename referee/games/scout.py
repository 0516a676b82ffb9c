"""SCOUT (Kei Kajino, Oink Games) for 2 to 5 players, as referee/games/scout.md states it.

Read top to bottom: constants and the deck per table, the strength of a set, the deal (seeded or
explicit), the game, the state (turns, round ends, scoring) and the observation.

The state is compact: a card is one int `top << 4 | bottom`, a hand, the Active Set and a captured pile
are bytes of such ints (a deal keeps them as tuples), a set's strength is one int that orders sets exactly
as the rulebook does, every action is a shared template (legal_actions hands out copies), and the public
history is kept as records that become the observation's maps when first observed.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, NamedTuple

from .base import (
    Action,
    Config,
    ConfigError,
    Game,
    GameInfo,
    GameState,
    HistoryEntry,
    IllegalAction,
    Observation,
    Option,
    shared_ranks,
)

# Constants ---------------------------------------------------------------------------------------------

LOWEST, HIGHEST = 1, 10
TWO_PLAYER_CHIPS = 3
ENDS = ("left", "right")

# Strength of a set: length first, then a match over a run, then the smallest number (1..10 < 16).
LENGTH_WEIGHT = 32
MATCH_BONUS = 16
SINGLE_BASE = LENGTH_WEIGHT + MATCH_BONUS
NO_NEIGHBOUR = -LENGTH_WEIGHT  # a number no card has, nor any card's number plus or minus one
NOTHING = 0  # the strength of an empty table, and of a card sequence that is not a valid set


def card_code(top: int, bottom: int) -> int:
    return top << 4 | bottom


ROTATED = tuple((code & 15) << 4 | code >> 4 for code in range(256))


def card_pair(code: int) -> list[int]:
    """A card as the interface shows it: [top, bottom]."""
    return [code >> 4, code & 15]


@dataclass(frozen=True)
class Table:
    """What the player count fixes: the deck in play (cards as (low, high)), hand size and rounds."""

    players: int
    deck: tuple[tuple[int, int], ...]
    hand_size: int
    rounds: int

    @property
    def two_players(self) -> bool:
        """Paid chips, an extra turn after a Scout, no Scout & Show, one shuffle for both rounds."""
        return self.players == 2


def _deck_without(removed: Sequence[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    return tuple(
        (low, high)
        for low in range(LOWEST, HIGHEST + 1)
        for high in range(low + 1, HIGHEST + 1)
        if (low, high) not in removed
    )


TABLES = {
    2: Table(2, _deck_without([(9, 10)]), hand_size=11, rounds=2),
    3: Table(3, _deck_without([(low, HIGHEST) for low in range(LOWEST, HIGHEST)]), hand_size=12, rounds=3),
    4: Table(4, _deck_without([(9, 10)]), hand_size=11, rounds=4),
    5: Table(5, _deck_without([]), hand_size=9, rounds=5),
}


class Phase(Enum):
    ORIENT = "orient"
    PLAY = "play"
    OVER = "over"


# Module names for the members: reading an Enum member through its class costs a Python-level lookup.
ORIENT, PLAY, OVER = Phase.ORIENT, Phase.PLAY, Phase.OVER


class RoundEnd(Enum):
    HAND_EMPTIED = "hand_emptied"  # condition I: a Show emptied the shower's hand
    ALL_SCOUTED = "all_scouted"  # condition II: every other seat only Scouted since the owner's Show
    CANNOT_ACT = "cannot_act"  # two players: the seat to move can neither Show nor Scout


# Sets and their strength -------------------------------------------------------------------------------


def set_strength(tops: Sequence[int]) -> int:
    """The strength of `tops` (numbers in use, hand order) as a set, or NOTHING if it is not a valid set.

    A stronger set has a higher strength; a Show is legal when its strength exceeds the Active Set's."""
    size = len(tops)
    if size == 0:
        return NOTHING
    first = tops[0]
    if size == 1:
        return SINGLE_BASE + first
    step = tops[1] - first
    if not -1 <= step <= 1:
        return NOTHING
    for index in range(2, size):
        if tops[index] - tops[index - 1] != step:
            return NOTHING
    if step == 0:
        return size * LENGTH_WEIGHT + MATCH_BONUS + first
    return size * LENGTH_WEIGHT + (first if step == 1 else tops[-1])


def _longest_sets(tops: Sequence[int]) -> list[int]:
    """For each start, the length of the longest valid set starting there (1 at least)."""
    size = len(tops)
    longest = [1] * size
    previous_step = 2
    for index in range(size - 2, -1, -1):
        step = tops[index + 1] - tops[index]
        if -1 <= step <= 1:
            longest[index] = longest[index + 1] + 1 if step == previous_step else 2
            previous_step = step
        else:
            previous_step = 2
    return longest


def _strength_of(length: int, step: int, lowest: int) -> int:
    """The strength of a set of `length` >= 2 cards with that step (0: a match) and smallest number."""
    return length * LENGTH_WEIGHT + (MATCH_BONUS if step == 0 else 0) + lowest


def _strength_at(tops: Sequence[int], start: int, length: int) -> int:
    """The strength of the valid set tops[start:start + length] (known valid)."""
    first = tops[start]
    if length == 1:
        return SINGLE_BASE + first
    step = tops[start + 1] - first
    if step == 0:
        return length * LENGTH_WEIGHT + MATCH_BONUS + first
    return length * LENGTH_WEIGHT + (first if step == 1 else first - length + 1)


# Every action once, as templates: legal_actions hands out copies (copying a dict is twice as fast as
# building it), so a caller that mutates an action cannot change the tables.
_MAX_HAND = max(len(table.deck) for table in TABLES.values())
_SHOWS = tuple(
    tuple({"kind": "show", "start": start, "length": length} for length in range(_MAX_HAND + 1))
    for start in range(_MAX_HAND)
)
_SHOWS_LONGEST_FIRST = tuple(shows[::-1] for shows in _SHOWS)  # [start][_MAX_HAND - length]
_SINGLE_SHOWS = tuple(shows[1] for shows in _SHOWS)


def show_templates(tops: Sequence[int], to_beat: int) -> list[Action]:
    """The Shows in `tops` stronger than `to_beat`, by start then length, as shared templates.

    At each start every length from the shortest that beats `to_beat` to the longest valid set there beats
    it (length dominates strength). One pass from the right end finds both, appending each start's Shows
    longest first, so that reversing the list at the end orders them."""
    if to_beat >= 2 * LENGTH_WEIGHT:
        return _shows_beating_a_set(tops, to_beat)
    shows: list[Action] = []
    add_single = shows.append
    single_beats = to_beat - SINGLE_BASE
    longest_first, one_card = _SHOWS_LONGEST_FIRST, _MAX_HAND - 1
    longest, previous_step = 0, 2
    next_top = NO_NEIGHBOUR
    start = len(tops)
    for first in reversed(tops):
        start -= 1
        step = next_top - first
        next_top = first
        if -1 <= step <= 1:
            longest = longest + 1 if step == previous_step else 2
            previous_step = step
            shows += longest_first[start][_MAX_HAND - longest : one_card + (first > single_beats)]
        else:
            previous_step = 2
            if first > single_beats:
                add_single(_SINGLE_SHOWS[start])
    shows.reverse()
    return shows


def _shows_beating_a_set(tops: Sequence[int], to_beat: int) -> list[Action]:
    """show_templates where `to_beat` is a set of two or more cards (so no single beats it)."""
    shows: list[Action] = []
    shortest = to_beat // LENGTH_WEIGHT
    base = shortest * LENGTH_WEIGHT
    longest, previous_step = 0, 2
    next_top = NO_NEIGHBOUR
    start = len(tops)
    for first in reversed(tops):
        start -= 1
        step = next_top - first
        next_top = first
        if not -1 <= step <= 1:
            previous_step = 2
            continue
        longest = longest + 1 if step == previous_step else 2
        previous_step = step
        if longest < shortest:
            continue
        lowest = first - shortest + 1 if step == -1 else first
        strength = base + (MATCH_BONUS if step == 0 else 0) + lowest
        least = shortest if strength > to_beat else shortest + 1
        shows += _SHOWS_LONGEST_FIRST[start][_MAX_HAND - longest : _MAX_HAND + 1 - least]
    shows.reverse()
    return shows


def show_spans(tops: Sequence[int], to_beat: int) -> list[tuple[int, int]]:
    """Every (start, length) of a set in `tops` stronger than `to_beat`, by start then length."""
    return [(show["start"], show["length"]) for show in show_templates(tops, to_beat)]


def best_strength(tops: Sequence[int]) -> int:
    """The strength of the strongest set in `tops` (NOTHING for an empty hand)."""
    best = NOTHING
    for start, longest in enumerate(_longest_sets(tops)):
        strength = _strength_at(tops, start, longest)
        if strength > best:
            best = strength
    return best


class InsertProfile(NamedTuple):
    """What a hand offers around each gap, so that "can a Show follow inserting number v at gap p?" costs
    O(1) per (v, p): the strongest set untouched by the gap, and the longest set that ends just left of it
    or starts just right of it (which the new card may extend, if it continues that set's step)."""

    tops: Sequence[int]
    untouched: list[int]  # per gap 0..len: the strongest set entirely left or entirely right of it
    end_length: list[int]  # per card: the longest set ending with it ...
    end_step: list[int]  # ... and its step (0 match, +1 or -1 run; NO_NEIGHBOUR for a single card)
    start_length: list[int]
    start_step: list[int]

    @classmethod
    def of(cls, tops: Sequence[int]) -> InsertProfile:
        size = len(tops)
        end_length, end_step, left_best = [1] * size, [NO_NEIGHBOUR] * size, [NOTHING] * (size + 1)
        length, step, best = 0, NO_NEIGHBOUR, NOTHING
        for index in range(size):
            top = tops[index]
            new_step = top - tops[index - 1] if index else NO_NEIGHBOUR
            if -1 <= new_step <= 1:
                length = length + 1 if new_step == step else 2
                step = end_step[index] = new_step
                end_length[index] = length
                strength = _strength_of(length, step, top - length + 1 if step == 1 else top)
            else:
                length, step, strength = 1, NO_NEIGHBOUR, SINGLE_BASE + top
            if strength > best:
                best = strength
            left_best[index + 1] = best
        start_length, start_step, right_best = [1] * size, [NO_NEIGHBOUR] * size, [NOTHING] * (size + 1)
        length, step, best = 0, NO_NEIGHBOUR, NOTHING
        for index in range(size - 1, -1, -1):
            top = tops[index]
            new_step = tops[index + 1] - top if index + 1 < size else NO_NEIGHBOUR
            if -1 <= new_step <= 1:
                length = length + 1 if new_step == step else 2
                step = start_step[index] = new_step
                start_length[index] = length
                strength = _strength_of(length, step, top if step >= 0 else top - length + 1)
            else:
                length, step, strength = 1, NO_NEIGHBOUR, SINGLE_BASE + top
            if strength > best:
                best = strength
            right_best[index] = best
        untouched = [left if left > right else right for left, right in zip(left_best, right_best, strict=True)]
        return cls(tops, untouched, end_length, end_step, start_length, start_step)

    def can_show_after_insert(self, top: int, gap: int, to_beat: int) -> bool:
        """Whether the hand with a card of number `top` inserted at `gap` holds a set stronger than `to_beat`."""
        if self.untouched[gap] > to_beat or SINGLE_BASE + top > to_beat:
            return True
        tops = self.tops
        left = right = 0
        left_step = right_step = NO_NEIGHBOUR
        if gap:
            left_step = top - tops[gap - 1]
            if -1 <= left_step <= 1:
                left = self.end_length[gap - 1] if self.end_step[gap - 1] == left_step else 1
        if gap < len(tops):
            right_step = tops[gap] - top
            if -1 <= right_step <= 1:
                right = self.start_length[gap] if self.start_step[gap] == right_step else 1
        if left and right and left_step == right_step:
            low = top - left if left_step == 1 else top - right if left_step == -1 else top
            return _strength_of(left + 1 + right, left_step, low) > to_beat
        if left and _strength_of(left + 1, left_step, top - left if left_step == 1 else top) > to_beat:
            return True
        return bool(right) and _strength_of(right + 1, right_step, top - right if right_step == -1 else top) > to_beat


def round_score(captured: int, chips: int, in_hand: int, exempt: bool) -> int:
    """+1 per captured card, +1 per Scout chip (two players: unspent chip), -1 per card in hand unless exempt."""
    return captured + chips - (0 if exempt else in_hand)


# The deal ----------------------------------------------------------------------------------------------

Hand = tuple[int, ...]
Deal = tuple[tuple[Hand, ...], ...]  # per round, per seat: the hand as dealt (before the orient decision)


# Per table, each card of the deck as its two codes: (high on top, low on top), picked by a drawn bit.
_ORIENTATIONS = {
    players: tuple((card_code(high, low), card_code(low, high)) for low, high in table.deck)
    for players, table in TABLES.items()
}


def _shuffled(table: Table, rng: random.Random) -> list[int]:
    cards = [codes[rng.getrandbits(1)] for codes in _ORIENTATIONS[table.players]]
    rng.shuffle(cards)
    return cards


def deal_from_seed(table: Table, seed: int) -> Deal:
    """Every round's hands from `seed`: each card's orientation is drawn, then the deck shuffled; seat s gets
    the s-th block of hand_size cards. Two players: one shuffle; round 1 the first 22 cards, round 2 the rest."""
    rng = random.Random(seed)
    size, players = table.hand_size, table.players
    if table.two_players:
        cards = _shuffled(table, rng)
        decks = [cards[: size * players], cards[size * players :]]
    else:
        decks = [_shuffled(table, rng) for _ in range(table.rounds)]
    return tuple(tuple(tuple(deck[seat * size : (seat + 1) * size]) for seat in range(players)) for deck in decks)


def parse_deal(table: Table, deal: Any) -> Deal:
    """An explicit deal {"rounds": [[hand of seat 0, ...], ...]} (hand: [[top, bottom], ...] as dealt), checked:
    one entry per round and seat, hand_size cards each, cards of the deck in play, none twice in a round
    (two players: none twice in the game, the two rounds using the 44 cards)."""
    if not isinstance(deal, dict) or set(deal) != {"rounds"}:
        raise ConfigError('an explicit SCOUT deal is a map {"rounds": [[hand of seat 0, ...], ...]}')
    rounds = deal["rounds"]
    if not isinstance(rounds, list | tuple) or len(rounds) != table.rounds:
        raise ConfigError(f"an explicit deal for {table.players} players has {table.rounds} rounds")
    deck = set(table.deck)
    seen_in_game: set[tuple[int, int]] = set()
    parsed = []
    for number, hands in enumerate(rounds, 1):
        if not isinstance(hands, list | tuple) or len(hands) != table.players:
            raise ConfigError(f"round {number} of the deal must hold {table.players} hands")
        seen = seen_in_game if table.two_players else set()
        parsed.append(tuple(_parse_hand(table, deck, seen, hand, number, seat) for seat, hand in enumerate(hands)))
    return tuple(parsed)


def _parse_hand(
    table: Table, deck: set[tuple[int, int]], seen: set[tuple[int, int]], hand: Any, number: int, seat: int
) -> Hand:
    if not isinstance(hand, list | tuple) or len(hand) != table.hand_size:
        raise ConfigError(f"round {number}, seat {seat}: a hand is a list of {table.hand_size} cards [top, bottom]")
    codes = []
    for card in hand:
        if not isinstance(card, list | tuple) or len(card) != 2 or type(card[0]) is not int or type(card[1]) is not int:
            raise ConfigError(f"round {number}, seat {seat}: a card is [top, bottom], two ints, not {card!r:.50}")
        top, bottom = card
        pair = (top, bottom) if top < bottom else (bottom, top)
        if pair not in deck:
            raise ConfigError(f"round {number}, seat {seat}: {card!r} is not a card of the {table.players}-player deck")
        if pair in seen:
            raise ConfigError(f"round {number}, seat {seat}: the card {list(pair)} is dealt twice")
        seen.add(pair)
        codes.append(card_code(top, bottom))
    return tuple(codes)


def deal_as_data(deal: Deal) -> dict[str, list[list[list[list[int]]]]]:
    """A deal in the explicit-deal format (so a seeded deal can be replayed as an explicit one)."""
    return {"rounds": [[[card_pair(code) for code in hand] for hand in hands] for hands in deal]}


# The game ----------------------------------------------------------------------------------------------


class ScoutGame(Game):
    info = GameInfo(
        name="scout",
        title="SCOUT",
        min_players=min(TABLES),
        max_players=max(TABLES),
        options=(
            Option(
                "first_player",
                0,
                "seat that starts round 1; each later round starts one seat to the left",
                minimum=0,
                maximum=max(TABLES) - 1,
            ),
        ),
        summary="Kei Kajino's shedding game: Show stronger sets or Scout a card; as many rounds as players.",
        log_keys=("history",),
    )

    def _new_state(self, players: int, seed: int, config: Config, deal: Any) -> ScoutState:
        if config["first_player"] >= players:
            raise ConfigError(f"first_player must be a seat of the table (0 to {players - 1})")
        table = TABLES[players]
        dealt = deal_from_seed(table, seed) if deal is None else parse_deal(table, deal)
        state = ScoutState()
        state._init_common(self, players, seed, config, deal)
        state._start(table, dealt)
        return state


# The state ---------------------------------------------------------------------------------------------

# A hand, the Active Set and a captured pile are bytes of card codes in order: slicing, joining, rotating
# them and reading off their numbers in use (translate through TOPS) are each one call.
TOPS = bytes(code >> 4 for code in range(256))
ROTATIONS = bytes(ROTATED)
CARD_BYTES = tuple(bytes((code,)) for code in range(256))


def _strength_of_cards(cards: bytes) -> int:
    """set_strength of cards given as codes; a single card or none without a pass over the numbers."""
    if len(cards) > 1:
        return set_strength(cards.translate(TOPS))
    return SINGLE_BASE + (cards[0] >> 4) if cards else NOTHING


_ORIENTS = tuple({"kind": "orient", "flip": flip} for flip in (False, True))
_SCOUTS = {
    (end, flip, and_show): tuple(
        {"kind": "scout", "end": end, "flip": flip, "insert": gap, "and_show": and_show} for gap in range(_MAX_HAND + 1)
    )
    for end in ENDS
    for flip in (False, True)
    for and_show in (False, True)
}
# The plain Scouts of a hand, by the number of ends of the Active Set (1 or 2), then of gaps in the hand.
_PLAIN_SCOUTS = tuple(
    tuple(
        tuple(scout for end in ENDS[:ends] for flip in (False, True) for scout in _SCOUTS[end, flip, False][:gaps])
        for gaps in range(_MAX_HAND + 2)
    )
    for ends in range(3)
)


def _scout_show_templates(tops: bytes, active: bytes, ends: int, gaps: int) -> list[Action]:
    """The Scouts with and_show of a hand (its numbers in use `tops`, `gaps` insert positions) from `active`
    (`ends` of it to take from): those after which some Show beats what remains of the Active Set."""
    offered: list[Action] = []
    profile = None
    for end in ENDS[:ends]:
        card, remaining = (active[0], active[1:]) if end == "left" else (active[-1], active[:-1])
        to_beat = _strength_of_cards(remaining)
        for flip in (False, True):
            top = (card & 15) if flip else card >> 4
            scout_shows = _SCOUTS[end, flip, True]
            if SINGLE_BASE + top > to_beat:
                offered += scout_shows[:gaps]
                continue
            if profile is None:
                profile = InsertProfile.of(tops)
            offered += [scout_shows[gap] for gap in range(gaps) if profile.can_show_after_insert(top, gap, to_beat)]
    return offered


# A round's public history is kept as records, ("orient", seat, flip), ("show", seat, start, length, cards,
# captured) and ("scout", seat, end, flip, insert, and_show, card), and made into maps when first observed.
PublicRecord = tuple[Any, ...]


def history_entry(record: PublicRecord) -> dict[str, Any]:
    """A public record as the observation's history shows it."""
    kind, seat = record[0], record[1]
    if kind == "orient":
        return {"seat": seat, "kind": "orient", "flip": record[2]}
    if kind == "show":
        _, _, start, length, cards, captured = record
        pairs = [[code >> 4, code & 15] for code in cards]
        return {"seat": seat, "kind": "show", "start": start, "length": length, "cards": pairs, "captured": captured}
    _, _, end, flip, gap, and_show, card = record
    return {
        "seat": seat,
        "kind": "scout",
        "end": end,
        "flip": flip,
        "insert": gap,
        "and_show": and_show,
        "card": [card >> 4, card & 15],
    }


class ScoutState(GameState):
    """One game of SCOUT. Seats act only through `apply`; everything else reads."""

    _table: Table
    _two_players: bool
    _dealt: Deal
    _round_index: int
    _phase: Phase
    _starter: int
    _current: int
    _hands: list[bytes]
    _active: bytes
    _active_strength: int
    _owner: int | None
    _captured: list[bytes]
    _chips: list[int]
    _scout_show_used: list[bool]
    _must_show: bool
    _scouts_in_row: int
    _orient_choices: list[bool | None]
    _public: list[PublicRecord]
    _history: list[dict[str, Any]]
    _totals: list[int]
    _finished_rounds: list[dict[str, Any]]
    _legal_cache: list[Action] | None

    def _start(self, table: Table, dealt: Deal) -> None:
        self._table = table
        self._two_players = table.two_players
        self._dealt = dealt
        self._totals = [0] * table.players
        self._finished_rounds = []
        self._round_index = 0
        self._deal_round()

    def _deal_round(self) -> None:
        players = self._table.players
        self._phase = ORIENT
        self._starter = (self.config["first_player"] + self._round_index) % players
        self._current = self._starter
        self._hands = [bytes(hand) for hand in self._dealt[self._round_index]]
        self._active = b""
        self._active_strength = NOTHING
        self._owner = None
        self._captured = [b""] * players
        self._chips = [TWO_PLAYER_CHIPS if self._two_players else 0] * players
        self._scout_show_used = [False] * players
        self._must_show = False
        self._scouts_in_row = 0
        self._orient_choices = [None] * players
        self._public = []
        self._history = []
        self._legal_cache = None

    def deal_round(self, hands: Any) -> None:
        """Deal the round now starting `hands` (one hand a seat, [[top, bottom], ...] as dealt, checked as an
        explicit deal's round is) in place of the cards it was dealt, before any seat has acted in it: for a
        caller that learns a round's cards only when it starts (OpenSpiel's chance nodes), without replaying
        the game. The deal becomes explicit (`deal` and `dealt` give it), so that a new game on it replays
        this history to this state; at two seats the other round keeps its cards if they fit, else it is
        dealt the cards this one leaves, in deck order (the two rounds share one deck)."""
        if self._phase is not ORIENT or any(choice is not None for choice in self._orient_choices):
            raise IllegalAction("a round is dealt only before any seat has acted in it")
        table, number = self._table, self._round_index
        if not isinstance(hands, list | tuple) or len(hands) != table.players:
            raise ConfigError(f"a round of the deal must hold {table.players} hands")
        dealt = list(self._dealt)
        earlier = dealt[:number] if table.two_players else []
        seen = {_card_name(code) for hands_before in earlier for hand in hands_before for code in hand}
        dealt[number] = tuple(
            _parse_hand(table, set(table.deck), seen, hand, number + 1, seat) for seat, hand in enumerate(hands)
        )
        later = dealt[number + 1 :] if table.two_players else []
        if any(_card_name(code) in seen for hands_after in later for hand in hands_after for code in hand):
            left = [card_code(*card) for card in table.deck if card not in seen]
            size = table.hand_size
            dealt[number + 1] = tuple(tuple(left[seat * size : (seat + 1) * size]) for seat in range(table.players))
        self._dealt = tuple(dealt)
        self.deal = deal_as_data(self._dealt)
        self._hands = [bytes(hand) for hand in self._dealt[number]]
        self._legal_cache = None

    # Reading the state.

    @property
    def round(self) -> int:
        return self._round_index + 1

    @property
    def dealt(self) -> dict[str, Any]:
        """The deal of this game (seeded or explicit) in the explicit-deal format."""
        return deal_as_data(self._dealt)

    def is_over(self) -> bool:
        return self._phase is OVER

    def to_move(self) -> list[int]:
        phase = self._phase
        if phase is PLAY:
            return [self._current]
        if phase is ORIENT:
            return [seat for seat, choice in enumerate(self._orient_choices) if choice is None]
        return []

    def _is_to_move(self, seat: Any) -> bool:
        if self._phase is PLAY:
            return self._current == seat
        return seat in self.to_move()

    def result(self) -> dict[str, list[int]]:
        """Totals and shared ranks (of the rounds finished so far, if the game is not over)."""
        return {"scores": list(self._totals), "ranks": shared_ranks(self._totals)}

    def legal_actions(self, seat: int) -> list[Action]:
        return list(map(dict.copy, self.legal_actions_view(seat)))

    def legal_actions_view(self, seat: int) -> Sequence[Action]:
        """The shared action templates themselves (legal_actions copies them)."""
        phase = self._phase
        if phase is PLAY:
            if seat != self._current:
                return ()
            templates = self._legal_cache
            if templates is None:
                templates = self._legal_cache = self._play_templates(seat)
            return templates
        if phase is ORIENT and self._orient_choices[seat] is None:
            return _ORIENTS
        return ()

    def _play_templates(self, seat: int) -> list[Action]:
        """The legal actions of the seat to move, as shared templates: Shows, Scouts, then Scout & Shows."""
        hand = self._hands[seat]
        tops = hand.translate(TOPS)
        actions = show_templates(tops, self._active_strength)
        active = self._active
        if self._must_show or not active:
            return actions
        ends = 1 if len(active) == 1 else 2
        gaps = len(hand) + 1
        if self._two_players:
            if self._chips[seat]:
                actions += _PLAIN_SCOUTS[ends][gaps]
            return actions
        actions += _PLAIN_SCOUTS[ends][gaps]
        if not self._scout_show_used[seat]:
            actions += _scout_show_templates(tops, active, ends, gaps)
        return actions

    # Checking an action, and applying it if legal.

    def _apply_if_legal(self, seat: int, action: Action) -> str | None:
        """Check the action (the seat is known to be to move) and apply it if legal: one look at its kind."""
        kind = action["kind"]
        if self._phase is ORIENT:
            if kind != "orient" or len(action) != 2 or type(action.get("flip")) is not bool:
                return 'at the start of a round every seat orients its hand: {"kind": "orient", "flip": bool}'
            self._orient(seat, action["flip"])
            return None
        if kind == "show":
            return self._show_if_legal(seat, action)
        if kind == "scout":
            return self._scout_if_legal(seat, action)
        return f"{kind!r} is not an action now: a seat shows or scouts"

    def _show_if_legal(self, seat: int, action: Action) -> str | None:
        """Why the Show is not legal, or None once it is made (the checks find the cards and their strength
        that the Show then uses)."""
        start, length = action.get("start"), action.get("length")
        if len(action) != 3 or type(start) is not int or type(length) is not int:
            return 'a Show is {"kind": "show", "start": int, "length": int}'
        hand = self._hands[seat]
        if start < 0 or length < 1 or start + length > len(hand):
            return f"cards {start}..{start + length - 1} are not in a hand of {len(hand)} cards"
        shown = hand[start : start + length]
        strength = SINGLE_BASE + (shown[0] >> 4) if length == 1 else set_strength(shown.translate(TOPS))
        if strength == NOTHING:
            return "those cards are neither a match nor a run"
        if strength <= self._active_strength:
            return "that set does not beat the Active Set"
        self._show(seat, start, hand[:start] + hand[start + length :], shown, strength)
        return None

    def _scout_if_legal(self, seat: int, action: Action) -> str | None:
        """Why the Scout is not legal, or None once it is made (the checks find the card taken, as inserted,
        and what remains of the Active Set, that the Scout then uses)."""
        end, flip, gap, and_show = action.get("end"), action.get("flip"), action.get("insert"), action.get("and_show")
        if len(action) != 5 or type(flip) is not bool or type(gap) is not int or type(and_show) is not bool:
            return 'a Scout is {"kind": "scout", "end": "left"|"right", "flip": bool, "insert": int, "and_show": bool}'
        active, hand = self._active, self._hands[seat]
        if self._must_show:
            return "after a Scout & Show's Scout the same seat must Show"
        if not active:
            return "there is no Active Set to scout from"
        if end == "left":
            card, remaining = active[0], active[1:]
        elif end == "right":
            if len(active) == 1:
                return 'the Active Set has one card: it is taken with end "left"'
            card, remaining = active[-1], active[:-1]
        else:
            return 'end is "left" or "right"'
        if not 0 <= gap <= len(hand):
            return f"insert is a position from 0 to {len(hand)}"
        if flip:
            card = ROTATED[card]
        if self._two_players:
            if not self._chips[seat]:
                return "no Scout chip left to pay with"
            if and_show:
                return "two players play without Scout & Show"
        new_hand = hand[:gap] + CARD_BYTES[card] + hand[gap:]
        to_beat = _strength_of_cards(remaining)
        if and_show and not self._two_players:
            reason = self._scout_show_problem(seat, card, new_hand, to_beat)
            if reason is not None:
                return reason
        self._scout(seat, action, card, new_hand, remaining, to_beat)
        return None

    def _scout_show_problem(self, seat: int, card: int, hand: bytes, to_beat: int) -> str | None:
        """Why the Scout of `card` into `hand` (as it is after the Scout) may not be a Scout & Show, whose Show
        must beat `to_beat` (what the Scout leaves of the Active Set)."""
        if self._scout_show_used[seat]:
            return "Scout & Show is once per round, and this seat has used it"
        if SINGLE_BASE + (card >> 4) <= to_beat and best_strength(hand.translate(TOPS)) <= to_beat:
            return "no Show could follow that Scout, so Scout & Show is not offered"
        return None

    # Applying a legal action.

    def _apply(self, seat: int, action: Action) -> None:
        reason = self._apply_if_legal(seat, action)
        assert reason is None, reason

    def _orient(self, seat: int, flip: bool) -> None:
        self._legal_cache = None
        choices = self._orient_choices
        choices[seat] = flip
        if None in choices:
            return
        for who, flipped in enumerate(choices):
            if flipped:
                self._hands[who] = self._hands[who][::-1].translate(ROTATIONS)
            self._public.append(("orient", who, flipped))
        self._phase = PLAY

    def _show(self, seat: int, start: int, rest: bytes, shown: bytes, strength: int) -> None:
        """The checked Show of `shown` (of that strength) from `start`, leaving `rest` in the hand."""
        self._legal_cache = None
        active = self._active
        if active:
            self._captured[seat] += active
        self._hands[seat] = rest
        self._active = shown
        self._active_strength = strength
        self._owner = seat
        self._must_show = False
        self._scouts_in_row = 0
        self._public.append(("show", seat, start, len(shown), shown, len(active)))
        if not rest:
            self._end_round(RoundEnd.HAND_EMPTIED, None)
            return
        self._current = (seat + 1) % self.players
        if self._two_players:
            self._check_cannot_act()

    def _scout(self, seat: int, action: Action, card: int, hand: bytes, remaining: bytes, strength: int) -> None:
        """The checked Scout `action`: `card` (as inserted) is in the new `hand`, `remaining` (of that strength)
        is left of the Active Set."""
        self._legal_cache = None
        self._active = remaining
        self._active_strength = strength
        self._hands[seat] = hand
        and_show = action["and_show"]
        self._public.append(("scout", seat, action["end"], action["flip"], action["insert"], and_show, card))
        if self._two_players:
            self._chips[seat] -= 1
            self._check_cannot_act()
            return
        assert self._owner is not None
        self._chips[self._owner] += 1
        if and_show:
            self._scout_show_used[seat] = True
            self._must_show = True
            return
        self._scouts_in_row += 1
        if self._scouts_in_row == self.players - 1:
            self._end_round(RoundEnd.ALL_SCOUTED, self._owner)
        else:
            self._current = (seat + 1) % self.players

    def _check_cannot_act(self) -> None:
        """Two players: the round ends when the seat to move has no chip and no Show beats the Active Set."""
        if self._chips[self._current] or not self._active:
            return
        if best_strength(self._hands[self._current].translate(TOPS)) <= self._active_strength:
            self._end_round(RoundEnd.CANNOT_ACT, self._owner)

    def _end_round(self, how: RoundEnd, exempt: int | None) -> None:
        captured = [len(pile) for pile in self._captured]
        in_hand = [len(hand) for hand in self._hands]
        scores = [
            round_score(captured[seat], self._chips[seat], in_hand[seat], seat == exempt)
            for seat in range(self.players)
        ]
        self._totals = [total + score for total, score in zip(self._totals, scores, strict=True)]
        self._finished_rounds.append(
            {
                "round": self.round,
                "end": how.value,
                "exempt": exempt,
                "captured": captured,
                "chips": list(self._chips),
                "hand_sizes": in_hand,
                "scores": scores,
            }
        )
        if self._round_index + 1 == self._table.rounds:
            self._phase = OVER
            return
        self._round_index += 1
        self._deal_round()

    def clone(self) -> ScoutState:
        """The lists the state changes in place are copied; the rest (the totals and the history entries are
        replaced, never changed) is shared."""
        copy = object.__new__(ScoutState)
        copy.__dict__.update(self.__dict__)
        copy.history = list(self.history)
        copy._hands = list(self._hands)
        copy._captured = list(self._captured)
        copy._chips = list(self._chips)
        copy._scout_show_used = list(self._scout_show_used)
        copy._orient_choices = list(self._orient_choices)
        copy._public = list(self._public)
        copy._finished_rounds = list(self._finished_rounds)
        return copy

    def redeal(self, seat: int, rng: random.Random) -> ScoutState:
        """A state `seat` cannot tell from this one, every card it has not seen dealt again by `rng`.

        Seen are its own hands as dealt and every card a Show put on the table (the history names them, and a
        Scout takes one of them); the moves themselves are public, except the orientation choices of other
        seats at a decision `seat` has not finished, which are drawn again. Every other card of every round,
        the rounds to come included, is drawn with a random turn from the cards not seen: per round at 3 to 5
        seats (each round deals the whole deck), over both rounds at 2 (round 2 deals what round 1 left).
        The game's moves are then replayed on the new deal by `apply`, so the result is a game of the rules.

        At two seats a round ends when the seat to move can neither Show nor Scout, which says something of
        its hand: a deal on which the replay does not end each round where it ended (or goes on) is drawn
        again, up to REDEAL_TRIES times; after that (never seen in practice) the true cards are kept."""
        moves = _round_moves(self.history, self._round_index + 1)
        if self._phase is ORIENT:
            moves[-1] = [
                (who, action if who == seat else {"kind": "orient", "flip": bool(rng.getrandbits(1))})
                for who, action in moves[-1]
            ]
        started = len(moves)
        kept = [_seen_places(self._dealt[number], moves[number], seat) for number in range(started)]
        kept += [frozenset()] * (self._table.rounds - started)
        played = [move for round_moves in moves for move in round_moves]
        for _ in range(REDEAL_TRIES):
            twin = self._replayed(_redealt(self._table, self._dealt, kept, rng), played)
            if twin is not None:
                return twin
        twin = self._replayed(self._dealt, played)
        assert twin is not None, "the true deal replays its own game"
        return twin

    def _replayed(self, dealt: Deal, moves: Sequence[HistoryEntry]) -> ScoutState | None:
        """A new game dealt `dealt` and played `moves`, or None if it does not reach where this one is."""
        twin = ScoutState()
        twin._init_common(self.game, self.players, self.seed, self.config, deal_as_data(dealt))
        twin._start(self._table, dealt)
        try:
            for who, action in moves:
                twin.apply(who, action)
        except IllegalAction:
            return None
        if twin._round_index != self._round_index or twin._finished_rounds != self._finished_rounds:
            return None
        return twin if twin._phase is self._phase and twin._current == self._current else None

    # The observation.

    def _public_history(self) -> list[dict[str, Any]]:
        """The round's public history as observations show it; each record becomes its entry once. The list
        of entries is replaced, never changed, so that clones share it."""
        history = self._history
        if len(history) < len(self._public):
            history = self._history = history + list(map(history_entry, self._public[len(history) :]))
        return list(history)

    def hand_numbers(self, seat: int) -> bytes:
        """The numbers in use of `seat`'s hand in order, a byte each. A search reads a hand of its own
        determinizations so, where an observation would build the whole view."""
        return self._hands[seat].translate(TOPS)

    def active_cards(self) -> list[tuple[int, int]]:
        """The Active Set's cards as (top, bottom), as observations show them."""
        return [(code >> 4, code & 15) for code in self._active]

    def observation(self, seat: int) -> Observation:
        """All that `seat` may know: its own hand (both numbers of each card), the table, every seat's counts,
        and the public history of this round. Never a card of another seat's hand that was not shown."""
        return {
            "seat": seat,
            "players": self.players,
            "round": self._round_index + 1,
            "rounds": self._table.rounds,
            "round_starter": self._starter,
            "phase": self._phase._value_,
            "to_move": self.to_move(),
            "must_show": self._must_show,
            "hand": [[code >> 4, code & 15] for code in self._hands[seat]],
            "active_set": [[code >> 4, code & 15] for code in self._active],
            "active_owner": self._owner,
            "hand_sizes": [len(hand) for hand in self._hands],
            "captured": [len(pile) for pile in self._captured],
            "chips": list(self._chips),
            "scout_show_used": list(self._scout_show_used),
            "scores": list(self._totals),
            "finished_rounds": list(self._finished_rounds),
            "history": self._public_history(),
        }


# The redeal --------------------------------------------------------------------------------------------

REDEAL_TRIES = 1000
Place = tuple[int, int]
"""(seat, position in its hand as dealt)."""


def _round_moves(history: Sequence[HistoryEntry], started: int) -> list[list[HistoryEntry]]:
    """The game's moves, one list per round started: a round's first moves are its orientations, and only
    they."""
    rounds: list[list[HistoryEntry]] = []
    previous = None
    for entry in history:
        kind = entry[1]["kind"]
        if kind == "orient" and previous != "orient":
            rounds.append([])
        rounds[-1].append(entry)
        previous = kind
    return rounds + [[] for _ in range(started - len(rounds))]


def _seen_places(hands: Sequence[Hand], moves: Sequence[HistoryEntry], seat: int) -> frozenset[Place]:
    """The dealt places of a round whose cards `seat` saw: its own, and those a Show of `moves` put on the
    table (followed from the deal through every orientation, Show and Scout)."""
    held: list[list[Place]] = [[(who, at) for at in range(len(hand))] for who, hand in enumerate(hands)]
    active: list[Place] = []
    seen = {(seat, at) for at in range(len(hands[seat]))}
    for who, action in moves:
        kind = action["kind"]
        if kind == "orient":
            if action["flip"]:
                held[who].reverse()
        elif kind == "show":
            start, length = action["start"], action["length"]
            active = held[who][start : start + length]
            del held[who][start : start + length]
            seen.update(active)
        else:
            taken = active.pop(0) if action["end"] == "left" else active.pop()
            held[who].insert(action["insert"], taken)
    return frozenset(seen)


def _redealt(table: Table, dealt: Deal, kept: Sequence[frozenset[Place]], rng: random.Random) -> Deal:
    """`dealt` with every card but those at the `kept` places of each round drawn again, with a random turn,
    from the cards of its deal that are not kept: per round at 3 to 5 seats (a round not started yet is
    shuffled whole, as a seeded deal is), over both rounds at 2."""
    if table.two_players:
        return _refilled(table, dealt, kept, rng)
    size = table.hand_size
    rounds: list[tuple[Hand, ...]] = []
    for hands, places in zip(dealt, kept, strict=True):
        if places:
            rounds += _refilled(table, (hands,), (places,), rng)
        else:
            cards = _shuffled(table, rng)
            rounds.append(tuple(tuple(cards[seat * size : (seat + 1) * size]) for seat in range(table.players)))
    return tuple(rounds)


def _refilled(
    table: Table, rounds: Sequence[Sequence[Hand]], kept: Sequence[frozenset[Place]], rng: random.Random
) -> Deal:
    """`rounds` (one deck dealt over them) with the cards at all but the `kept` places drawn again."""
    seen = {_LOW_ON_TOP[hands[who][at]] for hands, places in zip(rounds, kept, strict=True) for who, at in places}
    pool = [codes[rng.getrandbits(1)] for codes in _ORIENTATIONS[table.players] if codes[1] not in seen]
    rng.shuffle(pool)
    cards = iter(pool)
    return tuple(
        tuple(
            tuple(code if (who, at) in places else next(cards) for at, code in enumerate(hand))
            for who, hand in enumerate(hands)
        )
        for hands, places in zip(rounds, kept, strict=True)
    )


def _card_name(code: int) -> tuple[int, int]:
    """A card code as the deck names the card: (low, high)."""
    top, bottom = code >> 4, code & 15
    return (top, bottom) if top < bottom else (bottom, top)


_LOW_ON_TOP = tuple(ROTATED[code] if code >> 4 > code & 15 else code for code in range(256))
"""Each card code as the card's one name: its code with the lower number on top."""

GAME = ScoutGame()

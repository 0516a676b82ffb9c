"""Scauver (Saïd Galdseid, 2024), 2 to 4 players, as referee/games/scauver.md states it.

A game is a series of rounds. Each round: the dealer and the next player to the left post an amphora; five
cards each; a simultaneous setup of three cards into two flanks; three laps of draw, bet decision, place;
the last two cards, one per flank; a final bet; a simultaneous showdown where each player picks a link
(or declares none); the lowest |left - right| x link value takes the pot. Players below the amphora are
eliminated; the last one left wins (or the round cap ends the game and chips rank).

Amounts in actions and observations are chips. Internally the phases are an enum and the per-seat data
are plain lists indexed by seat, for speed (a random self-play must run at tens of thousands of decisions
per second).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from itertools import combinations
from typing import Any

from ._scauver_links import CARD_ORDER, CARD_VALUE, FACE_DECK, NUMERIC_DECK, link_problem, link_strength, valid_links
from .base import Action, Config, ConfigError, Game, GameInfo, GameState, Observation, Option, shared_ranks

HAND_SIZE = 5
SETUP_CARDS = 3
LAPS = 3
FLANK_LIMIT = 3
"""During setup and the laps a flank holds at most 3 cards; the final placement brings both to 4."""
FLANKS = ("left", "right")
ROUND_CAP_MAX = 1_000_000

FLANK_SUBSETS: tuple[tuple[int, ...], ...] = tuple(
    indices for size in range(SETUP_CARDS + 1) for indices in combinations(range(HAND_SIZE), size)
)
"""Every set of 0 to 3 hand indices: what one flank may receive at the setup."""

SETUP_PATTERNS: tuple[tuple[int, int], ...] = tuple(
    (
        FLANK_SUBSETS.index(tuple(chosen[i] for i in range(SETUP_CARDS) if mask >> i & 1)),
        FLANK_SUBSETS.index(tuple(chosen[i] for i in range(SETUP_CARDS) if not mask >> i & 1)),
    )
    for chosen in combinations(range(HAND_SIZE), SETUP_CARDS)
    for mask in range(1 << SETUP_CARDS)
)
"""Every way to put 3 of the 5 hand cards into the left and right flanks (10 x 8 = 80), as a pair of
positions in FLANK_SUBSETS, so that the 80 setup actions share 26 card lists instead of building 160."""


def flank_choices(hand: list[str]) -> list[list[str]]:
    """What each of FLANK_SUBSETS takes from a 5-card hand, in that order, written out."""
    a, b, c, d, e = hand
    # fmt: off
    return [
        [],
        [a], [b], [c], [d], [e],
        [a, b], [a, c], [a, d], [a, e], [b, c], [b, d], [b, e], [c, d], [c, e], [d, e],
        [a, b, c], [a, b, d], [a, b, e], [a, c, d], [a, c, e], [a, d, e], [b, c, d], [b, c, e], [b, d, e], [c, d, e],
    ]
    # fmt: on


class Phase(Enum):
    SETUP = "setup"
    BET = "bet"
    ANSWER = "answer"
    PLACE = "place"
    FINAL = "final"
    FINAL_BET = "final_bet"
    SHOWDOWN = "showdown"
    OVER = "over"


class Stage(int, Enum):
    """Where the turn order of a round stands; the laps are stages 1 to 3."""

    FINAL_PLACEMENT = 4
    FINAL_BET = 5
    SHOWDOWN = 6


# Module names for the members: reading an Enum member through its class costs a Python-level lookup.
SETUP, BET, ANSWER, PLACE, FINAL, FINAL_BET, SHOWDOWN, OVER = (
    Phase.SETUP,
    Phase.BET,
    Phase.ANSWER,
    Phase.PLACE,
    Phase.FINAL,
    Phase.FINAL_BET,
    Phase.SHOWDOWN,
    Phase.OVER,
)
FINAL_PLACEMENT_STAGE, FINAL_BET_STAGE, SHOWDOWN_STAGE = Stage.FINAL_PLACEMENT, Stage.FINAL_BET, Stage.SHOWDOWN


@dataclass(frozen=True)
class RoundOutcome:
    """How a round ended, shown to everyone in the next round's observations."""

    round: int
    dealer: int
    pot: int
    winners: tuple[int, ...]
    won: tuple[int, ...]
    by_fold: bool
    fields: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]
    choices: tuple[Action | None, ...]
    scores: tuple[int | None, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "round": self.round,
            "dealer": self.dealer,
            "pot": self.pot,
            "winners": list(self.winners),
            "won": list(self.won),
            "by_fold": self.by_fold,
            "fields": [{"left": list(left), "right": list(right)} for left, right in self.fields],
            "choices": [None if choice is None else dict(choice) for choice in self.choices],
            "scores": list(self.scores),
        }


OPTIONS = (
    Option("starting_chips", 100, "chips each player starts with", minimum=1),
    Option("amphora", 2, "chips of one amphora (the forced bet of the dealer and the player to the left)", minimum=1),
    Option("bet_min_amphoras", 1, "smallest bet or raise, in amphoras", minimum=1),
    Option("bet_max_amphoras", 4, "largest bet or raise, in amphoras", minimum=1),
    Option("max_raises", 3, "raises allowed in one exchange", minimum=0),
    Option("growth_every", 0, "tournament mode: the amphora grows every this many rounds (0: off)", minimum=0),
    Option("growth_factor", 2, "tournament mode: the amphora is multiplied by this at each growth", minimum=2),
    Option(
        "round_cap",
        200,
        "the game ends after this many rounds; players still in rank by chips",
        minimum=1,
        maximum=ROUND_CAP_MAX,
    ),
    Option("numeric_deck", False, "8, 9, 10 (ids '8S', '9S', '10S') instead of J, Q, K; same values"),
    Option("first_dealer", -1, "seat of the first dealer (-1: drawn from the seed)", minimum=-1, maximum=3),
)


class ScauverGame(Game):
    info = GameInfo(
        name="scauver",
        title="Scauver",
        min_players=2,
        max_players=4,
        options=OPTIONS,
        summary="Bet, build two flanks, link vanguards of equal value; the lowest |left - right| x link wins.",
        log_keys=("betting",),
    )

    def _new_state(self, players: int, seed: int, config: Config, deal: Any) -> ScauverState:
        if config["bet_min_amphoras"] > config["bet_max_amphoras"]:
            raise ConfigError("option 'bet_min_amphoras' must not exceed 'bet_max_amphoras'")
        if config["amphora"] > config["starting_chips"]:
            raise ConfigError("option 'starting_chips' must be at least one 'amphora'")
        if config["first_dealer"] >= players:
            raise ConfigError(f"option 'first_dealer' must be -1 or a seat below {players}")
        deck = NUMERIC_DECK if config["numeric_deck"] else FACE_DECK
        return ScauverState(self, players, seed, config, deal, parse_deal(deal, players, deck))


def parse_deal(deal: Any, players: int, deck: Sequence[str]) -> list[tuple[list[list[str]], list[str]]]:
    """Check an explicit deal and return, per round, (hands by seat, first cards of the draw pile).

    Format: {"rounds": [{"hands": [[5 cards] for every seat], "draws": [cards, in draw order]}, ...]}.
    Rounds beyond the list, and the draw pile after the listed cards, are shuffled from the seed."""
    if deal is None:
        return []
    if type(deal) is not dict or set(deal) != {"rounds"} or type(deal["rounds"]) is not list:
        raise ConfigError('a Scauver deal is {"rounds": [{"hands": [...], "draws": [...]}, ...]}')
    known = set(deck)
    rounds = []
    for number, entry in enumerate(deal["rounds"], start=1):
        where = f"deal round {number}"
        if type(entry) is not dict or set(entry) - {"hands", "draws"} or "hands" not in entry:
            raise ConfigError(f"{where}: a map with 'hands' and optional 'draws'")
        hands, draws = entry["hands"], entry.get("draws", [])
        if type(hands) is not list or len(hands) != players or type(draws) is not list:
            raise ConfigError(f"{where}: 'hands' lists {players} hands and 'draws' is a list")
        if any(type(hand) is not list or len(hand) != HAND_SIZE for hand in hands):
            raise ConfigError(f"{where}: every hand holds {HAND_SIZE} cards")
        cards = [card for hand in hands for card in hand] + draws
        unknown = [card for card in cards if type(card) is not str or card not in known]
        if unknown:
            raise ConfigError(f"{where}: {unknown[0]!r} is not a card of this deck")
        if len(set(cards)) != len(cards):
            raise ConfigError(f"{where}: a card is dealt twice")
        rounds.append(([list(hand) for hand in hands], list(draws)))
    return rounds


class ScauverState(GameState):
    """One game of Scauver. Per-seat data are lists indexed by seat; `order` is the round's turn order (the
    players in the round, from the dealer's left); `deck` is the draw pile, drawn from its end."""

    def __init__(
        self,
        game: ScauverGame,
        players: int,
        seed: int,
        config: Config,
        deal: Any,
        dealt_rounds: list[tuple[list[list[str]], list[str]]],
    ) -> None:
        self._init_common(game, players, seed, config, deal)
        self._deck_cards = NUMERIC_DECK if config["numeric_deck"] else FACE_DECK
        self._dealt_rounds = dealt_rounds
        self._dealt_log: tuple[tuple[tuple[tuple[str, ...], ...], tuple[str, ...]], ...] = ()
        """Per round dealt: the hands by seat (empty for a seat out of the game) and the draw pile as dealt."""
        self._total_chips = config["starting_chips"] * players
        self.chips = [config["starting_chips"]] * players
        self.eliminated_before: list[int | None] = [None] * players
        first = config["first_dealer"]
        self.dealer = first if first >= 0 else random.Random(seed).randrange(players)
        self.round_number = 0
        self.last_outcome: RoundOutcome | None = None
        self.phase = OVER
        self._cache: dict[int, list[Action]] = {}
        self._start_round(first_round=True)

    # Rounds.

    def amphora_for(self, round_number: int) -> int:
        every = self.config["growth_every"]
        growths = (round_number - 1) // every if every else 0
        return self.config["amphora"] * self.config["growth_factor"] ** growths

    def _start_round(self, first_round: bool = False) -> None:
        number = self.round_number + 1
        amphora = self.amphora_for(number)
        players = self.players
        for seat in range(players):
            if self.eliminated_before[seat] is None and self.chips[seat] < amphora:
                self.eliminated_before[seat] = number
        active = [seat for seat in range(players) if self.eliminated_before[seat] is None]
        if len(active) <= 1:
            self.phase = OVER
            return
        self.round_number = number
        if not first_round:
            self.dealer = self._next_active(self.dealer)
        dealer = self.dealer
        self.order = [(dealer + 1 + i) % players for i in range(players)]
        self.order = [seat for seat in self.order if self.eliminated_before[seat] is None]
        self.amphora = amphora
        self.cap = min(self.chips[seat] for seat in active)
        self.in_round = [self.eliminated_before[seat] is None for seat in range(players)]
        self.put = [0] * players
        self.pot = 0
        self.betting: list[dict[str, Any]] = []
        for seat in (dealer, self.order[0]):
            self._pay(seat, amphora)
            self.betting.append({"seat": seat, "kind": "amphora", "amount": amphora})
        self._deal(number, active)
        self.left: list[list[str]] = [[] for _ in range(players)]
        self.right: list[list[str]] = [[] for _ in range(players)]
        self.choices: list[Action | None] = [None] * players
        self.waiting = list(active)
        self.stage = 0
        self.turn_index = -1
        self.turn = -1
        self.level = 0
        self.exchange_put = [0] * players
        self.raises = 0
        self.bettor: int | None = None
        self.answering: list[int] = []
        self.phase = SETUP

    def _next_active(self, seat: int) -> int:
        for step in range(1, self.players + 1):
            candidate = (seat + step) % self.players
            if self.eliminated_before[candidate] is None:
                return candidate
        raise AssertionError("no active seat")

    def _deal(self, number: int, active: list[int]) -> None:
        """Five cards to each player in the round; `deck` is the draw pile, drawn from its end."""
        shuffler = random.Random((self.seed << 20) | number)
        self.hands: list[list[str]] = [[] for _ in range(self.players)]
        if number <= len(self._dealt_rounds):
            hands, draws = self._dealt_rounds[number - 1]
            used = {card for seat in active for card in hands[seat]} | set(draws)
            rest = [card for card in self._deck_cards if card not in used]
            shuffler.shuffle(rest)
            for seat in active:
                self.hands[seat] = sorted(hands[seat], key=CARD_ORDER.__getitem__)
            self.deck = (draws + rest)[::-1]
        else:
            pile = list(self._deck_cards)
            shuffler.shuffle(pile)
            for seat in active:
                self.hands[seat] = sorted(pile[-HAND_SIZE:], key=CARD_ORDER.__getitem__)
                del pile[-HAND_SIZE:]
            self.deck = pile
        self._dealt_log += ((tuple(map(tuple, self.hands)), tuple(self.deck)),)

    def _pay(self, seat: int, amount: int) -> None:
        self.chips[seat] -= amount
        self.put[seat] += amount
        self.pot += amount

    def _players_in(self) -> list[int]:
        return [seat for seat in self.order if self.in_round[seat]]

    # Turn order: laps (stages 1-3), final placement, final bet, showdown.

    def _next_turn(self) -> None:
        order = self.order
        index = self.turn_index
        while True:
            index += 1
            if index >= len(order):
                index = 0
                self.stage += 1
                if self.stage == SHOWDOWN_STAGE:
                    self._begin_showdown()
                    return
            if self.in_round[order[index]]:
                break
        self.turn_index = index
        self.turn = seat = order[index]
        if self.stage <= LAPS:
            self.hands[seat].append(self.deck.pop())
            self.hands[seat].sort(key=CARD_ORDER.__getitem__)
            self.phase = BET
        elif self.stage == FINAL_PLACEMENT_STAGE:
            self.phase = FINAL
        else:
            self.phase = FINAL_BET

    def _begin_showdown(self) -> None:
        self.stage = SHOWDOWN_STAGE
        self.turn = -1
        self.waiting = sorted(self._players_in())
        self.phase = SHOWDOWN

    def _after_exchange(self) -> None:
        self.answering = []
        self.bettor = None
        self.level = 0
        self.exchange_put = [0] * self.players
        if self.stage == FINAL_BET_STAGE:
            self._begin_showdown()
        elif self.in_round[self.turn]:
            self.phase = PLACE
        else:
            self._next_turn()

    def _fold(self, seat: int) -> bool:
        """Take `seat` out of the round; True if that ended the round (one player left)."""
        self.in_round[seat] = False
        remaining = self._players_in()
        if len(remaining) == 1:
            self._award([remaining[0]], by_fold=True, scores=[None] * self.players)
            return True
        return False

    def _award(self, winners: list[int], by_fold: bool, scores: list[int | None]) -> None:
        pot = self.pot
        share, odd = divmod(pot, len(winners))
        won = [0] * self.players
        for seat in winners:
            won[seat] = share
        won[min(winners, key=self.order.index)] += odd
        for seat in winners:
            self.chips[seat] += won[seat]
        self.pot = 0
        self.last_outcome = RoundOutcome(
            round=self.round_number,
            dealer=self.dealer,
            pot=pot,
            winners=tuple(sorted(winners)),
            won=tuple(won),
            by_fold=by_fold,
            fields=tuple((tuple(self.left[seat]), tuple(self.right[seat])) for seat in range(self.players)),
            choices=tuple(self.choices),
            scores=tuple(scores),
        )
        if self.round_number >= self.config["round_cap"]:
            self.phase = OVER
        else:
            self._start_round()

    def _showdown(self) -> None:
        """Award the pot to the lowest key: players with a link before those without; then the lower score
        (or flank difference without a link); then the stronger link. Equal keys split the pot."""
        keys: dict[int, tuple[Any, ...]] = {}
        scores: list[int | None] = [None] * self.players
        for seat in self._players_in():
            left, right = self.left[seat], self.right[seat]
            difference = abs(sum(CARD_VALUE[card] for card in left) - sum(CARD_VALUE[card] for card in right))
            choice = self.choices[seat]
            if choice is None or choice["kind"] == "no_link":
                keys[seat] = (1, difference)
                continue
            strength = link_strength(choice["left"], choice["right"])
            scores[seat] = score = difference * strength.size
            keys[seat] = (0, score, -strength.size, -strength.length, tuple(-value for value in strength.height))
        best = min(keys.values())
        self._award([seat for seat, key in keys.items() if key == best], by_fold=False, scores=scores)

    # Betting sizes.

    def _headroom(self) -> int:
        """The highest exchange level every player still in could match within the table-stakes cap."""
        put, exchange_put, in_round = self.put, self.exchange_put, self.in_round
        return self.cap - max(put[seat] - exchange_put[seat] for seat in self.order if in_round[seat])

    def _sizes(self, base: int) -> list[int]:
        """The bet (base 0) or raise (base = current level) amounts in chips that the cap allows."""
        amphora = self.amphora
        low, high = self.config["bet_min_amphoras"], self.config["bet_max_amphoras"]
        most = min(high, (self._headroom() - base) // amphora)
        return list(range(low * amphora, most * amphora + 1, amphora))

    # The interface.

    @property
    def dealt(self) -> dict[str, Any]:
        """Every round dealt so far in the explicit-deal format. A round's draws are its whole pile but the
        bottom cards, which fill the (ignored) hands of eliminated seats: a round draws at most 3 cards per
        player in it, so those are never drawn."""
        return {"rounds": [_round_as_deal(hands, pile) for hands, pile in self._dealt_log]}

    @property
    def round(self) -> int:
        return self.round_number

    def is_over(self) -> bool:
        return self.phase is OVER

    def _is_to_move(self, seat: Any) -> bool:
        phase = self.phase
        if phase is ANSWER:
            return self.answering[0] == seat
        if phase is SETUP or phase is SHOWDOWN:
            return seat in self.waiting
        return phase is not OVER and self.turn == seat

    def to_move(self) -> list[int]:
        phase = self.phase
        if phase is ANSWER:
            return [self.answering[0]]
        if phase is SETUP or phase is SHOWDOWN:
            return list(self.waiting)
        if phase is OVER:
            return []
        return [self.turn]

    def legal_actions(self, seat: int) -> list[Action]:
        """Copies of the cached actions, their card lists too (setup actions share theirs), so that a caller
        that edits one changes nothing the state offers."""
        return [
            {key: value[:] if type(value) is list else value for key, value in action.items()}
            for action in self.legal_actions_view(seat)
        ]

    def legal_actions_view(self, seat: int) -> Sequence[Action]:
        """The cached list itself, whose actions share card lists (legal_actions copies them)."""
        cached = self._cache.get(seat)
        if cached is None:
            if not self._is_to_move(seat):
                return ()
            cached = self._cache[seat] = self._list_actions(seat)
        return cached

    def _list_actions(self, seat: int) -> list[Action]:
        phase = self.phase
        if phase is SETUP:
            hand = self.hands[seat]
            flank_cards = flank_choices(hand)
            return [
                {"kind": "setup", "left": flank_cards[left], "right": flank_cards[right]}
                for left, right in SETUP_PATTERNS
            ]
        if phase is BET or phase is FINAL_BET:
            actions: list[Action] = [{"kind": "check"}]
            actions += [{"kind": "bet", "amount": amount} for amount in self._sizes(0)]
            actions.append({"kind": "fold"})
            return actions
        if phase is ANSWER:
            actions = [{"kind": "call"}, {"kind": "fold"}]
            if self.raises < self.config["max_raises"]:
                actions += [{"kind": "raise", "amount": amount} for amount in self._sizes(self.level)]
            return actions
        if phase is PLACE:
            flanks = [
                flank
                for flank, cards in zip(FLANKS, (self.left[seat], self.right[seat]), strict=True)
                if len(cards) < FLANK_LIMIT
            ]
            return [{"kind": "place", "card": card, "flank": flank} for card in self.hands[seat] for flank in flanks]
        if phase is FINAL:
            first, second = self.hands[seat]
            return [
                {"kind": "final", "left": first, "right": second},
                {"kind": "final", "left": second, "right": first},
            ]
        links = valid_links(self.left[seat], self.right[seat])
        if not links:
            return [{"kind": "no_link"}]
        return [{"kind": "vanguards", "left": left, "right": right} for left, right in links]

    def _illegal_reason(self, seat: int, action: Action) -> str | None:
        kind = action["kind"]
        phase = self.phase
        if phase is SETUP:
            return self._setup_problem(seat, action) if kind == "setup" else f"now is the setup, not {kind!r}"
        if phase is SHOWDOWN:
            return self._showdown_problem(seat, action)
        if phase is PLACE:
            return self._place_problem(seat, action) if kind == "place" else f"now is a placement, not {kind!r}"
        if phase is FINAL:
            return self._final_problem(seat, action) if kind == "final" else f"now is the final placement, not {kind!r}"
        if phase is ANSWER:
            if kind in ("call", "fold"):
                return _extra_keys(action, ())
            if kind == "raise":
                if self.raises >= self.config["max_raises"]:
                    return f"no more raises in this exchange (the cap is {self.config['max_raises']})"
                return self._amount_problem(action, self.level)
            return f"a bet is pending: call, fold or raise, not {kind!r}"
        if kind in ("check", "fold"):
            return _extra_keys(action, ())
        if kind == "bet":
            return self._amount_problem(action, 0)
        return f"now is a bet decision: check, bet or fold, not {kind!r}"

    def _amount_problem(self, action: Action, base: int) -> str | None:
        extra = _extra_keys(action, ("amount",))
        if extra:
            return extra
        amount = action.get("amount")
        if type(amount) is not int:
            return f"'amount' must be an integer number of chips, not {amount!r}"
        sizes = self._sizes(base)
        if amount not in sizes:
            return f"{action['kind']} amount {amount} is not offered now; the sizes are {sizes} chips"
        return None

    def _setup_problem(self, seat: int, action: Action) -> str | None:
        extra = _extra_keys(action, ("left", "right"))
        if extra:
            return extra
        left, right = action.get("left"), action.get("right")
        if type(left) is not list or type(right) is not list:
            return "'left' and 'right' must be lists of cards"
        cards = left + right
        if len(cards) != SETUP_CARDS:
            return f"the setup places exactly {SETUP_CARDS} cards, not {len(cards)}"
        if len(left) > FLANK_LIMIT or len(right) > FLANK_LIMIT:
            return f"a flank holds at most {FLANK_LIMIT} cards"
        return _cards_problem(cards, self.hands[seat], "your hand")

    def _place_problem(self, seat: int, action: Action) -> str | None:
        extra = _extra_keys(action, ("card", "flank"))
        if extra:
            return extra
        flank = action.get("flank")
        if flank not in FLANKS:
            return f"'flank' must be 'left' or 'right', not {flank!r}"
        if len(self.left[seat] if flank == "left" else self.right[seat]) >= FLANK_LIMIT:
            return f"the {flank} flank already holds {FLANK_LIMIT} cards"
        return _cards_problem([action.get("card")], self.hands[seat], "your hand")

    def _final_problem(self, seat: int, action: Action) -> str | None:
        extra = _extra_keys(action, ("left", "right"))
        if extra:
            return extra
        cards = [action.get("left"), action.get("right")]
        problem = _cards_problem(cards, self.hands[seat], "your hand")
        if problem is None and len(self.hands[seat]) != len(cards):
            return "the final placement places both hand cards"
        return problem

    def _showdown_problem(self, seat: int, action: Action) -> str | None:
        kind = action["kind"]
        if kind == "no_link":
            extra = _extra_keys(action, ())
            if extra:
                return extra
            if valid_links(self.left[seat], self.right[seat]):
                return "a valid link exists: no_link is declared only when none is possible"
            return None
        if kind != "vanguards":
            return f"now is the showdown: vanguards or no_link, not {kind!r}"
        extra = _extra_keys(action, ("left", "right"))
        if extra:
            return extra
        left, right = action.get("left"), action.get("right")
        if type(left) is not list or type(right) is not list:
            return "'left' and 'right' must be lists of cards"
        problem = _cards_problem(left, self.left[seat], "your left flank") or _cards_problem(
            right, self.right[seat], "your right flank"
        )
        return problem or link_problem(left, right)

    def _apply(self, seat: int, action: Action) -> None:
        self._cache = {}
        kind = action["kind"]
        phase = self.phase
        if phase is SETUP:
            self._apply_setup(seat, action)
        elif phase is SHOWDOWN:
            self.choices[seat] = _canonical_choice(action)
            self.waiting.remove(seat)
            if not self.waiting:
                self._showdown()
        elif kind == "place":
            card = action["card"]
            self.hands[seat].remove(card)
            (self.left[seat] if action["flank"] == "left" else self.right[seat]).append(card)
            self._next_turn()
        elif kind == "final":
            self.hands[seat].clear()
            self.left[seat].append(action["left"])
            self.right[seat].append(action["right"])
            self._next_turn()
        else:
            self._apply_bet(seat, action)

    def _apply_setup(self, seat: int, action: Action) -> None:
        hand = self.hands[seat]
        for card in action["left"]:
            hand.remove(card)
            self.left[seat].append(card)
        for card in action["right"]:
            hand.remove(card)
            self.right[seat].append(card)
        self.waiting.remove(seat)
        if not self.waiting:
            self.stage = 1
            self._next_turn()

    def _apply_bet(self, seat: int, action: Action) -> None:
        kind = action["kind"]
        entry: dict[str, Any] = {"seat": seat, "kind": kind}
        self.betting.append(entry)
        if kind == "check":
            if self.phase is BET:
                self.phase = PLACE
            else:
                self._next_turn()
        elif kind == "fold":
            answering = self.phase is ANSWER
            if answering:
                self.answering.pop(0)
            if self._fold(seat):
                return
            if not answering:
                self._next_turn()
            elif not self.answering:
                self._after_exchange()
        elif kind == "call":
            entry["amount"] = owed = self.level - self.exchange_put[seat]
            self._pay(seat, owed)
            self.exchange_put[seat] = self.level
            self.answering.pop(0)
            if not self.answering:
                self._after_exchange()
        else:
            amount = action["amount"]
            entry["amount"] = amount
            if kind == "bet":
                self.level = amount
                self.exchange_put = [0] * self.players
                self.raises = 0
                self.bettor = seat
                self.phase = ANSWER
            else:
                self.level += amount
                self.raises += 1
            self._pay(seat, self.level - self.exchange_put[seat])
            self.exchange_put[seat] = self.level
            order = self.order
            at = order.index(seat)
            self.answering = [s for s in order[at + 1 :] + order[:at] if self.in_round[s]]

    def clone(self) -> ScauverState:
        """Every list the state changes is copied (per-seat card lists too); the rest (config, the deal, log
        entries and outcomes) is never changed after it is made, so the twin shares it."""
        twin = object.__new__(ScauverState)
        twin.__dict__.update(self.__dict__)
        twin.history = self.history.copy()
        twin.chips = self.chips.copy()
        twin.eliminated_before = self.eliminated_before.copy()
        twin.in_round = self.in_round.copy()
        twin.put = self.put.copy()
        twin.betting = self.betting.copy()
        twin.choices = self.choices.copy()
        twin.waiting = self.waiting.copy()
        twin.exchange_put = self.exchange_put.copy()
        twin.answering = self.answering.copy()
        twin.deck = self.deck.copy()
        twin.order = self.order.copy()
        twin.hands = [cards.copy() for cards in self.hands]
        twin.left = [cards.copy() for cards in self.left]
        twin.right = [cards.copy() for cards in self.right]
        twin._cache = {}
        return twin

    def redeal(self, seat: int, rng: random.Random, hands: Mapping[int, Sequence[str]] | None = None) -> ScauverState:
        """A state `seat` cannot tell from this one, every card it has not seen dealt again by `rng`.

        Seen: its own hand, every field (during the setup only its own: the others' are hidden until all have
        chosen), the betting and how many cards each hand and the pile hold; of the rounds before, every field
        and showdown choice. Dealt again, from the cards of the round not seen (in a fixed order, shuffled):
        the other hands, during the setup the whole deal of each other seat that has chosen (its setup drawn
        again among all 80), and the draw pile; the other seats' showdown choices not yet revealed are drawn
        again among their legal ones, and the rounds to come are shuffled from a new seed. What each seat was
        dealt and drew is kept consistent (`dealt` and `deal` replay the new game). Which of a seat's placed
        cards it was dealt and which it drew stays as it was: nothing that follows depends on it.

        `hands` fixes the new hand of some other seats (cards `seat` has not seen, as many as each holds, not
        during the setup), for a search that weighs hands by what the bets say; the rest is dealt at random."""
        twin = self.clone()
        chosen_setups = [
            other
            for other in range(self.players)
            if self.phase is SETUP and other != seat and self.in_round[other] and other not in self.waiting
        ]
        unseen = set(self.deck)
        for other in range(self.players):
            if other != seat:
                unseen.update(self.hands[other])
        for other in chosen_setups:
            unseen.update(self.left[other], self.right[other])
        given = self._given_hands(seat, hands or {}, unseen, chosen_setups)
        pool = sorted(unseen.difference(*given.values()), key=CARD_ORDER.__getitem__)
        rng.shuffle(pool)
        renamed: dict[str, str] = {}
        for other in range(self.players):
            if other == seat or not self.hands[other]:
                continue
            if other in chosen_setups:
                renamed.update(twin._redraw_setup(other, pool, rng))
                continue
            old = self.hands[other]
            new = list(given[other]) if other in given else [pool.pop() for _ in old]
            renamed.update(zip(old, new, strict=True))
            twin.hands[other] = sorted(new, key=CARD_ORDER.__getitem__)
        renamed.update(zip(self.deck, pool, strict=True))
        twin.deck = pool
        if self.phase is SHOWDOWN:
            twin._redraw_choices(seat, rng)
        twin._rename_dealt(renamed, rng)
        return twin

    def _given_hands(
        self, seat: int, hands: Mapping[int, Sequence[str]], unseen: set[str], chosen_setups: list[int]
    ) -> dict[int, list[str]]:
        """`hands` checked: other seats' hands of their size, of distinct cards `seat` has not seen."""
        given = {other: list(cards) for other, cards in hands.items()}
        cards = [card for hand in given.values() for card in hand]
        for other, hand in given.items():
            if other == seat or other in chosen_setups or not 0 <= other < self.players:
                raise ValueError(f"seat {other}'s hand cannot be given to a redeal for seat {seat} now")
            if len(hand) != len(self.hands[other]):
                raise ValueError(f"seat {other} holds {len(self.hands[other])} cards, not {len(hand)}")
        if len(set(cards)) != len(cards) or not unseen.issuperset(cards):
            raise ValueError(f"the hands given are not distinct cards seat {seat} has not seen")
        return given

    def _redraw_setup(self, other: int, pool: list[str], rng: random.Random) -> dict[str, str]:
        """Deal `other` (which has chosen its setup, hidden) five cards off `pool` and one of the 80 setups of
        them; the round's record of its setup follows. The old cards' new names."""
        old = [*self.left[other], *self.right[other], *self.hands[other]]
        new = [pool.pop() for _ in old]
        hand = sorted(new, key=CARD_ORDER.__getitem__)
        left, right = SETUP_PATTERNS[rng.randrange(len(SETUP_PATTERNS))]
        choices = flank_choices(hand)
        action = {"kind": "setup", "left": choices[left], "right": choices[right]}
        self.left[other], self.right[other] = list(action["left"]), list(action["right"])
        self.hands[other] = [card for card in hand if card not in action["left"] and card not in action["right"]]
        self._rewrite_pending(other, action, ("setup",))
        return dict(zip(old, new, strict=True))

    def _redraw_choices(self, seat: int, rng: random.Random) -> None:
        """The showdown choices of the other seats that have chosen (hidden until all have), drawn again."""
        for other in range(self.players):
            if other == seat or not self.in_round[other] or other in self.waiting:
                continue
            links = valid_links(self.left[other], self.right[other])
            left, right = links[rng.randrange(len(links))] if links else (None, None)
            action = {"kind": "no_link"} if left is None else {"kind": "vanguards", "left": left, "right": right}
            self.choices[other] = _canonical_choice(action)
            self._rewrite_pending(other, action, ("vanguards", "no_link"))

    def _rewrite_pending(self, other: int, action: Action, kinds: tuple[str, ...]) -> None:
        """Replace `other`'s move in the simultaneous decision that ends the history (moves of `kinds`)."""
        at = len(self.history) - 1
        while self.history[at][1]["kind"] in kinds:
            if self.history[at][0] == other:
                self.history[at] = (other, action)
                return
            at -= 1
        raise AssertionError(f"seat {other} has no pending {kinds[0]} move")

    def _rename_dealt(self, renamed: dict[str, str], rng: random.Random) -> None:
        """The round's deal as the new cards were dealt; the rounds to come from a new seed."""
        hands, pile = self._dealt_log[-1]
        rename = renamed.get
        hands = tuple(
            tuple(sorted((rename(card, card) for card in hand), key=CARD_ORDER.__getitem__)) for hand in hands
        )
        self._dealt_log = (*self._dealt_log[:-1], (hands, tuple(rename(card, card) for card in pile)))
        self._dealt_rounds = self._dealt_rounds[: self.round_number]
        if self.config["first_dealer"] == -1:
            self.config = dict(self.config, first_dealer=random.Random(self.seed).randrange(self.players))
        self.seed = rng.getrandbits(63)
        self.deal = self.dealt

    def result(self) -> dict[str, list[int]]:
        never = self.config["round_cap"] + 2
        weight = self._total_chips + 1
        standing = [(self.eliminated_before[seat] or never) * weight + self.chips[seat] for seat in range(self.players)]
        return {"scores": list(self.chips), "ranks": shared_ranks(standing)}

    # Observation.

    def observation(self, seat: int) -> Observation:
        players = range(self.players)
        hidden_setup = self.phase is SETUP
        fields: list[dict[str, list[str]]] = [
            {"left": [], "right": []}
            if hidden_setup and other != seat
            else {"left": list(self.left[other]), "right": list(self.right[other])}
            for other in players
        ]
        return {
            "seat": seat,
            "players": self.players,
            "round": self.round_number,
            "phase": self.phase._value_,
            "to_move": self.to_move(),
            "dealer": self.dealer,
            "amphora": self.amphora,
            "cap": self.cap,
            "hand": list(self.hands[seat]),
            "hand_sizes": [len(self.hands[other]) for other in players],
            "fields": fields,
            "chips": list(self.chips),
            "pot": self.pot,
            "put": list(self.put),
            "bet": self._bet_view() if self.phase is ANSWER else None,
            "betting": [dict(entry) for entry in self.betting],
            "in_round": list(self.in_round),
            "eliminated": [self.eliminated_before[other] is not None for other in players],
            "lap": self.stage if 1 <= self.stage <= LAPS else 0,
            "turn": self.turn,
            "deck_left": len(self.deck),
            "my_choice": self.choices[seat] if self.phase is SHOWDOWN else None,
            "last_round": self.last_outcome.as_dict() if self.last_outcome else None,
        }

    def _bet_view(self) -> dict[str, Any]:
        return {
            "bettor": self.bettor,
            "level": self.level,
            "exchange_put": list(self.exchange_put),
            "raises": self.raises,
            "to_call": [self.level - put for put in self.exchange_put],
        }


def _round_as_deal(hands: tuple[tuple[str, ...], ...], pile: tuple[str, ...]) -> dict[str, list[Any]]:
    """One round of `dealt`: the bottom of the pile, in card order, fills the hands of seats out of the game."""
    bottom = HAND_SIZE * sum(not hand for hand in hands)
    spare = iter(sorted(pile[:bottom], key=CARD_ORDER.__getitem__))
    listed = [list(hand) if hand else [next(spare) for _ in range(HAND_SIZE)] for hand in hands]
    return {"hands": listed, "draws": list(pile[bottom:][::-1])}


def _extra_keys(action: Action, allowed: tuple[str, ...]) -> str | None:
    if len(action) == 1 + len(allowed) and all(map(action.__contains__, allowed)):
        return None
    extra = set(action) - {"kind", *allowed}
    return f"unexpected keys {sorted(extra)} in a {action['kind']!r} action" if extra else None


def _cards_problem(cards: list[Any], available: list[str], where: str) -> str | None:
    """Why `cards` are not distinct cards taken from `available`, or None."""
    if len(set(map(repr, cards))) != len(cards):
        return f"a card is named twice in {cards!r}"
    for card in cards:
        if type(card) is not str or card not in available:
            return f"{card!r} is not in {where}"
    return None


def _canonical_choice(action: Action) -> Action:
    if action["kind"] == "no_link":
        return {"kind": "no_link"}
    return {
        "kind": "vanguards",
        "left": sorted(action["left"], key=CARD_ORDER.__getitem__),
        "right": sorted(action["right"], key=CARD_ORDER.__getitem__),
    }


GAME = ScauverGame()

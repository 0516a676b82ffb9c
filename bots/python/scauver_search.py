"""A Scauver bot that searches: information-set MCTS (bots/python/ismcts.py) over states consistent with what
its seat has seen, the bets counting as evidence about the hidden hands, with the heuristic as prior and as
rollout policy (bots/python/scauver_policy.py).

Determinization. A seat sees every field, its own hand, how many cards each hand holds and every betting
action of the round, but not the order in which the others placed their cards. Neither matters to what comes
next, so the round is rebuilt as a history that reaches the same position: each field's first three cards (as
many as fit, left flank first) were the setup, the rest were drawn and placed one a turn, and the cards still
in a hand were in it from the deal or drawn last. The hidden hands are drawn from the cards nobody has seen,
the rest of those is the draw pile in a random order. The round is rebuilt once per decision, in a new game
whose seats are the players not eliminated, all with the round's table-stakes cap as their chips (so every
legal bet is the same) and the dealer as `first_dealer`; the setups, the betting log and the placements are
applied through `apply`, so every rule is the engine's own. Each sample is then the engine's redeal of it for
the seat (`ScauverState.redeal`), given the hands drawn by the evidence below. Who drew when comes from one
replay of the betting log on any deal (the turn order does not depend on the cards), made once per decision.

Bets as evidence (`--reading`, version 1; off by default since version 2): a hand drawn for a seat still in the
round that bet, raised or called is kept with the likelihood of those actions under a soft model of the
heuristic's betting (it bets and raises with a field that cannot be beaten and calls with a good one), loosened
for a seat whose bets proved weak at past showdowns of the game (BetMemory): rejection sampling, at most
EVIDENCE_TRIES draws a seat. Against version 2, which deals every hidden hand by chance, version 1 won 62 of 200
games at 2 seats and finished above it in 42 of 120 at 4 (30 to 40 iterations a decision; docs/results.md,
Scauver search: reading the bets): a searching opponent bets with weak fields when that pays, and the evidence
makes the bot fold to it.

The search runs at every decision with more than one legal action but the final placement and the showdown,
where the heuristic's choice (the lowest score) is dominant. A playout plays the round to its end with the
heuristic for every seat; a seat's reward is its chips won less the mean of the others', over SCORE_SCALE.

    python -m bots.python.scauver_search [--seed N] [--iterations N] [--reading] [--no-freeze-caches]

Without --iterations each decision spends a share of its request's time (ismcts.budget_from_clock). Since
version 3 the bot's process keeps the policy's caches out of the garbage collector's runs
(scauver_policy.keep_caches_from_collector), which at full caches took longer than a search's whole share.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from bots.python import ismcts, scauver_heuristic, scauver_policy
from bots.python.scauver_policy import values
from protocol.errors import BadInput
from protocol.sdk import run_bot
from referee.games import GameState, load_game
from referee.games._scauver_links import FACE_DECK, NUMERIC_DECK
from referee.games.base import GameError
from referee.games.scauver import ScauverState

Action = dict[str, Any]

GAME = load_game("scauver")
SCORE_SCALE = 20.0
HAND_SIZE = 5
SETUP_CARDS = 3
CARRIED = 2
"""Cards of the deal that stay in hand through the setup."""

EVIDENCE_TRIES = 12
BLUFF_PRIOR_WEAK = 1.0
BLUFF_PRIOR_BETS = 5.0
BLUFF_PRIOR_RATE = BLUFF_PRIOR_WEAK / BLUFF_PRIOR_BETS

FIRST_ITERATION_GUESS_S = 0.002
"""What one iteration is taken to cost until the bot has timed its own (about 1.3 ms at 2 seats, 2.5 at 4)."""
ITERATION_TIME_WEIGHT = 0.2
"""The weight of the latest timed search in the running estimate of an iteration's cost."""
ESTIMATE_DECAY = 0.95
"""Each decision played without a search lowers the estimate (down to the first guess), so that a burst of load
does not keep the bot from ever searching again."""
UNSEARCHED_PHASES = frozenset({"final", "showdown"})
BETTING_PHASES = ("bet", "answer", "final_bet")
SIMULTANEOUS_PHASES = ("setup", "showdown")


class InconsistentObservation(BadInput, ValueError):
    """The observation describes no position the engine reaches from the round's public history."""


@dataclass(frozen=True)
class SeatPlan:
    """How one seat's cards are laid out in the rebuilt round: `hidden` cards are drawn for it."""

    setup_left: tuple[str, ...]
    setup_right: tuple[str, ...]
    placements: tuple[tuple[str, str], ...]
    final: tuple[str, str] | None
    known_hand: tuple[str, ...] | None
    hidden: int


def bet_likelihood(kind: str, cost: int, bluff_rate: float = BLUFF_PRIOR_RATE) -> float:
    """A soft model of betting: the chance of `kind` (bet, raise, call) with a field of `cost`. The heuristic
    bets and raises only with a field that cannot be beaten (cost 0) and calls with one that is good enough;
    a seat that bluffs (`bluff_rate`: the share of its bets that proved weak, BetMemory) bets with anything more
    often, so its bets say less. No hand is ruled out."""
    if kind in ("bet", "raise"):
        if cost <= scauver_heuristic.STRONG_COST:
            return 1.0
        if cost <= scauver_heuristic.CALL_COST["final_bet"]:
            return min(1.0, 1.5 * bluff_rate)
        return bluff_rate / 2
    if kind == "call":
        if cost <= scauver_heuristic.CALL_COST["answer"]:
            return 1.0
        return 0.4 if cost < scauver_heuristic.NO_LINK_COST else 0.2
    return 1.0


class BetMemory:
    """What each seat's bets proved to be, over a game: a bet or raise of a round that reached the showdown
    was weak when the bettor's final field cost more than the heuristic calls a final bet with. The bluff rate
    is the share of weak bets, from a prior of BLUFF_PRIOR_WEAK weak in BLUFF_PRIOR_BETS."""

    def __init__(self) -> None:
        self.weak: Counter[int] = Counter()
        self.bets: Counter[int] = Counter()
        self.round: int | None = None
        self.betting: list[dict[str, Any]] = []

    def observe(self, observation: dict[str, Any]) -> None:
        """Learn from the round before this observation's, once, from the betting log last seen in it."""
        number = observation["round"]
        last = observation["last_round"]
        if number != self.round and last is not None and last["round"] == self.round and not last["by_fold"]:
            for entry in self.betting:
                seat = entry["seat"]
                if entry["kind"] in ("bet", "raise") and last["choices"][seat] is not None:
                    field = last["fields"][seat]
                    cost = scauver_policy.field_cost(_sorted_values(field["left"]), _sorted_values(field["right"]))
                    self.bets[seat] += 1
                    self.weak[seat] += cost > scauver_heuristic.CALL_COST["final_bet"]
        self.round = number
        self.betting = list(observation["betting"])

    def bluff_rate(self, seat: int) -> float:
        return (self.weak[seat] + BLUFF_PRIOR_WEAK) / (self.bets[seat] + BLUFF_PRIOR_BETS)


def _sorted_values(cards: Sequence[str]) -> tuple[int, ...]:
    return tuple(sorted(values(cards)))


def _waits_for(to_move: list[int], target: list[int], phase: str) -> bool:
    """The replay is at the observed decision: the same seat to move, or at a simultaneous one at least the
    seats still choosing (the others' hidden choices are the sample's to make)."""
    if phase in SIMULTANEOUS_PHASES:
        return set(target) <= set(to_move)
    return to_move == target


def _as_action(entry: dict[str, Any]) -> Action:
    kind = entry["kind"]
    if kind in ("bet", "raise"):
        return {"kind": kind, "amount": entry["amount"]}
    return {"kind": kind}


class ScauverDeterminizer:
    """Samples states at the decision of `observation`'s seat. Seats of the sample are the players not
    eliminated, in order (`seats[i]` is the real seat of sample seat i); `seat` is the searching one's."""

    def __init__(
        self,
        observation: dict[str, Any],
        config: dict[str, Any],
        memory: BetMemory | None = None,
        reading: bool = False,
    ) -> None:
        self.observation = observation
        self.memory = memory or BetMemory()
        self.seats = [real for real in range(observation["players"]) if not observation["eliminated"][real]]
        index = {real: compact for compact, real in enumerate(self.seats)}
        self.index = index
        self.seat = index[observation["seat"]]
        self.config = dict(
            config,
            starting_chips=observation["cap"],
            amphora=observation["amphora"],
            growth_every=0,
            round_cap=1,
            first_dealer=index[observation["dealer"]],
        )
        deck = NUMERIC_DECK if self.config.get("numeric_deck") else FACE_DECK
        self.phase = observation["phase"]
        self.bets = [
            (index[entry["seat"]], _as_action(entry)) for entry in observation["betting"] if entry["kind"] != "amphora"
        ]
        self.events, self.drawers = self._skeleton() if self.phase != "setup" else ([], [])
        self.plans = [self._plan(compact) for compact in range(len(self.seats))]
        seen = set(observation["hand"])
        for field in observation["fields"]:
            seen.update(field["left"], field["right"])
        self.unseen = [card for card in deck if card not in seen]
        self.evidence = self._evidence() if reading else [[] for _ in self.seats]
        self.base = self._rebuilt()

    def _skeleton(self) -> tuple[list[tuple[str, int, Action | None]], list[int]]:
        """The round's events in order (setups excluded: ("place" | "final" | "bet", sample seat, action)) and
        the seat of every draw so far, from a replay of the betting log on an arbitrary deal."""
        state = GAME.new_game(len(self.seats), seed=0, config=self.config)
        for compact in range(len(self.seats)):
            state.apply(compact, state.legal_actions_view(compact)[0])
        events: list[tuple[str, int, Action | None]] = []
        drawers: list[int] = []
        dealt_left = state.observation(0)["deck_left"] + 1
        target = [self.index[real] for real in self.observation["to_move"]]
        bets = iter(self.bets)
        pending = len(self.bets)
        try:
            while True:
                view = state.observation(0)
                if view["deck_left"] < dealt_left:
                    drawers.append(view["turn"])
                    dealt_left = view["deck_left"]
                phase = view["phase"]
                if pending == 0 and phase == self.phase and _waits_for(view["to_move"], target, phase):
                    return events, drawers
                if phase in ("place", "final"):
                    mover = view["turn"]
                    events.append((phase, mover, None))
                    state.apply(mover, state.legal_actions_view(mover)[0])
                elif phase in BETTING_PHASES and pending:
                    mover, action = next(bets)
                    pending -= 1
                    events.append(("bet", mover, action))
                    state.apply(mover, action)
                else:
                    raise InconsistentObservation(f"the betting log does not lead to this {self.phase!r} decision")
        except GameError as error:
            raise InconsistentObservation(f"the betting log cannot be replayed: {error}") from None

    def _plan(self, compact: int) -> SeatPlan:
        observation = self.observation
        real = self.seats[compact]
        field = observation["fields"][real]
        left, right = list(field["left"]), list(field["right"])
        own = compact == self.seat
        hand = tuple(observation["hand"]) if own else None
        size = observation["hand_sizes"][real]
        if self.phase == "setup":
            return SeatPlan((), (), (), None, hand, 0 if own else HAND_SIZE)
        finals = sum(1 for kind, mover, _ in self.events if kind == "final" and mover == compact)
        final = None
        if finals:
            final = (left.pop(), right.pop())
        in_left = min(len(left), SETUP_CARDS)
        in_right = SETUP_CARDS - in_left
        placements = tuple((card, "left") for card in left[in_left:]) + tuple(
            (card, "right") for card in right[in_right:]
        )
        placed = sum(1 for kind, mover, _ in self.events if kind == "place" and mover == compact)
        draws = self.drawers.count(compact)
        carried = size + 2 * finals
        if placed != len(placements) or in_right > len(right) or draws != len(placements) + carried - CARRIED:
            raise InconsistentObservation(f"seat {real}'s field and hand do not fit the round's turns")
        return SeatPlan(tuple(left[:in_left]), tuple(right[:in_right]), placements, final, hand, 0 if own else size)

    def _evidence(self) -> list[list[str]]:
        """Per sample seat, the informative betting actions it made this round, if it is still in it."""
        in_round = self.observation["in_round"]
        evidence: list[list[str]] = [[] for _ in self.seats]
        for mover, action in self.bets:
            if action["kind"] in ("bet", "raise", "call") and in_round[self.seats[mover]] and mover != self.seat:
                evidence[mover].append(action["kind"])
        return evidence

    def sample(self, rng: random.Random) -> GameState:
        """The rebuilt round, the cards the seat has not seen dealt again (the engine's redeal): the hands of the
        seats that bet drawn here, by the evidence; the rest by the redeal."""
        bettors = [compact for compact, plan in enumerate(self.plans) if plan.hidden and self.evidence[compact]]
        hands: dict[int, list[str]] = {}
        if bettors:
            pool = list(self.unseen)
            rng.shuffle(pool)
            hands = {compact: self._draw_hidden(compact, pool, rng) for compact in bettors}
        return self.base.redeal(self.seat, rng, hands=hands)

    def _rebuilt(self) -> ScauverState:
        """The round as the rebuilt history plays it, the hidden hands dealt the unseen cards in order."""
        pool = self.unseen[::-1]
        hidden = []
        for plan in self.plans:
            hidden.append(pool[len(pool) - plan.hidden :])
            del pool[len(pool) - plan.hidden :]
        state = GAME.new_game(len(self.seats), seed=0, config=self.config, deal=self._deal(hidden, pool))
        assert isinstance(state, ScauverState)
        if self.phase == "setup":
            return state
        for compact, plan in enumerate(self.plans):
            state.apply(compact, {"kind": "setup", "left": list(plan.setup_left), "right": list(plan.setup_right)})
        placements = [iter(plan.placements) for plan in self.plans]
        for kind, mover, action in self.events:
            if kind == "bet":
                assert action is not None
                state.apply(mover, action)
            elif kind == "place":
                card, flank = next(placements[mover])
                state.apply(mover, {"kind": "place", "card": card, "flank": flank})
            else:
                final = self.plans[mover].final
                assert final is not None
                state.apply(mover, {"kind": "final", "left": final[0], "right": final[1]})
        return state

    def _draw_hidden(self, compact: int, pool: list[str], rng: random.Random) -> list[str]:
        """The seat's hidden hand, taken off the end of the shuffled `pool`; with evidence, the first of up to
        EVIDENCE_TRIES draws accepted with its likelihood (else the likeliest)."""
        count = self.plans[compact].hidden
        kinds = self.evidence[compact]
        if not count or not kinds:
            hand = pool[len(pool) - count :]
            del pool[len(pool) - count :]
            return hand
        real = self.seats[compact]
        field = self.observation["fields"][real]
        left, right = _sorted_values(field["left"]), _sorted_values(field["right"])
        bluff_rate = self.memory.bluff_rate(real)
        best, best_weight = 0, -1.0
        for trial in range(EVIDENCE_TRIES):
            start = len(pool) - count * (trial + 1)
            if start < 0:
                break
            cost = scauver_policy.betting_cost(left, right, tuple(sorted(values(pool[start : start + count]))))
            weight = 1.0
            for kind in kinds:
                weight *= bet_likelihood(kind, cost, bluff_rate)
            if rng.random() < weight:
                best = start
                break
            if weight > best_weight:
                best, best_weight = start, weight
        hand = pool[best : best + count]
        del pool[best : best + count]
        return hand

    def _deal(self, hidden: list[list[str]], pile: list[str]) -> dict[str, Any]:
        """This round as the rebuilt history deals it: setup and carried cards in the hands, then the draws in
        turn order, then the rest of the pile as shuffled."""
        hands: list[list[str]] = []
        draws: list[list[str]] = []
        for plan, secret in zip(self.plans, hidden, strict=True):
            held = [*(plan.final or ()), *(plan.known_hand or secret)]
            if self.phase == "setup":
                hands.append(held)
                draws.append([])
                continue
            hands.append([*plan.setup_left, *plan.setup_right, *held[:CARRIED]])
            draws.append([card for card, _ in plan.placements] + held[CARRIED:])
        turns = [iter(cards) for cards in draws]
        order = [next(turns[drawer]) for drawer in self.drawers]
        return {"rounds": [{"hands": hands, "draws": order + pile}]}


class ScauverSearchGame:
    """The search's view of Scauver: action keys, the heuristic as rollout policy and chips won as reward."""

    def key(self, action: Action) -> Hashable:
        return tuple(tuple(value) if isinstance(value, list) else value for value in action.values())

    def rollout_action(self, state: GameState, seat: int, rng: random.Random) -> Action:
        return scauver_policy.choose(state.observation(seat), state.legal_actions_view(seat))

    def rewards(self, state: GameState, depth: int) -> list[float] | None:
        if not state.is_over():
            return None
        scores = state.result()["scores"]
        total, players = sum(scores), len(scores)
        return [(score - (total - score) / (players - 1)) / SCORE_SCALE for score in scores]


def ranked_by_heuristic(observation: dict[str, Any], legal_actions: list[Action]) -> list[Action]:
    """The legal actions, the heuristic's choice first, then (setup and placement) by its costs."""
    first = scauver_policy.choose(observation, legal_actions)
    phase = observation["phase"]
    rest = [action for action in legal_actions if action != first]
    if phase == "setup":
        costs = dict(
            zip(map(id, legal_actions), scauver_policy.setup_costs(observation["hand"], legal_actions), strict=True)
        )
        rest.sort(key=lambda action: costs[id(action)])
    elif phase == "place":
        field = observation["fields"][observation["seat"]]
        left, right = tuple(sorted(values(field["left"]))), tuple(sorted(values(field["right"])))
        placed = scauver_policy.place_costs(left, right, observation["hand"], legal_actions)
        costs = dict(zip(map(id, legal_actions), placed, strict=True))
        rest.sort(key=lambda action: costs[id(action)])
    return [first, *rest]


class ScauverSearchBot:
    """The SDK bot: `on_clock` sets the next decision's budget, `act` searches."""

    def __init__(self, seed: int, iterations: int | None = None, reading: bool = False) -> None:
        self.seed = seed
        self.reading = reading
        self.clock = ismcts.DecisionClock(iterations)
        self.config: dict[str, Any] = {}
        self.last: ismcts.SearchResult | None = None
        self.iteration_s = FIRST_ITERATION_GUESS_S
        self.memory = BetMemory()

    def on_game_start(self, info: Any) -> None:
        self.config = dict(info.config)
        self.memory = BetMemory()

    def on_clock(self, time_left_ms: int, bank_left_ms: int) -> None:
        self.clock.on_clock(time_left_ms, bank_left_ms)

    def too_short(self) -> bool:
        """Whether the time budget cannot buy the iterations a search needs to be trusted: the search would only
        spend the time and then play the heuristic's choice, so the bot plays it at once."""
        seconds = self.clock.budget.seconds
        return seconds is not None and seconds < ismcts.MIN_TRUSTED_ITERATIONS * self.iteration_s

    def act(self, observation: dict[str, Any], legal_actions: list[Action]) -> Action:
        self.last = None
        self.memory.observe(observation)
        if len(legal_actions) == 1 or observation["phase"] in UNSEARCHED_PHASES:
            return scauver_policy.choose(observation, legal_actions)
        if self.too_short():
            self.iteration_s = max(FIRST_ITERATION_GUESS_S, self.iteration_s * ESTIMATE_DECAY)
            return scauver_policy.choose(observation, legal_actions)
        started = self.clock.started()
        ranked = ranked_by_heuristic(observation, legal_actions)
        rng = ismcts.decision_rng(
            self.seed,
            observation["seat"],
            observation["round"],
            observation["phase"],
            observation["lap"],
            len(observation["betting"]),
            observation["hand"],
            observation["chips"],
        )
        try:
            determinizer = ScauverDeterminizer(observation, self.config, self.memory, self.reading)
        except InconsistentObservation as error:
            print(f"scauver-search: playing the heuristic's choice: {error}", file=sys.stderr)
            return ranked[0]
        budget = self.clock.budget
        result = ismcts.search(ScauverSearchGame(), determinizer, determinizer.seat, ranked, budget, rng, started)
        if budget.seconds is not None and result.iterations:
            measured = (time.perf_counter() - started) / result.iterations
            self.iteration_s += ITERATION_TIME_WEIGHT * (measured - self.iteration_s)
        self.last = result
        return result.action


def _own_options(argv: Sequence[str] | None) -> tuple[argparse.Namespace, list[str]]:
    """This bot's options, and the rest of the command line for ismcts.bot_options."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument(
        "--reading",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="draw the hands of seats that bet by how likely their bets were (version 1; off by default)",
    )
    parser.add_argument(
        "--freeze-caches",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="keep the policy's caches out of the garbage collector's runs (since version 3; off: version 2)",
    )
    return parser.parse_known_args(argv)


def bot_from_args(argv: Sequence[str] | None = None) -> ScauverSearchBot:
    own, rest = _own_options(argv)
    options = ismcts.bot_options("Scauver information-set MCTS bot (also --reading, --no-freeze-caches)", rest)
    return ScauverSearchBot(options.seed, options.iterations, reading=own.reading)


def main(argv: Sequence[str] | None = None) -> int:
    bot = bot_from_args(argv)
    if _own_options(argv)[0].freeze_caches:
        scauver_policy.keep_caches_from_collector()
    return int(run_bot(bot, name="scauver-search", version="3"))


if __name__ == "__main__":
    raise SystemExit(main())

"""A SCOUT bot that searches: information-set MCTS (bots/python/ismcts.py) over deals consistent with what its
seat has seen, with the heuristic's ranking as the root's prior and short greedy rollouts, its tree kept to the
root (TREE_DEPTH).

Determinization: the public history of the round says where every seen card went (a Show takes cards out of
a hand into the Active Set and the previous Active Set into the shower's pile; a Scout puts a known card, as
turned, at a known place of a hand). The round is rebuilt once per decision from the seat's view: its hands
as dealt (undoing the history on them, the places nobody has seen filled with the round's other cards) in a
new game that starts at this round's starter, the round's history replayed through `apply`. Each sample is
then the engine's redeal of it for the seat (`ScoutState.redeal`): the cards the seat has not seen drawn again.

A playout stops at the end of the round or after its rollout depth in moves; a seat's reward is its round score
then less the mean of the others', over SCORE_SCALE. At 3 to 5 seats (VALUE_DEPTH_AT) a cut playout is scored by
the learned value (bots/python/scout_value.py: the round score each seat is expected to end with), after 16 moves;
with --no-value, and at 2 seats, as if the round ended there (captured cards + chips - cards in hand), after
default_rollout_depth moves (6 at 3 seats, ROLLOUT_DEPTH at the others). --rollout-depth N sets the depth at
every table.

The rollout policy (ScoutSearchGame.greedy_action) shows the first of the longest Shows, and else scouts; at 4
seats (SCOUTS_BESIDE_AT) its Scout puts the card beside an equal or consecutive number when one can. With
--random-scouts its Scout is any plain Scout: version 2 of this bot. At 2 to 5 seats (HEURISTIC_OPPONENTS_AT) the
opponents' moves are the heuristic's choice instead (ScoutSearchGame.heuristic_action), and at 5 seats
(HEURISTIC_OWN_AT) the searcher's own later moves too; --opponents greedy|heuristic and --own greedy|heuristic
choose at every table.

    python -m bots.python.scout_search [--seed N] [--iterations N] [--rollout-depth N] [--reading]
                                       [--value FILE | --no-value] [--random-scouts] [--move-share F] [--places]
                                       [--determinizations N] [--prior FILE | --no-prior]
                                       [--opponents greedy|heuristic] [--own greedy|heuristic]

Without --iterations each decision spends a share of its request's time (ismcts.budget_from_clock), 30% or
--move-share F. --places scores the last round's playouts by the places they leave (STANDING_WIDTH). --reading
weighs the determinizations by the opponents' moves (bots/python/scout_reading.py). --determinizations N bounds
the deals a decision's iterations share (by default DETERMINIZATIONS_AT, else ismcts.MAX_DETERMINIZATIONS).

The root's prior: the heuristic's ranking, or at 3 seats (PRIOR_AT) that ranking with the options a prior distilled
from the search's own decisions prefers first (bots/python/scout_prior.py); --prior FILE sets the prior file,
--no-prior keeps the heuristic's ranking at every table.
"""

from __future__ import annotations

import argparse
import math
import random
from collections.abc import Collection, Hashable, Mapping, Sequence
from enum import Enum
from pathlib import Path
from typing import Any, cast

from bots.python import ismcts, scout_heuristic, scout_prior, scout_reading, scout_value
from bots.python.scout_prior import ScoutPrior
from bots.python.scout_value import ScoutValue
from protocol.sdk import run_bot
from referee.games import GameState, load_game
from referee.games.scout import ROTATED, TABLES, ScoutState, card_code, card_pair

Action = dict[str, Any]

GAME = load_game("scout")
ROLLOUT_DEPTH = 12
ROLLOUT_DEPTH_AT: Mapping[int, int] = {3: 6}
"""The seat counts whose playouts are scored sooner, without the value. At 3 seats, 100 ms a move, depth 6 beat
depth 12 in four leagues; at 4 seats it lost to it, so 4 seats keep ROLLOUT_DEPTH, as do 2 and 5, which were not
measured. The leagues are in bots/README.md (Building on the search bot)."""
VALUE_DEPTH_AT: Mapping[int, int] = {3: 16, 4: 16, 5: 16}
"""The seat counts whose playouts the learned value (bots/python/scout_value.py) scores, and after how many moves.
With a position scored by the round score each seat is expected to end with, longer playouts paid in pilots (16
moves over 10, 6 and 3 at 3 seats; 28 level with 16 at 5). In leagues at 500 ms a move against the search without
it, it was not behind on points a game at 3, 4 or 5 seats (about 40 Elo ahead at 3, level at 4 and 5: the docs'
results, SCOUT search: the learned value). 2 seats, not measured, keep the search without it."""
SCOUTS_BESIDE_AT = frozenset({4})
"""The seat counts whose rollouts scout beside a neighbour (`beside_a_neighbour`), elsewhere any plain Scout, as
before. In leagues at 500 ms a move against the search before it, it was not behind on points a game at 4 seats
and behind at 3 and 5, each inside the noise (docs/results.md, SCOUT search: Scouts beside a neighbour); 2 seats
were not measured."""
DETERMINIZATIONS_AT: Mapping[int, int] = {3: 120}
"""The seat counts whose decisions share more deals than ismcts.MAX_DETERMINIZATIONS (24), and how many. At 3
seats, 500 ms a move, against version 3 (24) and scout-ai's network, 120 was ahead by +1.4 and +0.5 points a game
in two in-process pilots and +0.8 in a league (LOS 71%; docs/results.md, SCOUT search: more deals) for 10% fewer
iterations; drawing a fresh deal every third iteration throughout was behind (-0.9). At 4 seats 120 was level in a
league (-0.2), at 5 behind in a pilot (-0.9): they keep 24, as does 2, not measured."""
PRIOR_AT = frozenset({3})
"""The seat counts whose root ranks first the options the distilled prior (bots/python/scout_prior.py) prefers,
elsewhere the heuristic's ranking alone. At 3 seats, 500 ms a move, against version 4 and scout-ai's network, it was
ahead by +0.7 +/- 0.6 points a game over four in-process pilots and +0.8 in a league (LOS 68%; docs/results.md,
SCOUT search: a prior distilled from the search); the other tables were not measured."""


class RolloutPlay(Enum):
    """How a rollout plays a seat's moves: an opponent's (at its strong share: OpponentModel), or the searcher's own."""

    GREEDY = "greedy"  # ScoutSearchGame.greedy_action
    HEURISTIC = "heuristic"  # the heuristic bot's choice (ScoutSearchGame.heuristic_action)

    def __str__(self) -> str:
        return self.value


HEURISTIC_OPPONENTS_AT = frozenset({2, 3, 4, 5})
"""The seat counts whose rollouts play the opponents' moves by the heuristic's choice (scout_heuristic.play_values),
not the greedy policy's. scout-ai's network plays the heuristic's choice in 74% of its decisions at 3 seats and the
greedy one in 55% (its kind of move and, for a Show, its cards). In leagues at 500 ms a move with the network it was
ahead of version 5 (greedy) by +3.3 points a game at 3 seats (LOS 98.9%, for about 43% fewer iterations), +1.7 at 4
(LOS 87%) and +0.7 at 5 (LOS 71%) (docs/results.md, SCOUT search: the heuristic as the opponents' model). At 2 seats
(version 8) it was ahead of the greedy model by +1.0 points a game (LOS 91%) in a league of the two at 500 ms a move
(docs/results.md, SCOUT search: two seats)."""
HEURISTIC_OWN_AT = frozenset({5})
"""The seat counts whose rollouts also play the searcher's own later moves by the heuristic's choice (version 7),
elsewhere by the greedy policy. In leagues at 500 ms a move against version 6 and scout-ai's network it was ahead by
+2.3 points a game at 5 seats (LOS 98.3%, for 6% fewer iterations) and behind at 3 and 4 (-0.4 and -0.2, LOS 40% and
41%); at 5 seats it was ahead of the network by +4.5 and +2.6 on two seeds (docs/results.md, SCOUT search: the
heuristic for the searcher's own moves); 2 seats were not measured."""
SCORE_SCALE = 8.0

STANDING_WIDTH = 5.0
"""With --places, in a game's last round a playout is scored by the places it leaves, not the points: each seat's
reward is the mean over the others of tanh((its total - theirs) / STANDING_WIDTH), the totals being the scores
before the round plus the playout's round scores. A table counts who finished above whom; a point more where the
places are settled is worth nothing there. It lost at 3 seats (docs/results.md, SCOUT search: thinking time and
places), so it is off by default."""

READING_SHARE = 0.25
"""With reading on (--reading), the share of a timed decision's thinking spent drawing and weighing deals
(bots/python/scout_reading.py); then its determinizations are the plain redeal, and the search has the rest."""

TREE_DEPTH = 1
"""The tree holds the seat's own choices at the root; every later move is the rollout policy's. Against a
stronger one-ply planner (myselph's PlanningPlayer(1.5)) a deeper tree did worse the longer it searched: the
replies UCB finds below the root answer the greedy model of the opponents, not the opponents at the table.
The measurements are in bots/README.md."""


def _code(card: Sequence[int]) -> int:
    return card_code(card[0], card[1])


def _unordered(code: int) -> int:
    return min(code, ROTATED[code])


class ScoutDeterminizer:
    """Samples states at the decision of `observation`'s seat."""

    def __init__(self, observation: dict[str, Any], config: dict[str, Any]) -> None:
        self.observation = observation
        self.players = players = observation["players"]
        self.table = TABLES[players]
        self.config = dict(config, first_player=observation["round_starter"])
        self.seat = seat = observation["seat"]
        history = observation["history"]
        places: list[list[int | None]] = [[None] * self.table.hand_size for _ in range(players)]
        active: list[int] = []
        seen: list[int] = []
        for entry in history:
            kind, who = entry["kind"], entry["seat"]
            if kind == "show":
                seen += active
                start, length = entry["start"], entry["length"]
                del places[who][start : start + length]
                active = [_code(card) for card in entry["cards"]]
            elif kind == "scout":
                code = _code(entry["card"])
                taken = active.pop(0) if entry["end"] == "left" else active.pop()
                assert _unordered(taken) == _unordered(code)
                places[who].insert(entry["insert"], code)
        places[seat] = [_code(card) for card in observation["hand"]]
        self.places = places
        known = {_unordered(code) for hand in places for code in hand if code is not None}
        known |= {_unordered(code) for code in active + seen}
        self.unseen = [card_code(low, high) for low, high in self.table.deck if card_code(low, high) not in known]
        self.actions = [history_move(entry) for entry in history]
        self.base = self._state(self._undo_history(self._filled_hands()))

    def sample(self, rng: random.Random) -> GameState:
        """The round so far, the cards the seat has not seen dealt again (the engine's redeal)."""
        return self.base.redeal(self.seat, rng)

    def dealt(self, rng: random.Random) -> list[list[int]]:
        """This round's hands as they were dealt (card codes): the seen cards where they were, the rest drawn."""
        round_one = self.sample(rng).dealt["rounds"][0]
        return [[card_code(top, bottom) for top, bottom in hand] for hand in round_one]

    def _state(self, dealt: list[list[int]]) -> GameState:
        state = GAME.new_game(self.players, seed=0, config=self.config, deal=self._deal(dealt))
        for who, action in self.actions:
            state.apply(who, action)
        return state

    def _filled_hands(self) -> list[list[int]]:
        """The hands now, the places the seat has not seen filled with the unseen cards in order (the redeal
        draws them again)."""
        cards = iter(self.unseen)
        return [[next(cards) if code is None else code for code in hand] for hand in self.places]

    def _undo_history(self, hands: list[list[int]]) -> list[list[int]]:
        for entry in reversed(self.observation["history"]):
            kind, who = entry["kind"], entry["seat"]
            if kind == "show":
                start = entry["start"]
                hands[who][start:start] = [_code(card) for card in entry["cards"]]
            elif kind == "scout":
                del hands[who][entry["insert"]]
            elif entry["flip"]:
                hands[who] = [ROTATED[code] for code in reversed(hands[who])]
        return hands

    def _deal(self, dealt: list[list[int]]) -> dict[str, Any]:
        """This round as dealt first; the later rounds (never reached by a playout) are any valid deal."""
        table = self.table
        first = [[card_pair(code) for code in hand] for hand in dealt]
        if table.two_players:
            used = {_unordered(code) for hand in dealt for code in hand}
            rest = [card_code(low, high) for low, high in table.deck if card_code(low, high) not in used]
            size = table.hand_size
            later = [[card_pair(code) for code in rest[seat * size : (seat + 1) * size]] for seat in range(2)]
            return {"rounds": [first, later]}
        return {"rounds": [first] * table.rounds}


def history_move(entry: dict[str, Any]) -> tuple[int, Action]:
    kind = entry["kind"]
    if kind == "orient":
        return entry["seat"], {"kind": "orient", "flip": entry["flip"]}
    if kind == "show":
        return entry["seat"], {"kind": "show", "start": entry["start"], "length": entry["length"]}
    fields = ("end", "flip", "insert", "and_show")
    return entry["seat"], {"kind": "scout", **{name: entry[name] for name in fields}}


STRONG_SHEDDING = 0.6
RANDOM_SHEDDING = 0.0
"""Cards a seat sheds per move (cards shown less cards scouted, over its Shows and Scouts). As measured at
tables of 3 to 5 seats, the heuristic sheds 0.85 to 2.0 a move at every table, the random bot -0.45 to 0.0 (it
scouts more than it shows); the bounds sit inside that gap, nearer the random bot's side."""

PRIOR_MOVES = 6
"""The moves of evidence a seat is assumed to have made at the strong shedding before its own: a seat is
modelled as strong until its moves say otherwise."""


class OpponentModel:
    """How each seat of one game plays, from the public history: the share of its moves a rollout plays at
    random. A rollout plays a strong opponent's moves with the greedy policy, and one that sheds no more cards
    than a random bot, at random. The share places the seat's shedding (smoothed by PRIOR_MOVES at the strong
    shedding) between the strong and the random sheddings, clamped to 0..1."""

    def __init__(self, players: int) -> None:
        self.moves = [0] * players
        self.shed = [0] * players
        self.round = 0
        self.counted = 0

    def observe(self, observation: dict[str, Any]) -> None:
        """Count the entries of this round's history not counted yet (each decision sees the round so far)."""
        history = observation["history"]
        if observation["round"] != self.round:
            self.round, self.counted = observation["round"], 0
        for entry in history[self.counted :]:
            kind, seat = entry["kind"], entry["seat"]
            if kind == "show":
                self.moves[seat] += 1
                self.shed[seat] += entry["length"]
            elif kind == "scout":
                self.moves[seat] += 1
                self.shed[seat] -= 1
        self.counted = len(history)

    def randomness(self, seat: int) -> float:
        shedding = (self.shed[seat] + PRIOR_MOVES * STRONG_SHEDDING) / (self.moves[seat] + PRIOR_MOVES)
        share = (STRONG_SHEDDING - shedding) / (STRONG_SHEDDING - RANDOM_SHEDDING)
        return min(1.0, max(0.0, share))

    def rollout_randomness(self, searcher: int) -> list[float]:
        """Each seat's randomness, the searching seat's own moves never at random."""
        return [0.0 if seat == searcher else self.randomness(seat) for seat in range(len(self.moves))]


class ScoutSearchGame:
    """The search's view of SCOUT: action keys, the rollout policy and the playout's end. `randomness[seat]` is
    the share of that seat's rollout moves played at random (OpponentModel); the others are the heuristic's
    choice at `heuristic_seats`, else greedy. Given the game's `standing` before the round (standing_at),
    playouts are scored by places (STANDING_WIDTH), else by points."""

    def __init__(
        self,
        randomness: Sequence[float] = (),
        rollout_depth: int = ROLLOUT_DEPTH,
        value: ScoutValue | None = None,
        scouts_beside: bool = True,
        standing: Sequence[float] | None = None,
        heuristic_seats: Collection[int] = (),
    ) -> None:
        self.standing = standing
        self.heuristic_seats = frozenset(heuristic_seats)
        self.hand_values: dict[bytes, float] = {}
        self.randomness = tuple(randomness)
        self.rollout_depth = rollout_depth
        self.value = value
        self.scouts_beside = scouts_beside

    def key(self, action: Action) -> Hashable:
        return tuple(action.values())

    def rollout_action(self, state: GameState, seat: int, rng: random.Random) -> Action:
        """A random legal move at the seat's randomness; else the heuristic's or the greedy policy's."""
        legal = state.legal_actions_view(seat)
        if self.randomness and self.randomness[seat] and rng.random() < self.randomness[seat]:
            return legal[rng.randrange(len(legal))]
        if seat in self.heuristic_seats and legal[0]["kind"] != "orient":
            return self.heuristic_action(cast(ScoutState, state), seat, legal)
        return self.greedy_action(state, seat, legal, rng)

    def heuristic_action(self, state: ScoutState, seat: int, legal: Sequence[Action]) -> Action:
        """The heuristic's choice of play (scout_heuristic.play_values), each hand valued once a decision: among
        the Shows if there is one (a Show's cards captured and shed outweigh what a Scout can add to a hand: in
        24,000 decisions of 3 to 5 seats the heuristic never scouted when it could show), else among the Scouts
        beside a neighbour if any. It is the heuristic bot's own choice in 99.9% of decisions."""
        shows = 0
        for action in legal:
            if action["kind"] != "show":
                break
            shows += 1
        tops, active = state.hand_numbers(seat), state.active_cards()
        choices = legal[:shows] if shows else beside_a_neighbour(tops, active, legal) or legal
        values = scout_heuristic.play_values(tops, active, choices, self.hand_value)
        return choices[scout_heuristic.best_play(values)]

    def hand_value(self, tops: bytes) -> float:
        """scout_heuristic.hand_value, kept: a decision's playouts meet the same hands again and again."""
        value = self.hand_values.get(tops)
        if value is None:
            value = self.hand_values[tops] = scout_heuristic.hand_value(tops)
        return value

    def greedy_action(self, state: GameState, seat: int, legal: Sequence[Action], rng: random.Random) -> Action:
        """The first of the longest Shows (a single only half the time); else a plain Scout at random, among
        those that put the card beside an equal or consecutive number if any do (with `scouts_beside`)."""
        best: Action | None = None
        for action in legal:
            kind = action["kind"]
            if kind == "show":
                if best is None or action["length"] > best["length"]:
                    best = action
            elif kind == "orient":
                return legal[rng.getrandbits(1)]
        if best is not None and (best["length"] > 1 or rng.random() < 0.5):
            return best
        scouts = [action for action in legal if action["kind"] == "scout" and not action["and_show"]]
        if not scouts:
            return best if best is not None else legal[rng.randrange(len(legal))]
        if self.scouts_beside:
            view = state.observation(seat)
            scouts = beside_a_neighbour([top for top, _ in view["hand"]], view["active_set"], scouts) or scouts
        return scouts[rng.randrange(len(scouts))]

    def rewards(self, state: GameState, depth: int) -> list[float] | None:
        scores: Sequence[float]
        if state.round > 1 or state.is_over():
            scores = state.result()["scores"]
        elif depth >= self.rollout_depth and self.value is not None:
            scores = self.value.seat_scores(state)
        elif depth >= self.rollout_depth:
            view = state.observation(0)
            scores = [
                captured + chips - in_hand
                for captured, chips, in_hand in zip(view["captured"], view["chips"], view["hand_sizes"], strict=True)
            ]
        else:
            return None
        players = len(scores)
        if self.standing is not None:
            totals = [before + score for before, score in zip(self.standing, scores, strict=True)]
            return [
                sum(math.tanh((mine - other) / STANDING_WIDTH) for other in totals) / (players - 1) for mine in totals
            ]
        total = sum(scores)
        return [(score - (total - score) / (players - 1)) / SCORE_SCALE for score in scores]


def beside_a_neighbour(tops: Sequence[int], active: Sequence[Sequence[int]], scouts: list[Action]) -> list[Action]:
    """The Scouts among `scouts` that put the card taken next to a card of its number or one apart: a start of
    a match or a run, where a Scout at random mostly breaks the hand's sets."""
    last = len(tops)
    kept = []
    for action in scouts:
        top, bottom = active[0] if action["end"] == "left" else active[-1]
        number = bottom if action["flip"] else top
        gap = action["insert"]
        if (gap > 0 and abs(tops[gap - 1] - number) <= 1) or (gap < last and abs(tops[gap] - number) <= 1):
            kept.append(action)
    return kept


def standing_at(observation: Mapping[str, Any]) -> list[float] | None:
    """The game's scores before this round if it is the last one (its playouts may be scored by places), else
    None."""
    if observation["round"] != TABLES[observation["players"]].rounds:
        return None
    return list(observation["scores"])


def default_rollout_depth(players: int) -> int:
    """Moves before a playout is scored at a table of `players` seats."""
    return ROLLOUT_DEPTH_AT.get(players, ROLLOUT_DEPTH)


def ranked_by_heuristic(observation: dict[str, Any], legal_actions: list[Action]) -> list[Action]:
    """The legal actions, best first by the heuristic's own values (bots/python/scout_heuristic.py)."""
    if observation["phase"] == "orient":
        first = scout_heuristic.choose_orientation(observation["hand"], legal_actions)
        return [first, *(action for action in legal_actions if action is not first)]
    tops = bytes(top for top, _ in observation["hand"])
    values = scout_heuristic.play_values(tops, observation["active_set"], legal_actions)
    order = sorted(range(len(legal_actions)), key=values.__getitem__, reverse=True)
    return [legal_actions[index] for index in order]


class ScoutSearchBot:
    """The SDK bot: `on_clock` sets the next decision's budget, `act` searches."""

    def __init__(
        self,
        seed: int,
        iterations: int | None = None,
        rollout_depth: int | None = None,
        reading: bool = False,
        value: Path | None = scout_value.DEFAULT_PATH,
        scouts_beside: bool = True,
        move_share: float = ismcts.MOVE_TIME_SHARE,
        places: bool = False,
        determinizations: int | None = None,
        prior: Path | None = scout_prior.DEFAULT_PATH,
        opponent_model: RolloutPlay | None = None,
        own_model: RolloutPlay | None = None,
    ) -> None:
        self.seed = seed
        self.opponent_model = opponent_model
        self.own_model = own_model
        self.prior = None if prior is None else ScoutPrior.load(prior)
        self.determinizations = determinizations
        self.places = places
        self.scouts_beside = scouts_beside
        self.value = None if value is None else ScoutValue.load(value)
        self.reading = reading
        self.rollout_depth = rollout_depth
        self.clock = ismcts.DecisionClock(iterations, move_share)
        self.config: dict[str, Any] = {}
        self.last: ismcts.SearchResult | None = None
        self.opponents: OpponentModel | None = None

    def on_game_start(self, info: Any) -> None:
        self.config = dict(info.config)
        self.opponents = None

    def on_clock(self, time_left_ms: int, bank_left_ms: int) -> None:
        self.clock.on_clock(time_left_ms, bank_left_ms)

    def value_at(self, players: int) -> ScoutValue | None:
        """The value that scores playouts at a table of `players` seats, if any (VALUE_DEPTH_AT)."""
        if self.value is None or players not in VALUE_DEPTH_AT or not self.value.covers(players):
            return None
        return self.value

    def rollout_depth_at(self, players: int) -> int:
        """The rollout depth given to the bot, else the table's default (with the value, VALUE_DEPTH_AT)."""
        if self.rollout_depth is not None:
            return self.rollout_depth
        if self.value_at(players) is not None:
            return VALUE_DEPTH_AT[players]
        return default_rollout_depth(players)

    def determinizations_at(self, players: int) -> int:
        """The most deals a decision shares: the bot's own limit, else the table's (DETERMINIZATIONS_AT)."""
        if self.determinizations is not None:
            return self.determinizations
        return DETERMINIZATIONS_AT.get(players, ismcts.MAX_DETERMINIZATIONS)

    def prior_at(self, players: int) -> ScoutPrior | None:
        """The prior that reorders the root at a table of `players` seats, if any (PRIOR_AT)."""
        return self.prior if players in PRIOR_AT else None

    def heuristic_seats_at(self, players: int, seat: int) -> list[int]:
        """The seats whose rollout moves are the heuristic's choice: the opponents' (HEURISTIC_OPPONENTS_AT) and the
        searcher's own (HEURISTIC_OWN_AT), each as the bot was told, else as the table's default."""
        opponents = _chosen(self.opponent_model, players in HEURISTIC_OPPONENTS_AT)
        own = _chosen(self.own_model, players in HEURISTIC_OWN_AT)
        return [other for other in range(players) if (own if other == seat else opponents)]

    def scouts_beside_at(self, players: int) -> bool:
        """Whether rollouts at a table of `players` seats scout beside a neighbour (SCOUTS_BESIDE_AT)."""
        return self.scouts_beside and players in SCOUTS_BESIDE_AT

    def act(self, observation: dict[str, Any], legal_actions: list[Action]) -> Action:
        if self.opponents is None:
            self.opponents = OpponentModel(observation["players"])
        self.opponents.observe(observation)
        if len(legal_actions) == 1:
            return legal_actions[0]
        started = self.clock.started()
        players = observation["players"]
        ranked = ranked_by_heuristic(observation, legal_actions)
        prior = self.prior_at(players)
        if prior is not None:
            ranked = prior.ranked(observation, legal_actions, ranked)
        rng = ismcts.decision_rng(
            self.seed, observation["seat"], observation["round"], observation["scores"], len(observation["history"])
        )
        seat = observation["seat"]
        randomness = self.opponents.rollout_randomness(seat)
        determinizer = self.determinizer(observation, randomness)
        game = ScoutSearchGame(
            randomness,
            self.rollout_depth_at(players),
            self.value_at(players),
            self.scouts_beside_at(players),
            standing_at(observation) if self.places else None,
            self.heuristic_seats_at(players, seat),
        )
        self.last = ismcts.search(
            game,
            determinizer,
            seat,
            ranked,
            self.clock.budget,
            rng,
            started,
            tree_depth=TREE_DEPTH,
            determinizations=self.determinizations_at(players),
        )
        return self.last.action

    def determinizer(self, observation: dict[str, Any], randomness: Sequence[float]) -> ismcts.Determinizer:
        """The uniform redeal, or with reading on, one weighed by the opponents' moves (scout_reading), which may
        spend READING_SHARE of a timed decision's thinking weighing (no limit when the work is fixed)."""
        plain = ScoutDeterminizer(observation, self.config)
        if not self.reading:
            return plain
        seconds = self.clock.budget.seconds
        share = None if seconds is None else READING_SHARE * seconds
        return scout_reading.ReadingDeterminizer(plain, randomness, seconds=share)


def bot_from_args(argv: Sequence[str] | None = None) -> ScoutSearchBot:
    """The bot its command line asks for (a bad value file exits with a usage error)."""
    depth = argparse.ArgumentParser(add_help=False)
    depth.add_argument("--rollout-depth", type=int, help="moves before a playout is scored (default: by seat count)")
    depth.add_argument(
        "--reading", action=argparse.BooleanOptionalAction, default=False, help="weigh deals by the opponents' moves"
    )
    depth.add_argument(
        "--value", type=Path, default=scout_value.DEFAULT_PATH, help="the value file that scores cut playouts"
    )
    depth.add_argument("--no-value", action="store_true", help="score cut playouts as if the round ended there")
    depth.add_argument(
        "--random-scouts", action="store_true", help="rollouts scout at random, not beside a neighbour (version 2)"
    )
    depth.add_argument(
        "--move-share",
        type=_share,
        default=ismcts.MOVE_TIME_SHARE,
        help=f"the share of the move time a timed decision spends (default: {ismcts.MOVE_TIME_SHARE})",
    )
    depth.add_argument("--places", action="store_true", help="score the last round's playouts by the places they leave")
    depth.add_argument(
        "--determinizations",
        type=_positive,
        metavar="N",
        help=f"the most deals a decision's iterations share (default: {_by_seats(DETERMINIZATIONS_AT)},"
        f" {ismcts.MAX_DETERMINIZATIONS} at the others)",
    )
    depth.add_argument(
        "--prior", type=Path, default=scout_prior.DEFAULT_PATH, help="the prior file that reorders the root at 3 seats"
    )
    depth.add_argument("--no-prior", action="store_true", help="the heuristic's ranking at the root at every table")
    depth.add_argument(
        "--opponents",
        type=RolloutPlay,
        choices=list(RolloutPlay),
        help="how rollouts play the opponents' moves (default: heuristic at"
        f" {', '.join(map(str, sorted(HEURISTIC_OPPONENTS_AT)))} seats, else greedy, as version 5 did)",
    )
    depth.add_argument(
        "--own",
        type=RolloutPlay,
        choices=list(RolloutPlay),
        help="how rollouts play the searcher's own later moves (default: heuristic at"
        f" {', '.join(map(str, sorted(HEURISTIC_OWN_AT)))} seats, else greedy, as version 6 did)",
    )
    known, rest = depth.parse_known_args(argv)
    options = ismcts.bot_options(
        "SCOUT information-set MCTS bot (also --rollout-depth N, --reading, --value FILE, --no-value, --random-scouts,"
        " --move-share F, --places, --determinizations N, --prior FILE, --no-prior, --opponents greedy|heuristic,"
        " --own greedy|heuristic)",
        rest,
    )
    value = None if known.no_value else known.value
    prior = None if known.no_prior else known.prior
    if prior is not None:
        try:
            ScoutPrior.load(prior)
        except (OSError, ValueError, KeyError) as error:
            depth.error(f"cannot read the prior file {prior}: {error}")
    try:
        return ScoutSearchBot(
            options.seed,
            options.iterations,
            known.rollout_depth,
            known.reading,
            value,
            scouts_beside=not known.random_scouts,
            move_share=known.move_share,
            places=known.places,
            determinizations=known.determinizations,
            prior=prior,
            opponent_model=known.opponents,
            own_model=known.own,
        )
    except (OSError, ValueError, KeyError) as error:
        depth.error(f"cannot read the value file {known.value}: {error}")


def _chosen(model: RolloutPlay | None, by_default: bool) -> bool:
    """Whether a seat plays by the heuristic: as `model` says, else `by_default`."""
    return by_default if model is None else model is RolloutPlay.HEURISTIC


def _by_seats(counts: Mapping[int, int]) -> str:
    return ", ".join(f"{count} at {players} seats" for players, count in sorted(counts.items()))


def _share(text: str) -> float:
    share = float(text)
    if not 0 < share < 1:
        raise argparse.ArgumentTypeError(f"a share of the move time is between 0 and 1, not {text}")
    return share


def _positive(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise argparse.ArgumentTypeError(f"a count of deals is a whole number of at least 1, not {text}")
    return count


def main(argv: Sequence[str] | None = None) -> int:
    return int(run_bot(bot_from_args(argv), name="scout-search", version="8"))


if __name__ == "__main__":
    raise SystemExit(main())

"""SCOUT and Scauver as OpenSpiel python games: importing this module registers `python_scout` and
`python_scauver` with pyspiel (`pyspiel.load_game("python_scout", {"players": 4})`).

Both are sequential imperfect-information games with explicit chance nodes for the deal, played by the
rules engine itself (nothing of the rules is written again here):

- Chance deals one card per node, uniformly among the cards not yet dealt: SCOUT outcome
  `2 * i + o` is card i of the table's deck (`scout.TABLES[players].deck`, as (low, high)) with the low number
  on top (o = 0) or the high one (o = 1), all hands of a round seat by seat (two seats: round 2 from the 22
  cards round 1 left). Scauver first draws the first dealer (outcome = seat; only with `first_dealer` -1),
  then per round, for the players still in, their 5 cards seat by seat and then the 3 cards each of them
  may draw, in draw order (outcome = index in the deck). Every round is dealt when it starts: SCOUT's
  engine takes the round's cards in place (`ScoutState.deal_round`); Scauver's game is rebuilt by replaying
  its actions on an explicit deal with the new round's cards.
- Player actions are the codec's indices (codec.py documents every one); a simultaneous decision (SCOUT's
  orientation, Scauver's setup and showdown) is taken seat by seat, lowest first, and the engine shows no
  seat another's choice until all have chosen.
- Returns come at the end: with `returns` "rank" (the default) per seat the mean over the others of +1 / 0 /
  -1 for ranking better / level / worse (zero-sum, in [-1, 1]); with "score" its final score (SCOUT points,
  Scauver chips) minus the table's mean. max_game_length is the rules' bound on decisions (lengths.py
  derives it from the player count and options); SCOUT at 3 to 5 seats has none, so its games are truncated
  after lengths.UNBOUNDED_ROUND_MOVES decisions a round, far beyond any game seen in random play, and scored
  by the engine's result so far. Parameter `max_moves` (0: that bound) truncates sooner.
- `state.legal_action_features()`: a float32 matrix, one row of action features per index of
  `legal_actions()` (action_features.py; docs/reference/rl-environments.md names the columns).
- The observation string and tensor are of `state.observation(player)`, what the referee sends that seat
  (features.py for the tensor). The information-state string is that seat's observation at each of its
  decisions (each round's public log only from where the previous one ended) with the action it took, then
  its current observation: all it was ever shown, so it has perfect recall of what the referee sends. The
  information-state tensor is the observation tensor (a fixed size cannot hold a whole game's history).
  Observers (`make_py_observer`): the seat's own view (the default, above); public information alone
  (private_info NONE: the observation without the seat's hand and own pending choices, the same whichever
  seat looks, its tensor from seat 0's side with no hand); or private information alone (public_info False:
  the seat's hand and pending choice, its tensor the hand's part of the features).

Game parameters: `players`, `max_moves`, `returns`, `observation` ("full" or "compact": features.py), and
the game's own options that take a number or a truth value (`referee games` lists them), e.g.
`{"players": 3, "round_cap": 20}` for Scauver; python_scout also takes `from_round` and `scores`, the rest of
a game (REMAINDER_PARAMETERS).

Both games' states offer `resample_from_infostate(player, sampler)`, what OpenSpiel's Python ISMCTS calls: the
game played again on the engine's redeal for that seat (`GameState.redeal`: the cards it never saw, and the
choices of others it was not shown, drawn again).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pyspiel

from .. import Game, GameState, load_game, shared_ranks
from ..scauver import FACE_DECK, NUMERIC_DECK
from ..scout import TABLES
from .action_features import action_feature_width, indexed_action_features
from .codec import ActionCodec, codec_for, hand_cap, indexed_legal
from .compiled import _fastscout
from .features import OBSERVATIONS, fast_features, feature_size, hand_size
from .lengths import truncation
from .rewards import RETURNS, rank_rewards, score_rewards

DEFAULT_PLAYERS = {"scout": 4, "scauver": 2}
MAX_MOVES = 0
"""The default of parameter `max_moves`: the rules' bound (lengths.truncation)."""
PRIVATE_KEYS = frozenset({"seat", "hand", "my_choice"})
"""What of a seat's observation is its own (with Scauver's own field at the setup: public_view)."""
SIMULTANEOUS = frozenset({"orient", "setup", "showdown"})
SCAUVER_CARDS_PER_SEAT = 5 + 3


def _game_type(name: str) -> pyspiel.GameType:
    rules = load_game(name)
    options = {
        option.name: option.default for option in rules.info.options if type(option.default) in (int, bool, float)
    }
    return pyspiel.GameType(
        short_name=f"python_{name}",
        long_name=f"Python {rules.info.title} (card-referee)",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=rules.info.max_players,
        min_num_players=rules.info.min_players,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification={
            "players": DEFAULT_PLAYERS[name],
            "max_moves": MAX_MOVES,
            "returns": RETURNS[0],
            "observation": OBSERVATIONS[0],
            **options,
            **(REMAINDER_PARAMETERS if name == "scout" else {}),
        },
    )


REMAINDER_PARAMETERS: dict[str, Any] = {"from_round": 1, "scores": ""}
"""python_scout only: the rest of a game, from round `from_round` (3 to 5 seats), the totals before it being
`scores` (one integer a seat, comma-separated; default all 0). Round 1 of the engine's game is then round
`from_round`, and `first_player` is the seat that starts it; the game ends after the rounds left, ranked on the
totals plus what they scored. A bot that joins a search at its own seat's view needs it: a seat is not shown the
last moves of a finished round, so a game from round 1 cannot be rebuilt from what it saw."""


@dataclass(frozen=True)
class Remainder:
    """Which rounds a python_scout game plays (REMAINDER_PARAMETERS): `rounds` of them, after totals `scores`."""

    rounds: int
    scores: tuple[int, ...]

    @classmethod
    def of(cls, players: int, from_round: int, scores: str) -> Remainder:
        table = TABLES[players]
        if not 1 <= from_round <= table.rounds:
            raise ValueError(f"from_round must be 1 to {table.rounds} at {players} seats, not {from_round}")
        if from_round > 1 and table.two_players:
            raise ValueError("from_round applies at 3 to 5 seats (round 2 of two seats deals what round 1 left)")
        totals = tuple(int(score) for score in scores.split(",")) if scores.strip() else (0,) * players
        if len(totals) != players:
            raise ValueError(f"scores has {len(totals)} totals for {players} seats: {scores!r}")
        return cls(table.rounds - from_round + 1, totals)


@dataclass(frozen=True)
class Setup:
    """What a game's parameters fix, shared (never copied) by its states."""

    name: str
    players: int
    max_moves: int
    returns: str
    compact: bool
    rules: Game
    config: dict[str, Any]
    codec: ActionCodec
    deck: tuple[Any, ...]
    remainder: Remainder | None = None

    @classmethod
    def of(
        cls,
        name: str,
        players: int,
        max_moves: int,
        returns: str,
        observation: str,
        options: dict[str, Any],
        remainder: Remainder | None = None,
    ) -> Setup:
        if returns not in RETURNS:
            raise ValueError(f"returns is one of {RETURNS}, not {returns!r}")
        if observation not in OBSERVATIONS:
            raise ValueError(f"observation is one of {OBSERVATIONS}, not {observation!r}")
        rules = load_game(name)
        config = rules.resolve_config(options)
        if name == "scout":
            deck: tuple[Any, ...] = TABLES[players].deck
        else:
            deck = NUMERIC_DECK if config["numeric_deck"] else FACE_DECK
        bound = truncation(name, players, config, remainder.rounds if remainder else None)
        moves = bound if max_moves <= 0 else min(max_moves, bound)
        codec = codec_for(name, players, config)
        compact = observation == "compact"
        return cls(name, players, moves, returns, compact, rules, config, codec, deck, remainder)

    @property
    def utility_bound(self) -> float:
        """The largest |return|: 1 for ranks; for scores a bound of any seat's distance from the mean (SCOUT: a
        round scores each seat between minus the largest hand and the deck plus one chip per decision)."""
        if self.returns == "rank":
            return 1.0
        if self.name == "scauver":
            return float(self.config["starting_chips"] * self.players)
        rounds = self.remainder.rounds if self.remainder else TABLES[self.players].rounds
        before = max(map(abs, self.remainder.scores)) if self.remainder else 0
        per_round = hand_cap(self.players) + len(self.deck)
        return float(2 * (before + rounds * per_round + self.max_moves))

    @property
    def chance_outcomes(self) -> int:
        return 2 * len(self.deck) if self.name == "scout" else max(len(self.deck), self.players)

    @property
    def feature_size(self) -> int:
        return feature_size(self.name, self.players, self.compact)

    @cached_property
    def zeros(self) -> list[float]:
        """A tensor of zeros as a list, which `observation_tensor` copies and fills in."""
        return [0.0] * self.feature_size

    def features(self, observation: dict[str, Any]) -> np.ndarray:
        return fast_features(self.name, observation, self.config, self.compact)

    def __deepcopy__(self, memo: dict[int, Any]) -> Setup:
        return self


class CardGame(pyspiel.Game):
    """One of the two games at one player count; `name` is set by the subclasses below."""

    name = ""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        given = dict(params or {})
        players = int(given.pop("players", DEFAULT_PLAYERS[self.name]))
        max_moves = int(given.pop("max_moves", MAX_MOVES))
        returns = str(given.pop("returns", RETURNS[0]))
        observation = str(given.pop("observation", OBSERVATIONS[0]))
        remainder = None
        if self.name == "scout":
            part = {key: given.pop(key, default) for key, default in REMAINDER_PARAMETERS.items()}
            remainder = Remainder.of(players, int(part["from_round"]), str(part["scores"]))
            given |= part
        self.setup = setup = Setup.of(
            self.name,
            players,
            max_moves,
            returns,
            observation,
            {key: given[key] for key in given if key not in REMAINDER_PARAMETERS},
            remainder,
        )
        info = pyspiel.GameInfo(
            num_distinct_actions=setup.codec.size,
            max_chance_outcomes=setup.chance_outcomes,
            num_players=players,
            min_utility=-setup.utility_bound,
            max_utility=setup.utility_bound,
            utility_sum=0.0,
            max_game_length=setup.max_moves,
        )
        params = {"players": players, "max_moves": max_moves, "returns": returns, "observation": observation, **given}
        super().__init__(GAME_TYPES[self.name], info, params)

    def new_initial_state(self) -> CardState:
        return CardState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> Observer | PartObserver:
        if params:
            raise ValueError(f"observation parameters are not supported; passed {params}")
        if iig_obs_type is None:
            return Observer(self, False)
        private = iig_obs_type.private_info
        if private == pyspiel.PrivateInfoType.ALL_PLAYERS:
            raise ValueError("no observer sees every seat's private cards (private_info ALL_PLAYERS)")
        whole = private == pyspiel.PrivateInfoType.SINGLE_PLAYER and iig_obs_type.public_info
        if iig_obs_type.perfect_recall and whole:
            return Observer(self, True)
        if iig_obs_type.perfect_recall:
            raise ValueError("perfect recall is offered for the seat's whole view only (public and private)")
        if private == pyspiel.PrivateInfoType.NONE:
            return PartObserver(self, public=True)
        if not iig_obs_type.public_info:
            return PartObserver(self, public=False)
        return Observer(self, False)


@dataclass
class Progress:
    """The changing part of a state, kept apart so that pyspiel's clones (a deepcopy) copy it fast: the
    engine by its own clone, lists of values that are never changed in place by a shallow copy."""

    engine: GameState | None = None
    rounds: list[Any] = field(default_factory=list)
    dealing: list[int] = field(default_factory=list)
    free: list[int] | None = None
    """The outcomes the next chance node of the round being dealt offers, once asked (changed in place: clones
    copy it)."""
    first_dealer: int | None = None
    active: list[int] = field(default_factory=list)
    moves: int = 0
    truncated: bool = False
    seen: list[list[tuple[dict[str, Any], Any]]] = field(default_factory=list)
    """Per seat, what it was shown at each of its decisions and what it did (made a string when asked)."""
    round_log_seen: list[int] = field(default_factory=list)
    round_starts: list[int] = field(default_factory=lambda: [0])
    """Where each round's moves begin in the engine's history."""
    legal: dict[int, Any] | None = None
    indices: list[int] | None = None
    """The keys of `legal` in increasing order (shared with clones: handed out as copies)."""
    observed: dict[str, Any] | None = None
    """The observation of the seat to move that `legal` was encoded from."""
    views: dict[int, dict[str, Any]] = field(default_factory=dict)
    """The engine's observations of this state, by seat, as they are asked for (read-only)."""
    vectors: dict[int, np.ndarray] = field(default_factory=dict)
    """Their features (features.py), likewise."""
    player: int | None = None
    """current_player() once asked (pyspiel asks it and is_terminal() many times a move); None after a move."""

    def __deepcopy__(self, memo: dict[int, Any]) -> Progress:
        return Progress(
            engine=None if self.engine is None else self.engine.clone(),
            rounds=list(self.rounds),
            dealing=list(self.dealing),
            free=None if self.free is None else list(self.free),
            first_dealer=self.first_dealer,
            active=list(self.active),
            moves=self.moves,
            truncated=self.truncated,
            seen=[list(shown) for shown in self.seen],
            round_log_seen=list(self.round_log_seen),
            round_starts=list(self.round_starts),
            legal=self.legal,
            indices=self.indices,
            observed=self.observed,
            views=dict(self.views),
            vectors=dict(self.vectors),
            player=self.player,
        )


class CardState(pyspiel.State):
    """A game in progress: chance nodes while a round is dealt, then the engine's decisions."""

    def __init__(self, game: CardGame) -> None:
        super().__init__(game)
        self._game = game.setup
        self._p = Progress(
            first_dealer=None if self._game.config.get("first_dealer", -1) == -1 else self._game.config["first_dealer"],
            active=list(range(self._game.players)),
            seen=[[] for _ in range(self._game.players)],
            round_log_seen=[0] * self._game.players,
        )

    # Whose turn.

    def current_player(self) -> int:
        player = self._p.player
        if player is None:
            player = self._p.player = self._current_player()
        return player

    def _current_player(self) -> int:
        if self.is_terminal():
            return pyspiel.PlayerId.TERMINAL
        if self._dealing():
            return pyspiel.PlayerId.CHANCE
        assert self._p.engine is not None
        return self._p.engine.to_move()[0]

    def _dealing(self) -> bool:
        """A round is being dealt: its cards are not all known yet."""
        return self._p.engine is None or self._p.engine.round > len(self._p.rounds)

    def _is_dealing(self) -> bool:
        """The state is a chance node (a round being dealt, and the game not over), from the player kept."""
        return self.current_player() == pyspiel.PlayerId.CHANCE

    def is_terminal(self) -> bool:
        player = self._p.player
        if player is not None:
            return player == pyspiel.PlayerId.TERMINAL
        engine = self._p.engine
        if self._p.truncated or engine is None:
            return self._p.truncated
        remainder = self._game.remainder
        if remainder is not None and engine.round > remainder.rounds:
            return True
        return not self._dealing() and engine.is_over()

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0] * self._game.players
        assert self._p.engine is not None
        result = self._p.engine.result()
        remainder = self._game.remainder
        if remainder is None:
            scores, ranks = result["scores"], result["ranks"]
        else:
            scores = [before + now for before, now in zip(remainder.scores, result["scores"], strict=True)]
            ranks = shared_ranks(scores)
        return rank_rewards(ranks) if self._game.returns == "rank" else score_rewards(scores)

    # Chance.

    def chance_outcomes(self) -> list[tuple[int, float]]:
        assert self._dealing()
        if self._game.name == "scauver" and self._p.first_dealer is None:
            return [(seat, 1.0 / self._game.players) for seat in range(self._game.players)]
        free = self._p.free
        if free is None:
            taken = {outcome // 2 if self._game.name == "scout" else outcome for outcome in self._p.dealing}
            taken |= self._dealt_before()
            deck = range(len(self._game.deck))
            if self._game.name == "scout":
                free = [2 * card + side for card in deck if card not in taken for side in (0, 1)]
            else:
                free = [card for card in deck if card not in taken]
            self._p.free = free
        probability = 1.0 / len(free)
        return [(outcome, probability) for outcome in free]

    def _dealt_before(self) -> set[int]:
        """Cards of earlier rounds that this round cannot deal again (SCOUT at two seats: round 1's)."""
        if self._game.name == "scout" and self._game.players == 2 and self._p.rounds:
            deck = self._game.deck
            return {deck.index(tuple(sorted(card))) for hand in self._p.rounds[0] for card in hand}
        return set()

    def _cards_per_round(self) -> int:
        if self._game.name == "scout":
            return self._game.players * TABLES[self._game.players].hand_size
        return SCAUVER_CARDS_PER_SEAT * len(self._p.active)

    def _deal(self, outcome: int) -> None:
        if self._game.name == "scauver" and self._p.first_dealer is None:
            self._p.first_dealer = outcome
            return
        self._p.dealing.append(outcome)
        free = self._p.free
        if free is not None:
            first = outcome - outcome % 2 if self._game.name == "scout" else outcome
            gone = (first, first + 1) if self._game.name == "scout" else (first,)
            if all(taken in free for taken in gone):
                for taken in gone:
                    free.remove(taken)
            else:
                self._p.free = None
        if len(self._p.dealing) == self._cards_per_round():
            self._p.rounds.append(self._round_from(self._p.dealing))
            self._p.dealing = []
            self._p.free = None
            self._rebuild()

    def _round_from(self, outcomes: list[int]) -> Any:
        game = self._game
        if game.name == "scout":
            cards = [list(game.deck[outcome // 2])[:: 1 - 2 * (outcome % 2)] for outcome in outcomes]
            size = TABLES[game.players].hand_size
            return [cards[seat * size : (seat + 1) * size] for seat in range(game.players)]
        cards = [game.deck[outcome] for outcome in outcomes]
        spare = iter(card for card in game.deck if card not in cards)
        hands, at = [], 0
        for seat in range(game.players):
            if seat in self._p.active:
                hands.append(cards[at : at + 5])
                at += 5
            else:
                hands.append([next(spare) for _ in range(5)])
        return {"hands": hands, "draws": cards[at:]}

    def _explicit_deal(self) -> dict[str, Any]:
        game = self._game
        if game.name == "scauver":
            return {"rounds": list(self._p.rounds)}
        rounds = list(self._p.rounds)
        table = TABLES[game.players]
        while len(rounds) < table.rounds:
            if game.players == 2:
                used = {tuple(sorted(card)) for hand in rounds[0] for card in hand}
                cards = [list(card) for card in game.deck if card not in used]
            else:
                cards = [list(card) for card in game.deck]
            rounds.append(
                [cards[seat * table.hand_size : (seat + 1) * table.hand_size] for seat in range(game.players)]
            )
        return {"rounds": rounds}

    def _rebuild(self) -> None:
        """The engine with every round dealt so far (rounds not dealt yet are placeholders that no observation
        shows: they are dealt before they start): SCOUT's engine deals the round just starting in place
        (`ScoutState.deal_round`); Scauver's is made anew, the actions played so far replayed."""
        game = self._game
        self._p.views, self._p.vectors = {}, {}
        engine = self._p.engine
        if game.name == "scout" and engine is not None:
            engine.deal_round(self._p.rounds[-1])  # type: ignore[attr-defined]
            return
        config = dict(game.config)
        if game.name == "scauver":
            config["first_dealer"] = self._p.first_dealer
        history = engine.history if engine is not None else []
        self._p.engine = game.rules.replay(game.players, 0, history, config, self._explicit_deal())

    # Decisions.

    def _legal_table(self) -> dict[int, Any]:
        if self._p.legal is None:
            assert self._p.engine is not None
            seat = self._p.engine.to_move()[0]
            observation = self._view(seat)
            self._p.legal = indexed_legal(self._game.codec, self._p.engine.legal_actions_view(seat), observation)
            self._p.indices = sorted(self._p.legal)
            self._p.observed = observation
        return self._p.legal

    def _legal_indices(self) -> list[int]:
        self._legal_table()
        assert self._p.indices is not None
        return self._p.indices

    def _legal_actions(self, player: int) -> list[int]:
        if self.is_terminal() or self._is_dealing() or player != self.current_player():
            return []
        return list(self._legal_indices())

    def legal_actions(self, player: int | None = None) -> list[int]:
        """pyspiel's `legal_actions`, at a decision from the indices kept for it (pyspiel's own path crosses into
        C++ and back); at chance nodes and at the end pyspiel's own."""
        if self.is_terminal() or self._is_dealing():
            return super().legal_actions() if player is None else super().legal_actions(player)
        if player is not None and player != self.current_player():
            return []
        return list(self._legal_indices())

    def is_chance_node(self) -> bool:
        return self.current_player() == pyspiel.PlayerId.CHANCE

    def _apply_action(self, action: int) -> None:
        self._p.player = None
        if self._dealing():
            self._deal(int(action))
            self._p.player = None
            return
        engine = self._p.engine
        assert engine is not None
        seat = engine.to_move()[0]
        chosen = self._legal_table()[int(action)]
        self._remember(seat, self._p.observed, chosen)
        round_before = engine.round
        engine.apply(seat, dict(chosen))
        self._p.legal = self._p.indices = None
        self._p.views, self._p.vectors = {}, {}
        self._p.moves += 1
        if engine.round != round_before:
            self._p.round_starts.append(len(engine.history))
            self._p.round_log_seen = [0] * self._game.players
            if not engine.is_over() and self._game.name == "scauver":
                eliminated = engine.observation(0)["eliminated"]
                self._p.active = [seat for seat in range(self._game.players) if not eliminated[seat]]
        if self._p.moves >= self._game.max_moves and not engine.is_over():
            self._p.truncated = True
        self._p.player = None

    def legal_action_features(self) -> np.ndarray:
        """One row of action features (action_features.py) per index of `legal_actions()`, in that order; an
        empty matrix at chance nodes and at the end."""
        width = action_feature_width(self._game.name)
        if self.is_terminal() or self._is_dealing():
            return np.zeros((0, width), np.float32)
        table = self._legal_table()
        indices = self._legal_indices()
        assert self._p.observed is not None
        rows = [] if self._game.name == "scout" else [table[index] for index in indices]
        return indexed_action_features(self._game.name, self._p.observed, indices, rows, self._game.config)

    def apply_engine_action(self, action: Any) -> None:
        """Apply the engine's `action` for the seat to move, through `apply_action` (so pyspiel's history has it)
        but without encoding every legal action: the table holds only this one."""
        engine = self._p.engine
        assert engine is not None
        observation = self._view(engine.to_move()[0])
        index = self._game.codec.encode(action, observation)
        self._p.legal, self._p.indices, self._p.observed = {index: action}, [index], observation
        self.apply_action(index)

    # Resampling (OpenSpiel's ISMCTS).

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> CardState:
        """A state `player_id` cannot tell from this one, its hidden cards drawn again (the engine's `redeal`).
        `probability_sampler()` (a number in [0, 1), as pyspiel's UniformProbabilitySampler) seeds the draw."""
        return self.redealt(player_id, random.Random(int(probability_sampler() * 2**53)))

    def redealt(self, player: int, rng: random.Random) -> CardState:
        """This game played again on the engine's redeal for `player` (`GameState.redeal`): the same moves but
        the other seats' choices it has not been shown, dealt cards it cannot tell from the true ones."""
        engine = self._p.engine
        if engine is None or self._is_dealing() or self.is_terminal():
            raise ValueError("a state is resampled at a decision, not while dealing or after the end")
        redealt = engine.redeal(player, rng)
        bounds = [*self._p.round_starts, len(redealt.history)]
        moves = [redealt.history[start:end] for start, end in zip(bounds, bounds[1:], strict=False)]
        if self._game.name == "scout":
            return self._replayed(redealt.dealt["rounds"][: len(self._p.rounds)], moves)
        return self._replayed_round(redealt.dealt["rounds"][-1], moves[-1])

    def _replayed(self, rounds: list[Any], moves: list[list[Any]]) -> CardState:
        """A new python_scout game dealt `rounds` and played `moves` (one list a round)."""
        state = CardState(self.get_game())
        deck = self._game.deck
        for hands, round_moves in zip(rounds, moves, strict=True):
            for hand in hands:
                for card in hand:
                    state.apply_action(2 * deck.index(tuple(sorted(card))) + (card[0] > card[1]))
            for _, action in round_moves:
                state.apply_engine_action(action)
        return state

    def _replayed_round(self, dealt: dict[str, Any], moves: list[Any]) -> CardState:
        """This python_scauver game up to the deal of its current round, which is dealt `dealt` (the engine's
        explicit-deal format) and played `moves`: the rounds before are as they were."""
        state = CardState(self.get_game())
        engine = self._p.engine
        assert engine is not None
        history = self.history()
        dealt_now = SCAUVER_CARDS_PER_SEAT * len(self._p.active)
        for action in history[: len(history) - (len(engine.history) - self._p.round_starts[-1]) - dealt_now]:
            state.apply_action(action)
        hands = [card for seat in self._p.active for card in dealt["hands"][seat]]
        deck = self._game.deck
        for card in [*hands, *dealt["draws"]][:dealt_now]:
            state.apply_action(deck.index(card))
        for _, action in moves:
            state.apply_engine_action(action)
        return state

    def _remember(self, seat: int, shown: dict[str, Any] | None, action: Any) -> None:
        """What the seat was shown at this decision (the round's log from where it last looked), and its move."""
        observation = dict(shown or {})
        key = "history" if self._game.name == "scout" else "betting"
        log = observation[key]
        observation[key] = log[self._p.round_log_seen[seat] :]
        self._p.round_log_seen[seat] = len(log)
        self._p.seen[seat].append((observation, action))

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            if self._game.name == "scauver" and self._p.first_dealer is None:
                return f"first dealer {action}"
            if self._game.name == "scout":
                low, high = self._game.deck[action // 2]
                return f"deal {[low, high][:: 1 - 2 * (action % 2)]}"
            return f"deal {self._game.deck[action]}"
        table = self._legal_table() if not self._is_dealing() and player == self.current_player() else {}
        return _compact(table[action]) if action in table else f"action {action}"

    def __str__(self) -> str:
        if self._p.engine is None or self._dealing():
            return f"dealing round {len(self._p.rounds) + 1}: {len(self._p.dealing)} cards dealt"
        engine = self._p.engine
        result = engine.result()
        last = engine.history[-1] if engine.history else None
        return (
            f"round {engine.round}, to move {engine.to_move()}, scores {result['scores']}, "
            f"{len(engine.history)} actions, last {_compact(last)}"
        )

    # What a seat sees.

    def observation_of(self, player: int) -> dict[str, Any] | None:
        """`state.observation(player)` of the engine (read-only: it is kept until the next action), or None
        while a round is being dealt."""
        if self._p.engine is None or (self._is_dealing() and not self.is_terminal()):
            return None
        return self._view(player)

    def features_of(self, player: int) -> np.ndarray | None:
        """The features of `observation_of(player)` (read-only: kept until the next action), or None."""
        vector = self._p.vectors.get(player)
        if vector is None:
            observation = self.observation_of(player)
            if observation is None:
                return None
            vector = self._p.vectors[player] = self._game.features(observation)
        return vector

    def observation_tensor(self, player: int | None = None) -> list[float]:
        """pyspiel's `observation_tensor` (the default observer's tensor, a list), from the vector kept for this
        state: pyspiel's own path learns the tensor's size anew at every call by making an initial state and
        filling an observer. At chance nodes and for anything but a seat it is pyspiel's own."""
        seat = self.current_player() if player is None else player
        vector = self.features_of(seat) if type(seat) is int and 0 <= seat < self._game.players else None
        if vector is None:
            return super().observation_tensor() if player is None else super().observation_tensor(player)
        return _as_list(vector, self._game.zeros)

    def information_state_tensor(self, player: int | None = None) -> list[float]:
        """pyspiel's `information_state_tensor`: the observation tensor (module docstring), likewise."""
        seat = self.current_player() if player is None else player
        vector = self.features_of(seat) if type(seat) is int and 0 <= seat < self._game.players else None
        if vector is None:
            return super().information_state_tensor() if player is None else super().information_state_tensor(player)
        return _as_list(vector, self._game.zeros)

    def _view(self, player: int) -> dict[str, Any]:
        view = self._p.views.get(player)
        if view is None:
            assert self._p.engine is not None
            view = self._p.views[player] = self._p.engine.observation(player)
        return view

    def information_of(self, player: int) -> str:
        current = self.observation_of(player)
        now = "dealing" if current is None else _compact(current)
        shown = [f"{_compact(observation)} -> {_compact(action)}" for observation, action in self._p.seen[player]]
        return "\n".join([f"seat {player}", *shown, f"now {now}"])


class Observer:
    """pyspiel's python observer: the seat's observation, or (perfect recall) all it was shown."""

    def __init__(self, game: CardGame, perfect_recall: bool) -> None:
        self._game = game.setup
        self._perfect_recall = perfect_recall
        self.tensor = np.zeros(self._game.feature_size, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: CardState, player: int) -> None:
        vector = state.features_of(player)
        if vector is None:
            self.tensor.fill(0.0)
        else:
            self.tensor[:] = vector

    def string_from(self, state: CardState, player: int) -> str:
        if self._perfect_recall:
            return state.information_of(player)
        observation = state.observation_of(player)
        return "dealing" if observation is None else _compact(observation)


class PartObserver:
    """The public part of a seat's view (the same for every seat) or its private part (PRIVATE_KEYS)."""

    def __init__(self, game: CardGame, public: bool) -> None:
        self._game = game.setup
        self._public = public
        self._hand = hand_size(self._game.name, self._game.players, self._game.compact)
        size = self._game.feature_size if public else self._hand
        self.tensor = np.zeros(size, np.float32)
        self.dict = {"public" if public else "private": self.tensor}

    def set_from(self, state: CardState, player: int) -> None:
        observation = state.observation_of(0 if self._public else player)
        if observation is None:
            self.tensor.fill(0.0)
        elif self._public:
            self.tensor[:] = self._game.features(public_view(observation))
        else:
            self.tensor[:] = self._game.features(observation)[: self._hand]

    def string_from(self, state: CardState, player: int) -> str:
        observation = state.observation_of(player)
        if observation is None:
            return "dealing"
        if self._public:
            return _compact({key: value for key, value in public_view(observation).items() if key != "seat"})
        return _compact(private_view(observation))


def _own_setup(observation: dict[str, Any]) -> bool:
    """Scauver's setup, where the seat's own field shows the choice it made and the others' do not."""
    return observation.get("phase") == "setup" and "fields" in observation


def public_view(observation: dict[str, Any]) -> dict[str, Any]:
    """The seat's observation without what only it knows (its hand, pending showdown choice and setup)."""
    view = {**observation, "hand": []}
    if "my_choice" in view:
        view["my_choice"] = None
    if _own_setup(observation):
        view["fields"] = [
            {"left": [], "right": []} if seat == observation["seat"] else field
            for seat, field in enumerate(observation["fields"])
        ]
    return view


def private_view(observation: dict[str, Any]) -> dict[str, Any]:
    """What only the seat knows: its hand, its pending showdown choice, its setup while the others choose."""
    view = {key: value for key, value in observation.items() if key in PRIVATE_KEYS}
    if _own_setup(observation):
        view["setup"] = observation["fields"][observation["seat"]]
    return view


def _as_list(vector: np.ndarray, zeros: list[float]) -> list[float]:
    """`vector.tolist()`, faster for a vector mostly of zeros (a tenth of the values or fewer are not)."""
    if _fastscout is not None:
        return _fastscout.as_list(vector)  # type: ignore[no-any-return]
    listed = zeros.copy()
    at = np.flatnonzero(vector)
    for index, value in zip(at.tolist(), vector[at].tolist(), strict=True):
        listed[index] = value
    return listed


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


class ScoutGame(CardGame):
    name = "scout"


class ScauverGame(CardGame):
    name = "scauver"


GAME_TYPES = {name: _game_type(name) for name in ("scout", "scauver")}
pyspiel.register_game(GAME_TYPES["scout"], ScoutGame)
pyspiel.register_game(GAME_TYPES["scauver"], ScauverGame)

"""The game interface every rules engine implements.

A game module supplies a `Game` subclass (its `GameInfo` and a `_new_state` hook that deals from a seed)
and a `GameState` subclass (the underscored hooks). The public methods here are written once: `apply`
checks whose turn it is and the action's legality before the game's `_apply` runs, then records the
action, so that (seed, config, deal, history) always replays a game exactly.
"""

from __future__ import annotations

import copy
import random
import secrets
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from protocol.errors import BadInput, BotFault, RefereeError

Action = dict[str, Any]
Observation = dict[str, Any]
Config = dict[str, Any]
HistoryEntry = tuple[int, Action]

MAX_SEED = 2**63 - 1


class GameError(RefereeError):
    """Base of every error a rules engine raises. Its kinds differ, so it has none itself: a bad config or game
    name is BadInput, an illegal action a BotFault (the referee turns it into the seat's fault)."""


class IllegalAction(GameError, BotFault, ValueError):
    """An action that is not legal for this seat now; `reason` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ConfigError(GameError, BadInput, ValueError):
    """A bad player count, config option or explicit deal."""


class UnknownGame(GameError, BadInput, LookupError):
    """No registered game has that name."""


@dataclass(frozen=True)
class Option:
    """One configuration option of a game; its type is the type of its default."""

    name: str
    default: Any
    help: str
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[Any, ...] | None = None

    def check(self, value: Any) -> Any:
        expected = type(self.default)
        if expected is float and type(value) is int:
            value = float(value)
        if type(value) is not expected:
            raise ConfigError(
                f"option {self.name!r} must be {expected.__name__}, not {type(value).__name__} ({value!r})"
            )
        if self.choices is not None and value not in self.choices:
            raise ConfigError(f"option {self.name!r} must be one of {list(self.choices)}, not {value!r}")
        if self.minimum is not None and value < self.minimum:
            raise ConfigError(f"option {self.name!r} must be at least {self.minimum}, not {value!r}")
        if self.maximum is not None and value > self.maximum:
            raise ConfigError(f"option {self.name!r} must be at most {self.maximum}, not {value!r}")
        return value


@dataclass(frozen=True)
class GameInfo:
    name: str
    title: str
    min_players: int
    max_players: int
    options: tuple[Option, ...] = ()
    summary: str = ""
    log_keys: tuple[str, ...] = ()
    """Observation keys that are append-only logs within a round (the round is observation["round"]): a
    later observation of the same round holds the earlier one's entries, unchanged, first. The referee
    sends such logs as deltas (protocol/logs.py)."""


class Game(ABC):
    """A registered game: a factory of states."""

    info: ClassVar[GameInfo]

    @property
    def name(self) -> str:
        return self.info.name

    def resolve_config(self, config: Mapping[str, Any] | None = None) -> Config:
        """Every option of the game, defaults filled in; unknown or ill-typed options raise ConfigError."""
        given = dict(config or {})
        known = {option.name: option for option in self.info.options}
        unknown = sorted(set(given) - set(known))
        if unknown:
            raise ConfigError(
                f"{self.name} has no option {', '.join(map(repr, unknown))}; its options are {sorted(known) or 'none'}"
            )
        return {name: option.check(given.get(name, option.default)) for name, option in known.items()}

    def new_game(
        self,
        players: int,
        seed: int | None = None,
        config: Mapping[str, Any] | None = None,
        deal: Any = None,
    ) -> GameState:
        """A fresh game. Without a seed, one is drawn from a secure source (and kept in `state.seed`)."""
        info = self.info
        if type(players) is not int or not info.min_players <= players <= info.max_players:
            raise ConfigError(f"{info.name} is for {info.min_players} to {info.max_players} players, not {players!r}")
        if seed is None:
            seed = secrets.randbelow(MAX_SEED)
        elif type(seed) is not int or not 0 <= seed <= MAX_SEED:
            raise ConfigError(f"a seed is an integer from 0 to {MAX_SEED}, not {seed!r}")
        return self._new_state(players, seed, self.resolve_config(config), deal)

    def replay(
        self,
        players: int,
        seed: int,
        history: Sequence[tuple[int, Action]],
        config: Mapping[str, Any] | None = None,
        deal: Any = None,
    ) -> GameState:
        """The state reached by applying `history` to a new game; raises IllegalAction if it diverges."""
        state = self.new_game(players, seed, config, deal)
        for seat, action in history:
            state.apply(seat, action)
        return state

    @abstractmethod
    def _new_state(self, players: int, seed: int, config: Config, deal: Any) -> GameState:
        """Deal from `seed` (or from the explicit `deal`) and return the first state."""


class GameState(ABC):
    """One game in progress. Subclasses set `game`, `players`, `seed`, `config`, `deal` in their constructor
    (through `_init_common`) and implement the underscored hooks."""

    game: Game
    players: int
    seed: int
    config: Config
    deal: Any
    history: list[HistoryEntry]

    def _init_common(self, game: Game, players: int, seed: int, config: Config, deal: Any) -> None:
        self.game = game
        self.players = players
        self.seed = seed
        self.config = config
        self.deal = deal
        self.history = []

    # The public interface, written once.

    def apply(self, seat: int, action: Action) -> None:
        """Apply `action` for `seat`, or raise IllegalAction saying why it is not legal now."""
        if not self._is_to_move(seat):
            if self.is_over():
                raise IllegalAction("the game is over")
            raise IllegalAction(f"seat {seat!r} is not to move (to move: {self.to_move()})")
        if type(action) is not dict or type(action.get("kind")) is not str:
            raise IllegalAction(f"an action is a map with a string 'kind', not {action!r:.200}")
        reason = self._apply_if_legal(seat, action)
        if reason is not None:
            raise IllegalAction(reason)
        self.history.append((seat, action))

    def clone(self) -> GameState:
        """An independent copy, for search."""
        return copy.deepcopy(self)

    @abstractmethod
    def to_move(self) -> list[int]:
        """The seats that must act now: one, several at a simultaneous decision, none when over."""

    @abstractmethod
    def legal_actions(self, seat: int) -> list[Action]:
        """Every legal action of `seat` now (empty if it is not to move); each may be applied as is."""

    def legal_actions_view(self, seat: int) -> Sequence[Action]:
        """The legal actions of `seat`, equal to `legal_actions(seat)`, for a caller that only reads them (the
        referee encodes them for the bot at every decision). The engine may hand out its own objects, without
        the copies `legal_actions` makes: nothing in them may be changed, and they are valid until the next
        apply."""
        return self.legal_actions(seat)

    @abstractmethod
    def redeal(self, seat: int, rng: random.Random) -> GameState:
        """A state that `seat` cannot tell from this one, every card it has not seen dealt again by `rng`: its
        observation is the same (now, and at every earlier decision of the game), its future is the rules', and
        nothing of it depends on what is hidden from `seat`. What a search samples and what an RL API resamples
        from a seat's information state; each game says what its seats see."""

    @abstractmethod
    def observation(self, seat: int) -> Observation:
        """All that `seat` may know now, and nothing it may not."""

    @abstractmethod
    def is_over(self) -> bool: ...

    @abstractmethod
    def result(self) -> dict[str, list[int]]:
        """{"scores": [...], "ranks": [...]} per seat; rank 1 is best, equal ranks shared."""

    @property
    @abstractmethod
    def round(self) -> int:
        """The current round, from 1 (the last round once the game is over)."""

    @property
    @abstractmethod
    def dealt(self) -> Any:
        """The cards dealt so far (from the seed or the explicit deal) in the game's explicit-deal format:
        `new_game(players, seed, config, deal=state.dealt)` deals the same cards again."""

    # Hooks.

    def _is_to_move(self, seat: Any) -> bool:
        """Whether `seat` is in to_move(); games may answer without building the list."""
        return seat in self.to_move()

    def _apply_if_legal(self, seat: int, action: Action) -> str | None:
        """Apply `action` if it is legal for `seat` (which is to move) and return None, or return why it is
        not (changing nothing). Games may override this to look at the action once for both."""
        reason = self._illegal_reason(seat, action)
        if reason is None:
            self._apply(seat, action)
        return reason

    def _illegal_reason(self, seat: int, action: Action) -> str | None:
        """Why `action` is not legal for `seat` (which is to move), or None. Games override this with
        a direct check that names the broken rule; the default is a membership test."""
        if action in self.legal_actions(seat):
            return None
        return f"{action!r:.200} is not among the legal actions"

    @abstractmethod
    def _apply(self, seat: int, action: Action) -> None:
        """Change the state by a legal action."""


def shared_ranks(scores: Sequence[int | float], higher_is_better: bool = True) -> list[int]:
    """Competition ranks (1 best; tied scores share a rank and the next rank skips): [8, 8, 5] -> [1, 1, 3]."""
    sign = 1 if higher_is_better else -1
    return [1 + sum(1 for other in scores if sign * other > sign * score) for score in scores]

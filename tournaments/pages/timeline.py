"""A replayed game step by step: the engine re-deals from the replay's seed and applies every recorded action,
and each step holds what every seat was shown then (`state.observation(seat)`).

Step 0 is the deal; step k is the state after the replay's action k - 1, with that action's record, the legal
actions its seat had (the engine's, in its order) and the faults recorded just before it (a fault recorded after
the last action belongs to the last step).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from referee.games import GameError, Observation, load_game
from referee.replay import ReplayError, ReplayMismatch


@dataclass(frozen=True)
class Step:
    index: int
    move: Mapping[str, Any] | None
    """The replay's record of the action that led here: seat, action, ms, by ("bot" or "fallback"); None at 0."""
    faults: tuple[Mapping[str, Any], ...]
    observations: tuple[Observation, ...]
    """What each seat is shown now, by seat: shared with the engine, read-only."""
    legal: tuple[Mapping[str, Any], ...] = ()
    """The legal actions of the move's seat just before the move (empty at step 0)."""

    @property
    def seat(self) -> int | None:
        return None if self.move is None else int(self.move["seat"])


def replay_steps(replay: Mapping[str, Any]) -> Iterator[Step]:
    """Every step of the game, from the deal; raises ReplayMismatch if an action does not apply."""
    try:
        state = load_game(replay["game"]).new_game(
            replay["players"], replay["seed"], replay["config"], replay.get("deal")
        )
    except (GameError, TypeError) as error:
        raise ReplayError(f"cannot set the game up: {error}") from None
    seats = range(replay["players"])
    moves = replay["actions"]
    faults_at = _faults_by_step(replay["faults"], len(moves))
    yield Step(0, None, faults_at.get(0, ()), tuple(state.observation(seat) for seat in seats))
    for number, move in enumerate(moves):
        try:
            legal = tuple(state.legal_actions(move["seat"]))
            state.apply(move["seat"], move["action"])
        except (GameError, KeyError, TypeError) as error:
            raise ReplayMismatch(f"action {number} does not apply: {error}") from None
        observations = tuple(state.observation(seat) for seat in seats)
        yield Step(number + 1, move, faults_at.get(number + 1, ()), observations, legal)


def _faults_by_step(faults: list[Mapping[str, Any]], actions: int) -> dict[int, tuple[Mapping[str, Any], ...]]:
    by_step: dict[int, list[Mapping[str, Any]]] = {}
    for fault in faults:
        step = min(int(fault.get("before_action", 0)) + 1, actions)
        by_step.setdefault(step, []).append(fault)
    return {step: tuple(listed) for step, listed in by_step.items()}

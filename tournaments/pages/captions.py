"""What each game's steps say in words, for the terminal (`replay show`) and the replay page alike.

A game's `Narrator` turns one step (the observations before and after a recorded action) into a Caption: the
action as its seat saw it, the action as the other seats saw it (a choice made at a simultaneous decision stays
hidden from them until everyone has chosen), and notes on what the action set off (a round's end and its
scores, an elimination). Narrators read observations only, never the engine's state, so a caption can tell no
more than some seat was shown.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from referee.games import Observation


@dataclass(frozen=True)
class Caption:
    text: str
    """The action in full, as its own seat knows it (e.g. "shows 4/1 4/3")."""
    public: str
    """The action as the other seats saw it at the time (the same text unless its content was hidden)."""
    notes: tuple[str, ...] = ()
    """What the action set off, for everyone (a round's end and its scores)."""


class Narrator(ABC):
    """The words of one game."""

    @abstractmethod
    def caption(
        self, seat: int, action: dict[str, Any], before: Sequence[Observation], after: Sequence[Observation]
    ) -> Caption:
        """The caption of `seat` playing `action`, between the observations (by seat) before and after it."""

    def round_end(
        self, seat: int, action: dict[str, Any], before: Sequence[Observation], after: Sequence[Observation]
    ) -> dict[str, Any] | None:
        """The table as `action` left it when that action ended a round whose end the next observation no longer
        shows (the next deal replaces it), for the page to draw; None otherwise (and for games whose observations
        keep the round's end)."""
        return None

    @abstractmethod
    def round_lines(self, observations: Sequence[Observation], seats: Sequence[str]) -> list[str]:
        """What a person needs at the start of a round: every seat's hand, who deals or starts."""

    @abstractmethod
    def final_lines(self, observations: Sequence[Observation], seats: Sequence[str]) -> list[str]:
        """The end of the game as the final observations show it (totals by round, chips)."""


def seat_list(values: Sequence[Any]) -> str:
    """'seat 0: 3, seat 1: -2, ...'"""
    return ", ".join(f"seat {seat}: {value}" for seat, value in enumerate(values))


def signed(value: int) -> str:
    return f"{value:+d}"

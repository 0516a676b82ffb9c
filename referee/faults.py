"""The fault policy: what a seat's fault does to its game, and how forfeits change the ranks and scores.

- forfeit: the first fault forfeits the game; a fallback policy plays the seat's later decisions.
- substitute: a random legal action is played for the faulted decision and the fault counted; the seat
  forfeits at its `fault_budget`-th fault of the game.
- A crash forfeits the game under either policy (there is no bot left to ask), and so does any fault for which
  the referee stopped the bot (a flood of connections).

In both policies the faulted decision itself is played by the fallback: a random legal action drawn from a
generator seeded by the game seed and the seat, so a replay of the game is exact.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from protocol import limits
from referee.games import Action, shared_ranks
from referee.records import Fault, FaultCause, FaultFacts, FaultKind, FaultPolicy


@dataclass(slots=True)
class SeatStatus:
    """What the referee knows about one seat during one game."""

    seat: int
    bot: str
    bank_left_ms: int
    forfeited: bool = False
    fault_count: int = 0
    stale_messages: int = 0
    decision_ms: list[float] = field(default_factory=list)


class FaultBook:
    """The faults of one game, and the policy that turns them into forfeits."""

    def __init__(self, policy: FaultPolicy, budget: int, seats: Sequence[SeatStatus], seed: int) -> None:
        self._policy = policy
        self._budget = budget
        self._seats = seats
        self._fallbacks = [random.Random(f"fallback:{seed}:{seat.seat}") for seat in seats]
        self.faults: list[Fault] = []

    def record(
        self,
        seat: int,
        cause: FaultCause,
        facts: FaultFacts,
        bot_stopped: bool = False,
        sent: str | None = None,
        before_action: int | None = None,
    ) -> None:
        """Record a fault (its cause and the facts its words are made of); `bot_stopped`: the seat's bot is gone
        for this game (the referee stopped it); `sent`: the illegal action as sent (sent_text); `before_action`:
        the index of the action it came before."""
        status = self._seats[seat]
        self.faults.append(Fault(seat, status.bot, cause, facts, sent, before_action))
        status.fault_count += 1
        if (
            bot_stopped
            or cause.kind is FaultKind.CRASH
            or self._policy is FaultPolicy.FORFEIT
            or status.fault_count >= self._budget
        ):
            status.forfeited = True

    def fallback_action(self, seat: int, legal_actions: Sequence[Action]) -> Action:
        return self._fallbacks[seat].choice(legal_actions)

    def forfeited(self) -> list[bool]:
        return [status.forfeited for status in self._seats]


CUT_MARK = "...(cut)"


def sent_text(action: Any) -> str:
    """The action a bot sent, as data to keep: its JSON text (ASCII only, so no control or direction mark of the
    bot's reaches a person raw; NaN stays NaN), cut to limits.MAX_RECORDED_ACTION_CHARS and then ending in
    CUT_MARK. The text is kept and shown, never parsed again: it decides nothing."""
    text = json.dumps(action, ensure_ascii=True, separators=(",", ":"))
    if len(text) <= limits.MAX_RECORDED_ACTION_CHARS:
        return text
    return text[: limits.MAX_RECORDED_ACTION_CHARS - len(CUT_MARK)] + CUT_MARK


def forfeit_ranks(ranks: Sequence[int], forfeited: Sequence[bool]) -> list[int]:
    """The game's ranks with every forfeited seat moved to last place.

    A forfeited seat ranks last: rank n (the number of seats), shared with every other seat that forfeited,
    whatever its fallback made of its cards. The other seats keep their order among themselves (ties stay
    ties), ranked 1, 2, ... as if the forfeited seats were not there: [1, 2, 3, 4] with seat 0 forfeiting
    gives [4, 1, 2, 3]; with seats 0 and 2 forfeiting, [4, 1, 4, 2]; two seats that both forfeit, [2, 2]. So
    a forfeited seat never ranks 1, even when every seat forfeited.
    """
    players = len(ranks)
    kept = iter(shared_ranks([rank for rank, lost in zip(ranks, forfeited, strict=True) if not lost], False))
    return [players if lost else next(kept) for lost in forfeited]


def forfeit_scores(scores: Sequence[int], forfeited: Sequence[bool]) -> list[int]:
    """The game's scores with every forfeited seat given the lowest score of the table in that game.

    What the fallback scored for a forfeited seat is not the bot's: the seat scores the minimum over every
    seat's score (its own included), so no seat that played on scores below it and seats that forfeited tie
    (the rules documents, referee/games/*.md "Forfeits", state this per game): scores [3, 9, -2] with seat 1
    forfeiting give [3, -2, -2].
    """
    lowest = min(scores)
    return [lowest if lost else score for score, lost in zip(scores, forfeited, strict=True)]

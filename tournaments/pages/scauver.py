"""Scauver in words: setups, bets and folds, placements, vanguards and links at the showdown, pots and chips."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.games import Observation
from referee.games._scauver_links import CARD_VALUE

from .captions import Caption, Narrator, seat_list

HIDDEN_SETUP = "sets up its field (hidden until every seat has)"
HIDDEN_CHOICE = "makes its showdown choice (hidden until every seat has)"


def cards_text(cards: Sequence[str]) -> str:
    return " ".join(cards) or "-"


def link_value(cards: Sequence[str]) -> int:
    return sum(CARD_VALUE[card] for card in cards)


def choice_text(choice: dict[str, Any] | None) -> str:
    if choice is None:
        return "out of the round"
    if choice["kind"] == "no_link":
        return "no link"
    return f"vanguards {cards_text(choice['left'])} | {cards_text(choice['right'])} (link {link_value(choice['left'])})"


class ScauverNarrator(Narrator):
    def caption(
        self, seat: int, action: dict[str, Any], before: Sequence[Observation], after: Sequence[Observation]
    ) -> Caption:
        kind = action["kind"]
        notes = self._notes(before[seat], after[seat])
        if kind == "setup":
            text = f"sets up its field {cards_text(action['left'])} | {cards_text(action['right'])}"
            return Caption(text, HIDDEN_SETUP, notes)
        if kind in ("vanguards", "no_link"):
            return Caption(f"names its {choice_text(action)}", HIDDEN_CHOICE, notes)
        text = self._open_text(seat, action, before[seat])
        return Caption(text, text, notes)

    @staticmethod
    def _open_text(seat: int, action: dict[str, Any], mine: Observation) -> str:
        kind = action["kind"]
        if kind == "bet":
            return f"bets {action['amount']}"
        if kind == "raise":
            return f"raises by {action['amount']} to {mine['bet']['level'] + action['amount']}"
        if kind == "call":
            return f"calls ({mine['bet']['to_call'][seat]} chips)"
        if kind == "place":
            return f"places {action['card']} on the {action['flank']} flank"
        if kind == "final":
            return f"places {action['left']} left and {action['right']} right"
        return {"check": "checks", "fold": "folds"}.get(kind, kind)

    def _notes(self, first: Observation, last: Observation) -> tuple[str, ...]:
        notes = []
        if first["phase"] == "setup" and last["phase"] != "setup" and last["round"] == first["round"]:
            notes.append("every field is set up and shown")
        outcome = last["last_round"]
        if outcome is not None and outcome != first["last_round"]:
            notes += round_end_lines(outcome, last["chips"])
        newly_out = [
            seat
            for seat, (was, now) in enumerate(zip(first["eliminated"], last["eliminated"], strict=True))
            if now > was
        ]
        if newly_out:
            notes.append(f"out of the game (fewer chips than the amphora): seat {', '.join(map(str, newly_out))}")
        if last["phase"] == "over":
            notes.append(f"game over; chips: {seat_list(last['chips'])}")
        return tuple(notes)

    def round_lines(self, observations: Sequence[Observation], seats: Sequence[str]) -> list[str]:
        first = observations[0]
        lines = [
            f"round {first['round']}: seat {first['dealer']} deals; amphora {first['amphora']}, cap {first['cap']}"
        ]
        lines += [
            f"    hand of seat {seat} ({bot}): {cards_text(observation['hand'])}"
            for seat, (bot, observation) in enumerate(zip(seats, observations, strict=True))
            if not first["eliminated"][seat]
        ]
        return lines

    def final_lines(self, observations: Sequence[Observation], seats: Sequence[str]) -> list[str]:
        first = observations[0]
        return [f"  after round {first['round']}: chips {seat_list(first['chips'])}"]


def round_end_lines(outcome: dict[str, Any], chips: Sequence[int]) -> list[str]:
    """A round's end: the pot and who took it, every showdown choice with its score, the chips after it."""
    winners = ", ".join(f"seat {seat} (+{outcome['won'][seat]})" for seat in outcome["winners"])
    if outcome["by_fold"]:
        lines = [f"round {outcome['round']} ends: everyone else folded; {winners} takes the pot of {outcome['pot']}"]
    else:
        verb = "takes" if len(outcome["winners"]) == 1 else "share"
        lines = [f"round {outcome['round']} showdown: {winners} {verb} the pot of {outcome['pot']}"]
        for seat, (choice, score) in enumerate(zip(outcome["choices"], outcome["scores"], strict=True)):
            if choice is not None:
                scored = "" if score is None else f", score {score}"
                lines.append(f"  seat {seat}: {choice_text(choice)}{scored}")
    lines.append(f"chips: {seat_list(chips)}")
    return lines

"""Scauver for a person: cards by their ids (7H, KD; A is 1, J 8, Q 9, K 10), a flank with its sum: AS 6S =7."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product
from typing import Any

from referee.games._scauver_links import CARD_VALUE

from .views import Action, Observation, grid, numbered, seat_label, table

SETUP_PATTERNS = tuple("".join(flanks) for flanks in product("LR", repeat=3))
"""Where the three cards of a setup go, in hand order: LLL (all left) to RRR."""

BETTING_SHOWN = 8
"""The latest betting actions of the round on the screen."""

PHASES = {
    "setup": "set up your field: 3 cards into the flanks",
    "bet": "bet",
    "answer": "answer the bet",
    "place": "place a card",
    "final": "place your last two cards",
    "final_bet": "final bet",
    "showdown": "name your vanguards",
    "over": "over",
}


def flank(cards: Sequence[str]) -> str:
    return f"{' '.join(cards)} ={sum(CARD_VALUE[card] for card in cards)}" if cards else "-"


def vanguards(action: Action) -> str:
    """A link: its two vanguards and their value (the sums are equal)."""
    value = sum(CARD_VALUE[card] for card in action["left"])
    return f"left {' '.join(action['left'])} / right {' '.join(action['right'])} (value {value})"


class ScauverView:
    def board(self, observation: Observation) -> list[str]:
        you = observation["seat"]
        lines = [self._headline(observation), *self._seats(observation)]
        bet = observation["bet"]
        if bet is not None:
            lines.append(
                f"Bet of seat {seat_label(bet['bettor'], you)}: level {bet['level']}, {bet['raises']} raise(s); "
                f"you owe {bet['to_call'][you]} to call"
            )
        betting = observation["betting"][-BETTING_SHOWN:]
        if betting:
            lines.append("Betting this round: " + ", ".join(self._bet_entry(entry, you) for entry in betting))
        last = observation["last_round"]
        if last is not None:
            lines.append(self._last_round(last, you))
        choice = observation["my_choice"]
        if choice is not None:
            lines.append(f"Your showdown choice: {self.move(choice, observation)}")
        hand = " ".join(f"{card}({CARD_VALUE[card]})" for card in observation["hand"])
        return [*lines, "", f"Your hand: {hand or 'empty'}"]

    def move(self, action: Action, observation: Observation) -> str:
        kind = action["kind"]
        if kind == "setup":
            return f"left {flank(action['left'])} | right {flank(action['right'])}"
        if kind == "bet":
            return f"bet {action['amount']}"
        if kind == "raise":
            return f"raise by {action['amount']}"
        if kind == "call":
            bet = observation["bet"]
            return f"call ({bet['to_call'][observation['seat']]})" if bet is not None else "call"
        if kind == "place":
            return f"place {action['card']} on the {action['flank']}"
        if kind == "final":
            return f"{action['left']} left, {action['right']} right"
        if kind == "vanguards":
            return vanguards(action)
        if kind == "no_link":
            return "no link (there is none)"
        return str(kind)

    def menu(self, actions: Sequence[Action], observation: Observation, width: int) -> list[str]:
        """The setup's 80 placements as a grid (a row per three cards, a column per flank of each); other
        decisions in columns."""
        if observation["phase"] != "setup":
            return numbered(self, actions, observation, width)
        hand = observation["hand"]
        rows: dict[str, list[int | None]] = {}
        for number, action in enumerate(actions, 1):
            chosen = sorted([*action["left"], *action["right"]], key=hand.index)
            pattern = "".join("L" if card in action["left"] else "R" for card in chosen)
            rows.setdefault(" ".join(chosen), [None] * len(SETUP_PATTERNS))[SETUP_PATTERNS.index(pattern)] = number
        lines = [
            "Setup: 3 cards (a row), each into a flank (a column: L or R, in the row's order)",
            *grid(SETUP_PATTERNS, list(rows.items())),
        ]
        if max(len(line) for line in lines) > width:
            return numbered(self, actions, observation, width)
        return lines

    @staticmethod
    def _headline(observation: Observation) -> str:
        turn = observation["turn"]
        parts = [f"Round {observation['round']}: {PHASES.get(observation['phase'], observation['phase'])}"]
        if observation["lap"]:
            parts.append(f"lap {observation['lap']} of 3")
        if turn >= 0:
            parts.append("your turn" if turn == observation["seat"] else f"seat {turn}'s turn")
        parts += [
            f"dealer seat {observation['dealer']}",
            f"amphora {observation['amphora']}",
            f"pot {observation['pot']}",
            f"cap {observation['cap']}",
            f"{observation['deck_left']} cards in the deck",
        ]
        return "; ".join(parts)

    @staticmethod
    def _seats(observation: Observation) -> list[str]:
        you, to_move = observation["seat"], set(observation["to_move"])
        rows = []
        for seat in range(observation["players"]):
            field = observation["fields"][seat]
            state = "out" if observation["eliminated"][seat] else "in" if observation["in_round"][seat] else "folded"
            rows.append(
                (
                    seat_label(seat, you),
                    observation["chips"][seat],
                    observation["put"][seat],
                    state,
                    observation["hand_sizes"][seat],
                    flank(field["left"]),
                    flank(field["right"]),
                )
            )
        marks = ["> " if seat in to_move else "  " for seat in range(observation["players"])]
        headers = ("seat", "chips", "put in", "round", "in hand", "left flank", "right flank")
        return table(headers, rows, marks) + ["  (> to move)"]

    @staticmethod
    def _bet_entry(entry: dict[str, Any], you: int) -> str:
        amount = f" {entry['amount']}" if "amount" in entry else ""
        return f"seat {seat_label(entry['seat'], you)} {entry['kind']}{amount}"

    @staticmethod
    def _last_round(last: dict[str, Any], you: int) -> str:
        won = ", ".join(f"seat {seat_label(seat, you)} won {chips}" for seat, chips in enumerate(last["won"]) if chips)
        if last["by_fold"]:
            return f"Round {last['round']} ended: {won} (the others folded)"
        scores = ", ".join(
            f"seat {seat_label(seat, you)} {'no link' if score is None else score}"
            for seat, score in enumerate(last["scores"])
        )
        return f"Round {last['round']} ended: {won}; scores (lowest wins): {scores}"

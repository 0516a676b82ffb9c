"""SCOUT for a person: a card is shown with both its numbers, the one in use (upright) first: 7/2.

Hand positions are numbered from #1 at the left end (index 0 of the protocol's hand). A scout's card is shown
as it will sit in the hand, after the flip if there is one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .views import Action, Observation, columns, grid, numbered, seat_label, table

HISTORY_SHOWN = 6
"""The latest entries of the round's history on the screen."""


def card(pair: Sequence[int]) -> str:
    return f"{pair[0]}/{pair[1]}"


def cards(pairs: Sequence[Sequence[int]]) -> str:
    return " ".join(card(pair) for pair in pairs)


def turned(pair: Sequence[int]) -> list[int]:
    return [pair[1], pair[0]]


def gap(insert: int, hand_size: int) -> str:
    """Where an inserted card goes, in hand positions."""
    if hand_size == 0:
        return "into the empty hand"
    if insert == 0:
        return "before #1"
    if insert == hand_size:
        return f"after #{hand_size}"
    return f"between #{insert} and #{insert + 1}"


def positions(start: int, length: int) -> str:
    return f"#{start + 1}" if length == 1 else f"#{start + 1}-#{start + length}"


class ScoutView:
    def board(self, observation: Observation) -> list[str]:
        you = observation["seat"]
        lines = [self._headline(observation), *self._seats(observation), "", self._active_set(observation)]
        history = observation["history"][-HISTORY_SHOWN:]
        if history:
            lines += ["This round, latest last:", *(f"  {self._entry(entry, you)}" for entry in history)]
        for finished in observation["finished_rounds"]:
            scores = ", ".join(f"seat {seat_label(s, you)} {score:+d}" for s, score in enumerate(finished["scores"]))
            lines.append(f"Round {finished['round']} scored: {scores}")
        return [*lines, "", *self._hand(observation["hand"])]

    def move(self, action: Action, observation: Observation) -> str:
        kind = action["kind"]
        hand = observation["hand"]
        if kind == "orient":
            if not action["flip"]:
                return "keep the hand as dealt"
            return f"turn the hand around: {cards([turned(pair) for pair in reversed(hand)])}"
        if kind == "show":
            start, length = action["start"], action["length"]
            return f"show {positions(start, length)}: {cards(hand[start : start + length])}"
        taken = observation["active_set"][0 if action["end"] == "left" else -1]
        inserted = turned(taken) if action["flip"] else taken
        verb = "scout & show" if action["and_show"] else "scout"
        return f"{verb} {action['end']} {card(inserted)} {gap(action['insert'], len(hand))}"

    def menu(self, actions: Sequence[Action], observation: Observation, width: int) -> list[str]:
        """Shows and the orientation in columns; scouts as grids: a row per card taken (end, and turned or
        not), a column per place it takes in the hand."""
        scouts = [(number, action) for number, action in enumerate(actions, 1) if action["kind"] == "scout"]
        if not scouts:
            return numbered(self, actions, observation, width)
        others = [(number, action) for number, action in enumerate(actions, 1) if action["kind"] != "scout"]
        lines = columns([f"{number}) {self.move(action, observation)}" for number, action in others], width)
        places = [f"#{place}" for place in range(1, len(observation["hand"]) + 2)]
        for and_show, title in ((False, "Scout"), (True, "Scout & Show (then show)")):
            rows = self._scout_rows([(n, a) for n, a in scouts if a["and_show"] is and_show], observation)
            if rows:
                lines += [f"{title}: the card taken becomes card #k of your hand", *grid(places, rows)]
        if max(len(line) for line in lines) > width:
            return numbered(self, actions, observation, width)
        return lines

    @staticmethod
    def _scout_rows(
        scouts: Sequence[tuple[int, Action]], observation: Observation
    ) -> list[tuple[str, list[int | None]]]:
        rows: dict[str, list[int | None]] = {}
        for number, action in scouts:
            taken = observation["active_set"][0 if action["end"] == "left" else -1]
            inserted = turned(taken) if action["flip"] else taken
            label = f"{action['end']:<5} {card(inserted)}" + (" (turned)" if action["flip"] else "")
            rows.setdefault(label, [None] * (len(observation["hand"]) + 1))[action["insert"]] = number
        return list(rows.items())

    @staticmethod
    def _headline(observation: Observation) -> str:
        phase = {"orient": "choose how to hold your hand", "play": "play", "over": "over"}[observation["phase"]]
        owed = " (you owe the Show of your Scout & Show)" if observation["must_show"] else ""
        return (
            f"Round {observation['round']} of {observation['rounds']}, started by seat "
            f"{observation['round_starter']}: {phase}{owed}"
        )

    @staticmethod
    def _seats(observation: Observation) -> list[str]:
        you, to_move = observation["seat"], set(observation["to_move"])
        rows = [
            (
                seat_label(seat, you),
                observation["hand_sizes"][seat],
                observation["captured"][seat],
                observation["chips"][seat],
                observation["scores"][seat],
                "used" if observation["scout_show_used"][seat] else "unused",
            )
            for seat in range(observation["players"])
        ]
        marks = ["> " if seat in to_move else "  " for seat in range(observation["players"])]
        headers = ("seat", "cards in hand", "captured", "scout chips", "score", "scout & show")
        return table(headers, rows, marks) + ["  (> to move)"]

    @staticmethod
    def _active_set(observation: Observation) -> str:
        owner = observation["active_owner"]
        if owner is None:
            return "Active set: none yet (the first play of the round is a Show)"
        active = observation["active_set"]
        shown = cards(active) if active else "nothing left (scouted away)"
        return f"Active set of seat {seat_label(owner, observation['seat'])}: {shown}"

    @staticmethod
    def _entry(entry: dict[str, Any], you: int) -> str:
        seat = f"seat {seat_label(entry['seat'], you)}"
        kind = entry["kind"]
        if kind == "orient":
            return f"{seat} {'turned the hand around' if entry['flip'] else 'kept the hand as dealt'}"
        if kind == "show":
            return f"{seat} showed {cards(entry['cards'])} (captured {entry['captured']})"
        also = ", to show next" if entry["and_show"] else ""
        return f"{seat} scouted {card(entry['card'])} from the {entry['end']} end into #{entry['insert'] + 1}{also}"

    @staticmethod
    def _hand(hand: Sequence[Sequence[int]]) -> list[str]:
        labels = [f"#{position}" for position in range(1, len(hand) + 1)]
        shown = [card(pair) for pair in hand]
        widths = [max(len(label), len(text)) for label, text in zip(labels, shown, strict=True)]
        return [
            f"Your hand, left to right ({len(hand)} cards, the number in use first):",
            "  " + "  ".join(label.rjust(width) for label, width in zip(labels, widths, strict=True)),
            "  " + "  ".join(text.rjust(width) for text, width in zip(shown, widths, strict=True)),
        ]

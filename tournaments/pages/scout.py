"""SCOUT in words: cards as top/bottom ("6/10": 6 is the number in use), shows, scouts, round ends and scores."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.games import Observation

from .captions import Caption, Narrator, seat_list, signed

ROUND_ENDS = {
    "hand_emptied": "seat {actor} has no card left",
    "all_scouted": "every other seat scouted after seat {exempt}'s show",
    "cannot_act": "the seat to move can neither show nor scout",
}


def card_text(card: Sequence[int]) -> str:
    return f"{card[0]}/{card[1]}"


def cards_text(cards: Sequence[Sequence[int]]) -> str:
    return " ".join(card_text(card) for card in cards) or "-"


def _orient_text(flip: bool, everyone_chose: bool) -> str:
    """An orientation: hands turn only once every seat has chosen (the board shows them as dealt until then)."""
    if not flip:
        return "keeps its hand as dealt"
    if everyone_chose:
        return "turns its hand around (every seat has chosen: the hands are oriented now)"
    return "chooses to turn its hand around (it turns once every seat has chosen)"


class ScoutNarrator(Narrator):
    def caption(
        self, seat: int, action: dict[str, Any], before: Sequence[Observation], after: Sequence[Observation]
    ) -> Caption:
        mine = before[seat]
        kind = action["kind"]
        if kind == "orient":
            text = _orient_text(action["flip"], after[seat]["phase"] != "orient")
            return Caption(text, "orients its hand (hidden until every seat has)", self._notes(seat, before, after))
        if kind == "show":
            start, length = action["start"], action["length"]
            text = f"shows {cards_text(mine['hand'][start : start + length])}"
            captured = len(mine["active_set"])
            if captured:
                text += f", captures {captured} card{'s' * (captured != 1)}"
            return Caption(text, text, self._notes(seat, before, after))
        text = self._scout_text(seat, action, mine)
        return Caption(text, text, self._notes(seat, before, after))

    @staticmethod
    def _scout_text(seat: int, action: dict[str, Any], mine: Observation) -> str:
        active = mine["active_set"]
        taken = active[0] if action["end"] == "left" else active[-1]
        inserted = [taken[1], taken[0]] if action["flip"] else taken
        turned = f", turned to {card_text(inserted)}," if action["flip"] else ""
        owner = mine["active_owner"]
        text = f"scouts {card_text(taken)} from the {action['end']} end{turned} into position {action['insert']}"
        if mine["players"] == 2:
            return text + " (pays a chip)"
        text += f" (a chip for seat {owner})"
        return text + "; Scout & Show: it must show now" if action["and_show"] else text

    def _notes(self, seat: int, before: Sequence[Observation], after: Sequence[Observation]) -> tuple[str, ...]:
        first, last = before[seat], after[seat]
        notes = []
        if first["phase"] == "orient" and last["phase"] != "orient" and last["round"] == first["round"]:
            turned = [entry["seat"] for entry in last["history"] if entry["kind"] == "orient" and entry["flip"]]
            notes.append(f"every hand is oriented; turned around: {', '.join(map(str, turned)) or 'none'}")
        if len(last["finished_rounds"]) > len(first["finished_rounds"]):
            notes += round_end_lines(last["finished_rounds"][-1], last["scores"], seat)
        if last["phase"] == "over":
            notes.append(f"game over; totals: {seat_list(last['scores'])}")
        return tuple(notes)

    def round_end(
        self, seat: int, action: dict[str, Any], before: Sequence[Observation], after: Sequence[Observation]
    ) -> dict[str, Any] | None:
        """Every hand and the Active Set as the round's last action left them (the engine deals the next round at
        once): the hands before it, with the mover's show or scout done; the engine's counts of the round's end
        (`finished_rounds`) come along, and tests check the two agree."""
        if len(after[seat]["finished_rounds"]) == len(before[seat]["finished_rounds"]):
            return None
        hands = [list(view["hand"]) for view in before]
        active = list(before[seat]["active_set"])
        owner = before[seat]["active_owner"]
        if action["kind"] == "show":
            start, length = action["start"], action["length"]
            active = hands[seat][start : start + length]
            del hands[seat][start : start + length]
            owner = seat
        elif action["kind"] == "scout":
            taken = active.pop(0 if action["end"] == "left" else -1)
            hands[seat].insert(action["insert"], [taken[1], taken[0]] if action["flip"] else taken)
        finished = after[seat]["finished_rounds"][-1]
        totals = [sum(entry["scores"][who] for entry in after[seat]["finished_rounds"]) for who in range(len(hands))]
        return {"hands": hands, "active_set": active, "active_owner": owner, "finished": finished, "totals": totals}

    def round_lines(self, observations: Sequence[Observation], seats: Sequence[str]) -> list[str]:
        first = observations[0]
        lines = [f"round {first['round']} of {first['rounds']}: seat {first['round_starter']} starts"]
        lines += [
            f"    hand of seat {seat} ({bot}): {cards_text(observation['hand'])}"
            for seat, (bot, observation) in enumerate(zip(seats, observations, strict=True))
        ]
        return lines

    def final_lines(self, observations: Sequence[Observation], seats: Sequence[str]) -> list[str]:
        rounds = observations[0]["finished_rounds"]
        return [
            f"  round {entry['round']}: {seat_list([signed(score) for score in entry['scores']])}" for entry in rounds
        ]


def round_end_lines(finished: dict[str, Any], totals: Sequence[int], seat: int) -> list[str]:
    """A round's end: how it ended, who lost nothing for the hand, what each seat scored and the totals."""
    exempt = finished["exempt"]
    reason = ROUND_ENDS.get(finished["end"], finished["end"]).format(actor=seat, exempt=exempt)
    lines = [f"round {finished['round']} ends: {reason}"]
    if exempt is not None:
        lines.append(f"seat {exempt} owns the Active Set and loses nothing for its hand")
    counts = zip(finished["captured"], finished["chips"], finished["hand_sizes"], finished["scores"], strict=True)
    lines.append(
        "round scores: "
        + ", ".join(
            f"seat {index}: {signed(score)} (captured {captured}, chips {chips}, in hand {in_hand})"
            for index, (captured, chips, in_hand, score) in enumerate(counts)
        )
    )
    lines.append(f"totals: {seat_list(totals)}")
    return lines

"""Scauver in words: setups, bets and folds, placements, vanguards and links at the showdown, pots and chips."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.games import Observation
from referee.games._scauver_links import CARD_VALUE, LENGTH_RANK, LinkStrength, link_strength

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
            notes += round_end_lines(outcome, showdown_chips(last))
            notes += forced_bet_lines(last)
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


def showdown_chips(observation: Observation) -> list[int]:
    """Every seat's chips when the round's pot was paid out: what the observation after it shows, plus the forced
    bets (amphoras) of the next round, which the engine posts at once; at the game's end there are none."""
    if observation["phase"] == "over":
        return list(observation["chips"])
    return [chips + put for chips, put in zip(observation["chips"], observation["put"], strict=True)]


def forced_bet_lines(observation: Observation) -> list[str]:
    """The next round's forced bets, posted as the round's pot was paid: who posted the amphora, chips after."""
    posted = [seat for seat, put in enumerate(observation["put"]) if put]
    if observation["phase"] == "over" or not posted:
        return []
    seats = ", ".join(map(str, posted))
    return [
        f"round {observation['round']} begins: seats {seats} post the amphora of {observation['amphora']}; "
        f"chips now: {seat_list(observation['chips'])}"
    ]


def tie_line(outcome: dict[str, Any]) -> str | None:
    """Why the pot went where it did when seats tied at the showdown (shared/rules/scauver.md, "Showdown"): equal
    scores are broken by link strength (value, then length, then height); still equal, the pot is split and the
    odd chips go to the tied seat nearest the dealer's left."""
    winners = outcome["winners"]
    scores = outcome["scores"]
    if outcome["by_fold"] or scores[winners[0]] is None:
        return None
    if len(winners) > 1:
        line = f"seats {', '.join(map(str, winners))} tie in score and link strength: the pot is split"
        odd = [seat for seat in winners if outcome["won"][seat] > min(outcome["won"][other] for other in winners)]
        if odd:
            line += f"; the odd chips go to seat {odd[0]}, the tied seat nearest the dealer's left"
        return line
    (winner,) = winners
    equal = [seat for seat, score in enumerate(scores) if score == scores[winner] and seat != winner]
    if not equal:
        return None
    strongest = _strength(outcome["choices"][winner])
    beaten = max(_strength(outcome["choices"][seat]) for seat in equal)
    return (
        f"seat {winner} and seat {', '.join(map(str, equal))} both score {scores[winner]}: the stronger link wins, "
        f"{_stronger_by(strongest, beaten)}"
    )


def _strength(choice: dict[str, Any]) -> LinkStrength:
    return link_strength(choice["left"], choice["right"])


_LENGTHS = {rank: f"{greater}-{lesser}" for (greater, lesser), rank in LENGTH_RANK.items()}


def _stronger_by(winner: LinkStrength, other: LinkStrength) -> str:
    if winner.size != other.size:
        return f"by its value ({winner.size} against {other.size})"
    if winner.length != other.length:
        return f"by its length ({_LENGTHS[winner.length]} against {_LENGTHS[other.length]})"
    return f"by its height (cards {' '.join(map(str, winner.height))} against {' '.join(map(str, other.height))})"


def round_end_lines(outcome: dict[str, Any], chips: Sequence[int]) -> list[str]:
    """A round's end: the pot and who took it (and why, at a tie), every showdown choice with its score, the chips
    when the pot was paid."""
    winners = ", ".join(f"seat {seat} (+{outcome['won'][seat]})" for seat in outcome["winners"])
    if outcome["by_fold"]:
        lines = [f"round {outcome['round']} ends: everyone else folded; {winners} takes the pot of {outcome['pot']}"]
    else:
        verb = "takes" if len(outcome["winners"]) == 1 else "share"
        lines = [f"round {outcome['round']} showdown: {winners} {verb} the pot of {outcome['pot']}"]
        tie = tie_line(outcome)
        if tie is not None:
            lines.append(tie)
        for seat, (choice, score) in enumerate(zip(outcome["choices"], outcome["scores"], strict=True)):
            if choice is not None:
                scored = "" if score is None else f", score {score}"
                lines.append(f"  seat {seat}: {choice_text(choice)}{scored}")
    lines.append(f"chips at the end of the round: {seat_list(chips)}")
    return lines

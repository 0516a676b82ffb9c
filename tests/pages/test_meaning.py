"""What the captions and pages say means what happened: an orientation turns a hand only once every seat has
chosen; a tied Scauver showdown says why the pot went where it went (shared/rules/scauver.md, "Showdown"); the
chips at a round's end are those when the pot was paid, the next round's forced bets a line of their own; and
SCOUT's 6 and 9 are marked (the forfeit score has its own test in test_page_parts.py)."""

from __future__ import annotations

from typing import Any

from replays import self_play

from tournaments.pages.games import game_pages
from tournaments.pages.scauver import round_end_lines, tie_line
from tournaments.pages.timeline import replay_steps


def captions(replay: dict[str, Any]) -> list[tuple[Any, Any, Any]]:
    """(step before, step after, caption) of every action."""
    narrator = game_pages(replay["game"]).narrator
    steps = list(replay_steps(replay))
    out = []
    for before, after in zip(steps, steps[1:], strict=False):
        seat = after.seat
        assert seat is not None and after.move is not None
        out.append(
            (before, after, narrator.caption(seat, after.move["action"], before.observations, after.observations))
        )
    return out


def test_a_hand_turns_around_only_once_every_seat_has_chosen() -> None:
    replay = self_play("scout", ["random"] * 5, seed=8)
    turned = [(b, a, c) for b, a, c in captions(replay) if a.move["action"] == {"kind": "orient", "flip": True}]
    assert turned
    for before, after, caption in turned:
        seat = after.seat
        if after.observations[seat]["phase"] == "orient":
            assert caption.text.startswith("chooses to turn its hand around")
            assert after.observations[seat]["hand"] == before.observations[seat]["hand"], "still as dealt"
        else:
            assert caption.text.startswith("turns its hand around (every seat has chosen")


def outcome(**changes: Any) -> dict[str, Any]:
    base = {
        "round": 3,
        "dealer": 1,
        "pot": 17,
        "winners": [0],
        "won": [17, 0, 0],
        "by_fold": False,
        "fields": [{"left": [], "right": []}] * 3,
        "choices": [
            {"kind": "vanguards", "left": ["2S", "4S"], "right": ["6H"]},
            {"kind": "vanguards", "left": ["AS", "2H"], "right": ["3D"]},
            None,
        ],
        "scores": [6, 6, None],
    }
    return {**base, **changes}


def test_a_tied_showdown_says_why_the_pot_went_where_it_went() -> None:
    assert tie_line(outcome()) == ("seat 0 and seat 1 both score 6: the stronger link wins, by its value (6 against 3)")
    longer = outcome(
        choices=[
            {"kind": "vanguards", "left": ["AS", "2S", "3S"], "right": ["6H"]},
            {"kind": "vanguards", "left": ["AH", "5D"], "right": ["6C"]},
            None,
        ]
    )
    assert tie_line(longer) == "seat 0 and seat 1 both score 6: the stronger link wins, by its length (3-1 against 2-1)"
    split = outcome(winners=[0, 1], won=[9, 8, 0])
    assert tie_line(split) == (
        "seats 0, 1 tie in score and link strength: the pot is split; the odd chips go to seat 0, "
        "the tied seat nearest the dealer's left"
    )
    assert tie_line(outcome(scores=[6, 12, None])) is None
    assert "both score 6" in round_end_lines(outcome(), [10, 20, 30])[1]


def test_the_chips_at_a_rounds_end_are_before_the_next_rounds_forced_bets() -> None:
    replay = self_play("scauver", ["random"] * 3, seed=2)
    total = replay["players"] * replay["config"]["starting_chips"]
    ends = [(b, a, c) for b, a, c in captions(replay) if any(n.startswith("chips at the end") for n in c.notes)]
    assert ends
    for _, after, caption in ends:
        line = next(note for note in caption.notes if note.startswith("chips at the end of the round: "))
        chips = [int(part.split(": ")[1]) for part in line.removeprefix("chips at the end of the round: ").split(", ")]
        assert sum(chips) == total, "when the pot is paid, every chip is in a stack"
        if after.observations[0]["phase"] != "over":
            posted = next(note for note in caption.notes if " post the amphora of " in note)
            assert f"round {after.observations[0]['round']} begins" in posted

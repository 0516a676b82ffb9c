"""The student page collapses faults as check-bot and the grading report do (tournaments.classroom.fault_groups):
alike when only the game, request or id they name differs, told apart when what the bot printed differs."""

from __future__ import annotations

from pathlib import Path

from referee.records import FaultFacts, Stage, crash_cause, describe
from tournaments.classroom.fault_groups import MOST_GROUPS_SHOWN
from tournaments.league.store import StoredFault
from tournaments.pages.class_pages import fault_groups
from tournaments.pages.student_folder import _faults_section

CRASH = (
    "the bot exited with status 1 during game {game}; its last output:\n| Traceback (most recent call last):\n| {error}"
)


def _fault(game: int, detail: str, kind: str = "crash") -> StoredFault:
    return StoredFault("m1", game, 0, "ann", kind, detail)


def test_faults_that_differ_only_in_the_game_are_one_group_with_its_first() -> None:
    faults = [_fault(game, CRASH.format(game=game, error="IndexError: list index out of range")) for game in (2, 0, 5)]
    (group,) = fault_groups(faults, {})
    assert (group.kind, group.count, group.game_index) == ("crash", 3, 2)
    assert group.detail == faults[0].detail and group.step is None


def test_crashes_with_the_same_first_line_but_another_traceback_are_told_apart() -> None:
    """The page's own grouping compared the first line alone, with every number masked: two different
    exceptions were one group, and the second was never shown."""
    faults = [
        _fault(0, CRASH.format(game=0, error="IndexError: list index out of range")),
        _fault(1, CRASH.format(game=1, error="KeyError: 'hand'")),
        _fault(2, "no answer to request 16 within 1000 ms", "timeout"),
        _fault(3, "no answer to request 40 within 1000 ms", "timeout"),
    ]
    groups = fault_groups(faults, {})
    assert [(group.kind, group.count) for group in groups] == [("crash", 1), ("crash", 1), ("timeout", 2)]
    assert "KeyError" in groups[1].detail


def _chatty_crash(game: int, last: str = "RuntimeError: crashing mid-game, on purpose", signal: int | None = None):
    """A stored crash of a bot that printed its hand at every decision before its traceback's last line."""
    output = (f"decision 3: hand [[{game}, 7], [2, {game + 1}]]", "Traceback (most recent call last):", last)
    ending = {"signal": signal} if signal else {"exit_status": 1}
    facts = FaultFacts(stage=Stage.GAME, game=game, output=output, **ending)
    cause = crash_cause(facts)
    return StoredFault("m1", game, 0, "ann", cause.kind.value, describe(cause, facts), cause=cause, facts=facts)


def test_a_bot_that_prints_at_every_decision_has_its_identical_crashes_told_once() -> None:
    """Each crash's output differed in the lines the bot printed before its traceback: 20 crashes were 20 groups
    (218 on a real class, a 255 kB page). What it died of, the output's last line, is the same."""
    (group,) = fault_groups([_chatty_crash(game) for game in range(20)], {})
    assert group.count == 20 and "decision 3: hand [[0, 7]" in group.detail
    killed = fault_groups([_chatty_crash(game, f"drew card {game}", signal=11) for game in range(5)], {})
    assert [group.count for group in killed] == [5]
    other = fault_groups([_chatty_crash(0), _chatty_crash(1, "KeyError: 'hand'"), _chatty_crash(2)], {})
    assert [group.count for group in other] == [2, 1]


def test_a_student_page_lists_at_most_its_largest_groups_and_counts_the_rest(tmp_path: Path) -> None:
    faults = [_chatty_crash(game, f"ValueError: case {game % 60}") for game in range(200)]
    groups = fault_groups(faults, {})
    html = _faults_section(groups, {}, tmp_path)
    assert len(groups) == 60 and html.count('<tr class="fault">') == MOST_GROUPS_SHOWN
    assert f"and {60 - MOST_GROUPS_SHOWN} more kinds of fault" in html
    assert len(html) < 20_000

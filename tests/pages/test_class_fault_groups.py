"""The student page collapses faults as check-bot and the grading report do (tournaments.classroom.fault_groups):
alike when only the game, request or id they name differs, told apart when what the bot printed differs."""

from __future__ import annotations

from tournaments.league.store import StoredFault
from tournaments.pages.class_pages import fault_groups

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

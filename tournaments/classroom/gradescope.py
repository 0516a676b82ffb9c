"""The results.json that Gradescope's autograders write, as its documentation specifies it
(https://gradescope-autograders.readthedocs.io/en/latest/specs/, "Output format"): a top-level score and a list
of tests, each with a name, a status, a score out of a max_score, and an output shown to the student.

Only documented keys are written, and only those this project fills are typed here (Gradescope reads others:
tags, output_format, ...). The leaderboard is a list of {name, value, order}: `order` "desc" (the default,
higher is better) or "asc". The documented top level has no max_score (the assignment's points are
set on Gradescope): the total the tests are out of goes in extra_data.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import NotRequired, TypedDict


class Status(enum.StrEnum):
    PASSED = "passed"
    FAILED = "failed"


class GradescopeTest(TypedDict):
    name: str
    status: str
    score: float
    max_score: float
    output: str
    visibility: NotRequired[str]
    """hidden, after_due_date, after_published or visible (Gradescope's default when absent)."""


class LeaderboardEntry(TypedDict):
    name: str
    value: float
    order: str


class ExtraData(TypedDict):
    max_score: float
    isolation: str
    """What held the bot while it was graded: full, partial or none (referee.isolation.sandbox.Isolation)."""


class GradescopeResults(TypedDict):
    score: float
    execution_time: float
    """Seconds."""
    output: str
    extra_data: ExtraData
    tests: list[GradescopeTest]
    leaderboard: NotRequired[list[LeaderboardEntry]]


def test_result(
    name: str, passed: bool, output: str, max_score: float = 1.0, visibility: str | None = None
) -> GradescopeTest:
    """One test: full marks if passed, none otherwise."""
    status = Status.PASSED if passed else Status.FAILED
    test: GradescopeTest = {
        "name": name,
        "status": status.value,
        "score": max_score if passed else 0.0,
        "max_score": max_score,
        "output": output,
    }
    if visibility is not None:
        test["visibility"] = visibility
    return test


def results(
    tests: Sequence[GradescopeTest],
    output: str,
    execution_time_s: float,
    isolation: str,
    leaderboard: Sequence[LeaderboardEntry] = (),
) -> GradescopeResults:
    """The whole file: the score is the sum of the tests' (Gradescope takes a top-level score as the total);
    `isolation` goes in extra_data (and the text report, `output`, says it too)."""
    file: GradescopeResults = {
        "score": sum(test["score"] for test in tests),
        "execution_time": round(execution_time_s, 3),
        "output": output,
        "extra_data": {"max_score": sum(test["max_score"] for test in tests), "isolation": isolation},
        "tests": list(tests),
    }
    if leaderboard:
        file["leaderboard"] = list(leaderboard)
    return file

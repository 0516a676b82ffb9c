"""A class's leaderboard to publish: ordered by a figure it shows, with that figure's 95% interval, under stable
pseudonyms (tournaments.classroom.pseudonyms).

    board = leaderboard(grades, names)          # names: student -> pseudonym (class_pseudonyms)

The figure, with baselines (a baselines schedule): the student's score share over all its games against the
baselines (each game 1 when it ranked above the baseline, 1/2 level, 0 below), with its Wilson interval. It
depends on the student's own games alone, so no classmate's resubmission and no draw of classmates moves it,
and no bootstrap enters it. Without baselines: the Elo of the fit (its point estimate, whatever the bootstrap's
seed) with the bootstrap's interval.

Order: the figure, highest first; equal figures share a place and are listed by pseudonym (so the order of the
same games is the same in every run). Students without games come last, without a figure.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from ..ratings.marks import wilson
from .grading import BotGrade, GradeReport


class Figure(enum.StrEnum):
    BASELINE_SHARE = "score share against the baselines"
    ELO = "Elo"

    @property
    def short(self) -> str:
        """Its name in a narrow column's header."""
        return "vs baselines" if self is Figure.BASELINE_SHARE else "Elo"


@dataclass(frozen=True)
class LeaderRow:
    place: int | None
    """1 for the top; equal figures share a place; None without a figure (no games)."""
    bot: str
    pseudonym: str
    figure: float | None
    low: float | None
    high: float | None
    """The figure's 95% interval (None without games, or for an Elo without a bootstrap)."""
    grade: BotGrade


@dataclass(frozen=True)
class Leaderboard:
    figure: Figure
    rows: tuple[LeaderRow, ...]

    def row_of(self, bot: str) -> LeaderRow:
        return next(row for row in self.rows if row.bot == bot)


def baseline_share(grade: BotGrade) -> tuple[float, float, float] | None:
    """(share, low, high) over every game of `grade` against a baseline; None without such games."""
    games = sum(result.games for result in grade.against)
    if not games:
        return None
    share = sum((result.share or 0.0) * result.games for result in grade.against) / games
    return (share, *wilson(share, games))


def leaderboard(grades: GradeReport, pseudonyms: Mapping[str, str]) -> Leaderboard:
    """The students of `grades` ordered as the module's docstring says, each under `pseudonyms[bot]`."""
    figure = Figure.BASELINE_SHARE if grades.baselines else Figure.ELO
    measured = [(grade, _figure(grade, figure)) for grade in grades.students]
    measured.sort(key=lambda pair: (pair[1] is None, -(pair[1] or (0.0, 0.0, 0.0))[0], pseudonyms[pair[0].bot]))
    rows: list[LeaderRow] = []
    for index, (grade, value) in enumerate(measured):
        place = None if value is None else index + 1
        if value is not None and rows and rows[-1].figure == value[0]:
            place = rows[-1].place
        low, high = (None, None) if value is None else value[1:]
        figure_value = None if value is None else value[0]
        rows.append(LeaderRow(place, grade.bot, pseudonyms[grade.bot], figure_value, low, high, grade))
    return Leaderboard(figure, tuple(rows))


def _figure(grade: BotGrade, figure: Figure) -> tuple[float, float | None, float | None] | None:
    if figure is Figure.BASELINE_SHARE:
        return baseline_share(grade)
    if grade.elo is None or not grade.games:
        return None
    return grade.elo, grade.elo_low, grade.elo_high

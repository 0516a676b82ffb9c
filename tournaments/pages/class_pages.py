"""A class's pages, static files in one folder (`referee tournament report LEAGUE.toml --format pages -o DIR`):

    DIR/leaderboard.html      to publish: the students under pseudonyms, ordered by the figure it shows with its
                              95% interval (tournaments.classroom.leaderboard: the score share against the
                              baselines, else the Elo), their marks (or the range an uncertain one spans) and
                              results against each baseline; the baselines apart; no fault, log or name
    DIR/students/NAME/        one folder per student, to hand to that student alone
                              (tournaments.pages.student_folder: its page, its replays, its logs; classmates
                              under pseudonyms; nothing links outside it)
    DIR/teacher.html          for the teacher: every student by name and pseudonym with a link to its page, its
                              place, mark (or why it is uncertain) and faults; the pairs flagged as copies; the
                              folders skipped

Pseudonyms: tournaments.classroom.pseudonyms (a keyed hash of the name under the class's secret, or chosen).
Every page is html.document's: self-contained, nothing fetched, no script but the one that marks it drawn.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from html import escape
from pathlib import Path
from urllib.parse import quote

from ..classroom.grading import BotGrade, GradeReport
from ..classroom.leaderboard import Leaderboard, leaderboard
from ..league.store import LeagueStore
from .html import document
from .student_folder import (
    SCRIPTS,
    STYLES,
    FaultGroup,
    fault_groups,
    figure_cell,
    header,
    mark_text,
    scroll,
    share_text,
    write_student_folder,
)

__all__ = ["ClassPages", "FaultGroup", "fault_groups", "write_class_pages"]

LEADERBOARD = "leaderboard.html"
TEACHER = "teacher.html"
STUDENTS = "students"


@dataclass(frozen=True)
class ClassPages:
    leaderboard: Path
    teacher: Path
    students: Mapping[str, Path]
    """Student -> its folder's page (DIR/students/NAME/index.html)."""


def write_class_pages(grades: GradeReport, store: LeagueStore, pseudonyms: Mapping[str, str], out: Path) -> ClassPages:
    """Write the pages of the module's docstring into `out` (made if missing); `pseudonyms` names every student
    (tournaments.classroom.pseudonyms.class_pseudonyms)."""
    board = leaderboard(grades, pseudonyms)
    students = {}
    for row in board.rows:
        folder = out / STUDENTS / _file_stem(row.bot)
        students[row.bot] = write_student_folder(folder, grades, row, store, pseudonyms, board.figure).page
    page = out / LEADERBOARD
    page.write_text(_leaderboard_page(grades, board), encoding="utf-8")
    teacher = out / TEACHER
    teacher.write_text(_teacher_page(grades, board, students, out), encoding="utf-8")
    return ClassPages(page, teacher, students)


# The pages.


def _number(value: float | None, digits: int = 0) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _baseline_headers(grades: GradeReport) -> str:
    return "".join(f'<th class="num">vs {escape(name)}</th>' for name in grades.baselines)


def _baseline_cells(grade: BotGrade) -> str:
    return "".join(
        f'<td class="num" title="{result.games} games">{share_text(result.share)}</td>' for result in grade.against
    )


def _has_marks(grades: GradeReport) -> bool:
    return any(grade.held_mark is not None for grade in grades.students)


def _mark_cell(grade: BotGrade, marks: bool) -> str:
    if not marks:
        return ""
    held = grade.held_mark
    uncertain = held is not None and not held.holds
    title = f' title="{escape(held.note or "")}"' if uncertain and held is not None else ""
    return f'<td class="num mark{" uncertain" if uncertain else ""}"{title}>{escape(mark_text(grade))}</td>'


def _leaderboard_page(grades: GradeReport, board: Leaderboard) -> str:
    marks = _has_marks(grades)
    rows = "".join(
        f'<tr data-place="{row.place or ""}"><td class="num">{row.place or "–"}</td>'
        f'<td class="bot">{escape(row.pseudonym)}</td>'
        f"{figure_cell(board.figure, row.figure, row.low, row.high)}"
        f"{_mark_cell(row.grade, marks)}{_baseline_cells(row.grade)}"
        f'<td class="num">{row.grade.games}</td></tr>'
        for row in board.rows
    )
    table = (
        f'<table class="leaderboard"><thead><tr><th class="num">#</th><th>student</th>'
        f"{_figure_headers(board, marks)}"
        f'{_baseline_headers(grades)}<th class="num">games</th></tr></thead><tbody>{rows}</tbody></table>'
    )
    body = [
        header(grades.league, "leaderboard", [grades.game or "", f"{len(grades.students)} students"]),
        f'<section id="students"><h2>Students</h2>{scroll(table)}{_explained(board, marks)}</section>',
        _baselines_section(grades),
    ]
    return document(f"{grades.league}: leaderboard", STYLES, "\n".join(body), SCRIPTS, ())


def _figure_headers(board: Leaderboard, marks: bool) -> str:
    figure = f'<th class="num">{escape(board.figure.short)}<small class="interval">95%</small></th>'
    return figure + ('<th class="num">mark</th>' if marks else "")


def _explained(board: Leaderboard, marks: bool) -> str:
    said = [
        f"Ordered by the {escape(board.figure.value)}, with its 95% interval: students whose intervals overlap "
        "may be in either order; equal figures share a place.",
        "vs B: the score share against baseline B (a game won 1, level ½, lost 0), over the games both played.",
    ]
    if marks:
        said.append("A mark with a question mark is a range: the games cannot yet tell which side of a threshold.")
    return "".join(f'<p class="muted">{text}</p>' for text in said)


def _baselines_section(grades: GradeReport) -> str:
    if not grades.baseline_grades:
        return ""
    rows = "".join(
        f'<tr><td class="bot">{escape(grade.bot)}</td><td class="num">{_number(grade.elo, 0)}</td>'
        f'<td class="num">{grade.games}</td><td class="num">{_number(grade.mean_rank, 2)}</td></tr>'
        for grade in grades.baseline_grades
    )
    table = (
        '<table class="baselines"><thead><tr><th>baseline</th>'
        '<th class="num">Elo</th><th class="num">games</th><th class="num">mean rank</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>"
    )
    return (
        '<section id="baselines"><h2>Baselines</h2><p class="muted">The bots every student is measured '
        f"against; they take no place.</p>{scroll(table)}</section>"
    )


def _link(target: Path, base: Path, text: str) -> str:
    relative = target.resolve().relative_to(base.resolve()).as_posix()
    return f'<a href="{escape(quote(relative))}">{escape(text)}</a>'


def _teacher_page(grades: GradeReport, board: Leaderboard, students: Mapping[str, Path], out: Path) -> str:
    marks = _has_marks(grades)
    rows = "".join(
        f'<tr data-bot="{escape(row.bot)}"><td class="num">{row.place or "–"}</td>'
        f'<td class="bot">{_link(students[row.bot], out, row.bot)}</td><td>{escape(row.pseudonym)}</td>'
        f"{figure_cell(board.figure, row.figure, row.low, row.high)}"
        f'{_mark_cell(row.grade, marks)}{_baseline_cells(row.grade)}<td class="num">{row.grade.games}</td>'
        f'<td class="num{" bad" if row.grade.fault_count else ""}">{row.grade.fault_count}</td>'
        f'<td class="copies">{escape(_copies_of(grades, row.bot))}</td>'
        f"<td>{escape(' '.join(filter(None, (row.grade.language, row.grade.version))))}</td></tr>"
        for row in board.rows
    )
    table = (
        f'<table class="teacher"><thead><tr><th class="num">#</th><th>student</th><th>pseudonym</th>'
        f"{_figure_headers(board, marks)}"
        f'{_baseline_headers(grades)}<th class="num">games</th><th class="num">faults</th>'
        f"<th>may be a copy of</th><th>bot.toml</th></tr></thead><tbody>{rows}</tbody></table>"
    )
    body = [
        header(grades.league, "for the teacher", [grades.game or "", f"{grades.games} games"]),
        f'<section id="students"><h2>Students</h2>{scroll(table)}</section>',
        _uncertain_section(grades),
        _changed_section(grades),
        _copies_section(grades),
        _skipped_section(grades),
        _baselines_section(grades),
    ]
    return document(f"{grades.league}: for the teacher", STYLES, "\n".join(body), SCRIPTS, ())


def _uncertain_section(grades: GradeReport) -> str:
    uncertain = [grade for grade in grades.students if grade.held_mark is not None and not grade.held_mark.holds]
    if not uncertain:
        return ""
    items = "".join(
        f"<li><strong>{escape(grade.bot)}</strong>: {escape(grade.held_mark.note or '')}</li>"
        for grade in uncertain
        if grade.held_mark is not None
    )
    return (
        '<section id="uncertain"><h2>Uncertain marks</h2><p class="muted">The share\'s 95% interval straddles a '
        "threshold: another run's deals could give either mark. More deals (deals_per_match) narrow the "
        f'intervals; or decide by hand.</p><ul class="notes">{items}</ul></section>'
    )


def _copies_of(grades: GradeReport, bot: str) -> str:
    return ", ".join(sorted({other for flag in grades.copies_of(bot) for other in flag.bots if other != bot}))


def _copies_section(grades: GradeReport) -> str:
    if not grades.copies:
        return '<section id="copies"><h2>Possible copies</h2><p class="muted">None flagged.</p></section>'
    rows = "".join(
        f'<tr class="copy"><td>{escape(flag.kind.value)}</td><td class="bot">{escape(" and ".join(flag.bots))}</td>'
        f'<td class="detail">{escape(flag.detail)}</td></tr>'
        for flag in grades.copies
    )
    table = (
        '<table class="copies"><thead><tr><th>measure</th><th>students</th>'
        f"<th>what was found</th></tr></thead><tbody>{rows}</tbody></table>"
    )
    return (
        '<section id="copies"><h2>Possible copies</h2><p class="muted">Leads to look into, not verdicts: what was '
        f"measured is said for each pair.</p>{scroll(table)}</section>"
    )


def _changed_section(grades: GradeReport) -> str:
    if not grades.changed:
        return ""
    return (
        '<section id="changed"><h2>Changed since their games</h2><p class="bad">'
        f"{escape(', '.join(grades.changed))}: the figures above are of the program they replaced; "
        "<code>referee tournament run --replay-changed</code> plays their games again.</p></section>"
    )


def _skipped_section(grades: GradeReport) -> str:
    if not grades.skipped:
        return ""
    items = "".join(f"<li>{escape(note)}</li>" for note in grades.skipped)
    return f'<section id="skipped"><h2>Folders skipped</h2><ul class="notes">{items}</ul></section>'


def _file_stem(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).lstrip(".") or "bot"

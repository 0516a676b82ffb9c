"""A class's pages, static files in one folder (`referee tournament report LEAGUE.toml --format pages -o DIR`):

    DIR/leaderboard.html      to publish: the students under pseudonyms (the league file's [pseudonyms], else
                              "student N" for place N), their places, marks and results against each baseline;
                              the baselines apart; no fault, log or name of a student
    DIR/students/NAME.html    one per student, to give that student: its games (opponents, rank, score, faults,
                              a link to each replay), its faults collapsed with a count, each with the game and
                              the step before which it happened (a link to that step of the replay page), its
                              results against each baseline, links to its logs and its build's log
    DIR/teacher.html          for the teacher: every student by name with a link to its page, its mark and
                              faults; the pairs flagged as copies; the folders skipped

Links are relative (the folder may be moved with the league's logs and replays beside it, as they were).
Every page is html.document's: self-contained, nothing fetched, no script but the one that marks it drawn.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from urllib.parse import quote

from referee.replay import ReplayError, load

from ..classroom.fault_groups import group_faults, left_out
from ..classroom.grading import BotGrade, GradeReport
from ..league.store import LeagueStore, SeatRow, StoredFault
from ..league_report import replay_page
from .fault_text import without_paths
from .html import document

STYLES = ("page.css", "report.css", "class.css")
SCRIPTS = ("class.js",)
"""Only marks the page drawn (data-ready), as every page of this package does."""
LEADERBOARD = "leaderboard.html"
TEACHER = "teacher.html"
STUDENTS = "students"


@dataclass(frozen=True)
class FaultGroup:
    """Faults alike (tournaments.classroom.fault_groups), with how many there were and where the first was."""

    kind: str
    detail: str
    """The first one's detail, whole."""
    count: int
    match_id: str
    game_index: int
    step: int | None
    """The index of the action it came before in its game's replay (None without a replay)."""


@dataclass(frozen=True)
class ClassPages:
    leaderboard: Path
    teacher: Path
    students: Mapping[str, Path]


def write_class_pages(grades: GradeReport, store: LeagueStore, pseudonyms: Mapping[str, str], out: Path) -> ClassPages:
    """Write the pages of the module's docstring into `out` (made if missing)."""
    (out / STUDENTS).mkdir(parents=True, exist_ok=True)
    seats = store.seat_rows()
    replays = store.replay_paths()
    faults = store.fault_list()
    students = {}
    for grade in grades.students:
        path = out / STUDENTS / f"{_file_stem(grade.bot)}.html"
        mine = [fault for fault in faults if fault.bot == grade.bot]
        groups = fault_groups(mine, replays)
        games = [row for row in seats if row["bot"] == grade.bot]
        path.write_text(_student_page(grades, grade, games, groups, replays, path.parent), encoding="utf-8")
        students[grade.bot] = path
    board = out / LEADERBOARD
    board.write_text(_leaderboard_page(grades, pseudonyms), encoding="utf-8")
    teacher = out / TEACHER
    teacher.write_text(_teacher_page(grades, students, out), encoding="utf-8")
    return ClassPages(board, teacher, students)


def pseudonym(grade: BotGrade, pseudonyms: Mapping[str, str]) -> str:
    return pseudonyms.get(grade.bot) or f"student {grade.place}"


def fault_groups(faults: Sequence[StoredFault], replays: Mapping[tuple[str, int], str]) -> list[FaultGroup]:
    """`faults` collapsed as check-bot and the grading report collapse them (tournaments.classroom.fault_groups:
    the same kind and detail but for where and how late), in order of first occurrence."""
    grouped = group_faults((fault, fault) for fault in faults)
    return [
        FaultGroup(
            kind=group.kind.value,
            detail=group.detail,
            count=group.count,
            match_id=group.where[0].match_id,
            game_index=group.where[0].index,
            step=_step(group.where[0], replays.get((group.where[0].match_id, group.where[0].index))),
        )
        for group in grouped
    ]


def _step(fault: StoredFault, replay_path: str | None) -> int | None:
    """The action the fault came before, from the game's replay (its first fault of that seat and kind)."""
    if replay_path is None:
        return None
    try:
        replay = load(Path(replay_path).with_suffix(".json"))
    except (ReplayError, OSError):
        return None
    for recorded in replay.get("faults", []):
        if recorded.get("seat") == fault.seat and recorded.get("kind") == fault.kind:
            step = recorded.get("before_action")
            return step if isinstance(step, int) else None
    return None


# The pages.


def _header(title: str, subtitle: str, facts: Iterable[str]) -> str:
    return (
        f"<header><h1>{escape(title)} <small>{escape(subtitle)}</small></h1>"
        f'<p class="facts">{escape(" · ".join(facts))}</p></header>'
    )


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _number(value: float | None, digits: int = 0) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _baseline_headers(grades: GradeReport) -> str:
    return "".join(f'<th class="num">vs {escape(name)}</th>' for name in grades.baselines)


def _baseline_cells(grade: BotGrade) -> str:
    return "".join(
        f'<td class="num" title="{result.games} games">{_share(result.share)}</td>' for result in grade.against
    )


def _mark_cell(grade: BotGrade) -> str:
    return "" if grade.mark is None else f'<td class="num mark">{_number(grade.mark, 0)}</td>'


def _has_marks(grades: GradeReport) -> bool:
    return any(grade.mark is not None for grade in grades.students)


def _leaderboard_page(grades: GradeReport, pseudonyms: Mapping[str, str]) -> str:
    marks = '<th class="num">mark</th>' if _has_marks(grades) else ""
    rows = "".join(
        f'<tr data-place="{grade.place}"><td class="num">{grade.place}</td>'
        f'<td class="bot">{escape(pseudonym(grade, pseudonyms))}</td>{_mark_cell(grade)}'
        f'{_baseline_cells(grade)}<td class="num">{grade.games}</td></tr>'
        for grade in grades.students
    )
    table = (
        f'<table class="leaderboard"><thead><tr><th class="num">#</th><th>student</th>{marks}'
        f'{_baseline_headers(grades)}<th class="num">games</th></tr></thead><tbody>{rows}</tbody></table>'
    )
    body = [
        _header(grades.league, "leaderboard", [grades.game or "", f"{len(grades.students)} students"]),
        f'<section id="students"><h2>Students</h2>{table}<p class="muted">vs B: the score share against '
        "baseline B (a game won 1, level ½, lost 0), over the games both played.</p></section>",
        _baselines_section(grades),
    ]
    return document(f"{grades.league}: leaderboard", STYLES, "\n".join(body), SCRIPTS, ())


def _baselines_section(grades: GradeReport) -> str:
    if not grades.baseline_grades:
        return ""
    rows = "".join(
        f'<tr><td class="bot">{escape(grade.bot)}</td><td class="num">{_number(grade.elo, 0)}</td>'
        f'<td class="num">{grade.games}</td><td class="num">{_number(grade.mean_rank, 2)}</td></tr>'
        for grade in grades.baseline_grades
    )
    return (
        '<section id="baselines"><h2>Baselines</h2><p class="muted">The bots every student is measured '
        'against; they take no place.</p><table class="baselines"><thead><tr><th>baseline</th>'
        '<th class="num">Elo</th><th class="num">games</th><th class="num">mean rank</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></section>"
    )


def _link(target: str | Path, base: Path, text: str, fragment: str = "") -> str:
    relative = os.path.relpath(Path(target).resolve(), base.resolve())
    return f'<a href="{escape(quote(relative))}{escape(fragment)}">{escape(text)}</a>'


def _replay_link(replays: Mapping[tuple[str, int], str], key: tuple[str, int], base: Path, step: int | None) -> str:
    stored = replays.get(key)
    if stored is None:
        return '<span class="muted">no replay</span>'
    page = replay_page(stored)
    if page is not None:
        fragment = "" if step is None else f"#step={step}&view=all"
        return _link(page, base, "replay" + ("" if step is None else f" at step {step}"), fragment)
    return _link(stored, base, "replay (JSON)")


def _student_page(
    grades: GradeReport,
    grade: BotGrade,
    games: Sequence[SeatRow],
    groups: Sequence[FaultGroup],
    replays: Mapping[tuple[str, int], str],
    base: Path,
) -> str:
    facts = [f"place {grade.place} of {len(grades.students)}", f"{grade.games} games"]
    if grade.mark is not None:
        facts.insert(1, f"mark {grade.mark:.0f}")
    body = [
        _header(grade.bot, f"{grades.league}: your results", facts),
        _against_section(grade),
        _faults_section(groups, replays, base),
        _logs_section(grade, base),
        _student_games_section(games, replays, base),
    ]
    return document(f"{grade.bot}: {grades.league}", STYLES, "\n".join(body), SCRIPTS, ())


def _against_section(grade: BotGrade) -> str:
    rows = "".join(
        f'<tr><td class="bot">{escape(result.baseline)}</td><td class="num">{result.games}</td>'
        f'<td class="num">{_share(result.share)}</td><td class="num">{_number(result.mean_rank, 2)}</td></tr>'
        for result in grade.against
    )
    return (
        '<section id="against"><h2>Against each baseline</h2><table class="against"><thead><tr><th>baseline</th>'
        '<th class="num">games</th><th class="num">score share</th><th class="num">your mean rank</th></tr>'
        f"</thead><tbody>{rows}</tbody></table></section>"
    )


def _faults_section(groups: Sequence[FaultGroup], replays: Mapping[tuple[str, int], str], base: Path) -> str:
    if not groups:
        return '<section id="faults"><h2>Faults</h2><p class="good">None: your bot played every game.</p></section>'
    rows = "".join(
        f'<tr class="fault"><td class="bad">{escape(group.kind)}</td><td class="num">{group.count}×</td>'
        f'<td class="detail"><pre>{escape(without_paths(group.detail))}</pre></td>'
        f"<td>first in game {group.game_index}"
        + ("" if group.step is None else f", before action {group.step}")
        + f"<br>{_replay_link(replays, (group.match_id, group.game_index), base, group.step)}</td></tr>"
        for group in left_out(groups)[0]
    )
    more = left_out(groups)[1]
    return (
        '<section id="faults"><h2>Faults</h2><p class="muted">Faults alike (the same words but for the game, '
        "request or id they name and how late) are shown once with how many there were.</p>"
        '<table class="faults"><thead><tr><th>kind</th><th>count</th>'
        f"<th>what happened (the first)</th><th>where</th></tr></thead><tbody>{rows}</tbody></table>"
        + ("" if more is None else f'<p class="muted">{escape(more)}</p>')
        + "</section>"
    )


def _logs_section(grade: BotGrade, base: Path) -> str:
    links = [_link(log, base, f"{Path(log).parent.name}/{Path(log).name}") for log in grade.logs]
    if grade.build_log is not None:
        links.insert(0, _link(grade.build_log, base, "the build's output"))
    if not links:
        return '<section id="logs"><h2>Logs</h2><p class="muted">None: your bot never started.</p></section>'
    items = "".join(f"<li>{link}</li>" for link in links)
    said = '<p class="muted">What your bot printed, one log per match.</p>'
    return f'<section id="logs"><h2>Logs</h2>{said}<ul>{items}</ul></section>'


def _student_games_section(games: Sequence[SeatRow], replays: Mapping[tuple[str, int], str], base: Path) -> str:
    rows = "".join(
        f'<tr><td class="num">{row["game"]}</td><td>{escape(_opponents(row))}</td>'
        f'<td class="num">{row["seat"]}</td><td class="num">{row["rank"]}</td><td class="num">{row["score"]}</td>'
        f'<td class="num{" bad" if row["faults"] else ""}">{row["faults"]}'
        f"{' (forfeited)' if row['forfeited'] else ''}</td>"
        f"<td>{_replay_link(replays, (row['match'], row['game']), base, None)}</td></tr>"
        for row in games
    )
    return (
        '<section id="games"><h2>Games</h2><table class="games"><thead><tr><th class="num">game</th>'
        '<th>opponents</th><th class="num">seat</th><th class="num">rank</th><th class="num">score</th>'
        f'<th class="num">faults</th><th>replay</th></tr></thead><tbody>{rows}</tbody></table></section>'
    )


def _opponents(row: SeatRow) -> str:
    return ", ".join(bot for bot in row["seating"] if bot != row["bot"])


def _teacher_page(grades: GradeReport, students: Mapping[str, Path], out: Path) -> str:
    marks = '<th class="num">mark</th>' if _has_marks(grades) else ""
    rows = "".join(
        f'<tr data-bot="{escape(grade.bot)}"><td class="num">{grade.place}</td>'
        f'<td class="bot">{_link(students[grade.bot], out, grade.bot)}</td>{_mark_cell(grade)}'
        f'{_baseline_cells(grade)}<td class="num">{grade.games}</td>'
        f'<td class="num{" bad" if grade.fault_count else ""}">{grade.fault_count}</td>'
        f'<td class="copies">{escape(_copies_of(grades, grade.bot))}</td>'
        f"<td>{escape(' '.join(filter(None, (grade.language, grade.version))))}</td></tr>"
        for grade in grades.students
    )
    body = [
        _header(grades.league, "for the teacher", [grades.game or "", f"{grades.games} games"]),
        f'<section id="students"><h2>Students</h2><table class="teacher"><thead><tr><th class="num">#</th>'
        f'<th>student</th>{marks}{_baseline_headers(grades)}<th class="num">games</th><th class="num">faults</th>'
        f"<th>may be a copy of</th><th>bot.toml</th></tr></thead><tbody>{rows}</tbody></table></section>",
        _changed_section(grades),
        _copies_section(grades),
        _skipped_section(grades),
        _baselines_section(grades),
    ]
    return document(f"{grades.league}: for the teacher", STYLES, "\n".join(body), SCRIPTS, ())


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
    return (
        '<section id="copies"><h2>Possible copies</h2><p class="muted">Leads to look into, not verdicts: what was '
        'measured is said for each pair.</p><table class="copies"><thead><tr><th>measure</th><th>students</th>'
        f"<th>what was found</th></tr></thead><tbody>{rows}</tbody></table></section>"
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

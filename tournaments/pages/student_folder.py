"""A student's folder, to hand to that student alone (a zip, a mail, a course site): nothing in it names a
classmate or leads outside it.

    FOLDER/index.html                 the student's page: place and figure on the leaderboard, mark (or why it is
                                      uncertain), results against each baseline with their intervals, faults
                                      collapsed with a link to the step before which the first happened, logs,
                                      every game with its replay
    FOLDER/replays/MATCH-GAME.html    a replay page of each of its games (from the stored replay, JSON or page)
    FOLDER/logs/MATCH.log             what its bot printed in each match; logs/build.log, its build's output

Classmates appear under their pseudonyms (tournaments.classroom.pseudonyms), in the games table and in the
replays; baselines under their names. A replay is rewritten before it is drawn: each classmate's seat has its
pseudonym, no command and no log; a classmate's fault keeps its kind and step but not its detail (which may
quote the classmate's program and output); every command is dropped and the student's own fault details lose
the machine's paths. Every link is relative and stays in the folder; every page is self-contained
(html.document: styles and scripts inline, nothing fetched).

`write_student_folder` is the one entry point (the class pages and the ladder server call it).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import quote

from referee.replay import ReplayError, ReplayMismatch

from ..classroom.fault_groups import group_faults, left_out
from ..classroom.grading import BotGrade, GradeReport
from ..classroom.leaderboard import Figure, LeaderRow
from ..league.store import LeagueStore, SeatRow, StoredFault
from .fault_text import without_paths
from .html import AssetError, document
from .replay_page import render_replay_page
from .replay_source import load_replay

STYLES = ("page.css", "report.css", "class.css")
SCRIPTS = ("class.js",)
"""Only marks the page drawn (data-ready), as every page of this package does."""
PAGE = "index.html"
REPLAYS = "replays"
LOGS = "logs"
BUILD_LOG = "build.log"
WITHHELD = "(a classmate's fault: its detail is theirs)"


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
class StudentFolder:
    folder: Path
    page: Path
    replays: Mapping[tuple[str, int], Path]
    """(match, game) -> its replay page in the folder."""
    logs: tuple[Path, ...]


def write_student_folder(
    folder: Path,
    grades: GradeReport,
    row: LeaderRow,
    store: LeagueStore,
    pseudonyms: Mapping[str, str],
    figure: Figure = Figure.BASELINE_SHARE,
) -> StudentFolder:
    """Write `row`'s student's folder (the module's docstring) into `folder`, made if missing (its replays/ and
    logs/ are written afresh: a replay or log of a program since replaced never stays). `pseudonyms` maps every
    classmate to the name shown for them; `figure` is what the leaderboard orders by."""
    grade = row.grade
    shown = _namer(grade.bot, grades, pseudonyms)
    for made in (folder / REPLAYS, folder / LOGS):
        shutil.rmtree(made, ignore_errors=True)
        made.mkdir(parents=True)
    games = [seat for seat in store.seat_rows() if seat["bot"] == grade.bot]
    stored = store.replay_paths()
    logs = _copy_logs(grade, folder / LOGS)
    replays = {}
    for seat in games:
        key = (seat["match"], seat["game"])
        if key in stored and key not in replays:
            page = _write_replay(stored[key], grade.bot, shown, folder / REPLAYS, logs)
            if page is not None:
                replays[key] = page
    faults = [fault for fault in store.fault_list() if fault.bot == grade.bot]
    groups = fault_groups(faults, stored)
    page = folder / PAGE
    text = _student_page(grades, row, figure, games, groups, replays, logs, folder, shown)
    page.write_text(text, encoding="utf-8")
    return StudentFolder(folder, page, replays, tuple(logs.values()))


def _namer(bot: str, grades: GradeReport, pseudonyms: Mapping[str, str]) -> Callable[[str], str]:
    baselines = set(grades.baselines)

    def shown(name: str) -> str:
        return name if name == bot or name in baselines else pseudonyms.get(name, "a classmate")

    return shown


def _copy_logs(grade: BotGrade, logs: Path) -> dict[str, Path]:
    """Match id (or "build") -> the copy in `logs` of the student's log of it."""
    copies = {}
    for log in grade.logs:
        match_id = Path(log).parent.name
        target = logs / f"{match_id}.log"
        shutil.copyfile(log, target)
        copies[match_id] = target
    if grade.build_log is not None:
        shutil.copyfile(grade.build_log, logs / BUILD_LOG)
        copies["build"] = logs / BUILD_LOG
    return copies


def private_replay(replay: Mapping[str, Any], bot: str, shown: Callable[[str], str], log: str | None) -> dict[str, Any]:
    """`replay` as `bot`'s folder may hold it: names through `shown`, no commands, `bot`'s log at `log` (a path
    relative to the replay's folder) and none of the others', the others' fault details withheld."""
    mine = {seat["seat"] for seat in replay["seats"] if seat["bot"] == bot}
    seats = [
        {**seat, "bot": shown(seat["bot"]), "command": [], "log": log if seat["seat"] in mine else None}
        for seat in replay["seats"]
    ]
    faults = [
        {**fault, "bot": shown(fault.get("bot", "")), "detail": without_paths(fault.get("detail", ""))}
        if fault.get("seat") in mine
        else {**fault, "bot": shown(fault.get("bot", "")), "detail": WITHHELD, "facts": {}, "sent": None}
        for fault in replay["faults"]
    ]
    return {**replay, "seats": seats, "faults": faults}


def _write_replay(
    source: str, bot: str, shown: Callable[[str], str], replays: Path, logs: Mapping[str, Path]
) -> Path | None:
    try:
        replay = load_replay(_readable(source))
        log = logs.get(str(replay.get("match_id")))
        relative = None if log is None else f"../{LOGS}/{log.name}"
        page = replays / f"{replay.get('match_id')}-{int(replay.get('game_index', 0)):04d}.html"
        page.write_text(render_replay_page(private_replay(replay, bot, shown, relative)), encoding="utf-8")
    except (ReplayError, ReplayMismatch, AssetError, OSError):
        return None
    return page


def _readable(source: str) -> Path:
    """The stored replay's JSON if it is there, else its page (both hold the whole replay)."""
    path = Path(source)
    json_file = path.with_suffix(".json")
    return json_file if json_file.is_file() else path


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
        replay = load_replay(_readable(replay_path))
    except (ReplayError, OSError):
        return None
    for recorded in replay.get("faults", []):
        if recorded.get("seat") == fault.seat and recorded.get("kind") == fault.kind:
            step = recorded.get("before_action")
            return step if isinstance(step, int) else None
    return None


# The page.


def header(title: str, subtitle: str, facts: Sequence[str]) -> str:
    return (
        f"<header><h1>{escape(title)} <small>{escape(subtitle)}</small></h1>"
        f'<p class="facts">{escape(" · ".join(facts))}</p></header>'
    )


def share_text(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def figure_text(figure: Figure, value: float | None, low: float | None, high: float | None) -> str:
    """A leaderboard figure with its interval: "62% (55–69%)" or "+120 (+80 to +160)"."""
    if value is None:
        return "–"
    return f"{_value(figure, value)}" + ("" if low is None or high is None else f" ({_range(figure, low, high)})")


def figure_cell(figure: Figure, value: float | None, low: float | None, high: float | None) -> str:
    """`figure_text` as a table cell's HTML: the interval below the figure, small (a phone's column is narrow)."""
    if value is None:
        return '<td class="num figure">–</td>'
    interval = "" if low is None or high is None else f'<small class="interval">{_range(figure, low, high)}</small>'
    return f'<td class="num figure">{_value(figure, value)}{interval}</td>'


def _value(figure: Figure, value: float) -> str:
    return share_text(value) if figure is Figure.BASELINE_SHARE else f"{value:+.0f}"


def _range(figure: Figure, low: float, high: float) -> str:
    return f"{low:.0%}–{high:.0%}" if figure is Figure.BASELINE_SHARE else f"{low:+.0f} to {high:+.0f}"


def mark_text(grade: BotGrade) -> str:
    """The mark where it holds, else its range with a question mark ("0–40?"); "" without marks."""
    held = grade.held_mark
    if held is None:
        return ""
    return f"{held.low:g}" if held.holds else f"{held.low:g}–{held.high:g}?"


def _link(target: Path, base: Path, text: str, fragment: str = "") -> str:
    relative = target.resolve().relative_to(base.resolve()).as_posix()
    return f'<a href="{escape(quote(relative))}{escape(fragment)}">{escape(text)}</a>'


def scroll(table: str) -> str:
    """A table in a box of its own that scrolls sideways on a narrow screen (the page itself never does)."""
    return f'<div class="scroll">{table}</div>'


def _student_page(
    grades: GradeReport,
    row: LeaderRow,
    figure: Figure,
    games: Sequence[SeatRow],
    groups: Sequence[FaultGroup],
    replays: Mapping[tuple[str, int], Path],
    logs: Mapping[str, Path],
    folder: Path,
    shown: Callable[[str], str],
) -> str:
    grade = row.grade
    place = "no place (no games)" if row.place is None else f"place {row.place} of {len(grades.students)}"
    facts = [place, f"{figure.value} {figure_text(figure, row.figure, row.low, row.high)}", f"{grade.games} games"]
    body = [
        header(grade.bot, f"{grades.league}: your results", facts),
        _mark_section(grade),
        _against_section(grade),
        _faults_section(groups, replays, folder),
        _logs_section(logs, folder),
        _games_section(games, replays, folder, shown),
    ]
    return document(f"{grade.bot}: {grades.league}", STYLES, "\n".join(body), SCRIPTS, ())


def _mark_section(grade: BotGrade) -> str:
    held = grade.held_mark
    if held is None:
        return ""
    if held.holds:
        said = f'<p>Your mark: <strong class="mark">{held.low:g}</strong>.</p>'
    else:
        said = (
            f'<p>Your mark: <strong class="mark uncertain">between {held.low:g} and {held.high:g}</strong>: '
            "your games cannot yet tell which; your teacher decides (more games settle it).</p>"
            f'<p class="muted">{escape(held.note or "")}</p>'
        )
    return f'<section id="mark"><h2>Mark</h2>{said}</section>'


def _against_section(grade: BotGrade) -> str:
    rows = "".join(
        f'<tr><td class="bot">{escape(result.baseline)}</td><td class="num">{result.games}</td>'
        f'<td class="num">{share_text(result.share)}</td>'
        f'<td class="num">{"–" if result.interval is None else _interval(result.interval)}</td>'
        f'<td class="num">{"–" if result.mean_rank is None else f"{result.mean_rank:.2f}"}</td></tr>'
        for result in grade.against
    )
    table = (
        '<table class="against"><thead><tr><th>baseline</th><th class="num">games</th>'
        '<th class="num">score share</th><th class="num">95% interval</th><th class="num">your mean rank</th></tr>'
        f"</thead><tbody>{rows}</tbody></table>"
    )
    return f'<section id="against"><h2>Against each baseline</h2>{scroll(table)}</section>'


def _interval(interval: tuple[float, float]) -> str:
    return f"{interval[0]:.0%}–{interval[1]:.0%}"


def _replay_link(replays: Mapping[tuple[str, int], Path], key: tuple[str, int], base: Path, step: int | None) -> str:
    page = replays.get(key)
    if page is None:
        return '<span class="muted">no replay</span>'
    fragment = "" if step is None else f"#step={step}&view=all"
    return _link(page, base, "replay" + ("" if step is None else f" at step {step}"), fragment)


def _faults_section(groups: Sequence[FaultGroup], replays: Mapping[tuple[str, int], Path], base: Path) -> str:
    if not groups:
        return '<section id="faults"><h2>Faults</h2><p class="good">None: your bot played every game.</p></section>'
    shown, more = left_out(groups)
    rows = "".join(
        f'<tr class="fault"><td class="bad">{escape(group.kind)}</td><td class="num">{group.count}×</td>'
        f'<td class="detail"><pre>{escape(without_paths(group.detail))}</pre></td>'
        f"<td>first in game {group.game_index}"
        + ("" if group.step is None else f", before action {group.step}")
        + f"<br>{_replay_link(replays, (group.match_id, group.game_index), base, group.step)}</td></tr>"
        for group in shown
    )
    table = (
        '<table class="faults"><thead><tr><th>kind</th><th>count</th>'
        f"<th>what happened (the first)</th><th>where</th></tr></thead><tbody>{rows}</tbody></table>"
    )
    note = "" if more is None else f'<p class="muted">{escape(more)}</p>'
    return (
        '<section id="faults"><h2>Faults</h2><p class="muted">Faults alike (the same words but for the game, '
        f"request or id they name and how late) are shown once with how many there were.</p>{scroll(table)}{note}"
        "</section>"
    )


def _logs_section(logs: Mapping[str, Path], base: Path) -> str:
    links = [_link(path, base, "the build's output" if key == "build" else path.name) for key, path in logs.items()]
    if not links:
        return '<section id="logs"><h2>Logs</h2><p class="muted">None: your bot never started.</p></section>'
    items = "".join(f"<li>{link}</li>" for link in links)
    said = '<p class="muted">What your bot printed, one log per match.</p>'
    return f'<section id="logs"><h2>Logs</h2>{said}<ul>{items}</ul></section>'


def _games_section(
    games: Sequence[SeatRow], replays: Mapping[tuple[str, int], Path], base: Path, shown: Callable[[str], str]
) -> str:
    rows = "".join(
        f'<tr><td class="num">{row["game"]}</td>'
        f"<td>{escape(', '.join(shown(bot) for bot in row['seating'] if bot != row['bot']))}</td>"
        f'<td class="num">{row["seat"]}</td><td class="num">{row["rank"]}</td><td class="num">{row["score"]}</td>'
        f'<td class="num{" bad" if row["faults"] else ""}">{row["faults"]}'
        f"{' (forfeited)' if row['forfeited'] else ''}</td>"
        f"<td>{_replay_link(replays, (row['match'], row['game']), base, None)}</td></tr>"
        for row in games
    )
    table = (
        '<table class="games"><thead><tr><th class="num">game</th>'
        '<th>opponents</th><th class="num">seat</th><th class="num">rank</th><th class="num">score</th>'
        f'<th class="num">faults</th><th>replay</th></tr></thead><tbody>{rows}</tbody></table>'
    )
    return f'<section id="games"><h2>Games</h2>{scroll(table)}</section>'

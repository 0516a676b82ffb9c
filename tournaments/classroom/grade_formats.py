"""A GradeReport (tournaments.classroom.grading) as JSON or CSV: one place that decides what a grading file holds.

CSV: one row per bot, columns CSV_COLUMNS (`soft_play`: the partners with which the soft-play check flags the
bot, tournaments/ratings/soft_play.py; the JSON has every pair tested, under `soft_play`); a bot's logs in
one cell, separated by LOG_SEPARATOR; the first fault's detail in one line (`one_line`; the JSON keeps it
whole). Numbers are rounded for people, not for further computation: Elo to 0.1, means to 0.001. A text
cell a spreadsheet would run as a formula (it starts with = + - @, tab or carriage return: a bot named after
a folder `=HYPERLINK(...)`) starts with a single quote (protocol.safe_text.csv_cell).
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from protocol.safe_text import csv_cell
from referee.records import FaultKind

from ..ratings.soft_play import PairCheck, SoftPlayCheck
from .grading import BotGrade, FirstFault, GradeReport

LOG_SEPARATOR = ";"
CSV_COLUMNS = (
    "place",
    "bot",
    "baseline",
    "elo",
    "elo_low",
    "elo_high",
    "games",
    "mean_rank",
    "mean_score",
    "faults",
    *(kind.value for kind in FaultKind),
    "first_fault_kind",
    "first_fault",
    "decisions",
    "mean_ms",
    "max_ms",
    "logs",
    "soft_play",
)


def _rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def one_line(detail: str) -> str:
    """A fault's detail in one line: its first line, and the last line of the bot's output that it quotes (the
    cause of a crash is usually there: 'SyntaxError: ...', 'FileNotFoundError: ...')."""
    lines = detail.splitlines()
    if len(lines) <= 1:
        return detail
    return f"{lines[0]} {lines[-1].removeprefix('| ')}"


def _first_fault_json(first: FirstFault) -> dict[str, Any]:
    where = {"match_id": first.match_id, "game_index": first.game_index}
    return {"kind": first.kind.value, "detail": first.detail, **where}


def _bot_json(grade: BotGrade) -> dict[str, Any]:
    first = grade.first_fault
    return {
        "place": grade.place,
        "bot": grade.bot,
        "baseline": grade.baseline,
        "elo": _rounded(grade.elo, 1),
        "elo_95": None if grade.elo_low is None else [_rounded(grade.elo_low, 1), _rounded(grade.elo_high, 1)],
        "games": grade.games,
        "mean_rank": _rounded(grade.mean_rank, 3),
        "mean_score": _rounded(grade.mean_score, 3),
        "faults": {kind.value: count for kind, count in grade.faults.items()},
        "first_fault": None if first is None else _first_fault_json(first),
        "decisions": grade.decisions,
        "mean_ms": round(grade.mean_ms, 3),
        "max_ms": round(grade.max_ms, 3),
        "logs": list(grade.logs),
    }


def pair_json(pair: PairCheck) -> dict[str, Any]:
    return {
        "bot": pair.bot,
        "partner": pair.partner,
        "games": pair.games,
        "observed": round(pair.observed, 3),
        "expected": round(pair.expected, 3),
        "z": round(pair.z, 3),
        "p": pair.p_value,
        "p_holm": pair.p_adjusted,
        "flagged": pair.flagged,
    }


def soft_play_json(check: SoftPlayCheck | None) -> dict[str, Any] | None:
    """The soft-play section: the test's level, and every pair tested, the most significant first."""
    if check is None:
        return None
    return {"alpha": check.alpha, "flagged": len(check.flagged), "pairs": [pair_json(pair) for pair in check.pairs]}


def _flags_of(check: SoftPlayCheck | None, bot: str) -> str:
    """A bot's flagged pairs in one CSV cell: `partner (z +4.2, p 0.0003)` each, `;` between them."""
    if check is None:
        return ""
    return LOG_SEPARATOR.join(
        f"{pair.partner} (z {pair.z:+.2f}, p {pair.p_adjusted:.2g})" for pair in check.flagged if pair.bot == bot
    )


def grades_json(report: GradeReport) -> str:
    document = {
        "league": report.league,
        "game": report.game,
        "games": report.games,
        "bootstrap": report.bootstrap,
        "bots": [_bot_json(grade) for grade in report.bots],
        "soft_play": soft_play_json(report.soft_play),
    }
    return json.dumps(document, indent=2) + "\n"


def _csv_row(grade: BotGrade, soft_play: SoftPlayCheck | None = None) -> dict[str, Any]:
    row = _bot_json(grade)
    first = grade.first_fault
    interval = row.pop("elo_95") or [None, None]
    same = ("place", "bot", "games", "mean_rank", "mean_score", "decisions", "mean_ms", "max_ms")
    return {
        **{key: row[key] for key in same},
        "baseline": "yes" if grade.baseline else "",
        "elo": row["elo"],
        "elo_low": interval[0],
        "elo_high": interval[1],
        "faults": grade.fault_count,
        **{kind.value: count for kind, count in grade.faults.items()},
        "first_fault_kind": first.kind.value if first else "",
        "first_fault": one_line(first.detail) if first else "",
        "logs": LOG_SEPARATOR.join(grade.logs),
        "soft_play": _flags_of(soft_play, grade.bot),
    }


def grades_csv(report: GradeReport) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for grade in report.bots:
        writer.writerow({key: csv_cell(value) for key, value in _csv_row(grade, report.soft_play).items()})
    return buffer.getvalue()

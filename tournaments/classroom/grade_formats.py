"""A GradeReport (tournaments.classroom.grading) as JSON or CSV: one place that decides what a grading file holds.

CSV: one row per bot, the students in place order, then the baselines (no place); columns CSV_COLUMNS
(`soft_play`: the partners with which the soft-play check flags the bot, tournaments/ratings/soft_play.py; the
JSON has every pair tested, under `soft_play`), then mark and, per baseline B, B_games, B_share and
B_mean_rank (a student's results against it: tournaments.ratings.marks), mark_uncertain (where the shares'
intervals straddle a threshold, the marks they allow and why: "uncertain: 0-40; random: 0.62-0.79 straddles 0.7";
the mark is then empty), copies, and the language and
version its bot.toml declares; a bot's logs in one cell, separated by LOG_SEPARATOR; the first fault's detail
in one line (`one_line`; the JSON keeps it whole). A text cell a spreadsheet would run as a formula (it starts
with = + - @, tab or carriage return: a bot named after a folder `=HYPERLINK(...)`) starts with a single quote
(protocol.safe_text.csv_cell).
JSON: "bots" (the students), "baselines" (their rows apart), "skipped" (folders the league skipped, and why),
"copies" (pairs flagged: tournaments.classroom.copies; in CSV, column copies), "changed" (bots whose program
changed since their stored games: their figures are the old program's), "soft_play"; per student
"mark_range" ([low, high] the shares' intervals allow), "mark_uncertain", "share_95" (baseline -> the share's
95% interval) and "pseudonym" (the name the published pages show: tournaments.classroom.pseudonyms; also the
CSV's last column). Numbers are rounded for
people, not for further computation: Elo to 0.1, means and shares to 0.001.
"""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any

from protocol.safe_text import csv_cell
from referee.records import FaultKind

from ..ratings.soft_play import DEFAULT_EFFECT, PairCheck, SoftPlayCheck
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
        "fault_groups": [
            {
                "kind": group.kind.value,
                "detail": group.detail,
                "count": group.count,
                "games": [{"match_id": match_id, "game_index": index} for match_id, index in group.where],
            }
            for group in grade.fault_groups
        ],
        "clock_warning": grade.clock_warning,
        "build_log": grade.build_log,
        "language": grade.language,
        "version": grade.version,
        "mark": grade.mark,
        "mark_range": None if grade.held_mark is None else [grade.held_mark.low, grade.held_mark.high],
        "mark_uncertain": None if grade.held_mark is None else grade.held_mark.note,
        "share_95": {
            result.baseline: None if result.interval is None else [round(end, 3) for end in result.interval]
            for result in grade.against
        },
        "against": {
            result.baseline: {
                "games": result.games,
                "share": _rounded(result.share, 3),
                "mean_rank": _rounded(result.mean_rank, 3),
            }
            for result in grade.against
        },
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
        "effect": round(pair.effect, 1),
        "interval": [_finite(bound) for bound in pair.interval],
        "level": pair.level,
        "games_for_effect": _finite(pair.games_for(DEFAULT_EFFECT)),
    }


def _finite(value: float) -> float | None:
    """One decimal, or None for a figure the games cannot give (an infinite interval or count)."""
    return round(value, 1) if math.isfinite(value) else None


def soft_play_json(check: SoftPlayCheck | None) -> dict[str, Any] | None:
    """The soft-play section: the test's level, and every pair tested, the most significant first."""
    if check is None:
        return None
    return {
        "alpha": check.alpha,
        "effect": check.effect,
        "games_for_effect": _finite(check.games_for() or math.inf),
        "flagged": len(check.flagged),
        "pairs": [pair_json(pair) for pair in check.pairs],
    }


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
        "bots": [{**_bot_json(grade), "pseudonym": report.pseudonyms.get(grade.bot)} for grade in report.students],
        "baselines": [_bot_json(grade) for grade in report.baseline_grades],
        "skipped": list(report.skipped),
        "changed": list(report.changed),
        "copies": [
            {"kind": flag.kind.value, "bots": list(flag.bots), "figure": round(flag.figure, 3), "detail": flag.detail}
            for flag in report.copies
        ],
        "soft_play": soft_play_json(report.soft_play),
    }
    return json.dumps(document, indent=2) + "\n"


def copies_cell(report: GradeReport, bot: str) -> str:
    """The bots `bot` may be a copy of, and why, in one cell: "ann: similar code (93%); ..."."""
    cells = []
    for flag in report.copies_of(bot):
        other = flag.bots[1] if flag.bots[0] == bot else flag.bots[0]
        cells.append(f"{other}: {flag.kind.value} ({flag.figure:.0%})")
    return "; ".join(cells)


def _csv_row(grade: BotGrade, soft_play: SoftPlayCheck | None = None) -> dict[str, Any]:
    row = _bot_json(grade)
    del row["fault_groups"], row["clock_warning"], row["mark_range"], row["share_95"]
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
        "mark": "" if grade.mark is None else grade.mark,
        "mark_uncertain": row["mark_uncertain"] or "",
        **{
            f"{result.baseline}_{figure}": "" if value is None else value
            for result in grade.against
            for figure, value in row["against"][result.baseline].items()
        },
    }


def baseline_columns(baselines: tuple[str, ...]) -> tuple[str, ...]:
    """The columns of a student's results against each baseline."""
    return tuple(f"{baseline}_{figure}" for baseline in baselines for figure in ("games", "share", "mean_rank"))


def grades_csv(report: GradeReport) -> str:
    buffer = io.StringIO()
    columns = (
        *CSV_COLUMNS,
        "mark",
        "mark_uncertain",
        *baseline_columns(report.baselines),
        "copies",
        "language",
        "version",
        "pseudonym",
    )
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n", restval="")
    writer.writeheader()
    for grade in report.bots:
        extra = {
            "copies": copies_cell(report, grade.bot),
            "language": grade.language,
            "version": grade.version,
            "pseudonym": report.pseudonyms.get(grade.bot, ""),
        }
        row = {**_csv_row(grade, report.soft_play), **extra}
        writer.writerow({key: csv_cell(value) for key, value in row.items()})
    return buffer.getvalue()

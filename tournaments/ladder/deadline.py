"""The deadline: a snapshot of every student's last accepted version (on time), the ladder frozen, a final run
that settles the table among them (the scheduler keeps playing their tables: tournaments.ladder.scheduling), and
the marks (tournaments.ratings.marks: each student's score share against each baseline, the league file's
[marks]) exported as CSV and as Gradescope results, with the student's Elo as its leaderboard entry."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from sqlalchemy import Connection, delete, insert, select, update

from protocol.safe_text import csv_cell
from tournaments.classroom import gradescope
from tournaments.classroom.grade_formats import baseline_columns
from tournaments.ratings.marks import against_baselines, mark_of

from . import schema
from .database import now
from .entrants import games_among
from .fit import Fit
from .ladder_file import LadderFile
from .values import MarkRow, VersionStatus


def take_snapshot(connection: Connection) -> int:
    """Freeze the ladder with each student's last accepted on-time version; how many students have one."""
    rows = connection.execute(
        select(schema.versions.c.id, schema.versions.c.student)
        .where(schema.versions.c.status == VersionStatus.ACCEPTED.value, schema.versions.c.late.is_(False))
        .order_by(schema.versions.c.created, schema.versions.c.id)
    )
    last = {row.student: row.id for row in rows}
    connection.execute(delete(schema.snapshot))
    if last:
        connection.execute(
            insert(schema.snapshot), [{"student": student, "version_id": version} for student, version in last.items()]
        )
    connection.execute(update(schema.state).values(frozen=True, snapshot_at=now()))
    return len(last)


def snapshot_versions(connection: Connection) -> dict[str, str]:
    """Student -> their snapshot version."""
    return {row.student: row.version_id for row in connection.execute(select(schema.snapshot))}


def marks(connection: Connection, file: LadderFile, fit: Fit) -> list[MarkRow]:
    """Every invited student's mark from their snapshot version's games against the baselines (no snapshot
    version: no mark)."""
    baselines = tuple(bot.name for bot in file.league.bots)
    chosen = snapshot_versions(connection)
    students = connection.execute(select(schema.students.c.name).order_by(schema.students.c.name)).scalars().all()
    games = [_Ranked(ranks) for ranks in games_among(connection, [*chosen.values(), *baselines])]
    elo = {bot.bot: bot.elo for bot in fit.ratings.bots}
    rows = []
    for student in students:
        version = chosen.get(student)
        if version is None:
            rows.append(MarkRow(student, None, None, {}, 0, None))
            continue
        results = against_baselines(games, version, baselines)
        rows.append(
            MarkRow(
                student,
                version,
                mark_of(results, file.league.marks),
                {result.baseline: result.share for result in results},
                sum(version in game.ranks for game in games),
                elo.get(version),
            )
        )
    return rows


class _Ranked:
    def __init__(self, ranks: dict[str, int]) -> None:
        self.ranks = ranks


def marks_csv(rows: Sequence[MarkRow], baselines: Sequence[str]) -> str:
    buffer = io.StringIO()
    shares = [column for column in baseline_columns(tuple(baselines)) if column.endswith("_share")]
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["student", "version", "mark", "elo", "games", *shares])
    for row in rows:
        cells = [row.student, row.version_id or "", _number(row.mark), _number(row.elo), row.games]
        cells += [_number(row.shares.get(baseline)) for baseline in baselines]
        writer.writerow([csv_cell(cell) for cell in cells])
    return buffer.getvalue()


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}".rstrip("0").rstrip(".")


def gradescope_results(row: MarkRow, file: LadderFile) -> gradescope.GradescopeResults:
    """A student's Gradescope results.json: their mark as one test out of the highest mark of [marks]."""
    top = max((mark for thresholds in file.league.marks.values() for _, mark in thresholds), default=0.0)
    against = ", ".join(
        f"{baseline}: {'no games' if share is None else f'{share:.0%}'}" for baseline, share in row.shares.items()
    )
    output = (
        f"version {row.version_id}; score share against the baselines: {against}"
        if row.version_id
        else ("no accepted version before the deadline")
    )
    test: gradescope.GradescopeTest = {
        "name": "ladder mark against the baselines",
        "status": (gradescope.Status.PASSED if (row.mark or 0) > 0 else gradescope.Status.FAILED).value,
        "score": row.mark or 0.0,
        "max_score": top,
        "output": output,
    }
    board: list[gradescope.LeaderboardEntry] = (
        [{"name": "Elo", "value": round(row.elo, 1), "order": "desc"}] if row.elo is not None else []
    )
    return gradescope.results([test], output, 0.0, "full", board)

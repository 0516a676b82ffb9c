"""A league's stored games as rows for spreadsheets and graders: one row per game and seat.

    write_rows(store.seat_rows(), ExportFormat.CSV, sys.stdout)

Columns (tournaments.league.store.SeatRow): match, game (its index in the match), seed (of the deal), seat, seating
(the bots in seat order), bot, rank (1 best; a forfeit ranks last), score (a forfeit scores the table's
lowest), forfeited, faults (the seat's faults in that game), decisions, mean_ms, max_ms (decision times on the
referee's clock). In CSV the seating is a JSON array and forfeited is 0 or 1; in JSON lines each row is an
object with those keys. A CSV text cell that starts with = + - @, tab or carriage return starts with a single
quote, so that a spreadsheet shows it instead of running it (protocol.safe_text.csv_cell).
"""

from __future__ import annotations

import csv
import enum
import json
from collections.abc import Iterable
from typing import TextIO

from protocol.errors import EnvironmentProblem
from protocol.safe_text import csv_cell

from .league.store import SeatRow

COLUMNS = tuple(SeatRow.__annotations__)


class ExportFormat(enum.StrEnum):
    CSV = "csv"
    JSONL = "jsonl"


class ExportWriteError(EnvironmentProblem, OSError):
    """An export file that could not be written (no such folder, no permission, a full disk)."""

    def __init__(self, path: str, error: OSError) -> None:
        super().__init__(f"cannot write {path!r}: {error.strerror}")
        self.errno = error.errno


def write_rows(rows: Iterable[SeatRow], export_format: ExportFormat, out: TextIO) -> int:
    """Write `rows` to `out` in `export_format` (CSV with a header line); returns the number of rows written."""
    if export_format is ExportFormat.JSONL:
        return _write_jsonl(rows, out)
    return _write_csv(rows, out)


def write_rows_to(path: str, rows: Iterable[SeatRow], export_format: ExportFormat) -> int:
    """Write `rows` into the file at `path` as write_rows does; ExportWriteError if it cannot be written."""
    try:
        with open(path, "w", newline="", encoding="utf-8") as out:
            return write_rows(rows, export_format, out)
    except OSError as error:
        raise ExportWriteError(path, error) from error


def _write_csv(rows: Iterable[SeatRow], out: TextIO) -> int:
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    count = 0
    for row in rows:
        cells = {**row, "seating": json.dumps(row["seating"]), "forfeited": int(row["forfeited"])}
        writer.writerow({key: csv_cell(value) for key, value in cells.items()})
        count += 1
    return count


def _write_jsonl(rows: Iterable[SeatRow], out: TextIO) -> int:
    count = 0
    for row in rows:
        out.write(json.dumps(row, separators=(",", ":")) + "\n")
        count += 1
    return count

"""Possible copies among the ladder's students, for staff: the class copies check's code measures
(tournaments.classroom.copies: similar code once the base code is removed, identical programs) over each
student's current accepted version (the one on the table), read from the versions store. Leads, never verdicts:
each says what was compared and what was found.

The base code is the classroom's (every scaffold, the tutorial's code) and the ladder file's `[copies] base`.
The measure of choices (the position bank) runs the bots, so it is not done here. Nothing is stored in the
database: each version's fingerprints are kept in memory by digest, and the report by the set of versions
compared, so a page load with no new accepted version redoes nothing."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Connection, select

from tournaments.classroom.base_code import FolderPrints, base_prints, folder_prints
from tournaments.classroom.copies import CopyFlag, CopyKind, identical_programs, similar_code

from . import schema
from .values import VersionStatus


@dataclass(frozen=True)
class Compared:
    """A student's version that was compared."""

    student: str
    version: str
    digest: str


@dataclass(frozen=True)
class CopyLead:
    kind: CopyKind
    students: tuple[str, str]
    """In name order."""
    versions: tuple[str, str]
    share: float
    """1 for identical programs, else the share of the smaller version's fingerprints (base code removed)."""
    files: tuple[tuple[str, ...], tuple[str, ...]]
    """Each student's files that hold what the two share."""
    reason: str
    """What was compared and found, in words ("shares 212 of 230 fingerprints after the base code is removed...")."""


@dataclass(frozen=True)
class CopiesReport:
    leads: tuple[CopyLead, ...]
    compared: tuple[str, ...]
    """What was compared, a line for the measure and one for each student's version."""


def current_versions(connection: Connection) -> list[Compared]:
    """Each student's last accepted version (the one on the table), by student name."""
    rows = connection.execute(
        select(schema.versions.c.id, schema.versions.c.student, schema.versions.c.digest)
        .where(schema.versions.c.status == VersionStatus.ACCEPTED.value)
        .order_by(schema.versions.c.created, schema.versions.c.id)
    )
    last = {row.student: Compared(row.student, row.id, row.digest) for row in rows}
    return [last[name] for name in sorted(last)]


class CopiesCache:
    """The fingerprints of each version by digest and the last report by the versions it compared (one per
    Ladder; the server's threads share it)."""

    def __init__(self, store: Path, base: Sequence[Path]) -> None:
        self._store = store
        self._base_paths = tuple(base)
        self._base: frozenset[int] | None = None
        self._prints: dict[str, FolderPrints] = {}
        self._report: tuple[tuple[Compared, ...], CopiesReport] | None = None
        self._lock = threading.Lock()

    def report(self, current: Sequence[Compared]) -> CopiesReport:
        key = tuple(current)
        with self._lock:
            if self._report is None or self._report[0] != key:
                self._report = (key, self._compare(key))
            return self._report[1]

    def _compare(self, current: Sequence[Compared]) -> CopiesReport:
        if self._base is None:
            self._base = base_prints(self._base_paths)
        found = {item.student: item for item in current if (self._store / item.digest).is_dir()}
        prints = {name: self._folder(item.digest) for name, item in found.items()}
        self._prints = {item.digest: prints[name] for name, item in found.items()}
        similar, kept = similar_code(prints, self._base)
        identical = identical_programs({name: item.digest for name, item in found.items()}, kept)
        same = {flag.bots for flag in identical}
        flags = [*identical, *(flag for flag in similar if flag.bots not in same)]
        leads = tuple(_lead(flag, found, prints, kept) for flag in flags)
        base_words = "the scaffolds of every language, the tutorial's code" + "".join(
            f", {path.name}" for path in self._base_paths
        )
        missing = sorted(item.student for item in current if item.student not in found)
        lines = (
            f"code: every text file of {len(prints)} student(s)' current accepted version, after removing the base "
            f"code ({base_words}) and code shared by more than a quarter of the class",
            *(f"  {name} ({found[name].version}): {prints[name].summary()}" for name in sorted(prints)),
            *([f"not compared (no copy in the versions store): {', '.join(missing)}"] if missing else []),
        )
        return CopiesReport(leads, lines)

    def _folder(self, digest: str) -> FolderPrints:
        if digest not in self._prints:
            self._prints[digest] = folder_prints(self._store / digest)
        return self._prints[digest]


def _lead(
    flag: CopyFlag,
    found: Mapping[str, Compared],
    prints: Mapping[str, FolderPrints],
    kept: Mapping[str, frozenset[int]],
) -> CopyLead:
    first, second = flag.bots
    if flag.kind is CopyKind.IDENTICAL:
        files = (tuple(prints[first].files), tuple(prints[second].files))
    else:
        shared = kept[first] & kept[second]
        files = (prints[first].holding(shared), prints[second].holding(shared))
    versions = (found[first].version, found[second].version)
    return CopyLead(flag.kind, flag.bots, versions, flag.figure, files, flag.detail)

"""Identical faults told once, with a count: a bot that crashes the same way in 30 games gets one line, not 30
tracebacks.

Two faults are the same when their cause is and their facts are (referee.records.FaultFacts), but for the facts
that only say where they happened (the game, the request, the id a reply named) or how late (the time allowed and
taken): `WHERE`. The words inside the facts that come from elsewhere are compared with those numbers set aside
too: another part's reason (`note`) whole, and of the bot's last output only its last line, where a program that
exits says why (Python's exception, a sys.exit message): the lines before it are what the bot printed along the
way, which differ from game to game in a bot that prints at every decision (its hand, its choice), and would
make every crash its own group. A process killed by a signal or at its memory limit was ended by that, which the
facts hold: its output is not compared at all. A fault stored before causes were (an older store's) has only its
words: those are compared the same way. The first fault of a group stands for it, its output whole.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Collection, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from referee.records import FaultCause, FaultFacts, FaultKind

WHERE = ("request_id", "game", "other_id", "allowed_ms", "answered_ms", "waited_ms")
"""The facts that say where a fault happened or how late, not what it was."""

ENDED_BY_FACTS = frozenset({FaultCause.KILLED_BY_SIGNAL, FaultCause.MEMORY_LIMIT})
"""Causes whose facts say why the process ended (the signal, the limit): its output tells no two apart."""

_WHERE_WORDS = re.compile(r"\b(game|request|id|decision) \d+|\b[\d,.]+ ms\b")

MOST_GROUPS_SHOWN = 20
"""A page lists at most this many groups of one bot's faults, largest first, and counts the rest: its size stays
bounded (each group's words quote at most referee.isolation.process.OUTPUT_TAIL_LINES lines of output) however
varied its faults."""

W = TypeVar("W")


class Counted(Protocol):
    @property
    def count(self) -> int: ...


G = TypeVar("G", bound=Counted)


class Told(Protocol):
    """A fault as a referee record (referee.records.Fault) or a stored row (tournaments.league.store.StoredFault)
    holds it."""

    @property
    def kind(self) -> FaultKind | str: ...

    @property
    def detail(self) -> str: ...

    @property
    def cause(self) -> FaultCause | None: ...

    @property
    def facts(self) -> FaultFacts | None: ...


@dataclass(frozen=True)
class FaultGroup(Generic[W]):
    kind: FaultKind
    detail: str
    """The first fault's."""
    where: tuple[W, ...]
    """Where each happened (a game index, a (match, game) pair: what the caller gave), in order."""

    @property
    def count(self) -> int:
        return len(self.where)


def without_where(words: str) -> str:
    """Words with the numbers that say where or how late (`game 3`, `request 17`, `id 16`, `1,234 ms`) set aside."""
    return _WHERE_WORDS.sub(lambda match: match.group(1) or "ms", words)


def same_fault_key(
    fault: Told, where: Collection[str] = WHERE, words: Callable[[str], str] = without_where
) -> Hashable:
    """What two faults share when they are the same: the cause and the facts but `where`, the words within them
    passed through `words` (of the output, its last line alone: see the module's docstring); for a fault without
    a cause or facts (stored before them), its kind and its words."""
    facts = fault.facts
    if fault.cause is None or facts is None:
        return FaultKind(fault.kind), words(fault.detail)
    unset: dict[str, Any] = dict.fromkeys(where)
    last = facts.output[-1:] if fault.cause not in ENDED_BY_FACTS else ()
    kept = dataclasses.replace(
        facts,
        **unset,
        note=None if facts.note is None else words(facts.note),
        output=tuple(words(line) for line in last),
    )
    return fault.cause, kept


def group_faults(faults: Iterable[tuple[Told, W]]) -> tuple[FaultGroup[W], ...]:
    """(fault, where) pairs grouped, the groups in the order of their first fault."""
    groups: dict[Hashable, tuple[FaultKind, str, list[W]]] = {}
    for fault, where in faults:
        key = same_fault_key(fault)
        if key not in groups:
            groups[key] = (FaultKind(fault.kind), fault.detail, [])
        groups[key][2].append(where)
    return tuple(FaultGroup(kind, detail, tuple(where)) for kind, detail, where in groups.values())


def left_out(groups: Sequence[G], most: int = MOST_GROUPS_SHOWN) -> tuple[list[G], str | None]:
    """The groups a page lists (the `most` largest, in their order) and a line for the rest, None without any."""
    if len(groups) <= most:
        return list(groups), None
    ranked = sorted(range(len(groups)), key=lambda index: -groups[index].count)[:most]
    rest = [group for index, group in enumerate(groups) if index not in ranked]
    faults = sum(group.count for group in rest)
    line = f"and {len(rest)} more kinds of fault ({faults} fault{'s' * (faults != 1)}), not listed: the logs hold them"
    return [groups[index] for index in sorted(ranked)], line

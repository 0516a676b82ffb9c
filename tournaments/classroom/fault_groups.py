"""Identical faults told once, with a count: a bot that crashes the same way in 30 games gets one line, not 30
tracebacks.

Two faults are the same when their kind is and their details are, but for the numbers that only say where they
happened (`game 3`, `request 17`, `id 16`) or how late (`after 1,234 ms`). The first one's detail stands for
the group.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

from referee.records import FaultKind

_WHERE = re.compile(r"\b(game|request|id|decision) \d+|\b[\d,.]+ ms\b")

W = TypeVar("W")


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


def same_fault_key(kind: FaultKind, detail: str) -> tuple[FaultKind, str]:
    return kind, _WHERE.sub(lambda match: match.group(1) or "ms", detail)


def group_faults(faults: Iterable[tuple[FaultKind, str, W]]) -> tuple[FaultGroup[W], ...]:
    """(kind, detail, where) triples grouped, the groups in the order of their first fault."""
    groups: dict[tuple[FaultKind, str], tuple[FaultKind, str, list[W]]] = {}
    for kind, detail, where in faults:
        key = same_fault_key(kind, detail)
        if key not in groups:
            groups[key] = (kind, detail, [])
        groups[key][2].append(where)
    return tuple(FaultGroup(kind, detail, tuple(where)) for kind, detail, where in groups.values())

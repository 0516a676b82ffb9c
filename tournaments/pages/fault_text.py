"""Fault details for people: without the organiser's folders, and identical ones counted once.

A detail may quote a bot's output (a traceback names the files of the machine that ran it): every absolute path
is shown as its file name. Faults that say the same thing (the same bot, cause and facts, once the game and the
request they name and how late set aside: tournaments.classroom.fault_groups.same_fault_key) are one group with a
count and the list of where they happened, so 124 identical crashes take one row, not 124.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field

from ..classroom.fault_groups import same_fault_key
from ..league.store import StoredFault

_PATH = re.compile(r"(?<![\w.~])(?:/[^\s/'\"`:,;()\[\]<>|]+){2,}")
_NUMBERS = re.compile(r"\b(game|request) \d+")


def without_paths(detail: str) -> str:
    """`detail` with each absolute path (two parts or more) replaced by its last part, the file name."""
    return _PATH.sub(lambda found: found.group(0).rsplit("/", 1)[-1], detail)


@dataclass
class FaultGroup:
    bot: str
    kind: str
    detail: str
    """The first fault's detail, without paths; once the group holds details that differ in their game or request
    numbers, those numbers are shown as #."""
    faults: list[StoredFault] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.faults)


def _shown(words: str) -> str:
    """Words as a group shows them when its faults' numbers differ: no paths, game and request numbers as #."""
    return _NUMBERS.sub(r"\1 #", without_paths(words))


def fault_groups(faults: Iterable[StoredFault]) -> list[FaultGroup]:
    """The faults grouped by bot, cause and facts (the game and request aside), largest group first, ties in the
    order of their first fault."""
    groups: dict[tuple[str, Hashable], FaultGroup] = {}
    for fault in faults:
        detail = without_paths(fault.detail)
        pattern = _NUMBERS.sub(r"\1 #", detail)
        key = same_fault_key(fault, words=_shown)
        group = groups.setdefault((fault.bot, key), FaultGroup(fault.bot, fault.kind, detail))
        if detail != group.detail:
            group.detail = pattern
        group.faults.append(fault)
    return sorted(groups.values(), key=lambda group: -group.count)

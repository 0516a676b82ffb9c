"""The library's errors have one root: every exception class defined in referee, protocol, tournaments and the
Python bots derives from protocol.errors.RefereeError through at most one kind, and no two share a name.

Read from the imported modules (pkgutil walks every one), so a class is seen with the bases it really has.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections import Counter

import pytest

from protocol.errors import BadInput, BotFault, EnvironmentProblem, RefereeError

PACKAGES = ("referee", "protocol", "tournaments", "bots")
KINDS = (BadInput, BotFault, EnvironmentProblem)

DELIBERATE = {
    "tournaments.cli.signals.Terminated": "SIGTERM raised as a KeyboardInterrupt so that it unwinds as Ctrl-C "
    "does: a signal, not an error",
    "tournaments.league.executors._Stopping": "a league worker's stop signal raised as SystemExit in its main "
    "thread, so that the match's cleanup runs: a signal, not an error",
    "tournaments.pages.writer.PageWarning": "a warning category, issued through warnings.warn and never raised",
    "bots.python.human.terminal.LeftTheGame": "control flow inside the human seat's own program: the person "
    "closed the input, which ends its session normally and never leaves that process",
}
"""Exception classes that are not the library's errors, each with why."""

FAMILIES = {
    "referee.games.base.GameError": "a rules engine's errors: a bad config or game name is BadInput, an illegal "
    "action a BotFault",
    "tournaments.league.store.StoreError": "raised as itself both for a file that is no store (bad input) and for "
    "a database that fails under it (a full disk, a lock held too long); its subclasses are BadInput",
    "tournaments.ladder.errors.LadderError": "the ladder's errors, which the server maps to HTTP statuses by class: "
    "most are BadInput, a database that cannot be opened an EnvironmentProblem",
}
"""RefereeError subclasses with no kind of their own, each with why: their subclasses' kinds differ."""


def _modules() -> list[str]:
    names = []
    for package in PACKAGES:
        path = importlib.import_module(package).__path__
        names += [package, *(info.name for info in pkgutil.walk_packages(path, f"{package}."))]
    return names


def _exception_classes() -> dict[str, type[BaseException]]:
    """Every exception class the project's modules define, by its dotted name."""
    found = {}
    for name in _modules():
        for value in vars(importlib.import_module(name)).values():
            if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == name:
                found[f"{name}.{value.__qualname__}"] = value
    return found


CLASSES = _exception_classes()


def test_the_walk_sees_the_library_and_the_bots() -> None:
    one_of_each_package = {
        "referee.games.base.IllegalAction",
        "protocol.codec.ProtocolViolation",
        "tournaments.league.store.StoreError",
        "bots.python.scauver_search.InconsistentObservation",
    }
    assert one_of_each_package <= CLASSES.keys()


def test_every_exception_class_derives_from_the_root() -> None:
    outside = [name for name, cls in CLASSES.items() if not issubclass(cls, RefereeError) and name not in DELIBERATE]
    assert outside == [], "derive these from a kind in protocol.errors (or list them in DELIBERATE with why)"


@pytest.mark.parametrize("name", sorted(DELIBERATE))
def test_each_deliberate_exception_is_still_there_and_outside(name: str) -> None:
    assert name in CLASSES, f"{name} is gone: drop it from DELIBERATE"
    assert not issubclass(CLASSES[name], RefereeError), f"{name} derives from RefereeError: drop it from DELIBERATE"


def test_each_error_has_exactly_one_kind_unless_it_is_a_family() -> None:
    wrong = {}
    for name, cls in CLASSES.items():
        if not issubclass(cls, RefereeError) or cls in (RefereeError, *KINDS):
            continue
        kinds = [kind.__name__ for kind in KINDS if issubclass(cls, kind)]
        if len(kinds) != (0 if name in FAMILIES else 1):
            wrong[name] = kinds
    assert wrong == {}, "one kind each (a family, in FAMILIES, has none of its own)"


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_each_family_has_subclasses_of_a_kind(name: str) -> None:
    family = CLASSES[name]
    assert family.__bases__ == (RefereeError,)
    assert any(issubclass(cls, family) and issubclass(cls, KINDS) for cls in CLASSES.values())


def test_no_two_exception_classes_share_a_name() -> None:
    counts = Counter(cls.__name__ for cls in CLASSES.values())
    assert [name for name, count in counts.items() if count > 1] == []

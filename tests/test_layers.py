"""The house's floors and rooms: data flows one way, and each room imports only the rooms its __init__ names.

Read from the source (every import statement, relative ones resolved), so a lazy import inside a function
counts as much as one at the top.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

LOWER = {"protocol", "referee.games", "referee.isolation", "referee.wire", "referee"}
JOINED = LOWER | {"tournaments.league", "tournaments.ratings", "tournaments"}
_ROOMS: dict[str, set[str]] = {
    "protocol": set(),
    "referee.games": set(),
    "referee.games.rl": {"referee.games"},
    "referee.isolation": {"protocol"},
    "referee.wire": {"protocol"},
    "referee": {"protocol", "referee.games", "referee.isolation", "referee.wire"},
    "bots": {"protocol", "referee.games", "referee.games.rl"},
    "tournaments.league": LOWER,
    "tournaments.ratings": {"referee.games"},
    "tournaments": LOWER | {"tournaments.league", "tournaments.ratings"},
    "tournaments.classroom": JOINED,
    "tournaments.pages": JOINED | {"tournaments.classroom"},
    "tournaments.bench": JOINED | {"referee.games.rl", "tournaments.ladder", "tournaments.server"},
    "tournaments.ladder": JOINED | {"tournaments.classroom"},
    "tournaments.cli": JOINED
    | {"tournaments.classroom", "tournaments.pages", "tournaments.bench", "tournaments.ladder", "bots"}
    | {"tournaments.server"},
    "tournaments.server": JOINED | {"tournaments.classroom", "tournaments.pages", "tournaments.ladder"},
}
ALLOWED: dict[str, set[str]] = {"protocol.errors": set()} | {
    room: rooms | {"protocol.errors"} for room, rooms in _ROOMS.items()
}
"""Each room and the rooms it may import besides itself: the errors' root is below them all."""

PROJECT = ("protocol", "referee", "bots", "tournaments")


def room_of(module: str) -> str:
    """The longest room name that `module` is in."""
    parts = module.split(".")
    for length in range(len(parts), 0, -1):
        candidate = ".".join(parts[:length])
        if candidate in ALLOWED:
            return candidate
    raise AssertionError(f"{module} is in no room")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> Iterator[str]:
    """Every project module `path` imports, relative imports resolved."""
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                yield ".".join(base + ([node.module] if node.module else []))
            else:
                yield node.module or ""


def product_files() -> list[Path]:
    return sorted(path for top in PROJECT for path in (ROOT / top).rglob("*.py") if ".venv" not in path.parts)


def test_every_import_goes_to_an_allowed_room() -> None:
    wrong = []
    for path in product_files():
        room = room_of(module_name(path))
        for imported in imported_modules(path):
            if imported.split(".")[0] in PROJECT and (target := room_of(imported)) not in ALLOWED[room] | {room}:
                wrong.append(f"{module_name(path)} ({room}) imports {imported} ({target})")
    assert not wrong, "\n".join(wrong)


def test_the_floors_keep_few_loose_modules_and_several_rooms() -> None:
    for floor in ("referee", "tournaments"):
        loose = [path.name for path in (ROOT / floor).glob("*.py") if path.name != "__init__.py"]
        rooms = [path for path in (ROOT / floor).iterdir() if (path / "__init__.py").is_file()]
        assert len(loose) <= 8, (floor, loose)
        assert len(rooms) >= 3, (floor, rooms)


def test_every_room_says_what_it_is_for() -> None:
    for room in ALLOWED:
        init = ROOT / room.replace(".", "/") / "__init__.py"
        if init.is_file():
            assert ast.get_docstring(ast.parse(init.read_text())), f"{init} has no docstring"

"""Turning a BOT argument into a command line: a built-in name, a path to a program or script, or shell words.

random, scout-heuristic, scauver-heuristic  -> sys.executable -m bots.python.<module>
scout-search                                -> the same, for the search bot (bots/python/scout_search.py)
heuristic, search                           -> the heuristic (search) bot of the game being played
path/to/bot.py                              -> sys.executable path/to/bot.py
path/to/bot (executable)                    -> path/to/bot
"node bots/js/random.js --fast"             -> the shell words, whose program must exist
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from referee.records import BotSpec

BUILT_IN_MODULES = {
    "random": "bots.python.random_bot",
    "scout-heuristic": "bots.python.scout_heuristic",
    "scauver-heuristic": "bots.python.scauver_heuristic",
    "scout-search": "bots.python.scout_search",
}
GAME_HEURISTIC = "heuristic"
GAME_SEARCH = "search"


class UnknownBot(ValueError):
    """A BOT argument that names no built-in bot, no program and no runnable command."""


def _built_in(name: str) -> BotSpec:
    module = BUILT_IN_MODULES[name]
    if importlib.util.find_spec(module) is None:
        raise UnknownBot(f"the built-in bot {name!r} is not installed (no module {module})")
    return BotSpec(name, (sys.executable, "-m", module))


def _program(path: Path, rest: Sequence[str]) -> tuple[str, ...]:
    if path.is_dir():
        raise UnknownBot(f"{str(path)!r} is a directory, not a bot program")
    if path.suffix == ".py":
        return (sys.executable, str(path), *rest)
    if not os.access(path, os.X_OK):
        raise UnknownBot(f"{str(path)!r} is not executable (chmod +x it, or run it through its interpreter)")
    return (str(path), *rest)


def resolve_bot(argument: str, game: str) -> BotSpec:
    """The BotSpec of one BOT argument, or UnknownBot saying why there is none."""
    if not argument.strip():
        raise UnknownBot("an empty bot command")
    if argument in (GAME_HEURISTIC, GAME_SEARCH):
        kind = argument
        argument = f"{game}-{kind}"
        if argument not in BUILT_IN_MODULES:
            raise UnknownBot(f"there is no built-in {kind} bot for {game!r}")
    if argument in BUILT_IN_MODULES:
        return _built_in(argument)
    path = Path(argument)
    if path.exists():
        return BotSpec(path.stem, _program(path.resolve(), ()))
    try:
        words = shlex.split(argument)
    except ValueError as error:
        raise UnknownBot(f"cannot split the bot command {argument!r}: {error}") from None
    program = words[0]
    if "/" in program:
        if not Path(program).exists():
            raise UnknownBot(f"no such bot program: {program!r}")
        command = _program(Path(program).resolve(), words[1:])
    elif shutil.which(program) is None:
        known = ", ".join([*BUILT_IN_MODULES, GAME_HEURISTIC, GAME_SEARCH])
        raise UnknownBot(f"no bot {argument!r}: not a built-in ({known}), not a file, and {program!r} is not on PATH")
    else:
        command = tuple(words)
    return BotSpec(Path(words[-1] if len(words) > 1 else program).stem or program, command)


def unique_names(specs: Sequence[BotSpec]) -> tuple[BotSpec, ...]:
    """The same specs, with repeated names told apart: random, random -> random#1, random#2."""
    counts = Counter(spec.name for spec in specs)
    seen: Counter[str] = Counter()
    renamed = []
    for spec in specs:
        if counts[spec.name] == 1:
            renamed.append(spec)
            continue
        seen[spec.name] += 1
        renamed.append(BotSpec(f"{spec.name}#{seen[spec.name]}", spec.command, spec.cwd))
    return tuple(renamed)

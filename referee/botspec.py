"""Turning a BOT argument into a command line: a built-in name, a path to a program or script, or shell words.

random, scout-heuristic, scauver-heuristic  -> sys.executable -m bots.python.<module>
scout-search, scauver-search                -> the same, for the search bots (bots/python/scout_search.py,
                                               bots/python/scauver_search.py)
heuristic, search                           -> the heuristic (search) bot of the game being played
path/to/bot.py                              -> sys.executable path/to/bot.py
path/to/bot (executable)                    -> path/to/bot
"node bots/js/random.js --fast"             -> the shell words, whose program must exist
policy:FILE.npz, policy:FILE.onnx           -> sys.executable -m bots.python.policy_bot --policy FILE: a
                                               trained policy (docs/tutorials/train-a-policy.md)
policy:FILE.py[:FUNCTION]                   -> the same with --choose FILE.py [--function FUNCTION]: any
                                               choose(observation, legal_actions) function as a bot
stdio:BOT                                   -> BOT (any of the above) behind the stdio bridge
                                               (protocol/stdio_bridge.py: JSON lines on its stdin/stdout)
"path/.venv/bin/python bot.py"              -> the same words: that venv's Python runs the bot
human                                       -> sys.executable -m bots.python.human --tty TERMINAL, untimed:
                                               a person plays the seat at TERMINAL (only where one is given)
remote:NAME                                 -> a seat played from another machine with the key NAME
                                               (referee.wire.remote_seats; `referee play --listen`)

The name a BOT gets here is its program's name, never one of its arguments: a built-in's name; a path's file
name without its suffix; for shell words, the program's, or, when the program is an interpreter (python3,
node, sh, java, awk, ...), that of the first word after it that names a file (or the module of `-m`).

A bare `bot.py` runs under the Python that runs the referee (sys.executable, in the referee's virtual
environment). Paths become absolute but keep their symlinks: a virtual environment's `bin/python` is a
symlink to its base interpreter, and only when started by its own path does Python use the environment.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import re
import shlex
import shutil
import sys
import unicodedata
from collections import Counter
from collections.abc import Collection, Sequence
from pathlib import Path

from protocol.curve_keys import REFEREE_KEY, KeyFileError, check_name
from protocol.errors import BadInput
from protocol.safe_text import invisible_characters, skeleton
from referee.records import BotSpec
from referee.wire.remote_seats import REMOTE_PREFIX

BUILT_IN_MODULES = {
    "random": "bots.python.random_bot",
    "scout-heuristic": "bots.python.scout_heuristic",
    "scauver-heuristic": "bots.python.scauver_heuristic",
    "scout-search": "bots.python.scout_search",
    "scauver-search": "bots.python.scauver_search",
}
GAME_HEURISTIC = "heuristic"
GAME_SEARCH = "search"
HUMAN = "human"
HUMAN_MODULE = "bots.python.human"
POLICY_PREFIX = "policy:"
POLICY_MODULE = "bots.python.policy_bot"
STDIO_PREFIX = "stdio:"
STDIO_BRIDGE_MODULE = "protocol.stdio_bridge"
_INTERPRETER = re.compile(
    r"(python|pypy|node|nodejs|deno|bun|sh|bash|dash|zsh|ksh|awk|gawk|mawk|perl|ruby|php|lua|java|Rscript|julia)"
    r"[0-9.]*"
)


class UnknownBot(BadInput, ValueError):
    """A BOT argument that names no built-in bot, no program and no runnable command."""


def _built_in(name: str) -> BotSpec:
    module = BUILT_IN_MODULES[name]
    if importlib.util.find_spec(module) is None:
        raise UnknownBot(f"the built-in bot {name!r} is not installed (no module {module})")
    return BotSpec(name, (sys.executable, "-m", module))


def _absolute(path: Path) -> Path:
    """`path` made absolute, its symlinks kept: a virtual environment's python is a symlink whose target runs
    without the environment's packages."""
    return Path(os.path.abspath(path))


def _program(path: Path, rest: Sequence[str]) -> tuple[str, ...]:
    if path.is_dir():
        raise UnknownBot(f"{str(path)!r} is a directory, not a bot program")
    if path.suffix == ".py":
        return (sys.executable, str(path), *rest)
    if not os.access(path, os.X_OK):
        raise UnknownBot(f"{str(path)!r} is not executable (chmod +x it, or run it through its interpreter)")
    return (str(path), *rest)


def is_interpreter(program: str) -> bool:
    """`program` (a name or a path) is a language's interpreter (python3, node, sh, java, ...)."""
    return _INTERPRETER.fullmatch(Path(program).name) is not None


def program_name(words: Sequence[str]) -> str:
    """The name of the program a command line runs (see the module's docstring)."""
    program = Path(words[0]).name
    if _INTERPRETER.fullmatch(program):
        rest = list(words[1:])
        for position, word in enumerate(rest):
            if word == "-m" and position + 1 < len(rest):
                return rest[position + 1].rpartition(".")[2]
            if not word.startswith("-") and Path(word).is_file():
                return Path(word).stem
    return Path(program).stem or program


def resolve_bot(argument: str, game: str, *, named_by_hello: bool = False, terminal: str | None = None) -> BotSpec:
    """The BotSpec of one BOT argument, or UnknownBot saying why there is none. With `named_by_hello` the bot
    will play under the name it sends in hello (BotSpec.named_by_hello); its program's name stands in until
    then, and stays if it never says hello. `terminal` (a tty's path) is where a `human` seat is played; without
    one there is no human seat."""
    spec = _human_seat(terminal) if argument == HUMAN else _resolve(argument, game)
    return dataclasses.replace(spec, named_by_hello=True) if named_by_hello and not is_remote(spec) else spec


def is_remote(spec: BotSpec) -> bool:
    """A `remote:NAME` seat: it plays under its key's NAME (BotSpec.command is the one word `remote:NAME`)."""
    return len(spec.command) == 1 and spec.command[0].startswith(REMOTE_PREFIX)


def remote_seat_names(specs: Sequence[BotSpec]) -> list[str]:
    return [spec.name for spec in specs if is_remote(spec)]


def _human_seat(terminal: str | None) -> BotSpec:
    """A person at `terminal` plays the seat through bots/python/human, without a clock (BotSpec.timed) and outside
    the sandbox, which would hide the terminal (BotSpec.sandbox)."""
    if terminal is None:
        raise UnknownBot(f"{HUMAN!r} is a seat for a person at a terminal, which only `referee play` has")
    return BotSpec(HUMAN, (sys.executable, "-m", HUMAN_MODULE, "--tty", terminal), timed=False, sandbox=False)


def _resolve(argument: str, game: str) -> BotSpec:
    if argument.startswith(STDIO_PREFIX):
        inner = _resolve(argument[len(STDIO_PREFIX) :], game)
        return BotSpec(inner.name, (sys.executable, "-m", STDIO_BRIDGE_MODULE, "--", *inner.command), inner.cwd)
    if argument.startswith(POLICY_PREFIX):
        return _policy(argument[len(POLICY_PREFIX) :])
    if argument.startswith(REMOTE_PREFIX):
        return _remote(argument[len(REMOTE_PREFIX) :])
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
        return BotSpec(path.stem, _program(_absolute(path), ()))
    try:
        words = shlex.split(argument)
    except ValueError as error:
        raise UnknownBot(f"cannot split the bot command {argument!r}: {error}") from None
    program = words[0]
    if "/" in program:
        if not Path(program).exists():
            raise UnknownBot(f"no such bot program: {program!r}")
        command = _program(_absolute(Path(program)), words[1:])
    elif shutil.which(program) is None:
        known = ", ".join([*BUILT_IN_MODULES, GAME_HEURISTIC, GAME_SEARCH])
        raise UnknownBot(f"no bot {argument!r}: not a built-in ({known}), not a file, and {program!r} is not on PATH")
    else:
        command = tuple(words)
    return BotSpec(program_name(words), command)


def _remote(name: str) -> BotSpec:
    try:
        check_name(name)
    except KeyFileError:
        raise UnknownBot(f"a remote seat is remote:NAME, NAME the name of its key, not {name!r}") from None
    if name == REFEREE_KEY:
        raise UnknownBot(f"remote:{REFEREE_KEY}: that name is the referee's own key's")
    return BotSpec(name, (f"{REMOTE_PREFIX}{name}",))


def policy_target(target: str) -> tuple[str, str | None]:
    """The file and the function (None: the default) of what follows `policy:`."""
    head, colon, function = target.rpartition(":")
    return (head, function) if colon and head.endswith(".py") else (target, None)


def _policy(target: str) -> BotSpec:
    """`policy:FILE.npz`, `policy:FILE.onnx`, `policy:FILE.py` or `policy:FILE.py:FUNCTION` as a run of
    bots/python/policy_bot."""
    path_text, function = policy_target(target)
    path = Path(path_text)
    if not path.is_file():
        raise UnknownBot(
            f"no policy file {path_text!r}"
            " (policy:FILE.npz, policy:FILE.onnx, policy:FILE.py or policy:FILE.py:FUNCTION)"
        )
    if function is not None and not function.isidentifier():
        raise UnknownBot(f"{function!r} is not a Python function name")
    extra = () if function is None else ("--function", function)
    option = "--choose" if path.suffix == ".py" else "--policy"
    if importlib.util.find_spec(POLICY_MODULE) is None:
        raise UnknownBot(f"the policy bot is not installed (no module {POLICY_MODULE})")
    return BotSpec(path.stem, (sys.executable, "-m", POLICY_MODULE, option, str(_absolute(path)), *extra))


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
        renamed.append(dataclasses.replace(spec, name=f"{spec.name}#{seen[spec.name]}"))
    return tuple(renamed)


def _printable(text: str) -> str:
    """`text` in NFKC with control, format (bidirectional, zero-width) and invisible characters and runs of
    white space turned into single spaces, stripped (protocol.safe_text)."""
    normal = unicodedata.normalize("NFKC", text)
    visible = "".join(" " if not char.isprintable() or invisible_characters(char) else char for char in normal)
    return " ".join(visible.split())


def match_names(specs: Sequence[BotSpec], hello_names: Sequence[str | None]) -> tuple[str, ...]:
    """The names the bots of a match play under: a BotSpec's name, or, for a spec named_by_hello, the name its
    bot sent in hello (None: it sent none, and keeps its spec's name). A name someone chose is never changed;
    a hello name that repeats another name, or looks like one (protocol.safe_text.skeleton: `rаndom` with a
    Cyrillic a), gets #1, #2, ... (as unique_names does), skipping chosen names."""
    wanted = []
    for spec, hello in zip(specs, hello_names, strict=True):
        name = _printable(hello) if spec.named_by_hello and hello is not None else ""
        wanted.append(name or spec.name)
    chosen_looks = {skeleton(spec.name) for spec in specs if not spec.named_by_hello}
    looks = Counter(skeleton(name) for name in wanted)
    seen: Counter[str] = Counter()
    names = []
    for spec, name in zip(specs, wanted, strict=True):
        look = skeleton(name)
        if spec.named_by_hello and (looks[look] > 1 or look in chosen_looks):
            while True:
                seen[look] += 1
                numbered = f"{name}#{seen[look]}"
                if skeleton(numbered) not in chosen_looks and skeleton(numbered) not in looks:
                    break
            name = numbered
        names.append(name)
    return tuple(names)


_UNSAFE_IN_FILE_NAMES = re.compile(r"[^A-Za-z0-9._+#@-]+")


def log_file_names(names: Sequence[str], taken: Collection[str] = ()) -> tuple[str, ...]:
    """A distinct file name `NAME.log` for each bot name, none of them in `taken` (characters a shell or a file
    system may trip on become `_`; a name left empty, or one that would repeat another, gets its position)."""
    files: list[str] = []
    for position, name in enumerate(names):
        stem = _UNSAFE_IN_FILE_NAMES.sub("_", name).lstrip(".")[:64] or "bot"
        file = f"{stem}.log"
        while file in files or file in taken:
            file = f"{stem}-{position}.log"
            stem = f"{stem}-{position}"
        files.append(file)
    return tuple(files)

"""What a league bot is, for the store: a digest of its program, so that a resubmission under the same name is
noticed.

    program_digest(("python3", "bots/mine.py"), cwd=None)   -> "sha256:3fa2..."
    program_digest(command, cwd, version="2.1")              -> "version:2.1"

The digest is of one file, the one the command names:
- a command whose program is an interpreter (python, node, java, bash, ...; see INTERPRETERS): the first
  argument that is a file (relative to the bot's working directory), or for `python -m MODULE` that module's
  file; the built-in bots are `python -m bots.python....`, so their module file; the policy bot (`policy:FILE`,
  `python -m bots.python.policy_bot --policy FILE`) is its policy file, so that a retrained policy is noticed;
- any other command: the executable it starts.

A program of several files (a package, weights beside it) changes without its digest changing: such a bot
declares `version = "..."` in the league file and changes it with the program; the digest is then that
version and no file is read.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
from collections.abc import Sequence
from pathlib import Path

from protocol.errors import BadInput
from referee.botspec import POLICY_MODULE

INTERPRETERS = re.compile(
    r"(python|pypy|node|nodejs|deno|bun|ruby|perl|php|lua|luajit|bash|sh|dash|zsh|ksh|java|Rscript|julia|"
    r"elixir|escript|racket|guile|tclsh|env)[0-9.]*"
)
"""Names (without a version suffix such as 3.11) of programs that run another file: the bot is that file."""


class ProgramUnreadable(BadInput, OSError):
    """The file that identifies a bot's program cannot be found or read."""


def program_digest(command: Sequence[str], cwd: str | None, version: str | None = None) -> str:
    """ "version:V" for a declared version, else "sha256:HEX" of the file that `command` names (see above)."""
    if version is not None:
        return f"version:{version}"
    path = program_file(command, cwd)
    try:
        with path.open("rb") as handle:
            return "sha256:" + hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError as error:
        raise ProgramUnreadable(f"cannot read {str(path)!r} to identify the bot ({error.strerror})") from None


def program_file(command: Sequence[str], cwd: str | None) -> Path:
    """The file whose digest identifies `command` run in `cwd` (None: this process's working directory)."""
    if not command:
        raise ProgramUnreadable("an empty command names no program")
    base = Path(cwd or os.getcwd())
    executable = _executable(command[0], base)
    if INTERPRETERS.fullmatch(executable.name):
        script = _script(command[1:], base)
        if script is not None:
            return script
    return executable


def _executable(program: str, base: Path) -> Path:
    if "/" in program:
        return base / program
    found = shutil.which(program)
    if found is None:
        raise ProgramUnreadable(f"the program {program!r} is not on PATH")
    return Path(found)


def _script(arguments: Sequence[str], base: Path) -> Path | None:
    """The first argument that is a file, or the file of the module after -m."""
    for position, argument in enumerate(arguments):
        if argument == "-m" and position + 1 < len(arguments):
            if arguments[position + 1] == POLICY_MODULE:
                return _policy_file(arguments[position + 2 :], base)
            return _module_file(arguments[position + 1])
        if not argument.startswith("-") and (base / argument).is_file():
            return base / argument
    return None


def _policy_file(arguments: Sequence[str], base: Path) -> Path | None:
    for option, value in zip(arguments, arguments[1:], strict=False):
        if option in ("--policy", "--choose"):
            return base / value
    return None


def _module_file(module: str) -> Path | None:
    try:
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if found is None or found.origin is None or not Path(found.origin).is_file():
        return None
    return Path(found.origin)

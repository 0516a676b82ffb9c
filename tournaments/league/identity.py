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

A submission folder (tournaments.league.submissions) is a program of many files, identified by `folder_digest`:
every file of the folder (`bot_files`: all but version control's own folders, VERSION_CONTROL), by relative path,
executable bit and content. Nothing a bot can read is left out: a `.log` or `.txt` it executes, a `.pyc` it
imports (Python runs a byte-code file in `__pycache__` whose header matches its source's size and time without
reading the source), `node_modules`, a compiled `bot`. Bots never write into their folder (the sandbox shows it
read-only; unsandboxed, a submission's Python is told not to write byte code), so the digest changes only when
the folder does. Build products never enter it: builds run in a copy (tournaments.league.builds).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path

from protocol.errors import BadInput
from referee.botspec import POLICY_MODULE

INTERPRETERS = re.compile(
    r"(python|pypy|node|nodejs|deno|bun|ruby|perl|php|lua|luajit|bash|sh|dash|zsh|ksh|java|Rscript|julia|"
    r"elixir|escript|racket|guile|tclsh|env)[0-9.]*"
)
"""Names (without a version suffix such as 3.11) of programs that run another file: the bot is that file."""


VERSION_CONTROL = frozenset({".git", ".hg", ".svn"})
"""Folders a version control system keeps beside the files: never the bot's, never part of its digest."""


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


def folder_digest(folder: Path) -> str:
    """ "tree:HEX": SHA-256 over every file of `folder` (`bot_files`): relative path, executable bit, content.
    Symbolic links count by where they point (never followed), other special files (a named pipe) by their
    name alone: nothing a folder holds can make this read forever."""
    digest = hashlib.sha256()
    for path in bot_files(folder):
        relative = path.relative_to(folder).as_posix()
        mode = path.lstat().st_mode
        if stat.S_ISLNK(mode):
            entry = b"link\0" + os.readlink(path).encode(errors="surrogateescape")
        elif not stat.S_ISREG(mode):
            entry = b"special\0"
        else:
            with path.open("rb") as handle:
                content = hashlib.file_digest(handle, "sha256").digest()
            entry = (b"exec\0" if mode & stat.S_IXUSR else b"file\0") + content
        digest.update(relative.encode(errors="surrogateescape") + b"\0" + entry + b"\0")
    return "tree:" + digest.hexdigest()


def bot_files(folder: Path) -> Iterator[Path]:
    """Every file of `folder` but version control's, in a fixed order, symbolic links not followed."""
    for root, folders, files in os.walk(folder):
        folders[:] = sorted(name for name in folders if name not in VERSION_CONTROL)
        for name in sorted(files):
            yield Path(root, name)

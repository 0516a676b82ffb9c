"""A submission's words kept to its folder: what its command and its build may name.

A submission's sandbox shows its own folder (or its build's copy) and the runtime its program needs, never a
folder its words name (referee.isolation.sandbox.shown_folders): words are arguments, not mounts. A word
that reaches outside the folder anyway (through `..`, as an absolute path, or through a symbolic link that
leads out) could only fail inside the sandbox, and shows a student's attempt to read a classmate's folder,
the teacher's or the league's. So it is refused before anything runs, with `OutsideFolder` saying which
word and what to do: the submission's fault alone (a league seats a program that says so, check-bot
reports it), never the league's.

What a word may name outside the folder is what every bot is shown anyway: the system (/usr, /etc, /bin...),
its private /dev, /proc, /tmp and HOME, named by absolute path. A program named without a slash that is not
a file of the folder is found on the organiser's PATH: allowed where it is the system's, or an interpreter
(`python3`, `node`, `java`: referee.botspec.is_interpreter) whose installation the sandbox shows as the
bot's runtime; any other program there (an organiser's ~/bin tool) is refused, for its installation would be
shown too. Words are checked whole, and after the first `=` (`--data=../alice`), as paths relative to the
folder.
"""

from __future__ import annotations

import enum
import os
import shlex
import shutil
from collections.abc import Sequence
from pathlib import Path

from referee.botspec import UnknownBot, is_interpreter
from referee.isolation import sandbox

SHOWN_ANYWAY = (*sandbox.SYSTEM_FOLDERS, "/dev", "/proc", sandbox.TMP_INSIDE, sandbox.HOME_INSIDE)
"""Absolute paths every bot may name: what its sandbox shows it whatever its folder (its private /tmp and
HOME, not the machine's)."""


class Words(enum.StrEnum):
    """Whose words: a submission's command (bot.toml's, or the league's `each` entry's) or its build."""

    COMMAND = "command"
    BUILD = "build"


class OutsideFolder(UnknownBot):
    """A submission's command or build names a path outside its folder."""


def check_words(words: Sequence[str], folder: Path, what: Words) -> None:
    """OutsideFolder if a word of `words` (a submission's command or build, its program first) reaches outside
    `folder`."""
    for position, word in enumerate(words):
        if position == 0 and _on_path(word, folder):
            _check_program(word, what)
            continue
        for path in _paths_in(word):
            if not _kept_in(path, folder):
                raise OutsideFolder(
                    f"its {what}'s word {word!r} reaches outside its folder: a bot sees only its own folder "
                    f"(and the system's programs), and its {what}'s words are arguments, never folders shown to "
                    "it; put what it needs in its folder and name it relative to the folder (no `..` out of it, "
                    "no absolute path, no symbolic link that leads out)"
                )


def check_text(text: str, folder: Path, what: Words) -> None:
    """`check_words` for a command line as written (shell words); one that does not split is left to what
    runs it to refuse."""
    try:
        words = shlex.split(text)
    except ValueError:
        return
    check_words(words, folder, what)


def _on_path(program: str, folder: Path) -> bool:
    return "/" not in program and not (folder / program).exists()


def _check_program(program: str, what: Words) -> None:
    """OutsideFolder for a program found on PATH that is neither the system's nor an interpreter (one found
    nowhere is left to what runs it to refuse)."""
    found = shutil.which(program)
    if found is None or is_interpreter(program):
        return
    if all(any(_within(path, place) for place in sandbox.SYSTEM_FOLDERS) for path in {found, os.path.realpath(found)}):
        return
    raise OutsideFolder(
        f"its {what}'s program {program!r} is found outside its folder and the system's: a bot may run "
        "its own programs, the system's and a language's interpreter (python3, node, java, ...); put the "
        "program in its folder and name it relative to the folder (./NAME)"
    )


def _paths_in(word: str) -> list[str]:
    _, equals, value = word.partition("=")
    return [word, value] if equals and value else [word]


def _kept_in(word: str, folder: Path) -> bool:
    """`word` as a path names something in `folder`, or what every bot is shown anyway."""
    own = {str(folder), os.path.realpath(folder)}
    if os.path.isabs(word):
        lexical = os.path.normpath(word)
        if any(_within(lexical, place) for place in SHOWN_ANYWAY):
            return True
        path = word
    else:
        path = os.path.join(folder, word)
        lexical = os.path.normpath(path)
    real = os.path.realpath(path)
    inside = any(_within(lexical, place) for place in own)
    return inside and any(_within(real, place) for place in (*own, *sandbox.SYSTEM_FOLDERS))


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")

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
a file of the folder (`python3`, `node`) is found on the organiser's PATH, and is allowed. Words are
checked whole, and after the first `=` (`--data=../alice`), as paths relative to the folder.
"""

from __future__ import annotations

import enum
import os
import shlex
from collections.abc import Sequence
from pathlib import Path

from referee.botspec import UnknownBot
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

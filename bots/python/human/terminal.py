"""The terminal a person plays at, opened by its path: lines out, numbered choices in."""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence

from protocol.errors import EnvironmentProblem
from protocol.safe_text import one_line

CLEAR = "\x1b[H\x1b[2J"
"""ANSI: cursor home, erase the screen (every request starts on a clean screen)."""


class TerminalUnavailable(EnvironmentProblem, OSError):
    """The path names no terminal this program can open."""


class LeftTheGame(Exception):
    """The person closed the input (Ctrl-D) or the terminal went away: nobody is left to choose."""


class Terminal:
    """A terminal device opened for reading and writing, never as this process's controlling terminal."""

    def __init__(self, path: str) -> None:
        try:
            fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
        except OSError as error:
            raise TerminalUnavailable(f"cannot open the terminal {path!r}: {error.strerror}") from None
        if not os.isatty(fd):
            os.close(fd)
            raise TerminalUnavailable(f"{path!r} is not a terminal")
        self.fd = fd
        self._reader = open(fd, encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
        self._writer = open(fd, "w", encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115

    def width(self) -> int:
        try:
            return os.get_terminal_size(self.fd).columns
        except OSError:
            return shutil.get_terminal_size().columns

    def show(self, lines: Sequence[str], clear: bool = False) -> None:
        """`lines` on the screen, each kept to its line with its controls escaped (what the referee sends, such
        as the other seats' names, is shown and never run)."""
        self._writer.write((CLEAR if clear else "") + "".join(f"{one_line(line)}\n" for line in lines))
        self._writer.flush()

    def choose(self, prompt: str, count: int) -> int:
        """Ask until the person types a number from 1 to `count`; returns it less one (an index). Raises
        LeftTheGame at the end of the input."""
        while True:
            self._writer.write(prompt)
            self._writer.flush()
            try:
                line = self._reader.readline()
            except OSError:
                raise LeftTheGame from None
            if not line:
                raise LeftTheGame
            answer = line.strip()
            if answer.isascii() and answer.isdigit() and 1 <= int(answer) <= count:
                return int(answer) - 1
            shown = answer if len(answer) <= 20 else answer[:20] + "..."
            self.show([f"{shown!r} is not a move: type a number from 1 to {count}, then Enter."])

    def close(self) -> None:
        self._reader.close()
        self._writer.close()
        os.close(self.fd)

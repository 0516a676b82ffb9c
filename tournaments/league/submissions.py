"""A folder of submissions as a league's bots, one per folder, named after it (a class's bots, for grading).

    [[bots]]
    each = "submissions/*"          # a glob relative to the league file: every folder it matches is a bot
    command = "python3 bot.py"      # optional: run in each folder (cwd = the folder); default: found there

Found in a folder, in this order: `bot.py` (run by the referee's Python, which has the SDK), an executable
`bot` (a compiled bot: build it first, e.g. `make -C FOLDER`), `bot.js` (`node bot.js`).

A submission that cannot run (nothing found, or a command that names no program) still takes part under its
name: its program says why and exits without a hello (`cannot_run`), so every game it is seated in records
a crash with that reason, in the store and in the report, where a league file error would stop the whole class.
For the same reason a folder whose name is unsafe (invisible or bidirectional controls) or looks like the name
of a bot before it is skipped with a note (League.notes), not refused (tournaments.league.league_file).
"""

from __future__ import annotations

import glob
import os
import sys
from dataclasses import dataclass
from pathlib import Path

FOUND_IN_ORDER = (("bot.py", "bot.py"), ("bot", "./bot"), ("bot.js", "node bot.js"))
"""(file in the folder, the command that runs it there)."""
BUILD_FILES = ("Makefile", "makefile", "GNUmakefile", "CMakeLists.txt", "build.sh")


@dataclass(frozen=True)
class Submission:
    name: str
    folder: Path
    command: str | None
    """The command that runs it in its folder, or None when none was given and none was found."""

    def missing_program(self) -> str:
        """Why there is no command (only when `command` is None)."""
        looked = ", ".join(file for file, _ in FOUND_IN_ORDER)
        build = next((file for file in BUILD_FILES if (self.folder / file).is_file()), None)
        advice = f"; it has a {build}: build the bot before the league runs" if build else ""
        return f"no bot program in {self.folder} (looked for {looked}){advice}"


def submissions(pattern: str, base: Path, command: str | None) -> list[Submission]:
    """Every folder matching `pattern` (relative to `base`), in name order, each with `command` or the one found."""
    folders = sorted(Path(path) for path in glob.glob(str(base / pattern)) if os.path.isdir(path))
    return [Submission(folder.name, folder.resolve(), command or found_command(folder)) for folder in folders]


def found_command(folder: Path) -> str | None:
    for file, command in FOUND_IN_ORDER:
        path = folder / file
        if path.is_file() and (file != "bot" or os.access(path, os.X_OK)):
            return command
    return None


def cannot_run(reason: str) -> tuple[str, ...]:
    """A program that prints `reason` and exits with status 1 before any hello."""
    return (sys.executable, "-c", f"import sys; sys.exit({reason!r})")

"""What is wrong with a submission folder that has no program to run, or cannot run the one it has: one answer,
which the league (tournaments.league.submissions, each game's crash) and check-bot (its refusal) both give.

    problem = folder_problem(Path("submissions/ann"), build=None)   # why it has no program
    problem.fault, problem.file, problem.message

A folder's program is found under fixed names (FOUND_IN_ORDER). Each way a student's folder commonly misses
them is a FolderFault, with what to do in `message`: a program named in another case (`Bot.py`), the program
one folder down (the folder that held it was uploaded, not its contents), a `bot` without its run bit (a zip or
a web upload drops it), a build file nothing built, and a JavaScript bot without the packages its package.json
needs (node_modules: a bot's sandbox shows its folder alone, so they must be in it). The message is one line,
short enough to be quoted whole in a fault (a league's bot says it as its last output, whose lines are cut at
200 characters), and names files inside the folder only, never the machine's paths.
"""

from __future__ import annotations

import enum
import json
import os
from dataclasses import dataclass
from pathlib import Path

from referee.botspec import UnknownBot

MANIFEST = "bot.toml"
FOUND_IN_ORDER = (("bot.py", "bot.py"), ("bot", "./bot"), ("bot.js", "node bot.js"))
"""(file in the folder, the command that runs it there)."""
BUILD_COMMANDS = {
    "Makefile": "make",
    "makefile": "make",
    "GNUmakefile": "make",
    "CMakeLists.txt": "cmake -B out && cmake --build out",
    "build.sh": "sh build.sh",
}
"""A build file, and the build a bot.toml would name for it."""
BUILD_FILES = tuple(BUILD_COMMANDS)
PACKAGE_FILE = "package.json"
PACKAGES_FOLDER = "node_modules"
HIDDEN_CLUTTER = frozenset({"__MACOSX", ".DS_Store", ".git"})
"""What an archive or a copy leaves beside an uploaded folder: not a sign that the folder has content."""


class FolderFault(enum.StrEnum):
    """Why a folder's program cannot be found or run (values as the JSON reports say them)."""

    NO_PROGRAM = "no-program"
    WRONG_CASE = "wrong-case"
    ONE_FOLDER_DOWN = "one-folder-down"
    NOT_EXECUTABLE = "not-executable"
    NOT_BUILT = "not-built"
    NO_PACKAGES = "no-packages"
    NOT_MADE = "not-made"
    """Its build ran and made none of the programs looked for."""


@dataclass(frozen=True)
class FolderProblem:
    fault: FolderFault
    file: str | None = None
    """The file it concerns, relative to the folder (Bot.py, mybot/bot.py, bot, Makefile, package.json)."""
    packages: tuple[str, ...] = ()
    """The packages missing from node_modules (NO_PACKAGES)."""

    @property
    def message(self) -> str:
        """What is wrong and what to do, in words for the student (derived from the fault and its facts)."""
        return _MESSAGES[self.fault](self)


def _few(names: tuple[str, ...], most: int = 3) -> str:
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")


def _looked() -> str:
    return ", ".join(file for file, _ in FOUND_IN_ORDER)


_MESSAGES = {
    FolderFault.NO_PROGRAM: lambda p: (
        f"no bot program in the submission folder (looked for {_looked()}): add one of them, or name the command "
        f'that runs the bot in {MANIFEST} (command = "...")'
    ),
    FolderFault.WRONG_CASE: lambda p: (
        f"no bot program in the submission folder, but {p.file} is there: names are case-sensitive, rename it to "
        f"{p.file.lower() if p.file else ''}"
    ),
    FolderFault.ONE_FOLDER_DOWN: lambda p: (
        f"no bot program in the submission folder, but there is {p.file} one folder down: hand in the contents of "
        f"{p.file.split('/')[0] if p.file else ''}/ (its files at the top), not the folder that holds them"
    ),
    FolderFault.NOT_EXECUTABLE: lambda p: (
        f"{p.file!r} is not executable (a zip or a web upload may drop its run bit): run chmod +x {p.file} before "
        f'handing it in, or name the command that runs it in {MANIFEST} (command = "sh {p.file}")'
    ),
    FolderFault.NOT_BUILT: lambda p: (
        f"no bot program in the submission folder, and its {p.file} was not built: add build = "
        f'"{BUILD_COMMANDS.get(p.file or "", "make")}" to its {MANIFEST} (and command = "..." unless it makes ./bot)'
    ),
    FolderFault.NOT_MADE: lambda p: (
        f"no bot program in the submission folder after its build ({p.file!r}; looked for {_looked()}): name the "
        f'program its build makes in {MANIFEST} (command = "...")'
    ),
    FolderFault.NO_PACKAGES: lambda p: (
        f"its {PACKAGE_FILE} needs packages its {PACKAGES_FOLDER} folder lacks ({_few(p.packages)}): run npm install "
        f"in the folder and hand {PACKAGES_FOLDER} in with it (the bot has no network)"
    ),
}


class FolderProblemError(UnknownBot):
    """A submission folder that cannot run: its FolderProblem, in words for the student."""

    def __init__(self, problem: FolderProblem) -> None:
        super().__init__(problem.message)
        self.problem = problem


def found_command(folder: Path) -> str | None:
    """The command that runs the first program of FOUND_IN_ORDER in `folder` (an executable `bot` only)."""
    for file, command in FOUND_IN_ORDER:
        path = folder / file
        if path.is_file() and (file != "bot" or os.access(path, os.X_OK)):
            return command
    return None


def folder_problem(folder: Path, build: str | None = None, built: bool = False) -> FolderProblem:
    """Why `folder` (with no command named and none found in it) has no program, most telling first; `build`:
    the build it has, `built`: `folder` is the copy that build ran in."""
    bot = folder / "bot"
    if bot.is_file() and not os.access(bot, os.X_OK):
        return FolderProblem(FolderFault.NOT_EXECUTABLE, "bot")
    wanted = {file for file, _ in FOUND_IN_ORDER}
    misnamed = sorted(p.name for p in _entries(folder) if p.is_file() and p.name.lower() in wanted)
    if misnamed:
        return FolderProblem(FolderFault.WRONG_CASE, misnamed[0])
    inner = _only_folder(folder)
    if inner is not None:
        file = next((file for file, _ in FOUND_IN_ORDER if (inner / file).is_file()), None)
        if file is not None:
            return FolderProblem(FolderFault.ONE_FOLDER_DOWN, f"{inner.name}/{file}")
    if built:
        return FolderProblem(FolderFault.NOT_MADE, build)
    made = next((file for file in BUILD_FILES if (folder / file).is_file()), None)
    if made is not None and build is None:
        return FolderProblem(FolderFault.NOT_BUILT, made)
    return FolderProblem(FolderFault.NO_PROGRAM)


def has_build_inputs(folder: Path) -> bool:
    """Whether a build has something to work on in `folder`: a build file or a package.json. A grader's default
    build (check-bot --build) is for such folders; one without them (a Python bot, a script, a program handed in
    built) runs as handed in."""
    return any((folder / file).is_file() for file in (*BUILD_FILES, PACKAGE_FILE))


def missing_packages(folder: Path) -> FolderProblem | None:
    """NO_PACKAGES when `folder` has a package.json whose dependencies are not all in its node_modules (a
    package.json that cannot be read names none: node says what it makes of it)."""
    try:
        declared = json.loads((folder / PACKAGE_FILE).read_text(encoding="utf-8")).get("dependencies") or {}
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(declared, dict):
        return None
    missing = tuple(sorted(name for name in declared if not (folder / PACKAGES_FOLDER / name).is_dir()))
    return FolderProblem(FolderFault.NO_PACKAGES, PACKAGE_FILE, missing) if missing else None


def _entries(folder: Path) -> list[Path]:
    try:
        return [entry for entry in folder.iterdir() if entry.name not in HIDDEN_CLUTTER]
    except OSError:
        return []


def _only_folder(folder: Path) -> Path | None:
    """The one folder `folder` holds, when it holds nothing else but a README or clutter; else None."""
    entries = _entries(folder)
    folders = [entry for entry in entries if entry.is_dir() and not entry.is_symlink()]
    others = [entry for entry in entries if entry not in folders and not entry.name.lower().startswith("readme")]
    return folders[0] if len(folders) == 1 and not others else None

"""What check-bot checks: a BOT argument, a submission folder, or a submission that cannot run, and why.

    submission = resolve_submission("/autograder/submission", "scout", build="make")
    submission.spec      # the BotSpec to check, or None
    submission.problem   # why it cannot run (None when it can): shown to the student as is

A folder is resolved the way a league's `each` entry resolves one (tournaments/league/submissions.py): its
`bot.py`, else an executable `bot`, else `bot.js`, run in the folder. `build` (a shell command, e.g. `make`) runs
first, in the folder, and a build that fails is the submission's problem, its last lines of output quoted.

The student sees no path of the grading machine: `Redactor` turns paths inside the submission into paths
relative to it and the grader's own folders (the run folder, the referee's installation, its Python) into
labels.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from referee.botspec import STDIO_PREFIX, UnknownBot, resolve_bot
from referee.records import BotSpec

from ..league.submissions import BUILD_FILES, FOUND_IN_ORDER, found_command

BUILD_TIMEOUT_S = 600.0
"""A build that runs longer is stopped and counts as failed."""
BUILD_TAIL_LINES = 20
"""The last lines of a failed build's output quoted to the student."""
PROJECT_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class CheckedSubmission:
    argument: str
    spec: BotSpec | None
    problem: str | None
    """Why the submission cannot run (None: `spec` runs it)."""
    root: Path | None
    """The submission's folder (a folder argument, or the folder of a program path); None for a built-in bot or
    a command line."""
    build_output: str = ""


def resolve_submission(argument: str, game: str, *, build: str | None = None) -> CheckedSubmission:
    """The submission `argument` names, built first if `build` is given; never raises for a submission that
    cannot run (that is `problem`)."""
    path = Path(argument)
    root = _root(argument)
    if build is not None:
        if root is None:
            problem = f"--build needs a submission folder or file, not {argument!r}"
            return CheckedSubmission(argument, None, problem, None)
        failed, output = run_build(build, root)
        if failed is not None:
            return CheckedSubmission(argument, None, failed, root, output)
    else:
        output = ""
    try:
        spec = _folder_spec(path, game) if path.is_dir() else resolve_bot(argument, game, named_by_hello=True)
    except UnknownBot as error:
        return CheckedSubmission(argument, None, f"the bot cannot be run: {error}", root, output)
    return CheckedSubmission(argument, spec, None, root, output)


def _root(argument: str) -> Path | None:
    """The submission folder of a folder or a program path (given alone, or after stdio:); None for a built-in
    bot or a command line."""
    bare = argument.removeprefix(STDIO_PREFIX)
    if not Path(bare).exists() and (not bare or " " in bare.strip() or "/" not in bare):
        return None
    path = Path(os.path.abspath(bare))
    return path if path.is_dir() else path.parent


def _folder_spec(folder: Path, game: str) -> BotSpec:
    command = found_command(folder)
    if command is None and (folder / "bot").is_file():
        resolve_bot(str(folder.resolve() / "bot"), game)
    if command is None:
        raise UnknownBot(_missing_program(folder))
    file = next(file for file, found in FOUND_IN_ORDER if found == command)
    program = str(folder.resolve() / file)
    words = shlex.split(command)
    argument = shlex.join([*words[:-1], program]) if len(words) > 1 else program
    return replace(resolve_bot(argument, game, named_by_hello=True), cwd=str(folder.resolve()))


def _missing_program(folder: Path) -> str:
    """The league's reason (tournaments.league.submissions), with check-bot's advice for a folder to build."""
    looked = ", ".join(file for file, _ in FOUND_IN_ORDER)
    build = next((file for file in BUILD_FILES if (folder / file).is_file()), None)
    advice = f"; it has a {build}, which was not built (check-bot --build make builds it first)" if build else ""
    return f"no bot program in {folder.resolve()} (looked for {looked}){advice}"


def run_build(command: str, folder: Path) -> tuple[str | None, str]:
    """Run `command` in `folder` with a shell: (None, its output) if it succeeded, else (why, its output)."""
    try:
        run = subprocess.run(
            command,
            shell=True,
            cwd=folder,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=BUILD_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as error:
        output = _text(error.stdout)
        return f"the build ({command}) did not finish within {BUILD_TIMEOUT_S:.0f} s" + _quoted(output), output
    output = _text(run.stdout)
    if run.returncode == 0:
        return None, output
    return f"the build ({command}) failed with status {run.returncode}" + _quoted(output), output


def _text(data: bytes | str | None) -> str:
    if data is None:
        return ""
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else data


def _quoted(output: str) -> str:
    lines = output.rstrip().splitlines()[-BUILD_TAIL_LINES:]
    return "; its last output:\n" + "\n".join(f"| {line}" for line in lines) if lines else " (it printed nothing)"


@dataclass(frozen=True)
class Redactor:
    """Replaces machine paths in what a student sees: (prefix, label) pairs, the longest prefix first. A label
    of "" makes a path relative (the submission's own files)."""

    pairs: tuple[tuple[str, str], ...]

    @classmethod
    def for_check(cls, submission_root: Path | None, run_dir: Path) -> Redactor:
        grader = [
            (str(Path(run_dir).resolve()), "<run folder>"),
            (str(run_dir), "<run folder>"),
            (str(PROJECT_ROOT), "<referee>"),
            (sys.prefix, "<python>"),
            (sys.base_prefix, "<python>"),
            (os.path.dirname(sys.executable), "<python>/bin"),
        ]
        own = [] if submission_root is None else [(str(submission_root), ""), (str(submission_root.resolve()), "")]
        pairs = {prefix: label for prefix, label in [*grader, *own] if prefix not in ("", "/")}
        return cls(tuple(sorted(pairs.items(), key=lambda pair: -len(pair[0]))))

    def text(self, text: str) -> str:
        for prefix, label in self.pairs:
            text = text.replace(prefix + "/", label + "/" if label else "")
            text = text.replace(prefix, label or "the submission folder")
        return text

    def value(self, value: Any) -> Any:
        """`value` (JSON: dicts, lists, strings, numbers) with every string redacted."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {key: self.value(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.value(item) for item in value]
        return value

"""What check-bot checks: a BOT argument, a submission folder, or a submission that cannot run, and why.

    submission = resolve_submission("/autograder/submission", "scout", build="make", run_dir=Path("run"))
    submission.spec      # the BotSpec to check, or None
    submission.problem   # why it cannot run (None when it can): shown to the student as is

A folder is read the way a league reads one of its `each` folders (tournaments.league.submissions): its
`bot.toml` if it has one (command, transport zmq or stdio, build), else its `bot.py`, an executable `bot` or
`bot.js`. A build (the bot.toml's `build`, else `--build COMMAND`) runs as a league's does
(tournaments.league.builds): in a copy of the folder in the run folder (RUN/build/NAME, its output in
RUN/build.log), in the bot sandbox where the machine has one, and the bot then runs from the copy. The
submission's own folder is never written. A build that fails, a bot.toml that is not valid, a folder without
a program: each is the submission's problem, in words for the student, the league's words for the same folder
(tournaments.league.folder_problems).

The student sees no path of the grading machine: `Redactor` turns paths inside the submission (and inside its
built copy) into paths relative to it, the grader's own folders (the run folder, the referee's installation, its
Python) into labels, and any other absolute path (a cgroup's in a refusal) into its file name.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from referee.botspec import STDIO_PREFIX, UnknownBot, resolve_bot
from referee.records import BotSpec

from ..league.builds import BuildOutcome, after_build, build_submission
from ..league.folder_problems import FolderProblemError, has_build_inputs, missing_packages
from ..league.submissions import (
    Manifest,
    Submission,
    folder_digest,
    load_submission,
    runnable_spec,
)

BUILD_FOLDER = "build"
"""The folder of the run folder a submission is copied into to be built (RUN/build/NAME)."""
BUILD_LOG = "build.log"
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
    built_in: Path | None = None
    """The copy of `root` it was built in (where it runs), None without a build."""


def resolve_submission(
    argument: str, game: str, *, build: str | None = None, run_dir: Path | None = None
) -> CheckedSubmission:
    """The submission `argument` names, built first if its bot.toml or `build` says so (a folder's bot.toml's
    build wins over `build`, which applies only to a folder with something to build: a build file or a
    package.json), in a copy in `run_dir` (default: a new temporary folder); never raises for a submission that
    cannot run (that is `problem`)."""
    root = _root(argument)
    if root is not None and not has_build_inputs(root):
        build = None
    if Path(argument).is_dir() and root is not None:
        return _folder(argument, root, game, build, run_dir)
    if build is None:
        return _resolved(argument, argument, game, root)
    if root is None:
        return CheckedSubmission(argument, None, f"--build needs a submission folder or file, not {argument!r}", None)
    outcome, output = _build(Submission(root.name, root, None, Manifest(build=build)), run_dir)
    if not outcome.ok:
        return CheckedSubmission(argument, None, outcome.detail, root, output, outcome.folder)
    checked = _resolved(argument, _moved(argument, root, outcome.folder), game, root, outcome.folder)
    return replace(checked, build_output=output, built_in=outcome.folder)


def _folder(argument: str, root: Path, game: str, build: str | None, run_dir: Path | None) -> CheckedSubmission:
    submission = load_submission(root)
    if submission.problem is not None:
        return CheckedSubmission(argument, None, submission.problem, root)
    if submission.build is None and build is not None:
        manifest = replace(submission.manifest, build=build)
        submission = replace(submission, command=submission.manifest.command, manifest=manifest)
    if submission.build is None:
        return _runnable(argument, submission, game, root)
    outcome, output = _build(submission, run_dir)
    if not outcome.ok:
        return CheckedSubmission(argument, None, outcome.detail, root, output, outcome.folder)
    checked = _runnable(argument, after_build(submission, outcome), game, root, outcome.folder)
    return replace(checked, build_output=output, built_in=outcome.folder)


def _runnable(
    argument: str, submission: Submission, game: str, root: Path, folder: Path | None = None
) -> CheckedSubmission:
    """The submission run from `folder` (its own by default), playing under the name of its hello."""
    try:
        spec = runnable_spec(submission, game, folder)
    except FolderProblemError as error:
        return CheckedSubmission(argument, None, str(error), root, built_in=folder)
    except UnknownBot as error:
        return CheckedSubmission(argument, None, f"the bot cannot be run: {error}", root, built_in=folder)
    return CheckedSubmission(argument, replace(spec, named_by_hello=True), None, root, built_in=folder)


def _resolved(argument: str, runs: str, game: str, root: Path | None, own: Path | None = None) -> CheckedSubmission:
    """The bot `runs` names; a program of a submission folder (`root`, or its built copy `own`) sees that
    folder alone (BotSpec.folders)."""
    seen = own or root
    missing = None if seen is None else missing_packages(seen)
    if missing is not None:
        return CheckedSubmission(argument, None, missing.message, root)
    try:
        spec = resolve_bot(runs, game, named_by_hello=True)
    except UnknownBot as error:
        return CheckedSubmission(argument, None, f"the bot cannot be run: {error}", root)
    return CheckedSubmission(argument, spec if seen is None else replace(spec, folders=(str(seen),)), None, root)


def _build(submission: Submission, run_dir: Path | None) -> tuple[BuildOutcome, str]:
    """The league's build (in the sandbox, in a copy) in the run folder; (its outcome, its log's text)."""
    base = run_dir if run_dir is not None else Path(tempfile.mkdtemp(prefix="check-build-"))
    log = base / BUILD_LOG
    outcome = build_submission(submission, folder_digest(submission.folder), base / BUILD_FOLDER / "submission", log)
    try:
        output = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        output = ""
    return outcome, output


def _moved(argument: str, root: Path, copy: Path) -> str:
    """A program path argument (alone or after stdio:) moved from `root` into its built `copy`."""
    prefix = STDIO_PREFIX if argument.startswith(STDIO_PREFIX) else ""
    relative = Path(os.path.abspath(argument.removeprefix(prefix))).relative_to(root)
    return prefix + str(copy / relative)


def _root(argument: str) -> Path | None:
    """The submission folder of a folder or a program path (given alone, or after stdio:); None for a built-in
    bot or a command line."""
    bare = argument.removeprefix(STDIO_PREFIX)
    if not Path(bare).exists() and (not bare or " " in bare.strip() or "/" not in bare):
        return None
    path = Path(os.path.abspath(bare))
    return path if path.is_dir() else path.parent


_MACHINE_PATH = re.compile(r"(?<![\w.~<>/])(?:/[^\s/'\"`:,;()\[\]<>|]+){2,}")
"""An absolute path of two parts or more (not a relative one, nor the rest of a labelled one: <run folder>/x)."""


@dataclass(frozen=True)
class Redactor:
    """Replaces machine paths in what a student sees: (prefix, label) pairs, the longest prefix first. A label
    of "" makes a path relative (the submission's own files)."""

    pairs: tuple[tuple[str, str], ...]

    @classmethod
    def for_check(cls, submission_root: Path | None, run_dir: Path, built_in: Path | None = None) -> Redactor:
        """Paths in `submission_root` and in its built copy `built_in` relative, the grader's labelled."""
        grader = [
            (str(Path(run_dir).resolve()), "<run folder>"),
            (str(run_dir), "<run folder>"),
            (str(PROJECT_ROOT), "<referee>"),
            (sys.prefix, "<python>"),
            (sys.base_prefix, "<python>"),
            (os.path.dirname(sys.executable), "<python>/bin"),
        ]
        own = [(str(folder), "") for root in (submission_root, built_in) if root for folder in (root, root.resolve())]
        pairs = {prefix: label for prefix, label in [*grader, *own] if prefix not in ("", "/")}
        return cls(tuple(sorted(pairs.items(), key=lambda pair: -len(pair[0]))))

    def text(self, text: str) -> str:
        """`text` with the paths of `pairs` relative or labelled, then any other absolute path of the machine
        (a cgroup's in a refusal, a system library's in a traceback) shown as its last part, its file name."""
        for prefix, label in self.pairs:
            text = text.replace(prefix + "/", label + "/" if label else "")
            text = text.replace(prefix, label or "the submission folder")
        return _MACHINE_PATH.sub(lambda found: found.group(0).rsplit("/", 1)[-1], text)

    def value(self, value: Any) -> Any:
        """`value` (JSON: dicts, lists, strings, numbers) with every string redacted."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {key: self.value(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.value(item) for item in value]
        return value

"""A folder of submissions as a league's bots, one per folder, named after it (a class's bots, for grading).

    [[bots]]
    each = "submissions/*"          # a glob relative to the league file: every folder it matches is a bot
    command = "python3 bot.py"      # optional: run in each folder (cwd = the folder); default: found there

A folder may describe itself in a `bot.toml` (MANIFEST), every key optional; the keys are
tournaments/league/keys.py's MANIFEST_KEYS, which the docs site's bot.toml reference is built from.

The manifest's command wins over the `each` entry's, which wins over the one found. Found in a folder, in
this order: `bot.py` (run by the referee's Python, which has the SDK), an executable `bot` (a compiled bot),
`bot.js` (`node bot.js`). A folder with a build is searched after its build, in the copy the build ran in.

A submission that cannot run (nothing found, a command that names no program, a bot.toml that is not valid,
a build that failed, a JavaScript bot without its packages: tournaments.league.folder_problems says which and
what to do, in the same words as check-bot) still takes part under its name: its program says why and exits
without a hello (`cannot_run`), so every game it is seated in records a crash with that reason, in the store and in the
report, where a league file error would stop the whole class.

A folder's name is its bot's name. `normalised` (of the look-alike skeleton, protocol.safe_text) is how names
are compared for clashes: a folder named like another bot of the league (a baseline, or another folder:
"Heuristic", "heuristic ", "heu_ristic" and "hеuristic" with a Cyrillic e are one name) is skipped and
reported (League.skipped, tournaments.league.league_file), never fatal to the class. So is a folder whose
name has invisible or bidirectional characters.

`folder_digest` (tournaments.league.identity) identifies a submission for the store: every file of the folder
but version control's, so any change, to a library beside the program, to package.json, to a `.log` or `.pyc` it
reads, is a new program. Build products never enter it: builds run in a copy (builds.py).
"""

from __future__ import annotations

import enum
import glob
import os
import re
import shlex
import sys
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protocol.errors import BadInput
from referee.botspec import (
    BUILT_IN_MODULES,
    GAME_HEURISTIC,
    GAME_SEARCH,
    POLICY_PREFIX,
    STDIO_PREFIX,
    UnknownBot,
    policy_target,
    resolve_bot,
)
from referee.records import BotSpec

from .folder_problems import (
    MANIFEST,
    FolderProblemError,
    folder_problem,
    found_command,
    missing_packages,
)
from .folder_words import OutsideFolder, Words, check_text, check_words
from .identity import VERSION_CONTROL, bot_files
from .identity import folder_digest as folder_digest
from .keys import MANIFEST_KEYS, names

IGNORED_NAMES = VERSION_CONTROL
"""What a build's copy leaves out, as the digest does (tournaments.league.identity)."""
IGNORED_SUFFIXES: tuple[str, ...] = ()
MAX_MANIFEST_BYTES = 65536
_MANIFEST_KEYS = names(MANIFEST_KEYS)


class Transport(enum.StrEnum):
    ZMQ = "zmq"
    STDIO = "stdio"


class ManifestError(BadInput, ValueError):
    """A bot.toml that cannot be read or says something this referee does not understand."""


@dataclass(frozen=True)
class Manifest:
    command: str | None = None
    transport: Transport = Transport.ZMQ
    build: str | None = None
    language: str | None = None
    version: str | None = None


@dataclass(frozen=True)
class Submission:
    name: str
    folder: Path
    command: str | None
    """The command that runs it in its folder (before any stdio: prefix), or None: none given, and none
    found (yet: a folder with a build is searched again after it)."""
    manifest: Manifest = Manifest()
    problem: str | None = None
    """Why it cannot run whatever its folder holds (a bot.toml that is not valid), else None."""

    @property
    def build(self) -> str | None:
        return self.manifest.build

    def argument(self, command: str) -> str:
        """The BOT argument (referee.botspec) that runs `command` over this submission's transport."""
        return f"stdio:{command}" if self.manifest.transport is Transport.STDIO else command


def submissions(pattern: str, base: Path, command: str | None) -> list[Submission]:
    """Every folder matching `pattern` (relative to `base`), in name order, each read by `load_submission`."""
    folders = sorted(Path(path) for path in glob.glob(str(base / pattern)) if os.path.isdir(path))
    return [load_submission(folder, command) for folder in folders]


ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".7z", ".rar")


def archive_notes(pattern: str, base: Path) -> list[str]:
    """A note for each archive `pattern` matches (a zip handed in, never unpacked): a league plays folders only,
    and an archive left beside them would otherwise be passed over without a word."""
    files = sorted(Path(path) for path in glob.glob(str(base / pattern)) if os.path.isfile(path))
    notes = []
    for path in files:
        suffix = next((suffix for suffix in ARCHIVE_SUFFIXES if path.name.lower().endswith(suffix)), None)
        if suffix is not None:
            stem = path.name[: -len(suffix)]
            notes.append(
                f"file {str(path)!r} skipped: an archive is not a submission folder; unpack it into a folder of "
                f"its own beside it (for a zip: unzip {shlex.quote(path.name)} -d {shlex.quote(stem)}), then run "
                "again: the other folders' games are kept"
            )
    return notes


def load_submission(folder: Path, command: str | None = None, name: str | None = None) -> Submission:
    """The submission in `folder` (named after it unless `name` is given): its bot.toml if any, its command
    (the manifest's, else `command`, else the one found there). Never raises for what the folder holds: a bot.toml
    that is not valid becomes the submission's `problem`."""
    folder = folder.resolve()
    name = name or folder.name
    try:
        manifest = read_manifest(folder)
    except ManifestError as error:
        return Submission(name, folder, None, Manifest(), str(error))
    chosen = manifest.command or command
    if chosen is None and manifest.build is None:
        chosen = found_command(folder)
    return Submission(name, folder, chosen, manifest)


def read_manifest(folder: Path) -> Manifest:
    """The folder's bot.toml (an empty Manifest without one); ManifestError saying what is wrong with it."""
    path = folder / MANIFEST
    if not path.exists() and not path.is_symlink():
        return Manifest()
    if not path.is_file() or path.stat().st_size > MAX_MANIFEST_BYTES:
        raise ManifestError(f"{MANIFEST} is not a file of at most {MAX_MANIFEST_BYTES} bytes")
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError:
        return Manifest()
    except OSError as error:
        raise ManifestError(f"{MANIFEST} cannot be read ({error.strerror})") from None
    except tomllib.TOMLDecodeError as error:
        raise ManifestError(f"{MANIFEST} is not valid TOML ({error})") from None
    unknown = sorted(set(data) - set(_MANIFEST_KEYS))
    if unknown:
        raise ManifestError(f"{MANIFEST}: {unknown[0]!r} is not a key (the keys are {', '.join(_MANIFEST_KEYS)})")
    text = {key: _text(data, key) for key in _MANIFEST_KEYS}
    transport = text["transport"] or Transport.ZMQ.value
    if transport not in [kind.value for kind in Transport]:
        raise ManifestError(f'{MANIFEST}: transport must be "zmq" or "stdio", not {transport!r}')
    return Manifest(text["command"], Transport(transport), text["build"], text["language"], text["version"])


def _text(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ManifestError(f"{MANIFEST}: {key} must be a non-empty string, not {value!r}")
    return value


def cannot_run(reason: str) -> tuple[str, ...]:
    """A program that prints `reason` and exits with status 1 before any hello."""
    return (sys.executable, "-c", f"import sys; sys.exit({reason!r})")


def normalised(name: str) -> str:
    """The name as clashes are found: case folded, every character but letters and digits dropped."""
    return re.sub(r"[\W_]+", "", name.casefold())


def folder_files(folder: Path) -> Iterator[Path]:
    """The files of `folder` its digest covers (tournaments.league.identity.bot_files)."""
    return bot_files(folder)


def submission_spec(submission: Submission, game: str, folder: Path | None = None) -> BotSpec:
    """What runs a submission in `folder` (default: its own): its command over its transport, or a program that
    says why there is none it can run."""
    folder = folder or submission.folder
    try:
        return runnable_spec(submission, game, folder)
    except UnknownBot as error:
        return BotSpec(submission.name, cannot_run(str(error)), str(folder), folders=(str(folder),))


def runnable_spec(submission: Submission, game: str, folder: Path | None = None) -> BotSpec:
    """What runs a submission in `folder` (default: its own), or UnknownBot saying why nothing can: check-bot
    reports that reason instead of playing, where a league seats a program that says it (submission_spec)."""
    folder = folder or submission.folder
    if submission.problem is not None:
        raise UnknownBot(f"{submission.name}: {submission.problem}")
    if submission.command is None:
        raise FolderProblemError(folder_problem(folder, submission.build, built=folder != submission.folder))
    missing = missing_packages(folder)
    if missing is not None:
        raise FolderProblemError(missing)
    try:
        _check_command(submission.command, folder)
    except OutsideFolder as error:
        raise OutsideFolder(f"{submission.name}: {error}") from None
    try:
        resolved = resolve_bot(anchored(submission.argument(submission.command), folder), game)
    except UnknownBot as error:
        raise UnknownBot(f"cannot run {submission.command!r} in {folder}: {error}") from None
    return BotSpec(submission.name, resolved.command, str(folder), folders=(str(folder),), env=NO_BYTE_CODE)


NO_BYTE_CODE = (("PYTHONDONTWRITEBYTECODE", "1"),)
"""A submission's Python writes no byte code into its folder (unsandboxed, the folder is writable), which would
change its digest (tournaments.league.identity) between runs."""


def _check_command(command: str, folder: Path) -> None:
    """OutsideFolder (tournaments.league.folder_words) if `command` names a path outside `folder`: a policy's
    file, a program path given whole, or any word of a command line."""
    if command.startswith(STDIO_PREFIX):
        _check_command(command[len(STDIO_PREFIX) :], folder)
    elif command.startswith(POLICY_PREFIX):
        check_words([policy_target(command[len(POLICY_PREFIX) :])[0]], folder, Words.COMMAND)
    elif command in BUILT_IN_MODULES or command in (GAME_HEURISTIC, GAME_SEARCH):
        return
    elif (folder / command).exists():
        check_words([command], folder, Words.COMMAND)
    else:
        check_text(command, folder, Words.COMMAND)


def anchored(command: str, base: Path) -> str:
    """`command` with a relative program path made absolute against `base` (built-in names stay as they are;
    stdio:BOT is BOT anchored, policy:FILE its FILE)."""
    if command.startswith(STDIO_PREFIX):
        return STDIO_PREFIX + anchored(command[len(STDIO_PREFIX) :], base)
    if command.startswith(POLICY_PREFIX):
        path, function = policy_target(command[len(POLICY_PREFIX) :])
        return POLICY_PREFIX + str(base / path) + ("" if function is None else f":{function}")
    if command in BUILT_IN_MODULES or command in (GAME_HEURISTIC, GAME_SEARCH):
        return command
    if (base / command).exists():
        return str(base / command)
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    if words and not Path(words[0]).is_absolute() and ("/" in words[0] or (base / words[0]).is_file()):
        return shlex.join([str(base / words[0]), *words[1:]])
    return command

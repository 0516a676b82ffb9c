"""What the copies check compares: the text files of a submission folder, and the base code every student was
given, whose fingerprints are removed before two folders are compared.

    prints = folder_prints(Path("submissions/ann"))    # FolderPrints: each compared file's fingerprints
    base = base_prints((Path("course/handout"),))         # the scaffolds, the tutorial's code, and the teacher's

Every text file a bot can read is compared, whatever its name (`notes.log`, `README`, `bot.py`), with the
fingerprints of tournaments.classroom.winnow. Left out, and counted (LeftOut): dependencies (node_modules,
virtual environments and other installed packages, lock files: what `npm install` writes is the same for every
student), files that are not text (programs, object files, byte code: anything with a NUL byte or not UTF-8),
files over MAX_TEXT_BYTES, and links and special files (never followed).

The base code: every template of `referee new-bot` rendered for every language and every game
(tournaments.classroom.scaffold), the code the docs' tutorial gives (GIVEN: given/scout_tutorial.py, the
tutorial's listing, kept equal to it by tests/docs), and the folders or files the league's `[copies] base`
names. Its fingerprints are removed from every student's, whatever the language of either: a C student's copy
of the C scaffold is base code even if only three students write C.
"""

from __future__ import annotations

import enum
import functools
import os
import stat
import tempfile
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from referee.games import list_games

from ..league.identity import VERSION_CONTROL
from .scaffold import Language, new_bot
from .winnow import fingerprints

MAX_TEXT_BYTES = 2_000_000
"""A larger file is left out, and counted as such (generated tables, bundles): fingerprinting it would take long."""
DEPENDENCY_FOLDERS = frozenset({"node_modules", "bower_components", "site-packages", "dist-packages", "__pycache__"})
VIRTUAL_ENVIRONMENT = "pyvenv.cfg"
"""A folder holding this file is a Python virtual environment."""
LOCK_FILES = frozenset(
    {"package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "poetry.lock", "Pipfile.lock"}
)
GIVEN = "given"
"""The package folder (tournaments/classroom/given) of code the docs give every student."""


class LeftOut(enum.StrEnum):
    DEPENDENCIES = "dependencies"
    NOT_TEXT = "not text"
    TOO_LARGE = "too large"
    LINKS = "links and special files"


@dataclass(frozen=True)
class FolderPrints:
    files: Mapping[str, frozenset[int]]
    """Each compared file (its path relative to the folder) -> its fingerprints."""
    left_out: Mapping[LeftOut, int] = field(default_factory=dict)
    """How many files were left out, by why."""

    @functools.cached_property
    def all(self) -> frozenset[int]:
        return frozenset().union(*self.files.values())

    def holding(self, found: frozenset[int]) -> tuple[str, ...]:
        """The compared files that hold any of `found`."""
        return tuple(name for name, prints in self.files.items() if prints & found)

    def summary(self) -> str:
        """What was compared and what left out, in words: "3 files (bot.py, ...); left out: 812 dependencies"."""
        names = list(self.files)
        shown = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
        text = f"{len(names)} text file(s)" + (f" ({shown})" if names else "")
        left = ", ".join(f"{count} {why.value}" for why, count in self.left_out.items() if count)
        return text + (f"; left out: {left}" if left else "")


def folder_prints(folder: Path) -> FolderPrints:
    """The fingerprints of every text file of `folder` (or of the one file `folder` names), see above."""
    if folder.is_file():
        text = _text(folder)
        return FolderPrints({folder.name: fingerprints(text, folder.suffix)} if text else {})
    files: dict[str, frozenset[int]] = {}
    left_out: Counter[LeftOut] = Counter()
    for path, why in _files(folder, left_out):
        if why is not None:
            left_out[why] += 1
            continue
        text = _text(path)
        if text is None:
            left_out[LeftOut.NOT_TEXT] += 1
        elif text:
            files[path.relative_to(folder).as_posix()] = fingerprints(text, path.suffix)
    return FolderPrints(files, dict(left_out))


def _files(folder: Path, left_out: Counter[LeftOut]) -> Iterator[tuple[Path, LeftOut | None]]:
    """Every file of `folder` but version control's, with why it is left out (None: compare it); dependency
    folders are counted as one each and not walked."""
    for root, folders, files in os.walk(folder):
        kept = []
        for name in sorted(folders):
            if name in VERSION_CONTROL:
                continue
            if name in DEPENDENCY_FOLDERS or (Path(root, name, VIRTUAL_ENVIRONMENT)).is_file():
                left_out[LeftOut.DEPENDENCIES] += 1
                continue
            kept.append(name)
        folders[:] = kept
        for name in sorted(files):
            path = Path(root, name)
            mode = path.lstat().st_mode
            if name in LOCK_FILES:
                yield path, LeftOut.DEPENDENCIES
            elif not stat.S_ISREG(mode):
                yield path, LeftOut.LINKS
            elif path.lstat().st_size > MAX_TEXT_BYTES:
                yield path, LeftOut.TOO_LARGE
            else:
                yield path, None


def _text(path: Path) -> str | None:
    """The file's text, or None if it is not text (a NUL byte, or not UTF-8)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def base_prints(named: Sequence[Path] = ()) -> frozenset[int]:
    """The fingerprints of the base code: the scaffolds and the given code (`given_prints`), and each of `named`
    (a folder or a file)."""
    found = set(given_prints())
    for path in named:
        found |= folder_prints(path).all
    return frozenset(found)


@functools.cache
def given_prints() -> frozenset[int]:
    """The fingerprints of every scaffold `referee new-bot` makes (each language, for each game and for any
    game) and of the code the docs give (GIVEN)."""
    found: set[int] = set()
    with tempfile.TemporaryDirectory(prefix="referee-base-") as work:
        for language in Language:
            for game in ("", *list_games()):
                folder = Path(work, f"{language.value}-{game or 'any'}")
                new_bot(folder, language, game, name="bot")
                found |= folder_prints(folder).all
    given = resources.files("tournaments.classroom").joinpath(GIVEN)
    for item in given.iterdir():
        if item.is_file() and item.name.endswith(".py"):
            found |= fingerprints(item.read_text(encoding="utf-8"), ".py")
    return frozenset(found)

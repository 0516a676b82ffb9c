"""The versions store: LADDER/versions/DIGEST/, one immutable copy of each submitted folder, keyed by its content
hash (tournaments.league.submissions.folder_digest, as a league names a program)."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

from tournaments.league.submissions import folder_digest, folder_files

from .errors import UnknownItem

VERSIONS = "versions"


def digest_of(folder: Path) -> str:
    return folder_digest(folder).removeprefix("tree:")


def keep(store: Path, folder: Path) -> str:
    """Copy `folder` into the store (once per content: a copy already there is kept); returns its digest. Only
    regular files are copied, read-only, their run bits kept."""
    digest = digest_of(folder)
    target = store / digest
    if target.is_dir():
        return digest
    store.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".incoming-", dir=store))
    staging.chmod(0o755)
    for path in folder_files(folder):
        if not stat.S_ISREG(path.lstat().st_mode):
            continue
        copy = staging / path.relative_to(folder)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, copy)
        copy.chmod(0o555 if path.stat().st_mode & stat.S_IXUSR else 0o444)
    try:
        os.rename(staging, target)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        if not target.is_dir():
            raise
    return digest


def store_folder(ladder_folder: Path) -> Path:
    return ladder_folder / VERSIONS


def version_folder(store: Path, digest: str) -> Path:
    """A version's folder (UnknownItem if the store has none by that digest)."""
    if not digest.isalnum():
        raise UnknownItem(f"{digest!r} is not a version's content hash")
    folder = store / digest
    if not folder.is_dir():
        raise UnknownItem(f"no version {digest} in the store")
    return folder

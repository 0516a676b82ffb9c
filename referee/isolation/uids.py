"""Host uids for sandboxed bots: each running bot gets one of its own, so no two bots (of one match, of
concurrent matches, of league worker processes or of other referees on the machine) ever share a uid, and a
bot can neither signal, trace nor read the memory of another bot's processes.

A uid is leased by holding an exclusive flock on the file UIDS_DIR/<uid>.lock for as long as the bot runs: the
kernel drops the lock when its holder closes it or dies, so a referee that is killed leaves no uid taken.
The range is `DEFAULT_UID_RANGE` unless REFEREE_SANDBOX_UIDS=FIRST-LAST names another one; it must belong to
no user of the machine and own no files (bots only ever write into their own tmpfs).
"""

from __future__ import annotations

import fcntl
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from protocol.errors import BadInput, EnvironmentProblem

DEFAULT_UID_RANGE = range(2_000_000_000, 2_000_001_024)
"""Far above the uids that distributions give to users (< 60000), systemd's dynamic users (61184-65519) and
the subordinate ranges of container tools (100000 and up, 65536 each)."""
UID_RANGE_VARIABLE = "REFEREE_SANDBOX_UIDS"
UIDS_DIR = Path("/run/card-referee/uids")


class NoFreeUid(EnvironmentProblem, RuntimeError):
    """Every uid of the range is leased by a running bot (or the lock folder cannot be used)."""


class BadUidRange(BadInput, ValueError):
    """REFEREE_SANDBOX_UIDS is not FIRST-LAST with 0 < FIRST <= LAST < 2**32 - 1."""


def uid_range() -> range:
    """The uids bots are given: REFEREE_SANDBOX_UIDS=FIRST-LAST, or DEFAULT_UID_RANGE."""
    text = os.environ.get(UID_RANGE_VARIABLE)
    if not text:
        return DEFAULT_UID_RANGE
    first, sep, last = text.partition("-")
    try:
        uids = range(int(first), int(last) + 1)
    except ValueError:
        uids = range(0)
    if not sep or not uids or uids.start <= 0 or uids.stop > 2**32 - 1:
        raise BadUidRange(f"{UID_RANGE_VARIABLE}={text!r} is not FIRST-LAST with 0 < FIRST <= LAST < 4294967295")
    return uids


@dataclass(eq=False)
class UidLease:
    """One uid, held until `release` (or until this process ends)."""

    uid: int
    _lock_fd: int

    def release(self) -> None:
        if self._lock_fd >= 0:
            os.close(self._lock_fd)
            self._lock_fd = -1


_next_try = 0
_next_lock = threading.Lock()


def lease_uid(uids: range | None = None, directory: Path = UIDS_DIR) -> UidLease:
    """A uid of `uids` (default: `uid_range()`) that no running bot holds. Tries start after the last uid this
    process leased, so a process going through its bots rarely meets a held lock."""
    global _next_try
    uids = uid_range() if uids is None else uids
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as error:
        raise NoFreeUid(f"cannot use {directory} for the locks of sandbox uids: {error.strerror}") from None
    with _next_lock:
        start = _next_try
    for step in range(len(uids)):
        index = (start + step) % len(uids)
        lease = _try_lease(uids[index], directory)
        if lease is not None:
            with _next_lock:
                _next_try = index + 1
            return lease
    raise NoFreeUid(f"every sandbox uid ({uids.start}-{uids.stop - 1}) is held by a running bot")


def _try_lease(uid: int, directory: Path) -> UidLease | None:
    try:
        fd = os.open(directory / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return UidLease(uid, fd)

"""A worker's loop: claim a job, do it (tournaments.ladder.do_job: in the sandbox), report its result; again.

Two sources of jobs share the loop: `LocalJobs` (inside `referee serve`: the ladder's database and version store
directly) and `RemoteJobs` (`referee worker` on another machine: the server's API, versions fetched by content
hash into a cache and unpacked as hardened as an upload). A server that cannot be reached is waited out with a
growing pause (`Backoff`), both to claim and to report: a finished job's result is kept until the server takes
it, and a report that comes twice counts once (the ladder's report is idempotent). A job whose claim expired
while the server was away is reissued by the server; the late report is then refused or counted once, never
twice.
"""

from __future__ import annotations

import io
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from protocol.errors import BadInput, RefereeError
from tournaments.ladder import Job, JobResult, Ladder, Principal, RemoteHost, Role, do_job

from .client import LadderClient, ServerRefused, ServerUnreachable
from .uploads import Limits, Part, unpack_upload

LOG = logging.getLogger("referee.worker")
VERSION_LIMITS = Limits(upload_bytes=2**30, total_bytes=2**30, file_bytes=2**30, files=100_000, depth=64, ratio=10**6)
"""A version fetched from the server was checked as an upload already; these caps only guard the worker's disk."""


class JobSource(Protocol):
    name: str

    def claim(self) -> Job | None: ...

    def report(self, job: Job, result: JobResult) -> None: ...

    def fetch(self, digest: str) -> Path: ...


@dataclass(frozen=True)
class Backoff:
    first: float = 0.5
    longest: float = 30.0

    def pauses(self) -> Callable[[], float]:
        """A function giving the next pause: first, twice that, ... up to longest."""
        current = [self.first / 2]

        def next_pause() -> float:
            current[0] = min(self.longest, current[0] * 2)
            return current[0]

        return next_pause


def work(
    source: JobSource,
    stop: threading.Event,
    idle: float = 1.0,
    backoff: Backoff = Backoff(),  # noqa: B008
    jobs: int | None = None,
    host: RemoteHost | None = None,
) -> int:
    """Claim, do and report jobs until `stop` is set (or `jobs` are done); the number done. `host`: this worker
    hosts remote seats (its source claims the open division's matches too)."""
    done = 0
    while not stop.is_set() and (jobs is None or done < jobs):
        job = _patiently(source.claim, stop, backoff)
        if job is None:
            stop.wait(idle)
            continue
        LOG.info("%s: %s job %s", source.name, job.kind.value, job.id)
        try:
            result = do_job(job, source.fetch, host=host)
        except RefereeError as error:
            LOG.error(
                "%s: %s job %s failed (%s); the server will reissue it", source.name, job.kind.value, job.id, error
            )
            stop.wait(idle)
            continue
        _patiently(partial(source.report, job, result), stop, backoff)
        LOG.info("%s: reported %s job %s", source.name, job.kind.value, job.id)
        done += 1
    return done


def _patiently(call: Callable[[], Any], stop: threading.Event, backoff: Backoff) -> Any:
    """`call()`, retried after a growing pause while the server cannot be reached (None if stopped first)."""
    pause = backoff.pauses()
    while not stop.is_set():
        try:
            return call()
        except ServerUnreachable as error:
            wait = pause()
            LOG.warning("%s; trying again in %.1f s", error, wait)
            stop.wait(wait)
    return None


class LocalJobs:
    """Jobs straight from the ladder (a worker inside `referee serve`)."""

    def __init__(self, ladder: Ladder, name: str) -> None:
        self.ladder = ladder
        self.name = name
        self.who = Principal(Role.WORKER, name)

    def claim(self) -> Job | None:
        return self.ladder.claim(self.who, self.name)

    def report(self, job: Job, result: JobResult) -> None:
        self.ladder.report(self.who, job.id, result)

    def fetch(self, digest: str) -> Path:
        return self.ladder.fetch_version(digest)


class RemoteJobs:
    """Jobs over the server's API (`referee worker`), versions cached in `cache` by content hash."""

    def __init__(self, client: LadderClient, name: str, cache: Path, hosts_remote: bool = False) -> None:
        self.client = client
        self.name = name
        self.cache = cache
        self.hosts_remote = hosts_remote

    def claim(self) -> Job | None:
        data = self.client.claim(self.name, self.hosts_remote)
        return None if data is None else Job.from_dict(data)

    def report(self, job: Job, result: JobResult) -> None:
        try:
            self.client.report(job.id, result.to_dict())
        except ServerRefused as error:
            if error.status not in (404, 409):
                raise
            LOG.warning("job %s was not taken (%s): it was reissued and done elsewhere", job.id, error)

    def fetch(self, digest: str) -> Path:
        folder = self.cache / _safe(digest)
        if folder.is_dir():
            return folder
        self.cache.mkdir(parents=True, exist_ok=True)
        data = self.client.archive(digest)
        scratch = Path(tempfile.mkdtemp(dir=self.cache, prefix=".fetch-"))
        try:
            unpacked = unpack_upload([Part("version.tar.gz", io.BytesIO(data))], scratch / "v", VERSION_LIMITS)
            os.replace(unpacked, folder)
        except OSError:
            if not folder.is_dir():
                raise
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return folder


def _safe(digest: str) -> str:
    """A content hash as one folder name (HEX, or KIND:HEX as KIND-HEX); anything else is not a hash."""
    parts = digest.split(":")
    if len(parts) > 2 or not all(part.isascii() and part.isalnum() for part in parts):
        raise BadInput(f"{digest!r} is not a content hash")
    return "-".join(parts)


def worker_name(index: int) -> str:
    return f"{os.uname().nodename}-{os.getpid()}-{index}"

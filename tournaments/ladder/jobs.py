"""Doing one job, in the worker's process: the one function a worker calls between its claim and its report.

    result = do_job(job, fetch_version)        # fetch_version(digest) -> the version's folder

Everything the job needs is in its payload, versions named by content hash: a local worker fetches them from
the ladder's folder, a remote one downloads them through the server. The bots run in the sandbox; where the
machine gives only a partial one, a check is refused unless `allow_partial` (check-bot's rule). A match with
remote seats (the open division) needs `host`, the worker's listen address and key pair (match_job.RemoteHost)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from referee.isolation import sandbox as sandboxing

from .check_job import run_check
from .errors import NoSandbox
from .match_job import RemoteHost, run_match_job
from .values import Job, JobKind, JobResult


def require_sandbox(instead: str = "") -> None:
    """NoSandbox unless bots can run in the sandbox here (a partial one will do for matches: its games record the
    level; a check asks for more itself). Without it the referee would run them unsandboxed, as this user: a
    worker checks this before it claims anything, and do_job again before it runs a bot. `instead`: what the
    caller may do about it, added to the message."""
    log = logging.getLogger(sandboxing.__name__)
    level = log.level
    log.setLevel(logging.ERROR)  # the probe's warning says bots then run unsandboxed: here they do not run at all
    try:
        found = sandboxing.probe()
    finally:
        log.setLevel(level)
    if found.problem is not None:
        raise NoSandbox(
            f"this machine cannot run the sandbox ({found.problem}), and a ladder never runs a student's bot "
            f"outside it: `referee doctor` says what it needs{instead}"
        )


def do_job(
    job: Job,
    fetch_version: Callable[[str], Path],
    *,
    sandbox: bool = True,
    allow_partial: bool = False,
    host: RemoteHost | None = None,
) -> JobResult:
    if sandbox:
        require_sandbox()
    if job.kind is JobKind.CHECK:
        folder = fetch_version(job.payload["digest"])
        return JobResult(JobKind.CHECK, run_check(job.payload, folder, sandbox=sandbox, allow_partial=allow_partial))
    return JobResult(JobKind.MATCH, run_match_job(job.payload, fetch_version, sandbox=sandbox, host=host))

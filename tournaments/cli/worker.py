"""`referee worker`: a machine that plays a ladder's checks and matches, pulled over HTTP(S)."""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import signal
import threading
from pathlib import Path

import click

from .output import echo


@click.command()
@click.option("--server", required=True, help="The ladder's address, e.g. https://ladder.example.edu.")
@click.option(
    "--token",
    required=True,
    envvar="REFEREE_WORKER_TOKEN",
    help="The ladder's worker token (printed by `referee ladder init`; or set REFEREE_WORKER_TOKEN).",
)
@click.option(
    "-j", "--jobs", type=click.IntRange(min=1), default=None, help="Jobs played at once (default: the machine's cores)."
)
@click.option(
    "--cache",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where fetched versions are kept (default: ~/.cache/card-referee/versions).",
)
def worker(server: str, token: str, jobs: int | None, cache: Path | None) -> None:
    """Claim jobs from the ladder at --server, play them in this machine's sandbox, post their results.

    Needs only outgoing connections (it works behind a firewall or NAT). Versions are fetched by content hash
    and kept in --cache. While the server cannot be reached (restarting, the network) the worker waits and
    tries again with a growing pause; a finished job's result is kept until the server takes it. Stop it with
    Ctrl-C: a job it was playing is reissued by the server.
    """
    from tournaments.server.serving import default_workers

    count = jobs or default_workers()
    cache = cache or Path.home() / ".cache" / "card-referee" / "versions"
    echo(f"working for {server} with {count} job(s) at once")
    if count == 1:
        remote_worker_main(server, token, cache, 1, spawned=False)
        return
    context = multiprocessing.get_context("spawn")
    processes = [
        context.Process(target=remote_worker_main, args=(server, token, cache, index + 1), daemon=True)
        for index in range(count)
    ]
    for process in processes:
        process.start()
    try:
        for process in processes:
            process.join()
    finally:
        for process in processes:
            process.terminate()
            process.join(timeout=30)


def remote_worker_main(server: str, token: str, cache: Path, index: int, spawned: bool = True) -> None:
    """One worker's loop. A spawned one stops after its job on SIGTERM and quietly on Ctrl-C; run inline, the
    command's own signal handling stops it (exit 130 / 143), and the server reissues the job."""
    from tournaments.server.client import LadderClient
    from tournaments.server.worker import RemoteJobs, work, worker_name

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    stop = threading.Event()
    jobs = RemoteJobs(LadderClient(server, token), worker_name(index), cache)
    if not spawned:
        work(jobs, stop)
        return
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with contextlib.suppress(KeyboardInterrupt):
        work(jobs, stop)

"""`referee worker`: a machine that plays a ladder's checks and matches, pulled over HTTP(S)."""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import signal
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .output import echo

if TYPE_CHECKING:
    from tournaments.ladder import RemoteHost


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
@click.option(
    "--listen",
    default=None,
    metavar="tcp://HOST:PORT",
    help="Host the open division's remote seats here: students' `referee connect` reaches this address "
    "(the ladder file's [open] connect). Plays one job at a time.",
)
@click.option(
    "--keys",
    "keys_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="With --listen: the folder holding this worker's pair, referee.key and referee.key_secret "
    "(`referee keys new referee -o DIR`; its public key is the ladder file's [open] server_key).",
)
@click.option(
    "--lag-quota",
    "lag_quota",
    type=click.IntRange(min=0),
    default=None,
    metavar="MS",
    help="With --listen: each remote seat's lag quota per game, as `referee play --lag-quota`.",
)
def worker(
    server: str,
    token: str,
    jobs: int | None,
    cache: Path | None,
    listen: str | None,
    keys_dir: Path | None,
    lag_quota: int | None,
) -> None:
    """Claim jobs from the ladder at --server, play them in this machine's sandbox, post their results.

    Needs only outgoing connections (it works behind a firewall or NAT). Versions are fetched by content hash
    and kept in --cache. While the server cannot be reached (restarting, the network) the worker waits and
    tries again with a growing pause; a finished job's result is kept until the server takes it. Stop it with
    Ctrl-C: a job it was playing is reissued by the server.

    With --listen and --keys it also hosts the open division's matches (the students' remote bots), those
    first: it listens at --listen for each match, allowing only the keys of that match's remote seats. Other
    workers never take such a match.
    """
    from tournaments.ladder import require_sandbox
    from tournaments.server.serving import default_workers

    host = _host(listen, keys_dir, lag_quota)
    require_sandbox()
    if host is not None and jobs not in (None, 1):
        raise click.UsageError("a worker with --listen plays one job at a time (one address): leave out -j")
    count = 1 if host is not None else jobs or default_workers()
    cache = cache or Path.home() / ".cache" / "card-referee" / "versions"
    echo(f"working for {server} with {count} job(s) at once")
    if host is not None:
        echo(f"hosting remote seats at {host.listen}, server key {host.pair.public.decode()}")
    if count == 1:
        remote_worker_main(server, token, cache, 1, spawned=False, host=host)
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


def _host(listen: str | None, keys_dir: Path | None, lag_quota: int | None) -> RemoteHost | None:
    from protocol.curve_keys import REFEREE_KEY, key_files, load_pair
    from referee.wire.lag_quota import DEFAULT_LAG_QUOTA_MS
    from tournaments.ladder import RemoteHost

    if listen is None:
        if keys_dir is not None or lag_quota is not None:
            raise click.UsageError("--keys and --lag-quota go with --listen (a worker that hosts remote seats)")
        return None
    if not listen.startswith("tcp://"):
        raise click.UsageError(f"--listen takes tcp://HOST:PORT, not {listen!r}")
    if keys_dir is None:
        raise click.UsageError("--listen needs --keys DIR, the folder of this worker's referee.key_secret")
    pair = load_pair(key_files(keys_dir, REFEREE_KEY)[1])
    return RemoteHost(listen, pair, DEFAULT_LAG_QUOTA_MS if lag_quota is None else lag_quota)


def remote_worker_main(
    server: str, token: str, cache: Path, index: int, spawned: bool = True, host: RemoteHost | None = None
) -> None:
    """One worker's loop. A spawned one stops after its job on SIGTERM and quietly on Ctrl-C; run inline, the
    command's own signal handling stops it (exit 130 / 143), and the server reissues the job."""
    from tournaments.server.client import LadderClient
    from tournaments.server.worker import RemoteJobs, work, worker_name

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    stop = threading.Event()
    jobs = RemoteJobs(LadderClient(server, token), worker_name(index), cache, hosts_remote=host is not None)
    if not spawned:
        work(jobs, stop, host=host)
        return
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with contextlib.suppress(KeyboardInterrupt):
        work(jobs, stop)

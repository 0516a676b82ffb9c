"""`referee serve`'s one entry point: the app on Uvicorn, N local worker processes claiming jobs from the
ladder's database directly, and a thread that reissues claims never reported and takes the deadline's snapshot
when the ladder file's deadline passes.

Each local worker is a process of its own (spawned, so it shares no database connection or thread with the
server) and opens the ladder itself; a worker killed mid-job leaves a claim that `reissue_expired` hands out
again, and the ladder counts a result once however often it is reported.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import uvicorn

from tournaments.ladder import Ladder, open_ladder

from .app import create_app
from .edge import Settings

REISSUE_SECONDS = 10.0
GRACE_SECONDS = 5
"""On Ctrl-C, open requests get this long to finish; the live table's streams never do, and are then closed."""


@dataclass(frozen=True)
class ServeOptions:
    folder: Path
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 0
    db_url: str | None = None
    settings: Settings = Settings()
    reissue_seconds: float = REISSUE_SECONDS


def default_workers() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def serve_ladder(options: ServeOptions, started: Callable[[str], None] = lambda _: None) -> None:
    """Serve until interrupted (Ctrl-C or SIGTERM); `started` is told the URL once the server listens."""
    with open_ladder(options.folder, options.db_url) as ladder, local_workers(options), housekeeping(ladder, options):
        app = create_app(ladder, options.settings)
        config = uvicorn.Config(
            app,
            host=options.host,
            port=options.port,
            log_level="warning",
            proxy_headers=True,
            forwarded_allow_ips="127.0.0.1",
            timeout_graceful_shutdown=GRACE_SECONDS,
        )
        url = f"http://{options.host}:{options.port}"
        server = _Server(config, lambda: started(url), app.state.edge.closing.set)
        server.run()


class _Server(uvicorn.Server):
    """uvicorn.Server that says when it listens, and tells the app when it stops."""

    def __init__(self, config: uvicorn.Config, on_start: Callable[[], None], on_stop: Callable[[], None]) -> None:
        super().__init__(config)
        self.on_start = on_start
        self.on_stop = on_stop

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self.on_start()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.on_stop()
        await super().shutdown(sockets)


@contextlib.contextmanager
def housekeeping(ladder: Ladder, options: ServeOptions) -> Iterator[None]:
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(options.reissue_seconds):
            at = datetime.now(UTC)
            ladder.reissue_expired(at)
            if ladder.deadline_due(at):
                ladder.deadline_snapshot()

    thread = threading.Thread(target=loop, name="reissue", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=options.reissue_seconds + 5)


@contextlib.contextmanager
def local_workers(options: ServeOptions) -> Iterator[list[multiprocessing.context.SpawnProcess]]:
    context = multiprocessing.get_context("spawn")
    processes = [
        context.Process(
            target=local_worker_main,
            args=(options.folder, options.db_url, f"local-{index + 1}"),
            name=f"ladder-worker-{index + 1}",
            daemon=True,
        )
        for index in range(options.workers)
    ]
    for process in processes:
        process.start()
    try:
        yield processes
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.join(timeout=30)
            if process.is_alive():
                process.kill()


def local_worker_main(folder: Path, db_url: str | None, name: str) -> None:
    """A local worker process: claims and does jobs until SIGTERM (or Ctrl-C) stops it."""
    from .worker import LocalJobs, work

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with contextlib.suppress(KeyboardInterrupt), open_ladder(folder, db_url) as ladder:
        work(LocalJobs(ladder, name), stop)

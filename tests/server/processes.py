"""Real processes for the end-to-end tests: `referee ladder init` / `invite` / `serve` / `submit` / `worker`, run
as a user would run them (the venv's `referee`, their own process groups), on loopback ports of their own."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sandbox_checks

REFEREE = Path(sys.executable).with_name("referee")
BOUND_S = 120.0
"""Generous: only a hung process takes this long (the machine may be loaded)."""


def referee(*args: str, cwd: Path, check: bool = True, timeout: float = BOUND_S) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([str(REFEREE), *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if check:
        assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def get_json(url: str, token: str | None = None) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as answer:
        return json.loads(answer.read())


def status_of(url: str, token: str | None = None) -> int:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as answer:
            answer.read()
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return error.code


def eventually(holds: Callable[[], Any], what: str, bound: float = BOUND_S, pause: float = 0.25) -> Any:
    """The first true value of `holds()` within `bound` seconds (errors while waiting count as not yet)."""
    deadline = time.monotonic() + bound
    last: object = None
    while time.monotonic() < deadline:
        try:
            value = holds()
        except (OSError, urllib.error.URLError, ValueError) as error:
            value, last = None, error
        if value:
            return value
        time.sleep(pause)
    raise AssertionError(f"{what} did not happen within {bound:.0f} s (last error: {last})")


@dataclass
class Running:
    """A started `referee` process, in a process group of its own, its output kept in a file."""

    process: subprocess.Popen[bytes]
    log: Path

    def kill(self) -> None:
        """SIGKILL the whole group (a server and its local workers, a worker and its jobs' bots)."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=BOUND_S)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.kill()

    def output(self) -> str:
        return self.log.read_text(errors="replace")


def start(*args: str, cwd: Path, log: Path) -> Running:
    with log.open("ab") as out:
        process = subprocess.Popen(
            [str(REFEREE), *args], cwd=cwd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    return Running(process, log)


@dataclass
class LadderSite:
    """A ladder folder made by the CLI, its tokens, and its server when started."""

    root: Path
    admin: str
    worker: str
    students: dict[str, str]
    port: int = field(default_factory=free_port)
    server: Running | None = None
    workers: list[Running] = field(default_factory=list)
    db_url: str | None = None
    """None: the ladder's SQLite file; else the PostgreSQL URL given to every command as `--db`."""

    @property
    def folder(self) -> Path:
        return self.root / "ladder"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def serve(self, jobs: int) -> float:
        """Start `referee serve`; the seconds until /api/health answered. Local workers need the sandbox (the
        test skips without it, or fails where CI requires it)."""
        if jobs:
            sandbox_checks.require_sandbox()
        started = time.monotonic()
        self.server = start(
            "serve",
            str(self.folder),
            "--port",
            str(self.port),
            "-j",
            str(jobs),
            *self._db(),
            cwd=self.root,
            log=self.root / "serve.log",
        )
        eventually(lambda: self._alive() and get_json(f"{self.url}/api/health")["status"] == "ok", "/api/health")
        return time.monotonic() - started

    def fast(self) -> None:
        """Short matches (two deals) and a short claim timeout, so the tests see many results and reissues."""
        text = (self.folder / "ladder.toml").read_text()
        text = text.replace("[ladder]\n", "deals_per_match = 2\n\n[ladder]\nclaim_timeout_s = 8\n", 1)
        (self.folder / "ladder.toml").write_text(text)

    def submit(self, student: str, folder: Path) -> subprocess.CompletedProcess[str]:
        """`referee submit FOLDER` with the student's token; its exit code not checked."""
        token = self.students[student]
        return referee("submit", str(folder), "--server", self.url, "--token", token, cwd=self.root, check=False)

    def _db(self) -> list[str]:
        return [] if self.db_url is None else ["--db", self.db_url]

    def _alive(self) -> bool:
        assert self.server is not None
        assert self.server.process.poll() is None, self.server.output()
        return True

    def start_worker(self, jobs: int = 1) -> Running:
        sandbox_checks.require_sandbox()
        index = len(self.workers)
        running = start(
            "worker",
            "--server",
            self.url,
            "--token",
            self.worker,
            "-j",
            str(jobs),
            "--cache",
            str(self.root / f"cache-{index}"),
            cwd=self.root,
            log=self.root / f"worker-{index}.log",
        )
        self.workers.append(running)
        return running

    def close(self) -> None:
        for running in [*self.workers, *([self.server] if self.server else [])]:
            running.stop()


def make_ladder(root: Path, students: tuple[str, ...] = ("ann", "bob", "cat"), db_url: str | None = None) -> LadderSite:
    db = [] if db_url is None else ["--db", db_url]
    created = json.loads(
        referee(
            "ladder",
            "init",
            "ladder",
            "--game",
            "scout",
            "--players",
            "3",
            "--baseline",
            "heuristic",
            "--baseline",
            "random",
            "--json",
            *db,
            cwd=root,
        ).stdout
    )
    tokens = json.loads(referee("ladder", "invite", "ladder", *students, "--json", *db, cwd=root).stdout)
    return LadderSite(root, created["admin_token"], created["worker_token"], tokens, db_url=db_url)

"""`referee submit`: upload a submission folder to a ladder server and wait for its check."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from .output import echo

CHECKING = "checking"
ACCEPTED = "accepted"


@click.command()
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--server", required=True, help="The ladder's address, e.g. https://ladder.example.edu.")
@click.option("--token", required=True, envvar="REFEREE_TOKEN", help="Your token (or set REFEREE_TOKEN).")
@click.option(
    "--wait",
    "wait_seconds",
    default=600.0,
    show_default=True,
    type=click.FloatRange(min=0),
    help="Seconds to wait for the check (0: do not wait).",
)
def submit(folder: Path, server: str, token: str, wait_seconds: float) -> None:
    """Pack FOLDER (a bot folder: bot.toml or bot.py, bot, bot.js) as a tar.gz, upload it as a new version, wait
    for the server to build and check it, and print the version and the verdict.

    Exit status 0 when the version is accepted (it joins the ladder, replacing your previous one), 1 when it
    is refused (the check report says why) or the upload is refused (too large, over your quota...).
    """
    from tournaments.server.client import LadderClient

    client = LadderClient(server, token)
    version = client.submit(folder)
    echo(f"uploaded version {version['id']} ({version['digest'][:20]}...)")
    deadline = time.monotonic() + wait_seconds
    started = time.monotonic()
    detail = client.version(version["id"])
    live = sys.stderr.isatty()
    if detail["version"]["status"] == CHECKING and not live:
        echo("checking...", err=True)
    while detail["version"]["status"] == CHECKING and time.monotonic() < deadline:
        if live:
            echo(f"\rchecking... {time.monotonic() - started:.0f} s", nl=False, err=True)
        time.sleep(1.0)
        detail = client.version(version["id"])
    if live:
        echo("", err=True)
    status = detail["version"]["status"]
    echo(f"version {detail['version']['id']}: {status}" + (f": {detail['verdict']}" if detail.get("verdict") else ""))
    if status == CHECKING:
        echo(f"still checking after {wait_seconds:.0f} s: see its page on the server")
        raise SystemExit(1)
    if status != ACCEPTED:
        raise SystemExit(1)

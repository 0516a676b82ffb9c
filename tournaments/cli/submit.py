"""`referee submit`: upload a submission folder to a ladder server and wait for its check; or register the CURVE
public key of a remote bot for the ladder's open division (`--key NAME.key`)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .output import echo

if TYPE_CHECKING:
    from tournaments.server.client import LadderClient

SERVER_KEY_FILE = "ladder-server.key"
CHECKING = "checking"
ACCEPTED = "accepted"


@click.command()
@click.argument("folder", required=False, type=click.Path(exists=True, file_okay=False, path_type=Path))
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
@click.option(
    "--key",
    "key_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Register this public key file (NAME.key, from `referee keys new NAME`) as your remote bot in the "
    "ladder's open division, replacing any key you registered before; FOLDER is then optional.",
)
def submit(folder: Path | None, server: str, token: str, wait_seconds: float, key_file: Path | None) -> None:
    """Pack FOLDER (a bot folder: bot.toml or bot.py, bot, bot.js) as a tar.gz, upload it as a new version, wait
    for the server to build and check it, and print the version and the verdict.

    Exit status 0 when the version is accepted (it joins the ladder, replacing your previous one), 1 when it
    is refused (the check report says why) or the upload is refused (too large, over your quota...).

    With --key NAME.key, register that public key for the open division (where the ladder allows remote bots),
    write the ladder's server key beside it as ladder-server.key, and print the `referee connect` line to play.
    """
    from tournaments.server.client import LadderClient

    if folder is None and key_file is None:
        raise click.UsageError("give a FOLDER to upload, or --key NAME.key to register")
    client = LadderClient(server, token)
    if key_file is not None:
        register(client, key_file)
    if folder is not None:
        upload(client, folder, wait_seconds)


def register(client: LadderClient, key_file: Path) -> None:
    """Register `key_file`'s public key and show how to connect with its secret."""
    from protocol.curve_keys import PUBLIC_SUFFIX, SECRET_SUFFIX, load_public

    public = load_public(key_file)
    seat = client.register_key(public.decode())
    key = seat["key"]
    echo(f"registered your public key: your remote bot is {key['entrant']} in the open division")
    server_file = key_file.with_name(SERVER_KEY_FILE)
    write_public_key(server_file, seat["server_key"])
    stem = key_file.name.removesuffix(SECRET_SUFFIX).removesuffix(PUBLIC_SUFFIX)
    secret = key_file.with_name(stem + SECRET_SUFFIX)
    echo(f"wrote the ladder's server key to {server_file}; play with (again after each match):")
    echo(f"  referee connect {seat['connect']} --key {secret} --server-key {server_file} -- BOT")


def write_public_key(path: Path, public_key: str) -> None:
    """A public key file as zmq.auth writes one, which `referee connect --server-key` reads."""
    path.write_text(f'metadata\ncurve\n    public-key = "{public_key}"\n', encoding="utf-8")


def upload(client: LadderClient, folder: Path, wait_seconds: float) -> None:
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

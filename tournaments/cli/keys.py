"""`referee keys new NAME`: a CURVE key pair for a remote seat (protocol/curve_keys.py)."""

from __future__ import annotations

from pathlib import Path

import click

from protocol.curve_keys import new_key_pair

from .output import echo


@click.group()
def keys() -> None:
    """CURVE keys for remote seats (`referee play --listen`, `referee connect`)."""


@keys.command("new")
@click.argument("name")
@click.option(
    "-o",
    "--out",
    "folder",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="The folder to write NAME.key and NAME.key_secret into (made if missing).",
)
@click.option("--force", is_flag=True, default=False, help="Replace an existing pair of that name.")
def new_keys(name: str, folder: Path, force: bool) -> None:
    """Make a key pair NAME: NAME.key (public: give it to the organiser, or as --server-key to authors when NAME
    is `referee`) and NAME.key_secret (keep it to yourself)."""
    public, secret = new_key_pair(name, folder, force=force)
    echo(f"public key: {public}\nsecret key: {secret} (keep it private)")

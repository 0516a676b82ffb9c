"""`referee connect tcp://HOST:PORT --key SECRET --server-key PUBLIC -- BOT...`: play a remote seat from here
(protocol/remote_client.py)."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from protocol.curve_keys import load_pair, load_public
from protocol.remote_client import relay
from referee.botspec import resolve_bot

from .output import echo


@click.command("connect", context_settings={"ignore_unknown_options": True})
@click.argument("endpoint", metavar="tcp://HOST:PORT")
@click.option(
    "--key",
    "key_file",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Your secret key file (NAME.key_secret; the organiser holds NAME.key and seats you as remote:NAME).",
)
@click.option(
    "--server-key",
    "server_key_file",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The referee's public key file (referee.key, from the organiser).",
)
@click.option("--game", default="scout", show_default=True, help="The game, for built-in names such as heuristic.")
@click.option(
    "--wait",
    "wait_s",
    type=click.FloatRange(min=0.1),
    default=60.0,
    show_default=True,
    help="Seconds to wait for the referee to accept the connection.",
)
@click.argument("bot", nargs=-1, required=True, type=click.UNPROCESSED)
def connect(
    endpoint: str, key_file: Path, server_key_file: Path, game: str, wait_s: float, bot: tuple[str, ...]
) -> None:
    """Run BOT here and play its remote seat at the referee listening at tcp://HOST:PORT (`referee play --listen`).

    BOT is what `referee play` takes (a built-in name, a program, a command line, stdio:BOT), after `--`. Its
    frames go to the referee over CURVE, encrypted and authenticated with your key; the referee's clock runs on
    the referee's machine, so the network's round trip counts in every decision's time (the referee credits your
    measured lag from a per-game quota, `referee play --lag-quota`). Between rotations of the match the bot is
    started afresh. A dropped connection is made again, the bot running on, until the referee's reconnect grace is
    over (`referee play --reconnect-grace`; your clock runs meanwhile). When the match is over this returns.
    """
    command = resolve_bot(bot[0] if len(bot) == 1 else shlex.join(bot), game).command
    outcome = relay(endpoint, load_pair(key_file), load_public(server_key_file), command, wait_s=wait_s, say=echo)
    echo(f"done: {outcome.bot_starts} bot start(s), {outcome.frames_up} frame(s) sent, {outcome.frames_down} received")

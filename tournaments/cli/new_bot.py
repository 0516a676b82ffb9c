"""`referee new-bot --lang python|c|js [--game G] DIR`: a small, commented bot to start from, which passes
check-bot as written."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from referee.games import list_games

from ..classroom.scaffold import DEFAULT_GAME, Language, new_bot
from .output import echo


@click.command("new-bot")
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--lang",
    "language",
    type=click.Choice([language.value for language in Language]),
    required=True,
    help="python (with the SDK), c (libzmq + msgpack-c, a Makefile), js (Node.js, package.json).",
)
@click.option(
    "--game",
    type=click.Choice(list_games()),
    default=None,
    help="The game whose actions and observation the comments describe [default: any game].",
)
@click.option("--name", default=None, help="The bot's name in its hello [default: the folder's name].")
def new_bot_command(directory: Path, language: str, game: str | None, name: str | None) -> None:
    """Write a new bot into DIR (new, or empty): its source, its build files and a README.

    The bot plays a random legal action, with comments on where to make it smarter; as written it passes
    `referee check-bot`. Prints how to build, play and check it.
    """
    scaffold = new_bot(directory, Language(language), game or "", name)
    echo(f"wrote {scaffold.name} ({scaffold.language.value}) in {scaffold.directory}:")
    for path in scaffold.files:
        echo(f"  {path.name}")
    checked = scaffold.game or DEFAULT_GAME
    bot = shlex.quote(scaffold.bot)
    echo("next:")
    if scaffold.build is not None:
        echo(f"  {shlex.join(scaffold.build)}")
    echo(f"  referee play {checked} {bot} random")
    echo(f"  referee check-bot {checked} {bot}")

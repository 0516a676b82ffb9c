"""`referee tournament forget`: drop a bot's games from a league's store."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from ..store import StoreError
from .league import _load, _store

_db_option = click.option(
    "--db", type=click.Path(dir_okay=False), help="The result store  [default: LEAGUE.sqlite beside the file]"
)


@click.command(name="forget")
@click.argument("league", metavar="LEAGUE.toml", type=click.Path(dir_okay=False))
@click.argument("bots", metavar="BOT...", nargs=-1, required=True)
@_db_option
def forget_command(league: str, bots: tuple[str, ...], db: str | None) -> None:
    """Drop every stored game of each BOT from the league's store, so that the next run plays them again.

    For a bot resubmitted under the same name (the store refuses to mix its programs) or one withdrawn from
    the league: the matches it played are dropped whole (the other bots' results in them too) and the bot
    is forgotten; `referee tournament run LEAGUE.toml` then plays those matches with the programs the file
    names now.
    """
    store_path = Path(db) if db else _load(league).default_db
    with _store(store_path, create=False) as store:
        try:
            forgotten = store.forget(bots)
        except StoreError as error:
            raise click.ClickException(str(error)) from error
    rerun = shlex.join(["referee", "tournament", "run", league, *(["--db", db] if db else [])])
    click.echo(
        f"Forgot {', '.join(map(repr, forgotten.bots))}: dropped {forgotten.games} game(s) of "
        f"{forgotten.matches} match(es) from {store_path}; {rerun} plays them again"
    )

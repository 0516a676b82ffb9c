"""`referee games`: the registered games, their player counts and options."""

from __future__ import annotations

import click
from tabulate import tabulate

from referee.games import list_games, load_game

from .options import echo_json, json_option, tablefmt_option
from .output import echo


@click.command()
@json_option
@tablefmt_option
def games(as_json: bool, tablefmt: str) -> None:
    """List the games, their player counts and their options (with defaults)."""
    infos = [load_game(name).info for name in list_games()]
    if as_json:
        echo_json(
            [
                {
                    "name": info.name,
                    "title": info.title,
                    "players": [info.min_players, info.max_players],
                    "options": {
                        option.name: {"default": option.default, "help": option.help} for option in info.options
                    },
                }
                for info in infos
            ]
        )
        return
    for info in infos:
        echo(f"{info.name}: {info.title}, {info.min_players} to {info.max_players} players")
        if info.summary:
            echo(f"  {info.summary}")
        if info.options:
            rows = [(option.name, option.default, option.help) for option in info.options]
            table = tabulate(rows, headers=["option", "default", "meaning"], tablefmt=tablefmt)
            echo("\n".join("  " + line for line in table.splitlines()))
        echo()

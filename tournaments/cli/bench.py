"""`referee bench ...`: the benchmarks that check the speed targets."""

from __future__ import annotations

import click

from referee.games import GameError, list_games

from ..bench.engine import bench_engine
from .options import echo_json, json_option


@click.group()
def bench() -> None:
    """Benchmarks: engine speed, referee protocol overhead, league throughput."""


@bench.command()
@click.argument("game", type=click.Choice(list_games()))
@click.option("--players", "-p", type=int, default=4, show_default=True, help="Seats at the table.")
@click.option("--seconds", type=float, default=3.0, show_default=True, help="Play whole games for at least this long.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the deals and of the random choices.")
@json_option
def engine(game: str, players: int, seconds: float, seed: int, as_json: bool) -> None:
    """Random self-play of GAME in this process (legal actions listed in full at every decision).

    Prints decisions/s, rounds/s and games/s on one core.
    """
    try:
        result = bench_engine(game, players, seconds, seed)
    except GameError as error:
        raise click.ClickException(str(error)) from error
    figures = {
        "game": result.game,
        "players": result.players,
        "games": result.games,
        "decisions": result.decisions,
        "seconds": round(result.seconds, 3),
        "decisions_per_s": round(result.decisions_per_second),
        "rounds_per_s": round(result.rounds_per_second, 1),
        "games_per_s": round(result.games_per_second, 1),
    }
    if as_json:
        echo_json(figures)
        return
    click.echo(
        f"{game}, {players} players: {figures['decisions_per_s']:,} decisions/s, "
        f"{figures['rounds_per_s']:,} rounds/s, {figures['games_per_s']:,} games/s "
        f"({result.games} games, {result.decisions:,} decisions in {result.seconds:.2f} s)"
    )

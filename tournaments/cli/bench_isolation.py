"""`referee bench isolation`: bot start, referee per decision and games/s at each isolation level."""

from __future__ import annotations

import click
from tabulate import tabulate

from referee.isolation.sandbox import Isolation

from ..bench.isolation import LEVELS, bench_isolation
from .options import echo_json, json_option, tablefmt_option
from .output import echo


@click.command(name="isolation")
@click.option(
    "--isolation",
    "levels",
    type=click.Choice([level.value for level in LEVELS]),
    multiple=True,
    help="A level to measure; repeat for several  [default: none, full and kernel]",
)
@click.option("--players", "-p", type=click.IntRange(min=2, max=5), default=4, show_default=True)
@click.option("--games", type=click.IntRange(min=2), default=12, show_default=True, help="Games per match.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--repeats",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="Runs of every level, interleaved; the medians are reported.",
)
@json_option
@tablefmt_option
def isolation_bench(
    levels: tuple[str, ...], players: int, games: int, seed: int, repeats: int, as_json: bool, tablefmt: str
) -> None:
    """What each isolation level costs, with a SCOUT match of SDK random bots played as leagues play (fresh
    processes for every seat rotation): starting and stopping a rotation's bots, the referee's median time per
    decision, and games per second, each the median of --repeats interleaved runs, and as a ratio to no sandbox
    where that level is measured. none runs bots unsandboxed, full
    in the bubblewrap sandbox, kernel under a gVisor kernel per bot (refused where runsc cannot run).
    """
    chosen = [Isolation(level) for level in levels] or list(LEVELS)
    figures = bench_isolation(chosen, players=players, games=games, seed=seed, repeats=repeats)
    base = next((figure for figure in figures if figure.level is Isolation.NONE), None)
    rows = []
    for figure in figures:
        row: dict[str, object] = {
            "isolation": figure.level.value,
            "table_start_ms": round(figure.table_start_ms, 1),
            "decision_us": round(figure.decision_us, 1),
            "games_per_s": round(figure.games_per_s, 2),
        }
        if base is not None:
            row["table_start_ratio"] = round(figure.table_start_ms / base.table_start_ms, 2)
            row["decision_ratio"] = round(figure.decision_us / base.decision_us, 2)
            row["games_per_s_ratio"] = round(figure.games_per_s / base.games_per_s, 3)
        rows.append(row)
    if as_json:
        echo_json({"game": "scout", "players": players, "games": games, "repeats": repeats, "levels": rows})
        return
    echo(f"scout, {players} SDK random bots, {games} games per match, medians of {repeats} runs:")
    echo(tabulate(rows, headers="keys", tablefmt=tablefmt))

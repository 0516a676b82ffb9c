"""`referee bench league`: games/s of a league with one worker process and with more."""

from __future__ import annotations

import click

from ..bench.league import BENCH_LEAGUE, bench_league
from .options import echo_json, json_option, pin_option, sandbox_option
from .output import echo


@click.command(name="league")
@click.argument("league", metavar="[LEAGUE.toml]", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--concurrency",
    "-j",
    "concurrencies",
    type=click.IntRange(min=1),
    multiple=True,
    help="Worker processes of one run; repeat for several runs  [default: 1 and 2]",
)
@pin_option
@sandbox_option
@json_option
def league_bench(
    league: str | None, concurrencies: tuple[int, ...], pinned: bool, sandbox: bool, as_json: bool
) -> None:
    """Play the same league from an empty store with each concurrency and compare games/s.

    Without LEAGUE.toml, plays tournaments/examples/bench.toml (360 SCOUT games of the built-in bots). The
    target: with --concurrency 2 on 2 idle cores, at least 1.7 times the games/s of --concurrency 1. "cores
    busy" (CPU time of the run and its processes over wall time) shows how many cores the run really got.
    """
    result = bench_league(league or BENCH_LEAGUE, concurrencies or (1, 2), pinned=pinned, sandbox=sandbox)
    runs = [
        {
            "concurrency": run.concurrency,
            "games": run.games,
            "seconds": round(run.seconds, 3),
            "games_per_s": round(run.games_per_second, 3),
            "speedup": round(result.speedup(run), 3),
            "cores_busy": round(run.cores_busy, 2),
        }
        for run in result.runs
    ]
    if as_json:
        echo_json({"league": result.league, "pinned": pinned, "sandbox": sandbox, "runs": runs})
        return
    for run in runs:
        echo(
            f"{result.league}, concurrency {run['concurrency']}: {run['games']} games in {run['seconds']:.2f} s, "
            f"{run['games_per_s']:.2f} games/s ({run['speedup']:.2f}x), {run['cores_busy']:.2f} cores busy"
            + ("" if pinned else " (not pinned)")
        )

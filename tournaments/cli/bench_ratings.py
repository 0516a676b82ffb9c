"""`referee bench ratings`: seconds of `tournament table` and `tournament rate` at 100,000 and 1,000,000 games."""

from __future__ import annotations

from pathlib import Path

import click
from tabulate import tabulate

from ..bench.ratings import RatingsTiming, bench_ratings, fill_store, synthetic_games
from ..league.store import LeagueStore
from ..ratings.elo import DEFAULT_BOOTSTRAP
from .options import echo_json, json_option, tablefmt_option
from .output import echo

_TARGETS_S = {100_000: 3.0, 1_000_000: 60.0}
_MEMORY = ":memory:"


@click.command(name="ratings")
@click.option(
    "--games",
    "sizes",
    type=click.IntRange(min=2),
    multiple=True,
    help="Games in the store at each timing; repeat for several  [default: 100,000 and 1,000,000]",
)
@click.option("--bots", type=click.IntRange(min=2), default=10, show_default=True, help="Bots of the league.")
@click.option("--players", "-p", type=click.IntRange(2, 5), default=2, show_default=True, help="Seats at a table.")
@click.option(
    "--bootstrap", type=click.IntRange(min=0), default=DEFAULT_BOOTSTRAP, show_default=True, help="Resamples."
)
@click.option(
    "--db",
    type=click.Path(dir_okay=False),
    help="Fill this store file (and keep it; games it already holds count toward each size)  "
    "[default: a store in memory]",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the games and the bootstrap.")
@json_option
@tablefmt_option
def ratings_bench(
    sizes: tuple[int, ...],
    bots: int,
    players: int,
    bootstrap: int,
    db: str | None,
    seed: int,
    as_json: bool,
    tablefmt: str,
) -> None:
    """Time the rating paths of `tournament table` (the store's outcome counts, tallies, ratings with the
    bootstrap) and `tournament rate` (a JSON lines file of the same games), and the live leader line's refit.

    Synthetic games of BOTS bots of evenly spread strength at tables of PLAYERS seats go into a league store
    (in memory, or the file --db names) as a league run adds them; the store grows to each size in turn.
    Targets on 2 cores: 100,000 games with 1000 resamples in 3 s, 1,000,000 in 60 s; the leader's refit the
    same at every size.
    """
    if players > bots:
        raise click.UsageError(f"--players {players} needs at least as many --bots, got {bots}")
    rows = []
    with LeagueStore(Path(db) if db else Path(_MEMORY)) as store:
        for size in sorted(set(sizes or _TARGETS_S)):
            held = store.game_count()
            if held < size:
                fill_store(store, synthetic_games(size - held, bots, players, seed + held))
            timing = bench_ratings(store, bootstrap, seed, Path(db).parent if db else None)
            rows.append(_row(timing))
    if as_json:
        echo_json({"store": db or "memory", "runs": rows})
        return
    echo(f"store: {db or 'in memory'}; {bootstrap} bootstrap resamples; seconds of each path:")
    echo(tabulate(rows, headers="keys", tablefmt=tablefmt, disable_numparse=True))


def _row(timing: RatingsTiming) -> dict[str, object]:
    contents = timing.contents
    target = _TARGETS_S.get(contents.games)
    return {
        "games": contents.games,
        "bots": contents.bots,
        "seats": ",".join(map(str, contents.seats)),
        "outcomes": contents.outcomes,
        "bootstrap": timing.bootstrap,
        "table_s": round(timing.table_s, 2),
        "rate_s": round(timing.rate_s, 2),
        "leader_ms": round(1000 * timing.leader_s, 1),
        "target_s": "" if target is None else target,
        "leader": f"{timing.leader} {timing.top_elo:+.0f}",
    }

"""`referee bench settle`: games and order correctness of the settling scheduler against a round robin."""

from __future__ import annotations

import math

import click
from tabulate import tabulate

from ..bench.settle import SettleBench, SettleComparison, compare
from ..ratings.settling import DEFAULT_LEVEL, DEFAULT_MIN_GAMES, DEFAULT_RESOLUTION, SettleRule
from .options import echo_json, json_option, tablefmt_option
from .output import echo

BENCH_RESOLUTION = 20.0
"""Elo: the resolution the bench settles at, where ordering close bots is what the games are for."""


@click.command(name="settle")
@click.option(
    "--bots",
    "sizes",
    type=click.IntRange(min=3),
    multiple=True,
    help="Bots of a simulated league; repeat for several  [default: 8 and 20]",
)
@click.option(
    "--seats",
    "seat_counts",
    type=click.IntRange(2, 5),
    multiple=True,
    help="Seats at a table; repeat for several  [default: 2 and 4]",
)
@click.option("--repetitions", type=click.IntRange(min=1), default=3, show_default=True, help="Leagues per size.")
@click.option("--spread", type=click.FloatRange(min=0), default=300.0, show_default=True, help="Sd of the true Elo.")
@click.option("--floor", type=click.IntRange(min=1), default=20, show_default=True, help="Games per bot first.")
@click.option(
    "--budget-per-bot",
    type=click.IntRange(min=1),
    default=400,
    show_default=True,
    help="The adaptive run stops unsettled at this many games per bot.",
)
@click.option("--bootstrap", type=click.IntRange(min=1), default=200, show_default=True, help="Resamples.")
@click.option(
    "--settle-los",
    type=click.FloatRange(0.5, 1, min_open=True, max_open=True),
    default=DEFAULT_LEVEL,
    show_default=True,
    help="As on `tournament run`.",
)
@click.option(
    "--resolution",
    type=click.FloatRange(min=0, min_open=True),
    default=BENCH_RESOLUTION,
    show_default=True,
    help=f"As on `tournament run` (Elo), whose default is {DEFAULT_RESOLUTION:g}. The bench's is finer: at "
    f"+/-{DEFAULT_RESOLUTION:g} both schedules order every pair that far apart early, and what tau measures "
    "beyond is near ties, a coin flip to both (docs/explanation/ratings.md, or the docs site's 'Ratings' page).",
)
@click.option("--top", type=click.IntRange(min=1), default=3, show_default=True, help="Top-k checked as a set.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the leagues and their games.")
@json_option
@tablefmt_option
def settle_bench(
    sizes: tuple[int, ...],
    seat_counts: tuple[int, ...],
    repetitions: int,
    spread: float,
    floor: int,
    budget_per_bot: int,
    bootstrap: int,
    settle_los: float,
    resolution: float,
    top: int,
    seed: int,
    as_json: bool,
    tablefmt: str,
) -> None:
    """Simulated leagues of known strengths (true Elo normal with sd --spread; Plackett-Luce finishing orders):
    the settling scheduler of `tournament run --until-settled` (a floor of games, then rounds on the open
    adjacent pairs) against a round robin of the same tables, at equal games and at equal correctness.

    Columns: games of the adaptive runs (mean) and the share that settled; Kendall tau (1: the true order) and
    top-k right of both at the adaptive games (tau_r: over the pairs whose true difference is beyond the
    resolution, the ones a settled table claims to order); the 95% intervals' coverage of the true Elo for both (a gap
    would be the bias of stopping when settled; pair_cov the same for the adjacent pairs' intervals of the
    difference); rr_games_x: the round robin's games, as a multiple of the
    adaptive's, at which its order is first as right (tau) as the adaptive run's at its stop, against the games
    at which the adaptive run first was, per league, median first (">8": not by 8 times); rr_games_x_r the same
    for tau_r. The default run
    takes a few minutes on 2 cores; --bots 100 --seats 5 and more --repetitions for bigger ones.
    """
    rows = []
    rule = SettleRule(settle_los, resolution, DEFAULT_MIN_GAMES)
    for bots in sorted(set(sizes or (8, 20))):
        for seats in sorted(set(seat_counts or (2, 4))):
            if seats > bots:
                continue
            bench = SettleBench(bots, seats, repetitions, spread, floor, budget_per_bot, bootstrap, rule, top, seed)
            comparison = compare(bench, on_repetition=lambda _: echo(".", nl=False, err=True))
            echo(err=True)
            rows.append(_row(comparison))
    if as_json:
        echo_json({"spread": spread, "resolution": resolution, "settle_los": settle_los, "runs": rows})
        return
    echo(
        f"true Elo sd {spread:g}; settled: separated at LOS {100 * rule.decisive:g}% or within +/-{resolution:g} Elo; "
        f"{repetitions} leagues per row"
    )
    echo(tabulate(rows, headers="keys", tablefmt=tablefmt, disable_numparse=True))


def _row(comparison: SettleComparison) -> dict[str, object]:
    adaptive, robin = comparison.adaptive, comparison.round_robin

    def mean(values: list[float]) -> float:
        return sum(values) / len(values)

    return {
        "bots": comparison.bench.bots,
        "seats": comparison.bench.seats,
        "games": round(comparison.adaptive_games),
        "settled": f"{sum(run.settled for run in adaptive)}/{len(adaptive)}",
        "tau": round(mean([run.tau for run in adaptive]), 3),
        "rr_tau": round(mean([run.tau for run in robin]), 3),
        "tau_r": round(mean([run.tau_beyond for run in adaptive]), 3),
        "rr_tau_r": round(mean([run.tau_beyond for run in robin]), 3),
        "top_k": f"{sum(run.top_right for run in adaptive)}/{len(adaptive)}",
        "rr_top_k": f"{sum(run.top_right for run in robin)}/{len(robin)}",
        "coverage": round(mean([run.coverage for run in adaptive]), 3),
        "rr_coverage": round(mean([run.coverage for run in robin]), 3),
        "pair_cov": round(mean([run.pair_coverage for run in adaptive]), 3),
        "rr_pair_cov": round(mean([run.pair_coverage for run in robin]), 3),
        "rr_games_x": _ratios(comparison.equal_correctness),
        "rr_games_x_r": _ratios(comparison.equal_correctness_beyond),
    }


def _ratios(ratios: tuple[float, ...]) -> str:
    """The median ratio, then each league's: "2.1 (1.8 2.1 >8)"."""
    ordered = sorted(ratios)
    middle = (
        ordered[len(ordered) // 2]
        if len(ordered) % 2
        else (ordered[len(ordered) // 2 - 1] + ordered[len(ordered) // 2]) / 2
    )
    shown = " ".join(_ratio(ratio) for ratio in ratios)
    return f"{_ratio(middle)} ({shown})"


def _ratio(ratio: float) -> str:
    return ">8" if math.isinf(ratio) else f"{ratio:.2f}"

"""`referee bench protocol --remote` (its printing) and `referee bench remote-latency`: remote seats measured."""

from __future__ import annotations

from typing import Any

import click
from tabulate import tabulate

from ..bench.latency import LatencyRun, LatencySettings, bank_120_ms, latency_runs
from ..bench.remote import RemoteProtocolBenchResult, SeatKindRuns
from .options import echo_json, json_option, tablefmt_option
from .output import echo


def _kind_figures(kind: SeatKindRuns) -> dict[str, Any]:
    return {
        "decisions": kind.count,
        "decision_median_us": round(kind.decisions.median_us, 1),
        "decision_mean_us": round(kind.decisions.mean_us, 1),
        "round_trip_median_us": round(kind.round_trip.median_us, 1),
        "own_least_us": round(kind.own.least_us, 1),
        "own_median_us": round(kind.own.median_us, 1),
        "own_most_us": round(kind.own.most_us, 1),
        "outside_clock_least_us": round(kind.outside_clock.least_us, 1),
        "outside_clock_median_us": round(kind.outside_clock.median_us, 1),
        "outside_clock_most_us": round(kind.outside_clock.most_us, 1),
    }


def _shown(value: float) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:,.1f}"


def echo_remote_protocol(result: RemoteProtocolBenchResult, one_core: bool, as_json: bool) -> None:
    """Print the remote protocol bench: per kind of seat, decisions, floors and the referee's own cost."""
    figures = {
        "game": result.game,
        "players": result.players,
        "games_per_run": result.games,
        "runs": result.repeats,
        "one_core": one_core,
        "local": _kind_figures(result.local),
        "remote": _kind_figures(result.remote),
        "ratio": round(result.ratio, 2),
        "outside_clock_ratio": round(result.outside_ratio, 2),
        "pooled_ratio": round(result.pooled_ratio, 2),
    }
    if as_json:
        echo_json(figures)
        return
    rows = [
        ("decisions", "decisions"),
        ("per decision, median (us)", "decision_median_us"),
        ("floor: prepared requests, median (us)", "round_trip_median_us"),
        ("own cost, least (us)", "own_least_us"),
        ("own cost, median (us)", "own_median_us"),
        ("own cost, most (us)", "own_most_us"),
        ("outside the clock, least (us)", "outside_clock_least_us"),
        ("outside the clock, median (us)", "outside_clock_median_us"),
        ("outside the clock, most (us)", "outside_clock_most_us"),
    ]
    local, remote = _kind_figures(result.local), _kind_figures(result.remote)
    echo(
        f"{result.game}, {result.players} players, {result.runs_text}{', on one core' if one_core else ''}, "
        "bots unsandboxed, remote seats (CURVE on loopback tcp, SDK bots connecting directly) and local seats (ipc). "
        "A decision is the referee's work and a round trip; the floor is the round trip alone (the same "
        "bots answering requests prepared in advance over the same transport); the referee's own cost is a run's "
        "median decision less its floor's median, over the runs:"
    )
    table = [[label, _shown(local[key]), _shown(remote[key])] for label, key in rows]
    echo(tabulate(table, headers=["", "local", "remote"], colalign=("left", "right", "right")))
    echo(f"ratio remote / local of the median own costs: {result.ratio:.2f}")
    echo(
        "outside the clock: a decision's interval less its time on the referee's clock (no round trip in it, so "
        "the least touched by load; the sending and receiving are inside the clock). ratio remote / local: "
        f"{result.outside_ratio:.2f}"
    )
    echo(
        f"pooled over the runs (each kind's median decision less its median round trip): local "
        f"{result.local.pooled_own_us:.1f} us, remote {result.remote.pooled_own_us:.1f} us, ratio "
        f"{result.pooled_ratio:.2f}"
    )


def _latency_row(run: LatencyRun) -> dict[str, Any]:
    settings = run.settings
    return {
        "delay_ms": settings.delay_ms,
        "share": settings.share,
        "quota_ms": settings.quota_ms,
        "bank_ms": settings.bank_ms,
        "decisions": run.decisions,
        "games": run.games,
        "forfeited": run.forfeited_games,
        "faults": ",".join(run.fault_causes) or "-",
        "credit_ms": round(run.credit_ms),
        "quota_left_at_fault_ms": ",".join(str(int(round(left))) for left in run.quota_left_at_faults_ms) or "-",
        "lag_ms": round(run.lag_median_ms, 1),
        "proxy_added_ms": round(run.added_round_trip_ms, 1),
        "lag_error_ms": round(run.lag_error_ms, 1),
        "worst_lag_error_ms": round(run.worst_lag_error_ms, 1),
    }


@click.command(name="remote-latency")
@click.option(
    "--delay",
    "delays",
    type=click.FloatRange(min=0),
    multiple=True,
    help="Milliseconds the proxy adds each way; repeat for several  [default: 0, 50 and 150]",
)
@click.option("--jitter", type=click.FloatRange(min=0), default=5.0, show_default=True, help="At most, either way, ms.")
@click.option("--move-time", type=click.IntRange(min=1), default=100, show_default=True, help="Per decision (ms).")
@click.option(
    "--decisions", type=click.IntRange(min=1), default=100, show_default=True, help="Of the 60% bot, at least."
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the deals and the jitter.")
@json_option
@tablefmt_option
def latency_bench(
    delays: tuple[float, ...], jitter: float, move_time: int, decisions: int, seed: int, as_json: bool, tablefmt: str
) -> None:
    """A remote bot behind a delay proxy on loopback: forfeits, lag quota and recorded lag, at each delay.

    At each delay, a remote SDK bot (connecting directly) that thinks 60% of its move time plays one-game matches
    against three local random bots until it has answered --decisions (time bank 2 s, lag quota 60 s: a long game's
    200 decisions at 300 ms of lag), and one that thinks 120% plays one game (bank 1 s, 200 ms with no delay; quota
    600 ms). Printed: its decisions, games and forfeited games, its faults, what the quota paid, the quota left when
    it faulted, and the lag the referee recorded (median over its decisions) against the round trip the proxy says
    it added (its mean added delay each way, summed): their difference, and the largest at any decision. The runs
    go side by side.
    """
    chosen = delays or (0.0, 50.0, 150.0)
    settings = [
        LatencySettings(delay, 0.6, jitter, move_time, 2000, 60_000, decisions, seed=seed) for delay in chosen
    ] + [LatencySettings(delay, 1.2, jitter, move_time, bank_120_ms(delay), 600, 1, seed=seed + 7) for delay in chosen]
    rows = [_latency_row(run) for run in latency_runs(settings)]
    if as_json:
        echo_json(rows)
        return
    echo(
        f"a remote bot behind a delay proxy on loopback (jitter at most {jitter:g} ms either way), move time "
        f"{move_time} ms, against three local random bots:"
    )
    echo(tabulate(rows, headers="keys", tablefmt=tablefmt))

"""`referee bench protocol --remote` (its printing) and `referee bench remote-latency`: remote seats measured."""

from __future__ import annotations

from typing import Any

from tabulate import tabulate

from ..bench.remote import RemoteProtocolBenchResult, SeatKindRuns
from .options import echo_json
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
    }


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
    ]
    local, remote = _kind_figures(result.local), _kind_figures(result.remote)
    echo(
        f"{result.game}, {result.players} players, {result.runs_text}{', on one core' if one_core else ''}, bots "
        "unsandboxed: every seat local (ipc) vs every seat remote (CURVE on loopback tcp, SDK bots connecting "
        "directly). A decision is the referee's work and a round trip; the floor is the round trip alone (the same "
        "bots answering requests prepared in advance over the same transport); the referee's own cost is a run's "
        "median decision less its floor's median, over the runs:"
    )
    table = [[label, local[key], remote[key]] for label, key in rows]
    echo(tabulate(table, headers=["", "local", "remote"], floatfmt=".1f"))
    echo(f"ratio remote / local of the median own costs: {result.ratio:.2f}")

"""`referee bench ladder`: a served ladder under a class's submissions, against `tournament run` on one machine."""

from __future__ import annotations

import click

from .options import echo_json, json_option
from .output import echo
from .serve import needs_server_extra


@click.command(name="ladder")
@click.option("--students", type=click.IntRange(min=1), default=30, show_default=True, help="Students submitting.")
@click.option(
    "--minutes",
    type=click.FloatRange(min=0.1),
    default=5.0,
    show_default=True,
    help="How long the ladder plays from the first submission (then verdicts and first games still come in).",
)
@json_option
def ladder_bench(students: int, minutes: float, as_json: bool) -> None:
    """Serve a ladder on SQLite in a temporary folder (`referee serve -j 2`, a real process), let STUDENTS
    submit a small Python bot each (every fifth one broken) through the HTTP API within a minute, and report
    every verdict, the time from a submission to its first rated game, the p95 latency of /api/table under
    that load and the games per hour per worker core; then play an equivalent league as `referee tournament
    run` does, on the same machine, so that the server's own cost shows as a ratio (the aim: under 10 %).
    """
    needs_server_extra()
    from ..bench.ladder import bench_ladder, report

    result = report(bench_ladder(students, minutes))
    if as_json:
        echo_json(result)
        return
    first, table = result["first_game_s"], result["table_ms"]
    ladder, league = result["ladder"], result["league"]
    echo(
        f"{result['students']} students: {result['verdicts']} verdicts back "
        f"({result['accepted']} accepted, {result['refused']} refused)"
    )
    echo(f"submission to first rated game: median {first['median']} s, p95 {first['p95']} s ({first['placed']} placed)")
    echo(f"/api/table under load: p95 {table['p95']} ms over {table['polls']} polls")
    echo(
        f"ladder: {ladder['games']} games in {ladder['seconds']} s, {ladder['per_core_hour']} games/h per worker "
        f"core; tournament run: {league['per_core_hour']} games/h per core; server cost "
        f"{result['server_cost']:.1%} (load average {', '.join(map(str, result['load_average']))})"
    )

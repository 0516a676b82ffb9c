"""`referee tournament forget` and `referee tournament export`: change what a league's store holds, or hand it
over as rows."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from ..export import ExportFormat, write_rows
from ..league.league_file import load_league
from ..league.store import LeagueStore
from .output import echo

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
    store_path = Path(db) if db else load_league(league).default_db
    with LeagueStore(store_path, create=False) as store:
        forgotten = store.forget(bots)
    rerun = shlex.join(["referee", "tournament", "run", league, *(["--db", db] if db else [])])
    echo(
        f"Forgot {', '.join(map(repr, forgotten.bots))}: dropped {forgotten.games} game(s) of "
        f"{forgotten.matches} match(es) from {store_path}; {rerun} plays them again"
    )


@click.command(name="export")
@click.argument("league", metavar="[LEAGUE.toml]", required=False, type=click.Path(dir_okay=False))
@_db_option
@click.option(
    "--format",
    "export_format",
    type=click.Choice([kind.value for kind in ExportFormat]),
    default=ExportFormat.CSV.value,
    show_default=True,
    help="csv (a header line, then one line per row) or jsonl (one JSON object per line).",
)
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write here instead of to stdout.")
def export_command(league: str | None, db: str | None, export_format: str, output: str | None) -> None:
    """Write one row per stored game and seat of a league (give LEAGUE.toml, or --db FILE).

    Columns: match, game (index in the match), seed (of the deal), seat, seating (the bots in seat order, a
    JSON array in CSV), bot, rank (1 best; a forfeit ranks last), score (a forfeit scores the table's
    lowest), forfeited, faults (that seat's in that game), decisions, mean_ms and max_ms (decision times).
    """
    if (league is None) == (db is None):
        raise click.UsageError("give either LEAGUE.toml or --db FILE")
    store_path = Path(db) if db else load_league(league).default_db  # type: ignore[arg-type]
    with LeagueStore(store_path, create=False) as store:
        rows = store.seat_rows()
    if output is None:
        write_rows(rows, ExportFormat(export_format), sys.stdout)
        return
    try:
        with open(output, "w", newline="", encoding="utf-8") as out:
            count = write_rows(rows, ExportFormat(export_format), out)
    except OSError as error:
        raise click.ClickException(f"cannot write {output!r}: {error.strerror}") from error
    echo(f"Wrote {count} row(s) to {output}", err=True)

"""`referee ladder init DIR ...` and `referee ladder invite DIR NAME...`: making a class ladder and its students'
tokens. The library (tournaments.ladder) needs the `server` extra, so it is imported only when a command runs,
and its absence is a one-line error."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime
from pathlib import Path
from types import ModuleType

import click

from referee.games import list_games

from .output import echo

SERVER_EXTRA = "pip install 'card-referee[server]'"


def _library() -> ModuleType:
    try:
        import tournaments.ladder as library
    except ImportError as error:
        raise click.ClickException(f"the ladder needs {error.name}, of the server extra: {SERVER_EXTRA}") from None
    return library


@click.group("ladder")
def ladder() -> None:
    """A class ladder: students submit bots, workers play them, the table settles (docs/explanation/ladder.md).

    `referee ladder init` makes the folder, `referee ladder invite` gives students their tokens, and
    `referee serve` runs it.
    """


@ladder.command("init")
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False, path_type=Path))
@click.option("--game", type=click.Choice(list_games()), required=True, help="The game the ladder plays.")
@click.option("--players", type=click.IntRange(2), required=True, help="Seats per table.")
@click.option(
    "--baseline",
    "baselines",
    multiple=True,
    metavar="BOT",
    help="A built-in bot every student is measured against (repeatable): random, heuristic, ...",
)
@click.option(
    "--deadline",
    type=click.DateTime(["%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d"]),
    default=None,
    help="When the ladder freezes and is marked (UTC) [default: none; set it later in the ladder file].",
)
@click.option("--seed", type=click.IntRange(0, 2**31 - 1), default=None, help="The deals' seed [default: random].")
@click.option("--db", "db_url", default=None, metavar="URL", help="A PostgreSQL URL [default: DIR/ladder.sqlite].")
@click.option("--json", "as_json", is_flag=True, help="Print the tokens as JSON.")
def init_command(
    directory: Path,
    game: str,
    players: int,
    baselines: tuple[str, ...],
    deadline: datetime | None,
    seed: int | None,
    db_url: str | None,
    as_json: bool,
) -> None:
    """Make a ladder folder DIR: its ladder file (a league file with a [ladder] table), its database, and the
    staff's and workers' tokens, printed once (only their hashes are kept)."""
    library = _library()
    created = library.init_ladder(directory, game, players, baselines, deadline=deadline, seed=seed, db_url=db_url)
    if as_json:
        echo(
            json.dumps(
                {
                    "folder": str(created.folder),
                    "admin_token": created.admin_token,
                    "worker_token": created.worker_token,
                }
            )
        )
        return
    echo(f"made the ladder {created.folder} ({game}, {players} seats)")
    echo(f"admin token (staff; shown once): {created.admin_token}")
    echo(f"worker token (for `referee worker`; shown once): {created.worker_token}")
    echo(f"next: referee ladder invite {directory} NAME... ; referee serve {directory}")


@ladder.command("invite")
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.argument("names", nargs=-1, metavar="NAME...")
@click.option(
    "--roster",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    default=None,
    help="A CSV file whose first column lists the students (a header `name` is skipped).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write name,token rows to this CSV file instead of printing them.",
)
@click.option("--db", "db_url", default=None, metavar="URL", help="The ladder's PostgreSQL URL, if it has one.")
@click.option("--json", "as_json", is_flag=True, help="Print {name: token} as JSON.")
def invite_command(
    directory: Path, names: tuple[str, ...], roster: Path | None, output: Path | None, db_url: str | None, as_json: bool
) -> None:
    """Give each student NAME (or on the roster) a token, printed once; inviting a student again revokes the
    token they had."""
    library = _library()
    with library.open_ladder(directory, db_url) as opened:
        tokens: dict[str, str] = opened.invite(names, roster)
    if output is not None:
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(["name", "token"])
        writer.writerows(tokens.items())
        output.write_text(buffer.getvalue(), encoding="utf-8")
        output.chmod(0o600)
        echo(f"wrote {len(tokens)} token(s) to {output}")
    elif as_json:
        echo(json.dumps(tokens))
    else:
        for name, token in tokens.items():
            echo(f"{name}\t{token}")


@ladder.command("freeze")
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--db", "db_url", default=None, metavar="URL", help="The ladder's PostgreSQL URL, if it has one.")
def freeze_command(directory: Path, db_url: str | None) -> None:
    """Take the deadline's snapshot now: each student's last accepted version, the ladder frozen, and the final
    run queued (the server takes it by itself at the ladder file's deadline)."""
    library = _library()
    with library.open_ladder(directory, db_url) as opened:
        count = opened.deadline_snapshot()
    echo(f"froze {directory}: {count} student(s) in the snapshot; the workers now play the final run")


@ladder.command("marks")
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Write marks.csv and gradescope.json here instead of printing the CSV.",
)
@click.option("--db", "db_url", default=None, metavar="URL", help="The ladder's PostgreSQL URL, if it has one.")
def marks_command(directory: Path, output: Path | None, db_url: str | None) -> None:
    """Each student's mark from their snapshot version's games against the baselines (the ladder file's
    [marks]), as CSV, or with -o also as Gradescope results (one per student, the Elo as leaderboard entry)."""
    library = _library()
    with library.open_ladder(directory, db_url) as opened:
        if output is None:
            echo(opened.marks_csv(), nl=False)
            return
        paths = opened.export_marks(output)
    echo(f"wrote {paths[0]} and {paths[1]}")

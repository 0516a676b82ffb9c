"""`referee serve`: a ladder's web app and API, with local workers (tournaments.server.serving)."""

from __future__ import annotations

from pathlib import Path

import click

from protocol.errors import EnvironmentProblem

from .output import echo

SERVER_EXTRA = "the server's packages are not installed: pip install 'card-referee[server]'"


def needs_server_extra() -> None:
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise EnvironmentProblem(SERVER_EXTRA) from None


@click.command()
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port to listen on.")
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=0),
    default=None,
    help="Local worker processes that play the ladder's checks and matches (default: the machine's cores; 0: "
    "none, only remote `referee worker`s).",
)
@click.option(
    "--db",
    "db_url",
    default=None,
    help="Database URL (default: the SQLite file in FOLDER), e.g. postgresql+psycopg://user@host/ladder.",
)
@click.option(
    "--secure-cookies",
    is_flag=True,
    help="Mark the login cookie Secure: set it when a reverse proxy serves the ladder over HTTPS.",
)
def serve(folder: Path, host: str, port: int, jobs: int | None, db_url: str | None, secure_cookies: bool) -> None:
    """Serve the ladder in FOLDER (made by `referee ladder init`): the leaderboard, students' pages and
    uploads, the staff page, the API (/api/docs), and a job queue that local and remote workers play.

    Listens on 127.0.0.1 unless --host says otherwise: put it behind a reverse proxy (Caddy, nginx) for TLS
    before students reach it over a network. Stop it with Ctrl-C; claims of jobs it had handed out are
    reissued when it starts again.
    """
    needs_server_extra()
    from tournaments.server.edge import Settings
    from tournaments.server.serving import ServeOptions, default_workers, serve_ladder

    workers = default_workers() if jobs is None else jobs
    if workers:
        from tournaments.ladder import require_sandbox

        require_sandbox(instead="; `-j 0` serves without local workers, for `referee worker`s on other machines")
    options = ServeOptions(folder, host, port, workers, db_url, Settings(secure_cookies=secure_cookies))
    serve_ladder(options, lambda url: echo(f"serving {folder} at {url} with {workers} local worker(s)"))

"""Making a ladder folder: its ladder file, its database, and the staff's and workers' tokens (shown once).

LADDER/ladder.toml       the ladder file (tournaments.ladder.ladder_file)
LADDER/ladder.sqlite     the database, unless a PostgreSQL URL is given
LADDER/versions/DIGEST/  each submitted version, immutable
LADDER/work/             builds and logs of the local workers
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from sqlalchemy import insert

from . import schema
from .accounts import issue_token
from .database import default_url, open_engine
from .errors import LadderFileError
from .ladder_file import LADDER_FILE, ladder_file_text, parse_ladder_file
from .values import ADMIN, LadderCreated, Role

WORKERS = "workers"
"""The name of the shared worker token's principal."""


def init_ladder(
    folder: Path,
    game: str,
    players: int,
    baselines: Sequence[str] = (),
    *,
    deadline: datetime | None = None,
    seed: int | None = None,
    db_url: str | None = None,
) -> LadderCreated:
    """Make the ladder folder `folder` (LadderFileError if it holds a ladder already, or for a game, player count
    or baseline the league file refuses)."""
    path = folder / LADDER_FILE
    if path.exists():
        raise LadderFileError(f"{folder} holds a ladder already ({LADDER_FILE})")
    text = ladder_file_text(
        game, players, seed if seed is not None else secrets.randbelow(2**31), list(baselines), deadline
    )
    parsed = parse_ladder_file(text, path)
    try:
        (folder / "versions").mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise LadderFileError(f"cannot make the ladder folder {folder}: {error}") from None
    engine = open_engine(db_url or default_url(folder))
    try:
        with engine.begin() as connection:
            connection.execute(
                insert(schema.state).values(
                    id=1, secret=secrets.token_hex(32), frozen=False, deadline=parsed.settings.deadline, changes=0
                )
            )
            admin = issue_token(connection, Role.STAFF, ADMIN)
            worker = issue_token(connection, Role.WORKER, WORKERS)
    finally:
        engine.dispose()
    return LadderCreated(folder, admin, worker)

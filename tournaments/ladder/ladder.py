"""A ladder open on its database: the one object the CLI, the server and the tests call.

    ladder = open_ladder(Path("class-ladder"))              # or db_url="postgresql+psycopg://..."
    who = ladder.authenticate(token)
    version = ladder.submit(who, unpacked_folder)

Each method is one short transaction; what it does is in the module it calls (accounts, submissions, queue,
scheduling, standings, deadline)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sqlalchemy import Engine, select

from . import accounts, schema
from .database import default_url, open_engine
from .errors import Forbidden, LadderFileError
from .ladder_file import LADDER_FILE, LadderFile, load_ladder_file
from .values import Principal, Role


def open_ladder(folder: Path, db_url: str | None = None) -> Ladder:
    """The ladder made by init_ladder in `folder`; `db_url` None: its SQLite file."""
    path = folder / LADDER_FILE
    if not path.is_file():
        raise LadderFileError(f"{folder} holds no ladder (no {LADDER_FILE}): make one with `referee ladder init`")
    settings = load_ladder_file(path)
    engine = open_engine(db_url or default_url(folder))
    with engine.connect() as connection:
        if connection.execute(select(schema.state.c.id)).first() is None:
            engine.dispose()
            raise LadderFileError(f"the database of {folder} was never initialised by `referee ladder init`")
    return Ladder(folder, settings, engine)


class Ladder:
    def __init__(self, folder: Path, file: LadderFile, engine: Engine) -> None:
        self.folder = folder
        self.file = file
        self.engine = engine

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Ladder:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _secret(self) -> str:
        with self.engine.connect() as connection:
            return str(connection.execute(select(schema.state.c.secret)).scalar_one())

    def authenticate(self, token: str) -> Principal:
        """Who holds `token` (Unauthorised if nobody does)."""
        with self.engine.begin() as connection:
            return accounts.authenticate(connection, token)

    def invite(self, names: Sequence[str], roster: Path | None = None, who: Principal | None = None) -> dict[str, str]:
        """Name -> a new token for each student named or on the roster (re-inviting revokes the old token).
        `who`: the asker, staff only (None: the ladder's owner at the command line)."""
        _require(who, Role.STAFF)
        checked = accounts.checked_names(names, roster)
        secret = self._secret()
        with self.engine.begin() as connection:
            return accounts.invite(connection, secret, checked)

    def changes(self) -> int:
        """A counter bumped on every change to the table (cheap to poll)."""
        with self.engine.connect() as connection:
            return int(connection.execute(select(schema.state.c.changes)).scalar_one())


def _require(who: Principal | None, *roles: Role) -> None:
    if who is not None and who.role not in roles:
        raise Forbidden(f"a {who.role.value} may not do this")

"""Who plays on the ladder now: each student's last accepted version, the deadline snapshot's versions once it is
taken (the final run), and the baselines (fixed anchors); in the open division the baselines and each student's
registered remote bot; and the stored games of a division among them."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass

from sqlalchemy import Connection, select

from . import schema
from .ladder_file import LadderFile
from .values import Division, VersionStatus


@dataclass(frozen=True)
class Entrant:
    name: str
    """A version's id, or a baseline's name."""
    student: str | None
    digest: str | None
    command: str | None
    """A baseline's BOT string."""
    public_key: str | None = None
    """A remote bot's (the open division): it plays as the seat `remote:NAME` on the hosting worker."""

    @property
    def baseline(self) -> bool:
        return self.student is None

    def payload(self) -> dict[str, object]:
        if self.baseline:
            return {"name": self.name, "baseline": True, "command": self.command}
        if self.public_key is not None:
            return {
                "name": self.name,
                "baseline": False,
                "remote": True,
                "public_key": self.public_key,
                "student": self.student,
            }
        return {"name": self.name, "baseline": False, "digest": self.digest, "student": self.student}


def current_entrants(connection: Connection, file: LadderFile) -> list[Entrant]:
    """The baselines, then each student's last accepted version and its snapshot version if different."""
    entrants = [Entrant(bot.name, None, None, bot.command) for bot in file.league.bots]
    latest: dict[str, Entrant] = {}
    rows = connection.execute(
        select(schema.versions.c.id, schema.versions.c.student, schema.versions.c.digest)
        .where(schema.versions.c.status == VersionStatus.ACCEPTED.value)
        .order_by(schema.versions.c.created, schema.versions.c.id)
    )
    for row in rows:
        latest[row.student] = Entrant(row.id, row.student, row.digest, None)
    snapshot = connection.execute(
        select(schema.versions.c.id, schema.versions.c.student, schema.versions.c.digest).join(
            schema.snapshot, schema.snapshot.c.version_id == schema.versions.c.id
        )
    )
    kept = list(latest.values()) + [
        Entrant(row.id, row.student, row.digest, None) for row in snapshot if latest[row.student].name != row.id
    ]
    return entrants + sorted(kept, key=lambda entrant: entrant.name)


def division_entrants(connection: Connection, file: LadderFile, division: Division) -> list[Entrant]:
    return current_entrants(connection, file) if division is Division.GRADED else open_entrants(connection, file)


def open_entrants(connection: Connection, file: LadderFile) -> list[Entrant]:
    """The baselines, then each student's registered remote bot (none unless the ladder file opens the division)."""
    entrants = [Entrant(bot.name, None, None, bot.command) for bot in file.league.bots]
    if not file.open.remote:
        return entrants
    rows = connection.execute(select(schema.remote_keys).order_by(schema.remote_keys.c.entrant))
    return entrants + [Entrant(row.entrant, row.student, None, None, row.public_key) for row in rows]


def games_among(
    connection: Connection, names: Collection[str], final_only: bool = False, division: Division = Division.GRADED
) -> list[dict[str, int]]:
    """Each stored game of `division` whose seats are all in `names`, as entrant -> rank (`final_only`: the final
    run's)."""
    wanted = set(names)
    query = (
        select(schema.seats.c.game_id, schema.seats.c.entrant, schema.seats.c.rank)
        .join(schema.games, schema.games.c.id == schema.seats.c.game_id)
        .where(schema.games.c.division == division.value)
    )
    if final_only:
        query = query.where(schema.games.c.final)
    by_game: dict[str, dict[str, int]] = defaultdict(dict)
    outside: set[str] = set()
    for row in connection.execute(query):
        if row.entrant in wanted:
            by_game[row.game_id][row.entrant] = row.rank
        else:
            outside.add(row.game_id)
    return [ranks for game, ranks in by_game.items() if game not in outside]

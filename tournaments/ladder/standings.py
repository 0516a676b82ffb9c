"""The table as each asker may see it: one row per current entrant, from the ladder's fit (tournaments.ladder.fit).
Staff see names and version ids; a student sees their own name and version, everyone else by pseudonym (when the
ladder file says pseudonyms); a spectator (no token) sees pseudonyms only. Baselines are shown by name."""

from __future__ import annotations

from sqlalchemy import Connection, select

from tournaments.ratings.settling import PairState

from . import schema
from .entrants import Entrant
from .fit import Fit
from .ladder_file import LadderFile
from .values import Division, LadderTable, Principal, Role, TableRow


def shown_names(connection: Connection, file: LadderFile, who: Principal | None) -> dict[str, str]:
    """Student -> the name `who` sees for them."""
    rows = connection.execute(select(schema.students.c.name, schema.students.c.pseudonym)).all()
    staff = who is not None and who.role is Role.STAFF
    if staff or not file.settings.pseudonyms:
        return {row.name: row.name for row in rows}
    own = who.name if who is not None and who.role is Role.STUDENT else None
    return {row.name: row.name if row.name == own else row.pseudonym for row in rows}


def entrant_label(entrant: Entrant, names: dict[str, str], who: Principal | None, versions: int) -> str:
    """A student with two rows (a late version beside the snapshot's) has the version's id added."""
    if entrant.student is None:
        return entrant.name
    label = names.get(entrant.student, entrant.student)
    return f"{label} ({entrant.name})" if versions > 1 else label


def ladder_table(
    connection: Connection, file: LadderFile, fit: Fit, who: Principal | None, division: Division = Division.GRADED
) -> LadderTable:
    names = shown_names(connection, file, who)
    counts: dict[str | None, int] = {}
    for entrant in fit.entrants:
        counts[entrant.student] = counts.get(entrant.student, 0) + 1
    by_name = {entrant.name: entrant for entrant in fit.entrants}
    decided = _decided(fit)
    groups = fit.verdict.groups if fit.verdict is not None else {}
    rows = []
    for bot in fit.ratings.bots:
        entrant = by_name[bot.bot]
        mine, version = _own(who, entrant)
        rows.append(
            TableRow(
                name=entrant_label(entrant, names, who, counts[entrant.student] if entrant.student else 1),
                elo=round(bot.elo, 1),
                interval=None if bot.ci95 is None else (round(bot.ci95[0], 1), round(bot.ci95[1], 1)),
                games=bot.games,
                settled=decided.get(bot.bot, False),
                group=groups.get(bot.bot, 0),
                baseline=entrant.baseline,
                mine=mine,
                version=version,
            )
        )
    rated = {bot.bot for bot in fit.ratings.bots}
    for entrant in fit.entrants:
        if entrant.name not in rated:
            mine, version = _own(who, entrant)
            label = entrant_label(entrant, names, who, counts[entrant.student] if entrant.student else 1)
            rows.append(TableRow(label, None, None, 0, False, 0, entrant.baseline, mine, version))
    state = connection.execute(select(schema.state.c.changes, schema.state.c.frozen)).one()
    settled = fit.verdict is not None and fit.verdict.settled
    return LadderTable(tuple(rows), settled, fit.ratings.games, int(state.changes), bool(state.frozen), division)


def _own(who: Principal | None, entrant: Entrant) -> tuple[bool, str | None]:
    """Whether the row is the asker's own, and the version id the asker may see on it."""
    mine = who is not None and who.role is Role.STUDENT and entrant.student == who.name
    sees = mine or (who is not None and who.role is Role.STAFF)
    return mine, entrant.name if sees and not entrant.baseline else None


def _decided(fit: Fit) -> dict[str, bool]:
    """Bot -> every adjacent pair it is in is decided."""
    if fit.verdict is None:
        return {}
    decided = {bot.bot: True for bot in fit.ratings.bots}
    for pair in fit.verdict.pairs:
        if pair.state is PairState.OPEN:
            decided[pair.upper] = decided[pair.lower] = False
    if fit.verdict.pools > 1:
        decided = {bot: False for bot in decided}
    return decided

"""Filling the queue with matches after every change: where the table is still open, as a settling run would
play, among the current entrants.

In order, up to the ladder's queue_depth match jobs waiting (refilled when half of them are taken):
1. boosted: an entrant with fewer than min_games games among the current entrants (a new version), or whose
   interval is still wider than BOOST_WIDTH resolutions, gets a table with the entrants it has met least
   (nearest in Elo first), so that it is placed quickly;
2. then the settling allocator's tables (tournaments.ratings.allocation.next_tables: open adjacent pairs by
   expected information, their neighbours, and a uniform share), until the table is settled;
3. a table none of whose pairs has reached the ladder's pair_cap of games together, and that is not already
   waiting in the queue.
Each table is one match job: a balanced seating design (referee.seating) over deals of its own, derived from
the ladder's seed and the job's number. Baselines are entrants like any other, their programs fixed: they
anchor the scale and the marks.

Each division is filled alike from its own entrants and games, with a queue_depth of its own. The open division
(the ladder file's [open]) seats the baselines and the students' remote bots; a table of it has at least one
remote seat (a table of baselines alone is the graded division's business), and only a worker that hosts remote
seats claims it (tournaments.ladder.queue), so an open queue nobody plays never holds up the graded one."""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

from sqlalchemy import Connection, func, select

from referee.seating import balanced_games, design_deals
from tournaments.league.schedule import derive_seed
from tournaments.ratings.allocation import next_tables

from . import schema
from .entrants import Entrant
from .fit import Fit, ladder_fit, settle_rule
from .ladder_file import LadderFile
from .match_job import limits_data
from .queue import enqueue, pending
from .values import Division, JobKind

Table = tuple[str, ...]
MATCH_PRIORITY = 1
REFILL_SHARE = 0.5
BOOST_WIDTH = 2.0
"""An entrant whose 95% interval is wider than this many resolutions is boosted."""


def fill_queue(connection: Connection, file: LadderFile, *, force: bool = False) -> int:
    """Queue match jobs as the module says, in each division (the caller holds lock_state); how many were added.
    Unless `force` (a new version, the deadline), only once a division's queue is down to REFILL_SHARE of its
    depth: the fit costs more than a report, and the tables it picks change little from one game to the next."""
    divisions = [Division.GRADED, Division.OPEN] if file.open.remote else [Division.GRADED]
    return sum(_fill(connection, file, division, force) for division in divisions)


def _fill(connection: Connection, file: LadderFile, division: Division, force: bool) -> int:
    waiting = pending(connection, JobKind.MATCH, division)
    room = file.settings.queue_depth - len(waiting)
    if room <= 0 or (not force and room < REFILL_SHARE * file.settings.queue_depth):
        return 0
    fit = ladder_fit(connection, file, division)
    if len(fit.entrants) < file.league.players:
        return 0
    by_name = {entrant.name: entrant for entrant in fit.entrants}
    queued = {tuple(sorted(entrant["name"] for entrant in payload["entrants"])) for payload in waiting}
    tables = [
        table
        for table in choose_tables(fit, file)
        if table not in queued and _under_cap(fit, file, table) and _fits(division, table, by_name)
    ]
    chosen = list(dict.fromkeys(tables))[:room]
    for table in chosen:
        number = _next_number(connection)
        payload = _payload(file, [by_name[name] for name in table], number, division)
        enqueue(connection, JobKind.MATCH, payload, MATCH_PRIORITY, division=division)
    return len(chosen)


def _fits(division: Division, table: Table, by_name: dict[str, Entrant]) -> bool:
    """An open table has a remote seat."""
    return division is Division.GRADED or any(by_name[name].public_key is not None for name in table)


def choose_tables(fit: Fit, file: LadderFile) -> list[Table]:
    players = file.league.players
    names = [entrant.name for entrant in fit.entrants]
    tables = [_boost_table(name, fit, players) for name in boosted(fit, file)]
    rated = {bot.bot for bot in fit.ratings.bots}
    if fit.verdict is not None and not fit.verdict.settled and len(rated) >= players:
        rng = random.Random(derive_seed("ladder", file.league.seed, fit.ratings.games))
        tables += next_tables(fit.ratings, fit.verdict, players, names, file.league.games_per_match, rng)
    return [table for table in tables if table is not None]


def boosted(fit: Fit, file: LadderFile) -> list[str]:
    """The entrants to place first, fewest games first."""
    rule = settle_rule(file)
    by_name = {bot.bot: bot for bot in fit.ratings.bots}
    chosen = []
    for entrant in fit.entrants:
        rating = by_name.get(entrant.name)
        if rating is None or rating.games < rule.min_games:
            chosen.append((rating.games if rating else 0, entrant.name))
        elif rating.error is not None and rating.error > BOOST_WIDTH * rule.resolution:
            chosen.append((rating.games, entrant.name))
    return [name for _, name in sorted(chosen)]


def _boost_table(name: str, fit: Fit, players: int) -> Table | None:
    """`name` with the entrants it has met least, nearest in Elo first (unrated ones at 0)."""
    elo = {bot.bot: bot.elo for bot in fit.ratings.bots}
    others = [entrant.name for entrant in fit.entrants if entrant.name != name]
    if len(others) < players - 1:
        return None
    ranked = sorted(
        others,
        key=lambda other: (fit.ratings.record(name, other).games, abs(elo.get(other, 0.0) - elo.get(name, 0.0)), other),
    )
    return tuple(sorted([name, *ranked[: players - 1]]))


def _under_cap(fit: Fit, file: LadderFile, table: Sequence[str]) -> bool:
    return all(
        fit.ratings.record(first, second).games < file.settings.pair_cap
        for first, second in itertools.combinations(table, 2)
    )


def _next_number(connection: Connection) -> int:
    return int(connection.execute(select(func.coalesce(func.max(schema.jobs.c.seq), 0))).scalar_one()) + 1


def _payload(file: LadderFile, entrants: Sequence[Entrant], number: int, division: Division) -> dict[str, object]:
    league = file.league
    deals = (
        league.deals_per_match
        if league.deals_per_match % design_deals(league.players) == 0
        else design_deals(league.players)
    )
    seeds = [derive_seed("ladder-deal", league.seed, number, deal) for deal in range(deals)]
    games = balanced_games(league.players, seeds)
    return {
        "match_id": f"ladder-{number}",
        "division": division.value,
        "game": league.game,
        "config": dict(league.config),
        "limits": limits_data(league.limits),
        "ponder": league.ponder,
        "kernel": league.kernel and division is Division.GRADED,
        "entrants": [entrant.payload() for entrant in entrants],
        "games": [{"index": game.index, "seed": game.seed, "seating": list(game.seating)} for game in games],
    } | ({"server_key": file.open.server_key} if division is Division.OPEN else {})

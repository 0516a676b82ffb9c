"""A league's schedule: which tables meet, and the games each match plays. Deterministic from the league.

Tables: a round robin meets every `players`-subset of the pool; a gauntlet puts the challenger at every
table and fills the other seats with every subset of the rest; a baselines schedule seats every other bot
with every (players - 1)-subset of the baselines, and the baselines among themselves as a round robin, and
with `peers = K` (peer_tables) the students also among themselves: in an order drawn from the seed, student i
sits with students i + k, i + 2k, ... (around the circle) for every k from 1 to K, so each plays 2K such
tables at two seats (as many as the circle allows). When a
round robin or a gauntlet sets `max_tables` and there are more tables than that, a balanced sample is drawn
instead, in which every pair of bots meets about equally often (and every bot plays about equally often).

Games: every table plays deals of its own (seeds from the store's secret key and the match id, referee.deals),
seated by the balanced design of referee.seating: each deal once in every rotation of a cyclic order, the
orders taking turns over the deals, so every bot holds every seat's cards of every deal and plays right
after every other equally often. Within a match the design makes the deals fair; across matches they differ,
so that nothing a bot carries out of one match (a note the sandbox failed to stop, a hand it saw) is a deal
of another. (Until issue 19 every table played the same deals, like duplicate bridge.) Deal seeds never come
from the league's seed, which only makes the tables and seatings reproducible.

Match ids depend only on what the match is (game, seats, config, seed and the names at the table), never on
the rest of the pool or the file's order: adding a bot only adds matches, and a resumed run finds the ones
already played. Raising deals_per_match only adds games to existing matches. (With a sample, a larger pool
draws a new sample: matches already played that it leaves out stay in the store and still count.)

Settling rounds (tournaments/settle.py) add matches after the schedule: round r's matches of a table have the
ids GAME-Np-rR-DIGEST (the digest as above, with the round and the table's slot, 0, 1, ... when a round plays
a table more than once) and play deals_per_match new deals, numbered from
r * SETTLE_DEALS_APART + slot * deals_per_match so that no round or slot replays another's deals, in the same
balanced design.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from referee.deals import DealKey
from referee.games.base import MAX_SEED
from referee.records import GameSpec, MatchSpec
from referee.seating import balanced_games

from .league_file import League, ScheduleKind

Table = tuple[str, ...]
"""The bot names at one table, sorted."""

_RETRIES = 20
_SWAP_ATTEMPTS_PER_TABLE = 200
_MAX_SWAP_ATTEMPTS = 100_000


def derive_seed(*parts: object) -> int:
    """A seed in [0, MAX_SEED] that depends on every part and nothing else (stable across runs and machines)."""
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).digest()
    return int.from_bytes(digest[:8], "big") & MAX_SEED


def league_tables(league: League) -> list[Table]:
    """The tables of the league, in a stable order; at 3 to 5 seats, none with two remote bots unless the league
    file's [remote] allows it (allowed_table: the tables are drawn as usual, those tables then left out, so a
    max_tables sample may play fewer)."""
    return [table for table in _drawn_tables(league) if allowed_table(league, table)]


def allowed_table(league: League, table: Table) -> bool:
    """Whether `table` may be played: it seats at most one remote bot where the league separates them
    (League.separates_remote_bots)."""
    return not league.separates_remote_bots() or sum(name in league.remote_bots for name in table) <= 1


def _drawn_tables(league: League) -> list[Table]:
    names = [bot.name for bot in league.bots]
    rng = random.Random(derive_seed("tables", league.seed))
    if league.schedule is ScheduleKind.BASELINES:
        students = [name for name in names if name not in league.baselines]
        peers = peer_tables(students, league.players, league.peers, random.Random(derive_seed("peers", league.seed)))
        return [*baseline_tables(names, league.baselines, league.players), *peers]
    if league.schedule is ScheduleKind.GAUNTLET:
        assert league.challenger is not None
        pool = [name for name in names if name != league.challenger]
        return [tuple(sorted((league.challenger, *rest))) for rest in _subsets(pool, league.players - 1, league, rng)]
    return _subsets(names, league.players, league, rng)


def baseline_tables(names: Sequence[str], baselines: Sequence[str], players: int) -> list[Table]:
    """The baselines' own round robin, then each other bot with every (players - 1)-subset of the baselines."""
    ladder = sorted(baselines)
    students = [name for name in names if name not in baselines]
    others = list(itertools.combinations(ladder, players - 1))
    return [
        *itertools.combinations(ladder, players),
        *(tuple(sorted((student, *rest))) for student in students for rest in others),
    ]


def peer_tables(students: Sequence[str], players: int, peers: int, rng: random.Random) -> list[Table]:
    """Students among themselves, each table once: in a shuffled circle, i with i + k, i + 2k, ... (k <= peers)."""
    order = sorted(students)
    rng.shuffle(order)
    tables: list[Table] = []
    for step in range(1, peers + 1):
        for start in range(len(order)):
            table = tuple(sorted({order[(start + seat * step) % len(order)] for seat in range(players)}))
            if len(table) == players and table not in tables:
                tables.append(table)
    return tables


def _subsets(names: Sequence[str], size: int, league: League, rng: random.Random) -> list[Table]:
    total = math.comb(len(names), size)
    if league.max_tables is None or total <= league.max_tables:
        return [tuple(sorted(table)) for table in itertools.combinations(sorted(names), size)]
    return balanced_sample(sorted(names), size, league.max_tables, rng)


def balanced_sample(names: Sequence[str], size: int, count: int, rng: random.Random) -> list[Table]:
    """`count` distinct tables of `size` names in which pairs meet, and names play, about equally often.

    Greedy: each table starts from a name that has played least and adds the name that has met the
    table's members least (then played least); random tie-breaks come from `rng`. Then a local search
    swaps single members while that lowers the sum of squared meeting and playing counts. Above half of
    all tables, the tables left out are the balanced sample (all tables together are perfectly even).
    """
    total = math.comb(len(names), size)
    if count > total:
        raise ValueError(f"cannot draw {count} distinct tables of {size} from {len(names)} names")
    if 2 * count > total:
        left_out = set(balanced_sample(names, size, total - count, rng)) if count < total else set()
        return [table for table in itertools.combinations(sorted(names), size) if table not in left_out]
    appearances: Counter[str] = Counter()
    meetings: Counter[tuple[str, str]] = Counter()
    chosen: list[Table] = []
    seen: set[Table] = set()
    for _ in range(count):
        table = _next_table(names, size, appearances, meetings, seen, rng)
        chosen.append(table)
        seen.add(table)
        appearances.update(table)
        meetings.update(itertools.combinations(table, 2))
    _improve(chosen, names, appearances, meetings, seen, rng)
    return chosen


def _improve(
    tables: list[Table],
    names: Sequence[str],
    appearances: Counter[str],
    meetings: Counter[tuple[str, str]],
    seen: set[Table],
    rng: random.Random,
) -> None:
    """Replace one member of a random table by an outsider whenever that makes the counts more even."""
    for _ in range(min(_SWAP_ATTEMPTS_PER_TABLE * len(tables), _MAX_SWAP_ATTEMPTS)):
        position = rng.randrange(len(tables))
        table = tables[position]
        leaving = rng.choice(table)
        joining = rng.choice(names)
        if joining in table:
            continue
        others = [name for name in table if name != leaving]
        change = 2 * (appearances[joining] - appearances[leaving] + 1) + sum(
            2 * (meetings[_pair(joining, other)] - meetings[_pair(leaving, other)] + 1) for other in others
        )
        replacement = tuple(sorted((*others, joining)))
        if change > 0 or replacement in seen:
            continue
        seen.discard(table)
        seen.add(replacement)
        tables[position] = replacement
        appearances[leaving] -= 1
        appearances[joining] += 1
        for other in others:
            meetings[_pair(leaving, other)] -= 1
            meetings[_pair(joining, other)] += 1


def _next_table(
    names: Sequence[str],
    size: int,
    appearances: Counter[str],
    meetings: Counter[tuple[str, str]],
    seen: set[Table],
    rng: random.Random,
) -> Table:
    for _ in range(_RETRIES):
        order = list(names)
        rng.shuffle(order)
        members = [min(order, key=lambda name: appearances[name])]
        while len(members) < size:
            candidates = [name for name in order if name not in members]
            members.append(
                min(
                    candidates,
                    key=lambda name: (sum(meetings[_pair(name, member)] for member in members), appearances[name]),
                )
            )
        table = tuple(sorted(members))
        if table not in seen:
            return table
    while True:
        table = tuple(sorted(rng.sample(list(names), size)))
        if table not in seen:
            return table


def _pair(first: str, second: str) -> tuple[str, str]:
    return (first, second) if first < second else (second, first)


def match_id(league: League, table: Table) -> str:
    """A stable id: the game, the seats and a digest of what makes the match (not the rest of the pool)."""
    digest = hashlib.sha256(
        json.dumps(
            [league.game, league.players, league.seed, dict(league.config), list(table)], sort_keys=True
        ).encode()
    ).hexdigest()
    return f"{league.game}-{league.players}p-{digest[:16]}"


def game_specs(league: League, key: DealKey, match: str) -> tuple[GameSpec, ...]:
    """The games of the match `match` (an id; seatings index the table's bots, in table order): the balanced
    design over the match's deals, dealt from `key`. Game `deal * players + rotation` plays deal `deal`."""
    return balanced_games(league.players, key.deal_seeds(league.deals_per_match, match))


SETTLE_DEALS_APART = 1_000_000
"""Deal numbers of settling round r start at r times this (the schedule's deals are 0, 1, ...)."""


def settle_match_id(league: League, round_number: int, table: Table, slot: int = 0) -> str:
    """The id of `table`'s match number `slot` (0, 1, ...) in settling round `round_number` (1, 2, ...)."""
    digest = hashlib.sha256(
        json.dumps(
            [league.game, league.players, league.seed, dict(league.config), list(table), "settle", round_number, slot],
            sort_keys=True,
        ).encode()
    ).hexdigest()
    return f"{league.game}-{league.players}p-r{round_number}-{digest[:16]}"


def settle_games(league: League, key: DealKey, round_number: int, slot: int = 0) -> tuple[GameSpec, ...]:
    """The games of the matches of settling round `round_number` in `slot`: the balanced design over their own
    deals (every table of one slot plays the same deals, as in the schedule)."""
    first = round_number * SETTLE_DEALS_APART + slot * league.deals_per_match
    seeds = tuple(key.deal_seed(first + deal) for deal in range(league.deals_per_match))
    return balanced_games(league.players, seeds)


def settle_matches(league: League, key: DealKey, round_number: int, tables: Sequence[Table]) -> list[ScheduledMatch]:
    """The matches of settling round `round_number` at `tables` (sorted names each; a table listed n times
    plays n matches)."""
    slots: Counter[Table] = Counter()
    matches = []
    for table in tables:
        slot = slots[table]
        games = settle_games(league, key, round_number, slot)
        matches.append(ScheduledMatch(settle_match_id(league, round_number, table, slot), table, games, slot))
        slots[table] += 1
    return matches


@dataclass(frozen=True)
class ScheduledMatch:
    match_id: str
    table: Table
    games: tuple[GameSpec, ...]
    slot: int = 0
    """Which of a settling round's matches at this table (0 in the schedule)."""


def league_schedule(league: League, key: DealKey) -> list[ScheduledMatch]:
    """Every match of the league with all its games, dealt from `key` (the store's: LeagueStore.deal_key)."""
    matches = [(match_id(league, table), table) for table in league_tables(league)]
    return [ScheduledMatch(match, table, game_specs(league, key, match)) for match, table in matches]


def match_spec(league: League, match: ScheduledMatch) -> MatchSpec:
    """What the referee plays for `match`: its bots (in table order, as the seatings index them) and games."""
    bots = {bot.name: bot.spec for bot in league.bots}
    return MatchSpec(
        match_id=match.match_id,
        game=league.game,
        bots=tuple(bots[name] for name in match.table),
        games=match.games,
        config=dict(league.config),
        limits=league.limits,
        replay_dir=None if league.replay_dir is None else str(league.replay_dir),
        log_dir=None if league.log_dir is None else str(league.log_dir / match.match_id),
        ponder=league.ponder,
        kernel=league.kernel,
    )

"""Ratings as text (tabulate) and as JSON: the one place that decides how an Elo table looks.

    ratings = rate(games)                               # tournaments.ratings.elo
    print(ratings_table(ratings, tablefmt="simple", faults={"bot": 2}))
    print(crosstable(ratings))
    echo_json(ratings_json(ratings, faults=..., with_crosstable=True))

Every Elo is a finite number (tournaments.ratings.elo: BayesElo's prior of virtual draws); the line under the table
says which prior and how many bootstrap resamples gave it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tabulate import tabulate

from .elo import BotRating, PairRecord, Ratings


def ratings_table(
    ratings: Ratings,
    tablefmt: str = "simple",
    faults: Mapping[str, int] | None = None,
    forfeits: Mapping[str, int] | None = None,
    unsandboxed: int = 0,
) -> str:
    """The Elo table, followed by a line on the prior and the bootstrap, and one on split pools (if any).

    Columns: Rank, Bot, Elo, +/- (half the 95% interval), Games, Score (share of pairwise points), W/D/L when
    every game had two seats or else Mean rank, Faults (only when `faults`, bot -> count, is given; with
    `forfeits`, bot -> games forfeited, "3 (2 forfeited)" for a bot that forfeited any), LOS (the likelihood
    that the bot is stronger than the next one). A Pool column appears when the pool is split.
    `unsandboxed` games (bots not in the sandbox) are counted in a note.
    """
    if not ratings.bots:
        return "No games to rate."
    headers = ["Rank", "Bot", "Elo", "+/-", "Games", "Score", "W/D/L" if ratings.two_seat else "Mean rank"]
    if faults is not None:
        headers.append("Faults")
    headers.append("LOS")
    if ratings.pools > 1:
        headers.insert(0, "Pool")
    rows = [_row(ratings, bot, rank, faults, forfeits) for bot, rank in zip(ratings.bots, _ranks(ratings), strict=True)]
    table = tabulate(rows, headers=headers, tablefmt=tablefmt, disable_numparse=True, colalign=_align(headers))
    notes = table_notes(ratings, unsandboxed)
    return "\n".join([table, "", *notes]) if notes else table


def table_notes(ratings: Ratings, unsandboxed: int = 0) -> list[str]:
    """How the Elo was computed (prior, bootstrap), how many of its games were played unsandboxed and, if the pool
    is split, what that means."""
    notes = []
    if unsandboxed:
        notes.append(
            f"{unsandboxed} game(s) were played without the sandbox: their bots could see and change what the "
            "sandbox hides (see the README's security model)."
        )
    if ratings.pools > 1:
        notes.append(
            f"The bots form {ratings.pools} pools that never met: Elo is comparable only within a pool "
            "(mean 0 in each)."
        )
    prior = (
        f"Elo with a prior of {ratings.prior_draws:g} virtual draws per bot (as BayesElo)"
        if ratings.prior_draws
        else "Elo by maximum likelihood, no prior"
    )
    if ratings.bootstrap:
        prior += f"; +/- and LOS from {ratings.bootstrap} bootstrap resamples (seed {ratings.seed})"
    notes.append(prior + ".")
    return notes


def crosstable(ratings: Ratings, tablefmt: str = "simple") -> str:
    """Pairwise points of each row's bot against each column's (columns numbered by table position)."""
    if not ratings.bots:
        return "No games to rate."
    names = [bot.bot for bot in ratings.bots]
    headers = ["", "Bot", *[str(number) for number in range(1, len(names) + 1)], "Score"]
    rows = [
        [
            str(number),
            bot.bot,
            *[_cell(ratings.record(bot.bot, other)) if other != bot.bot else "" for other in names],
            f"{_points(bot.points)}/{bot.pairings}",
        ]
        for number, bot in enumerate(ratings.bots, start=1)
    ]
    return tabulate(rows, headers=headers, tablefmt=tablefmt, disable_numparse=True)


def ratings_json(
    ratings: Ratings,
    faults: Mapping[str, int] | None = None,
    with_crosstable: bool = False,
    forfeits: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """A JSON-ready dict: {"ratings": [{"rank", "bot", "elo", "ci95", "games", "score", ...}], ...}.

    "elo" is always a finite number; "prior_draws" is the prior's virtual draws per bot (0: none, plain
    maximum likelihood). "score" is the share (0..1)
    of pairwise points; "ci95" is [low, high] or null without a bootstrap; "los_next" is the likelihood of
    superiority over the next bot (null for the last of a pool); "faults" and "forfeits" (games forfeited)
    when given. With `with_crosstable`, "crosstable" maps
    bot -> opponent -> {"wins", "draws", "losses", "score"}.
    """
    entries = []
    for bot, rank in zip(ratings.bots, _ranks(ratings), strict=True):
        entry: dict[str, Any] = {
            "rank": rank,
            "bot": bot.bot,
            "elo": round(bot.elo, 2),
            "ci95": None if bot.ci95 is None else [round(value, 2) for value in bot.ci95],
            "games": bot.games,
            "score": round(bot.score, 4),
            "points": bot.points,
            "pairings": bot.pairings,
            "wins": bot.wins,
            "draws": bot.draws,
            "losses": bot.losses,
            "mean_rank": round(bot.mean_rank, 4),
            "los_next": None if bot.los_next is None else round(bot.los_next, 4),
            "pool": bot.pool,
        }
        if faults is not None:
            entry["faults"] = faults.get(bot.bot, 0)
        if forfeits is not None:
            entry["forfeits"] = forfeits.get(bot.bot, 0)
        entries.append(entry)
    data: dict[str, Any] = {
        "ratings": entries,
        "pools": ratings.pools,
        "seats": list(ratings.seats),
        "bootstrap": {"samples": ratings.bootstrap, "seed": ratings.seed},
        "prior_draws": ratings.prior_draws,
    }
    if with_crosstable:
        data["crosstable"] = {
            bot.bot: {
                opponent: _record_json(record)
                for (owner, opponent), record in ratings.crosstable.items()
                if owner == bot.bot
            }
            for bot in ratings.bots
        }
    return data


def _ranks(ratings: Ratings) -> list[int]:
    """Rank within the bot's pool (ranks across pools would compare what cannot be compared)."""
    ranks = []
    previous_pool, rank = None, 0
    for bot in ratings.bots:
        rank = rank + 1 if bot.pool == previous_pool else 1
        previous_pool = bot.pool
        ranks.append(rank)
    return ranks


def _row(
    ratings: Ratings,
    bot: BotRating,
    rank: int,
    faults: Mapping[str, int] | None,
    forfeits: Mapping[str, int] | None,
) -> list[str]:
    row = [
        str(rank),
        bot.bot,
        f"{bot.elo:.1f}",
        "" if bot.error is None else f"{bot.error:.1f}",
        str(bot.games),
        f"{100 * bot.score:.1f}%",
        f"{bot.wins}/{bot.draws}/{bot.losses}" if ratings.two_seat else f"{bot.mean_rank:.2f}",
    ]
    if faults is not None:
        row.append(_faults_cell(faults.get(bot.bot, 0), (forfeits or {}).get(bot.bot, 0)))
    row.append("" if bot.los_next is None else f"{100 * bot.los_next:.0f}%")
    if ratings.pools > 1:
        row.insert(0, str(bot.pool))
    return row


def _faults_cell(faults: int, forfeits: int) -> str:
    return f"{faults} ({forfeits} forfeited)" if forfeits else str(faults)


def _align(headers: list[str]) -> list[str]:
    return ["left" if header == "Bot" else "right" for header in headers]


def _cell(record: PairRecord) -> str:
    return f"{_points(record.points)}/{record.games}" if record.games else ""


def _points(points: float) -> str:
    return f"{points:g}"


def _record_json(record: PairRecord) -> dict[str, Any]:
    return {"wins": record.wins, "draws": record.draws, "losses": record.losses, "score": round(record.score, 4)}

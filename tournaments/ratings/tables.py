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
from .settling import DEFAULT_RULE, Settlement, SettleRule, settlement


def ratings_table(
    ratings: Ratings,
    tablefmt: str = "simple",
    faults: Mapping[str, int] | None = None,
    forfeits: Mapping[str, int] | None = None,
    unsandboxed: int = 0,
    rule: SettleRule = DEFAULT_RULE,
) -> str:
    """The Elo table, followed by a line on the prior and the bootstrap, and one on split pools (if any).

    Columns: Rank, Bot, Elo, +/- (half the 95% interval), Games, Score (share of pairwise points), W/D/L when
    every game had two seats or else Mean rank, Faults (only when `faults`, bot -> count, is given; with
    `forfeits`, bot -> games forfeited, "3 (2 forfeited)" for a bot that forfeited any), LOS (the likelihood
    that the bot is stronger than the next one), Group (with a bootstrap: bots the games cannot tell apart
    under `rule`, tournaments.ratings.settling), then a line saying whether the table is settled. A Pool
    column appears when the pool is split. `unsandboxed` games (bots not in the sandbox) are counted in a note.
    """
    if not ratings.bots:
        return "No games to rate."
    verdict = settlement(ratings, rule)
    headers = ["Rank", "Bot", "Elo", "+/-", "Games", "Score", "W/D/L" if ratings.two_seat else "Mean rank"]
    if faults is not None:
        headers.append("Faults")
    headers.append("LOS")
    if verdict is not None:
        headers.append("Group")
    if ratings.pools > 1:
        headers.insert(0, "Pool")
    rows = [
        _row(ratings, bot, rank, faults, forfeits, verdict)
        for bot, rank in zip(ratings.bots, _ranks(ratings), strict=True)
    ]
    table = tabulate(rows, headers=headers, tablefmt=tablefmt, disable_numparse=True, colalign=_align(headers))
    notes = table_notes(ratings, unsandboxed)
    if verdict is not None:
        notes.insert(0, settlement_line(verdict))
    return "\n".join([table, "", *notes]) if notes else table


def settlement_line(verdict: Settlement) -> str:
    """One line: settled, or which adjacent pairs are open and about how many more games would settle them."""
    rule = verdict.rule
    separated = f"separated (LOS >= {100 * rule.decisive:g}%)"
    within = f"within +/-{rule.resolution:g} Elo"
    if verdict.pools > 1:
        return f"Not settled: the {verdict.pools} pools never met, so no games order bots of different pools."
    if verdict.settled:
        return (
            f"Settled: every adjacent pair is {separated} or {within}; bots of one Group (LOS below "
            f"{100 * rule.level:g}%, or within) cannot be told apart."
        )
    open_pairs = verdict.open_pairs
    names = ", ".join(f"{pair.upper}/{pair.lower}" for pair in open_pairs)
    line = (
        f"Not settled: {len(open_pairs)} of {len(verdict.pairs)} adjacent pairs are neither {separated} nor "
        f"{within} ({names})"
    )
    more = verdict.more_games
    if more is None:
        return line + "; at least one is apart by more than the resolution yet not separated: more games will tell."
    return line + f"; about {more:,} more games like these would settle them (intervals narrow as 1/sqrt(games))."


def table_notes(ratings: Ratings, unsandboxed: int = 0) -> list[str]:
    """How the Elo was computed (prior, bootstrap, anchor), how many of its games were played unsandboxed and, if
    the pool is split, what that means."""
    notes = []
    if unsandboxed:
        notes.append(
            f"{unsandboxed} game(s) were played without the sandbox: their bots could see and change what the "
            "sandbox hides (see docs/explanation/security.md, the docs site's 'Security model')."
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
    if ratings.anchor is not None:
        prior += f"; anchored: {ratings.anchor.bot} is fixed at {ratings.anchor.elo:g} Elo (its pool is not mean 0)"
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
    rule: SettleRule = DEFAULT_RULE,
) -> dict[str, Any]:
    """A JSON-ready dict: {"ratings": [{"rank", "bot", "elo", "ci95", "games", "score", ...}], ...}.

    "elo" is always a finite number; "prior_draws" is the prior's virtual draws per bot (0: none, plain
    maximum likelihood). "score" is the share (0..1)
    of pairwise points; "ci95" is [low, high] or null without a bootstrap; "los_next" is the likelihood of
    superiority over the next bot (null for the last of a pool); "faults" and "forfeits" (games forfeited)
    when given; "group" (with a bootstrap) numbers the groups of bots the games cannot tell apart (1 the top),
    "diff_next_ci95" is the 95% interval of the Elo difference to the next bot. "settlement" (null without a
    bootstrap) says whether the table is settled under `rule` and, per adjacent pair, its state ("separated",
    "within" or "open"); "more_games" estimates the games that would settle it (null when settled or no
    number would). "anchor" is {"bot", "elo"} or null. With `with_crosstable`, "crosstable" maps
    bot -> opponent -> {"wins", "draws", "losses", "score"}.
    """
    verdict = settlement(ratings, rule)
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
            "group": None if verdict is None else verdict.groups[bot.bot],
            "diff_next_ci95": None if bot.diff_next_ci95 is None else [round(v, 2) for v in bot.diff_next_ci95],
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
        "anchor": None if ratings.anchor is None else {"bot": ratings.anchor.bot, "elo": ratings.anchor.elo},
        "settlement": None if verdict is None else settlement_json(verdict),
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


def settlement_json(verdict: Settlement) -> dict[str, Any]:
    return {
        "settled": verdict.settled,
        "level": verdict.rule.level,
        "resolution": verdict.rule.resolution,
        "more_games": verdict.more_games,
        "groups": len(set(verdict.groups.values())),
        "pairs": [
            {
                "upper": pair.upper,
                "lower": pair.lower,
                "state": pair.state.value,
                "los": round(pair.los, 4),
                "interval": [round(value, 2) for value in pair.interval],
            }
            for pair in verdict.pairs
        ],
    }


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
    verdict: Settlement | None,
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
    if verdict is not None:
        row.append(str(verdict.groups[bot.bot]))
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

"""The ladder's ratings: the harness's Elo fit (tournaments.ratings.elo, with its bootstrap intervals) over the
stored games among the current entrants, and the settling verdict on it (tournaments.ratings.settling: which
adjacent pairs are decided, and the groups)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection

from tournaments.ratings.elo import Ratings, rate_tallies
from tournaments.ratings.settling import DEFAULT_RULE, Settlement, SettleRule, settlement
from tournaments.ratings.tallies import GameTallies

from .entrants import Entrant, division_entrants, games_among
from .ladder_file import LadderFile
from .values import Division

RATING_SEED = 0
"""The bootstrap's seed: the same games give the same intervals."""


@dataclass(frozen=True)
class Fit:
    entrants: tuple[Entrant, ...]
    ratings: Ratings
    verdict: Settlement | None
    """None without games."""


def settle_rule(file: LadderFile) -> SettleRule:
    league = file.league
    return SettleRule(
        level=league.settle_los or DEFAULT_RULE.level,
        resolution=league.resolution or DEFAULT_RULE.resolution,
        min_games=league.min_games if league.min_games is not None else DEFAULT_RULE.min_games,
    )


def ladder_fit(connection: Connection, file: LadderFile, division: Division = Division.GRADED) -> Fit:
    entrants = division_entrants(connection, file, division)
    games = games_among(connection, [entrant.name for entrant in entrants], division=division)
    ratings = rate_tallies(GameTallies.of(games), file.settings.bootstrap, RATING_SEED)
    return Fit(tuple(entrants), ratings, settlement(ratings, settle_rule(file)))

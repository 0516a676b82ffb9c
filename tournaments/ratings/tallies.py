"""Games reduced to what ratings need, kept up to date one game at a time.

A game is a mapping bot name -> rank (1 best, equal ranks tie). GameTallies keeps each distinct outcome once
with its count (a league of 100,000 two-seat games between 10 bots has at most 135 of them), and from those
the pairwise totals (wins, draws and losses of every two bots that met) and each bot's totals. Adding a game
costs one count; the totals take in the outcomes added since they were last read, so reading them costs what
was added, not what is stored.

A game of k seats is split into its k*(k-1)/2 pairwise results by rank: the better rank wins the pair, equal
ranks draw.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from protocol.errors import BadInput

Outcome = tuple[tuple[str, int], ...]
"""One game's result: (bot, rank) for each seat, in bot name order."""


WIN, DRAW, LOSS = 0, 1, 2
"""Pairwise results of a bot against another at the same table, as pair_result gives them."""


def pair_result(rank: int, other_rank: int) -> int:
    """WIN, DRAW or LOSS of a bot ranked `rank` against one ranked `other_rank` (1 best) at the same table."""
    return WIN if rank < other_rank else DRAW if rank == other_rank else LOSS


def pair_points(rank: int, other_rank: int) -> float:
    """Points of a bot ranked `rank` against one ranked `other_rank` at the same table: 1, 1/2 or 0."""
    return (2 - pair_result(rank, other_rank)) / 2


class RatingInputError(BadInput, ValueError):
    """A game that cannot be rated (fewer than two bots, a rank that is not a positive integer)."""


@dataclass(frozen=True)
class PairRecord:
    """Pairwise results of one bot against another (each game they shared counts once)."""

    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        return self.wins + self.draws / 2

    @property
    def score(self) -> float:
        """Share of the points, 0..1 (0.5 when they never met)."""
        return self.points / self.games if self.games else 0.5

    def reversed(self) -> PairRecord:
        """The same results seen from the opponent."""
        return PairRecord(self.losses, self.draws, self.wins)


@dataclass(frozen=True)
class BotTotals:
    games: int
    rank_sum: int
    pairings: int
    """Pairwise results: a game at k seats gives each of its bots k - 1."""
    half_points: int
    wins: int
    draws: int
    losses: int
    """Wins, draws and losses count two-seat games only."""


class GameTallies:
    """Distinct game outcomes with their counts, and the pairwise and per-bot totals they add up to."""

    def __init__(self) -> None:
        self.games = 0
        self._outcomes: Counter[Outcome] = Counter()
        self._unread: Counter[Outcome] = Counter()
        self._pairs: dict[tuple[str, str], list[int]] = {}
        self._bots: dict[str, list[int]] = {}
        self._seats: set[int] = set()

    @classmethod
    def of(cls, games: Iterable[Mapping[str, int]]) -> GameTallies:
        """The tallies of `games`; a RatingInputError names the first game (from 1) that cannot be rated."""
        tallies = cls()
        for number, game in enumerate(games, start=1):
            try:
                tallies.add(game)
            except RatingInputError as error:
                raise RatingInputError(f"game {number}: {error}") from None
        return tallies

    @classmethod
    def of_counts(cls, counts: Mapping[Outcome, int]) -> GameTallies:
        """The tallies of outcomes already counted (as LeagueStore.outcome_counts gives them)."""
        tallies = cls()
        for outcome, count in counts.items():
            tallies.add(dict(outcome), count)
        return tallies

    def add(self, ranks: Mapping[str, int], count: int = 1) -> None:
        """Count `count` more games that ended with `ranks` (bot -> rank)."""
        outcome = _outcome(ranks)
        if outcome not in self._outcomes:
            _check(outcome)
            self._seats.add(len(outcome))
        self._outcomes[outcome] += count
        self._unread[outcome] += count
        self.games += count

    def outcomes(self) -> Mapping[Outcome, int]:
        """Each distinct outcome and how many games ended with it."""
        return self._outcomes

    def pairs(self) -> dict[tuple[str, str], PairRecord]:
        """(bot, opponent) -> results of bot against opponent, for bot before opponent in name order."""
        self._read()
        return {pair: PairRecord(*results) for pair, results in sorted(self._pairs.items())}

    def bots(self) -> dict[str, BotTotals]:
        """Each bot's totals, in name order."""
        self._read()
        return {bot: BotTotals(*totals) for bot, totals in sorted(self._bots.items())}

    def seats(self) -> tuple[int, ...]:
        """The table sizes of the games."""
        return tuple(sorted(self._seats))

    def _read(self) -> None:
        for outcome, count in self._unread.items():
            self._take_in(outcome, count)
        self._unread.clear()

    def _take_in(self, outcome: Outcome, count: int) -> None:
        two_seat = len(outcome) == 2
        for position, (bot, rank) in enumerate(outcome):
            totals = self._bots.setdefault(bot, [0] * 7)
            totals[0] += count
            totals[1] += rank * count
            totals[2] += (len(outcome) - 1) * count
            for other, other_rank in outcome:
                if other != bot:
                    result = pair_result(rank, other_rank)
                    totals[3] += (2 - result) * count
                    if two_seat:
                        totals[4 + result] += count
            for other, other_rank in outcome[position + 1 :]:
                self._pairs.setdefault((bot, other), [0, 0, 0])[pair_result(rank, other_rank)] += count


def _outcome(ranks: Mapping[str, int]) -> Outcome:
    try:
        return tuple(sorted(ranks.items()))
    except TypeError:
        raise RatingInputError(f"bot names must be non-empty strings, got {sorted(map(repr, ranks))}") from None


def _check(outcome: Outcome) -> None:
    if len(outcome) < 2:
        raise RatingInputError(f"a game needs at least two bots, got {len(outcome)}")
    for bot, rank in outcome:
        if not isinstance(bot, str) or not bot:
            raise RatingInputError(f"bot names must be non-empty strings, got {bot!r}")
        if type(rank) is not int or rank < 1:
            raise RatingInputError(f"the rank of {bot!r} must be a positive integer, got {rank!r}")

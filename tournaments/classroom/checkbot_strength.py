"""check-bot's strength tests: games against a baseline bot, passed when the bot's score share reaches a bar.

    --against heuristic:0.5                                  at least half the points against the heuristic
    --against random:0.8:weight=2:visibility=after_published  worth 2 points, shown once grades are published

A strength test plays the game at its smallest table (two seats for SCOUT and Scauver): the checked bot against
the baseline, every deal from both seats, seeded like the rest of the check. The score share is the bot's
points over the games (1 a win, 1/2 a tie, 0 a loss: tournaments.ratings.tallies.pair_points), so 0.5 is as
strong as the baseline. A game the bot forfeits (a fault) is a game it loses.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from protocol.errors import BadInput

from ..ratings.tallies import pair_points

DEFAULT_STRENGTH_GAMES = 10
"""Games per strength test: five deals, each from both seats."""


class Visibility(enum.StrEnum):
    """Gradescope's visibility of a test (its documented values)."""

    HIDDEN = "hidden"
    AFTER_DUE_DATE = "after_due_date"
    AFTER_PUBLISHED = "after_published"
    VISIBLE = "visible"


class StrengthSpecError(BadInput, ValueError):
    """An --against that does not say BASELINE:SHARE[:weight=W][:visibility=V]."""


@dataclass(frozen=True)
class StrengthTest:
    baseline: str
    """A BOT argument (a built-in name such as heuristic, a path, a command line)."""
    share: float
    """The score share needed to pass, 0..1."""
    weight: float = 1.0
    """The test's points in Gradescope."""
    visibility: Visibility | None = None
    """Gradescope's visibility of the test; None: Gradescope's default."""


def baseline_label(test: StrengthTest, resolved_name: str) -> str:
    """The baseline as the report names it: as the user named it (`heuristic`, `random`, a command's words), so
    the output repeats the --against it answers; a path by the name its program resolved to (its file's stem),
    as a path would show the grading machine's folders to the student."""
    return resolved_name if "/" in test.baseline else test.baseline


def parse_strength_test(text: str) -> StrengthTest:
    """BASELINE:SHARE[:weight=W][:visibility=V] as a StrengthTest."""
    parts = text.split(":")
    if len(parts) < 2 or not parts[0]:
        raise StrengthSpecError(f"{text!r} is not BASELINE:SHARE (for example heuristic:0.5)")
    baseline, share_text, *options = parts
    share = _number(share_text, "the score share", text)
    if not 0 <= share <= 1:
        raise StrengthSpecError(f"the score share in {text!r} is not between 0 and 1")
    weight, visibility = 1.0, None
    for option in options:
        key, _, value = option.partition("=")
        if key == "weight":
            weight = _number(value, "the weight", text)
            if weight <= 0:
                raise StrengthSpecError(f"the weight in {text!r} is not positive")
        elif key == "visibility":
            try:
                visibility = Visibility(value)
            except ValueError:
                known = ", ".join(v.value for v in Visibility)
                raise StrengthSpecError(f"the visibility in {text!r} is not one of {known}") from None
        else:
            raise StrengthSpecError(f"unknown option {option!r} in {text!r} (weight=W, visibility=V)")
    return StrengthTest(baseline, share, weight, visibility)


def _number(value: str, what: str, text: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise StrengthSpecError(f"{what} in {text!r} is not a number: {value!r}") from None


@dataclass(frozen=True)
class StrengthResult:
    test: StrengthTest
    baseline_name: str
    games: int
    points: float
    faults: int
    """Faults charged to the checked bot in these games."""
    not_played: str | None = None
    """Why the games were not played (the bot never completed a handshake)."""

    @property
    def share(self) -> float:
        return self.points / self.games if self.games else 0.0

    @property
    def passed(self) -> bool:
        return self.games > 0 and self.share >= self.test.share

    def line(self) -> str:
        bar = f"{self.test.share:.0%} needed"
        if self.not_played is not None:
            return f"against {self.baseline_name}: not played ({self.not_played}); {bar}"
        faults = f", {self.faults} fault(s)" if self.faults else ""
        verdict = "passed" if self.passed else "failed"
        return (
            f"against {self.baseline_name}: {self.points:g} of {self.games} points in {self.games} game(s), a score "
            f"share of {self.share:.0%}{faults} ({bar}): {verdict}"
        )


def game_points(ranks: tuple[int, ...], seat: int) -> float:
    """The bot's points at `seat`: 1, 1/2 or 0 against each other seat, averaged (a two-seat game: 1, 1/2, 0)."""
    others = [rank for other, rank in enumerate(ranks) if other != seat]
    return sum(pair_points(ranks[seat], rank) for rank in others) / len(others)

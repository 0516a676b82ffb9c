"""The end-of-game rewards both environments give, from the engine's result."""

from __future__ import annotations

RETURNS = ("rank", "score")
"""The two kinds of end-of-game reward, the first the default."""


def rank_rewards(ranks: list[int]) -> list[float]:
    """Per seat, the mean over the others of +1 if it ranks better, 0 if tied, -1 if worse: in [-1, 1], and
    the rewards of a table sum to zero."""
    others = len(ranks) - 1
    return [sum((mine < theirs) - (mine > theirs) for theirs in ranks) / others for mine in ranks]


def score_rewards(scores: list[int]) -> list[float]:
    """Per seat, its score minus the table's mean score."""
    mean = sum(scores) / len(scores)
    return [score - mean for score in scores]

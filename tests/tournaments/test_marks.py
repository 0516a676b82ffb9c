"""Results against each baseline and the marks they give: the figures, the [marks] table of a league file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tournaments.league.league_file import LeagueFileError, load_league
from tournaments.league.store import StoredGame
from tournaments.ratings.marks import BaselineResult, against_baselines, mark_of

LADDER = {"random": ((0.5, 40.0),), "heuristic": ((0.5, 60.0), (0.6, 80.0))}


def _game(**ranks: int) -> StoredGame:
    return StoredGame("m", 0, ranks, {bot: 0 for bot in ranks})


def test_share_and_mean_rank_count_only_the_games_with_that_baseline() -> None:
    games = [
        _game(ann=1, random=2),
        _game(ann=1, random=1),
        _game(ann=2, random=1),
        _game(ann=1, heuristic=2, random=3),
        _game(bo=1, heuristic=2),
    ]
    random, heuristic = against_baselines(games, "ann", ("random", "heuristic"))
    assert random == BaselineResult("random", 4, (1 + 0.5 + 0 + 1) / 4, (1 + 1 + 2 + 1) / 4)
    assert heuristic == BaselineResult("heuristic", 1, 1.0, 1.0)
    assert against_baselines(games, "cy", ("random",)) == (BaselineResult("random", 0, None, None),)


@pytest.mark.parametrize(
    "random_share, heuristic_share, mark",
    [(0.4, 0.1, 0.0), (0.5, 0.1, 40.0), (0.9, 0.5, 60.0), (0.9, 0.59, 60.0), (0.2, 0.6, 80.0), (None, None, 0.0)],
)
def test_the_mark_is_the_highest_a_reached_threshold_gives(
    random_share: float | None, heuristic_share: float | None, mark: float
) -> None:
    results = (BaselineResult("random", 8, random_share, 1.5), BaselineResult("heuristic", 8, heuristic_share, 1.5))
    assert mark_of(results, LADDER) == mark
    assert mark_of(results, {}) is None


HEAD = 'game = "scout"\nplayers = 2\nseed = 1\n'
BOTS = '[[bots]]\nname = "random"\ncommand = "random"\nbaseline = true\n[[bots]]\nname = "ann"\ncommand = "random"\n'


def test_marks_are_read_sorted_from_the_league_file(tmp_path: Path) -> None:
    path = tmp_path / "class.toml"
    path.write_text(HEAD + BOTS + "[marks]\nrandom = [[0.75, 90], [0.5, 50.5]]\n")
    assert load_league(path).marks == {"random": ((0.5, 50.5), (0.75, 90.0))}


@pytest.mark.parametrize(
    "marks, problem",
    [
        ("ann = [[0.5, 1]]", "key 'marks.ann': names no baseline"),
        ("random = [[1.5, 1]]", "key 'marks.random': must be a list of [score share from 0 to 1, mark] pairs"),
        ("random = [0.5, 1]", "must be a list of [score share"),
        ("random = []", "must be a list of [score share"),
    ],
)
def test_bad_marks_name_their_key(tmp_path: Path, marks: str, problem: str) -> None:
    path = tmp_path / "class.toml"
    path.write_text(HEAD + BOTS + f"[marks]\n{marks}\n")
    with pytest.raises(LeagueFileError, match=re.escape(problem)):
        load_league(path)

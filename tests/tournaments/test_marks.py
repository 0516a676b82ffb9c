"""Results against each baseline and the marks they give: the figures, the [marks] table of a league file."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from tournaments.league.league_file import LeagueFileError, load_league
from tournaments.league.store import StoredGame
from tournaments.ratings.marks import BaselineResult, HeldMark, Straddle, against_baselines, mark_held, mark_of, wilson

ROOT = Path(__file__).resolve().parents[2]

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


def test_the_wilson_interval_holds_the_share_stays_in_bounds_and_narrows_with_games() -> None:
    for share, games in [(0.0, 10), (0.5, 10), (1.0, 10), (0.57, 100), (0.93, 400)]:
        low, high = wilson(share, games)
        assert 0.0 <= low <= share <= high <= 1.0 and low < high
    assert wilson(0.5, 400)[1] - wilson(0.5, 400)[0] < (wilson(0.5, 100)[1] - wilson(0.5, 100)[0]) * 0.55
    assert wilson(0.5, 100) == pytest.approx((0.404, 0.596), abs=0.001)
    assert BaselineResult("random", 0, None, None).interval is None
    assert BaselineResult("random", 100, 0.5, 1.5).interval == wilson(0.5, 100)


def test_a_mark_holds_where_every_interval_is_clear_of_the_thresholds() -> None:
    clear = (BaselineResult("random", 400, 0.93, 1.1), BaselineResult("heuristic", 400, 0.05, 1.9))
    held = mark_held(clear, LADDER)
    assert held == HeldMark(40.0, 40.0) and held.holds and held.mark == 40.0 and held.note is None
    assert mark_held(clear, {}) is None


def test_a_mark_on_a_threshold_is_uncertain_and_says_which() -> None:
    near = (BaselineResult("random", 100, 0.5, 1.5), BaselineResult("heuristic", 100, 0.02, 2.0))
    held = mark_held(near, LADDER)
    assert held is not None and not held.holds and held.mark is None
    assert (held.low, held.high) == (0.0, 40.0)
    assert held.straddles == (Straddle("random", *wilson(0.5, 100), 0.5),)
    assert held.note == "uncertain: 0-40; random: 0.40-0.60 straddles 0.5"


def test_a_straddled_threshold_below_the_mark_held_elsewhere_is_not_news() -> None:
    """Beating heuristic clearly holds 80 whatever random's share: its straddled 0.5 changes nothing."""
    results = (BaselineResult("random", 100, 0.5, 1.5), BaselineResult("heuristic", 400, 0.9, 1.1))
    assert mark_held(results, LADDER) == HeldMark(80.0, 80.0)


def test_the_documented_marks_leave_the_unchanged_scaffold_clear_of_every_threshold() -> None:
    """The how-to's [marks], read from the page: a random bot's share against random (0.5, give or take what
    100 games allow) and against heuristic (0) hold one mark, above a broken bot's (no game taken) and below a
    simple strategy's, which holds one mark too."""
    documented = re.search(r"```toml\n(.*?)```", (ROOT / "docs" / "how-to" / "grade-a-class.md").read_text(), re.S)
    assert documented is not None
    data = tomllib.loads(documented.group(1))
    marks = {baseline: tuple(map(tuple, pairs)) for baseline, pairs in data["marks"].items()}
    games = data["deals_per_match"] * 2
    broken = (BaselineResult("random", games, 0.0, 2.0), BaselineResult("heuristic", games, 0.0, 2.0))
    assert mark_held(broken, marks) == HeldMark(0.0, 0.0)
    scaffold = {
        mark_held((BaselineResult("random", games, share, 1.5), BaselineResult("heuristic", games, 0.0, 2.0)), marks)
        for share in (0.35, 0.4, 0.5, 0.6)
    }
    assert len(scaffold) == 1, scaffold
    (random_mark,) = scaffold
    assert random_mark is not None and random_mark.holds and random_mark.mark is not None and random_mark.mark > 0
    simple = (BaselineResult("random", games, 0.86, 1.1), BaselineResult("heuristic", games, 0.06, 1.9))
    strong = (BaselineResult("random", games, 1.0, 1.0), BaselineResult("heuristic", games, 0.5, 1.5))
    held = [mark_held(simple, marks), mark_held(strong, marks)]
    assert all(mark is not None and mark.holds for mark in held)
    assert random_mark.mark < held[0].mark < held[1].mark  # type: ignore[union-attr,operator]

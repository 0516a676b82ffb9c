"""Forfeits in real matches: a forfeited seat ranks last and scores the table's lowest score, seats that both
forfeit tie at the bottom, the match summary counts no win for them, and the replay verifies."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from referee_helpers import fixture_bot, match_spec

from referee import replay
from referee.match import run_match
from tournaments.cli import main

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize("game", ["scout", "scauver"])
def test_one_forfeit_ranks_last_with_the_lowest_score(game: str, pid_dir: Path, tmp_path: Path) -> None:
    spec = match_spec(game, [fixture_bot("illegal_action"), "random"], games=2, replay_dir=str(tmp_path))
    for record in run_match(spec).games:
        lost = record.seats.index("illegal_action")
        assert record.forfeited == tuple(seat == lost for seat in range(2))
        assert record.ranks[lost] == 2 and record.ranks[1 - lost] == 1
        assert record.scores[lost] == min(record.scores)
        data = replay.load(record.replay_path or "")
        assert data["scores"] == list(record.scores) and data["ranks"] == list(record.ranks)
        replay.verify(data)


def test_both_seats_forfeit_tie_last_with_the_same_score(pid_dir: Path, tmp_path: Path) -> None:
    bots = [fixture_bot("illegal_action"), fixture_bot("illegal_action")]
    spec = match_spec("scauver", bots, games=2, replay_dir=str(tmp_path))
    for record in run_match(spec).games:
        assert record.forfeited == (True, True)
        assert record.ranks == (2, 2)
        data = replay.load(record.replay_path or "")
        assert list(record.scores) == [min(data["result"]["scores"])] * 2 == data["scores"]
        replay.verify(data)


def test_the_match_summary_counts_no_win_for_a_forfeit(pid_dir: Path) -> None:
    bot = str(fixture_bot("illegal_action").command[1])
    result = CliRunner().invoke(
        main, ["play", "scout", bot, bot, "--games", "2", "--seed", "3", "--move-time", "2000"]
    )
    assert result.exit_code == 0, result.output
    summary = result.output[result.output.index("match\n") :].splitlines()
    rows = [line.split() for line in summary if line.startswith("raw#")]  # the hello name of the raw fixture bots
    assert len(rows) == 2
    for name, games, wins, mean_rank, faults, *_ in rows:
        assert (games, wins, float(mean_rank), faults) == ("2", "0", 2.0, "2"), name

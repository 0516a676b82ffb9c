"""Bots not on move are frozen: a bot that burns CPU in a background thread and in a child of a session of its
own makes no progress during the other seat's turns, unless the match lets bots ponder (MatchSpec.ponder),
and freezing changes no result.

The burner (tests/fixtures/bots/burns_off_turn.py) measures itself, by the wall clock inside its sandbox, in
which 10 ms of each interval between its answer and its next request its thread ran; the other seat
(thinks_each_move.py) takes 0.4 s per decision, so each such interval is long, and the burner leaves its first
and last 0.15 s out (the referee's time to freeze and thaw it, generously under load).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from referee_helpers import TEST_LIMITS, fixture_bot, match_spec
from sandbox_checks import require_sandbox

from referee.isolation import sandbox
from referee.match import run_match
from referee.records import MatchRecord


def _burn(tmp_path: Path, ponder: bool) -> tuple[MatchRecord, list[dict[str, float]]]:
    require_sandbox()
    if not sandbox.probe().cgroups.freezer:
        pytest.skip(f"bots cannot be frozen here: {sandbox.probe().whole_bot_limits}")
    spec = match_spec(
        "scout", [fixture_bot("burns_off_turn"), fixture_bot("thinks_each_move")], games=1, seed=3,
        limits=TEST_LIMITS, log_dir=str(tmp_path / "logs"), ponder=ponder,
    )  # fmt: skip
    record = run_match(spec)
    log = Path(str(record.bots[0].log_path)).read_text()
    burns = [json.loads(line.removeprefix("BURN ")) for line in log.splitlines() if line.startswith("BURN ")]
    assert len(burns) >= 3, log[-2000:]
    return record, burns


def _ran(burns: list[dict[str, float]], part: str) -> float:
    """The part of the other seats' time in which the burner's thread (part "ran_s") or its child in a session
    of its own ("child_ran_s") ran."""
    return sum(burn[part] for burn in burns) / sum(burn["off_turn_s"] for burn in burns)


def test_a_bot_not_on_move_gets_no_cpu(tmp_path: Path) -> None:
    record, burns = _burn(tmp_path, ponder=False)
    assert _ran(burns, "ran_s") <= 0.02 and _ran(burns, "child_ran_s") <= 0.02, burns
    assert not record.games[0].faults


def test_with_ponder_a_bot_runs_on_the_others_time(tmp_path: Path) -> None:
    record, burns = _burn(tmp_path, ponder=True)
    assert _ran(burns, "ran_s") >= 0.1 and _ran(burns, "child_ran_s") >= 0.1, burns
    assert not record.games[0].faults


def test_freezing_changes_no_result(tmp_path: Path) -> None:
    """The same deals between the same deterministic bots, frozen and pondering: the same results."""
    require_sandbox()
    bots = ["heuristic", "heuristic"]
    results = []
    for ponder in (False, True):
        spec = match_spec("scout", bots, games=2, seed=5, log_dir=str(tmp_path / str(ponder)), ponder=ponder)
        record = run_match(dataclasses.replace(spec, replay_dir=str(tmp_path / f"replays-{ponder}")))
        results.append([(game.ranks, game.scores) for game in record.games])
    assert results[0] == results[1]

"""The referee's clocks (per-decision limit and time bank) and simultaneous decisions."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from referee_helpers import fixture_bot, match_spec

from referee.match import run_match
from referee.records import FaultKind, Limits


def test_the_time_bank_pays_for_overruns_until_it_is_empty() -> None:
    """slow_answers overruns by 80 ms each time: a bank of 1 s pays about 12 of them (the random bot's own bank
    pays for its overruns under load)."""
    limits = Limits(move_time_ms=150, time_bank_ms=1000, startup_time_s=30.0)
    spec = match_spec("scauver", [fixture_bot("slow_answers"), "random"], limits=limits)
    (game,) = run_match(spec).games
    (fault,) = game.faults
    assert (fault.seat, fault.kind) == (0, FaultKind.TIMEOUT)
    assert game.timings[0].decisions >= 2
    assert game.timings[0].max_ms > limits.move_time_ms


def test_without_a_bank_an_overrun_is_a_timeout() -> None:
    """With no bank, the clock is long enough for the random bot under load; slow_answers overruns it anyway."""
    limits = Limits(move_time_ms=2000, time_bank_ms=0, startup_time_s=30.0)
    (game,) = run_match(match_spec("scauver", [fixture_bot("slow_answers"), "random"], limits=limits)).games
    assert [(fault.seat, fault.kind) for fault in game.faults] == [(0, FaultKind.TIMEOUT)]
    assert game.timings[0].decisions == 0


@pytest.mark.parametrize("game, players", [("scout", 4), ("scauver", 3)])
def test_simultaneous_decisions_are_requested_from_every_seat_at_once(
    game: str, players: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BARRIER_DIR", str(tmp_path))
    limits = Limits(move_time_ms=3000, startup_time_s=30.0)
    # The barrier bots meet through files in the test's folder: the sandbox would keep them apart.
    record = run_match(match_spec(game, [fixture_bot("barrier")] * players, games=2, limits=limits, sandbox=False))
    assert all(not game_record.faults for game_record in record.games)
    assert list(tmp_path.iterdir()), "no simultaneous decision was played"


def test_an_untimed_seat_never_times_out_while_a_timed_one_does() -> None:
    """BotSpec.timed false (the human seat): the same slow bot keeps its seat where a timed copy of it times out."""
    thinker = fixture_bot("thinks_a_while")
    untimed = dataclasses.replace(thinker, name="untimed", timed=False)
    timed = dataclasses.replace(thinker, name="timed")
    limits = Limits(move_time_ms=150, time_bank_ms=0, startup_time_s=10.0)
    (game,) = run_match(match_spec("scout", [untimed, timed], limits=limits)).games
    assert [(game.seats[fault.seat], fault.kind) for fault in game.faults] == [("timed", FaultKind.TIMEOUT)]
    untimed_seat = game.seats.index("untimed")
    assert game.timings[untimed_seat].max_ms >= 1500

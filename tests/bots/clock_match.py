"""Real matches of a search bot (a process, through the referee) against random bots at 100 ms a move with a
2 s bank: the clock the search bots must never overrun."""

from __future__ import annotations

import sys
from typing import Any

from referee.match import run_match
from referee.records import BotSpec, FaultPolicy, GameSpec, Limits, MatchSpec, SeatTiming

MOVE_TIME_MS = 100
TIME_BANK_MS = 2000


def search_timings_at_100_ms(
    game: str, module: str, players: int, config: dict[str, Any] | None = None, args: tuple[str, ...] = ()
) -> list[SeatTiming]:
    """Two games, the search bot (`python -m module --seed 7 *args`) in a different seat in each; the search
    seat's timings of each game, after checking that no game had a fault."""
    search = BotSpec(module.rsplit(".", 1)[-1], (sys.executable, "-m", module, "--seed", "7", *args))
    randoms = [
        BotSpec(f"random{index}", (sys.executable, "-m", "bots.python.random_bot")) for index in range(players - 1)
    ]
    seatings = [tuple(range(players)), (*range(1, players), 0)]
    spec = MatchSpec(
        match_id=f"{game}-search-clock-{players}",
        game=game,
        bots=(search, *randoms),
        games=tuple(GameSpec(index, 100 + index, seating) for index, seating in enumerate(seatings)),
        config=config or {},
        limits=Limits(move_time_ms=MOVE_TIME_MS, time_bank_ms=TIME_BANK_MS, fault_policy=FaultPolicy.FORFEIT),
    )
    record = run_match(spec)
    for game_record in record.games:
        assert game_record.faults == ()
    return [game_record.timings[seating.index(0)] for game_record, seating in zip(record.games, seatings, strict=True)]

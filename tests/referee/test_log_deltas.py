"""Logs sent as deltas over real matches: a seat that was faulted, or forfeited and plays again in the next game,
still rebuilds exactly the engine's observations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from referee_helpers import TIMEOUT_LIMITS, distinct_deals, fixture_bot, match_spec, substitute

from protocol.logs import LOG_FROM, LogReceiver
from referee import replay
from referee.games import load_game
from referee.match import run_match
from referee.records import FaultKind, Limits


def _observations_by_decision(data: dict) -> dict[int, list[dict]]:
    """The engine's observation of each seat at each of its decisions, in order."""
    state = load_game(data["game"]).new_game(data["players"], data["seed"], data["config"])
    seen: dict[int, list[dict]] = {seat: [] for seat in range(data["players"])}
    pending: dict[int, dict] = {}
    for move in data["actions"]:
        for seat in state.to_move():
            if seat not in pending:
                pending[seat] = state.observation(seat)
        seen[move["seat"]].append(pending.pop(move["seat"]))
        state.apply(move["seat"], move["action"])
    return seen


@pytest.mark.parametrize("limits", [TIMEOUT_LIMITS, substitute(TIMEOUT_LIMITS)], ids=["forfeit", "substitute"])
def test_a_faulted_seat_rebuilds_the_engines_observations_in_this_game_and_the_next(
    limits: Limits, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECORD_DIR", str(tmp_path))
    spec = distinct_deals(
        match_spec(
            "scout",
            [fixture_bot("late_recorder"), "random", "random"],
            games=2,
            limits=limits,
            replay_dir=str(tmp_path / "replays"),
            sandbox=False,  # the recorder writes into the test's folder, which the sandbox would hide from it
        )
    )
    record = run_match(spec)
    assert [fault.kind for fault in record.games[0].faults] == [FaultKind.TIMEOUT]
    assert not record.games[1].faults
    (path,) = tmp_path.glob("*.jsonl")
    logs = LogReceiver()
    requests: dict[int, list[dict]] = {0: [], 1: []}
    game_index = -1
    seats = {}
    for line in path.read_text().splitlines():
        message = json.loads(line)
        if message["type"] == "game_start":
            game_index = message["game_index"]
            seats[game_index] = message["seat"]
        elif message["type"] == "request":
            logs.restore(message["observation"], message[LOG_FROM])
            requests[game_index].append(message)
    for game_record in record.games:
        expected = _observations_by_decision(replay.load(game_record.replay_path))[seats[game_record.index]]
        got = [request["observation"] for request in requests[game_record.index]]
        assert got == expected[: len(got)]
        assert requests[game_record.index][0][LOG_FROM] == {"history": 0}
    game_0 = requests[0]
    if limits.fault_policy is TIMEOUT_LIMITS.fault_policy:
        assert len(game_0) == 2, "no request after the forfeit"
    else:
        assert game_0[2][LOG_FROM] == {"history": 0}, "after a fault the log is sent in full"
    assert any(any(request[LOG_FROM].values()) for request in requests[1])

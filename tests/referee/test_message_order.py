"""What a bot receives, in order, over a whole match: welcome (with the limits in force), then per game
game_start (its seat, an opaque match id, the game's place in the order of play), requests with increasing ids,
game_over (the game's result, its seat), and bye last; a process per bot and rotation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from referee_helpers import fixture_bot, match_spec

from protocol import limits
from referee.match import run_match
from referee.records import Limits


def test_every_bot_receives_the_protocol_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A balanced 3-seat match (2 deals, 6 games) is played rotation by rotation: each bot process serves one
    rotation (both deals), from hello to bye, and the next rotation gets fresh processes."""
    monkeypatch.setenv("RECORD_DIR", str(tmp_path))
    match_limits = Limits(move_time_ms=900, time_bank_ms=250, startup_time_s=7.5)
    # The recorders write into the test's folder, which the sandbox would hide from them.
    spec = match_spec("scout", [fixture_bot("recorder")] * 3, games=6, limits=match_limits, sandbox=False)
    record = run_match(spec)
    assert record.bot_starts == 9
    logs = sorted(tmp_path.glob("*.jsonl"))
    assert len(logs) == 9, "three rotations of three bots, a process each"
    match_ids = set()
    for log in logs:
        messages = [json.loads(line) for line in log.read_text().splitlines()]
        welcome, *games_part, bye = messages
        assert welcome["type"] == "welcome" and welcome["protocol"] == limits.PROTOCOL_VERSION
        assert welcome["limits"] == {
            "move_time_ms": 900,
            "time_bank_ms": 250,
            "startup_time_s": 7.5,
            "max_message_bytes": limits.MAX_MESSAGE_BYTES,
            "max_depth": limits.MAX_DEPTH,
            "max_container_len": limits.MAX_CONTAINER_LEN,
            "max_string_bytes": limits.MAX_STRING_BYTES,
        }
        assert bye == {"type": "bye"}
        starts = [index for index, message in enumerate(games_part) if message["type"] == "game_start"]
        assert starts[0] == 0 and len(starts) == 2
        last_id = 0
        indices = []
        for begin, end in zip(starts, [*starts[1:], len(games_part)], strict=True):
            start, *requests, over = games_part[begin:end]
            assert start["game"] == "scout" and start["players"] == 3
            match_ids.add(start["match_id"])
            played = record.games[start["game_index"]]
            assert over["type"] == "game_over" and over["seat"] == start["seat"]
            assert over["result"]["scores"] == list(played.scores)
            assert requests and all(request["type"] == "request" for request in requests)
            ids = [request["id"] for request in requests]
            assert ids == sorted(set(ids)) and ids[0] > last_id
            last_id = ids[-1]
            assert all(request["time_left_ms"] == 900 and request["bank_left_ms"] <= 250 for request in requests)
            assert all(request["observation"]["seat"] == start["seat"] for request in requests)
            indices.append(start["game_index"])
        assert indices in ([0, 1], [2, 3], [4, 5]), "one rotation: both deals, in the order played"
    assert len(match_ids) == 1 and spec.match_id not in match_ids, "one opaque id for the whole match"
    assert [game.index for game in record.games] == [0, 3, 1, 4, 2, 5]
    assert all(len({record.games[i].seed for i in indices}) == 2 for indices in ([0, 1], [2, 3], [4, 5]))

"""The illegal action a bot sent is kept as data: in the fault, in the replay (version 3, with a relative link to
the seat's log) and, bounded by protocol.limits, never parsed again. Version 2 replays still load and verify."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from referee_helpers import fixture_bot, match_spec

from protocol import limits
from referee import replay
from referee.faults import CUT_MARK, sent_text
from referee.match import run_match
from referee.records import FaultKind

pytestmark = pytest.mark.timeout(120)


def test_sent_text_is_ascii_json_cut_at_the_limit() -> None:
    assert sent_text({"kind": "show", "start": 1}) == '{"kind":"show","start":1}'
    assert sent_text({"s": "\u202e\x1b[31m"}) == '{"s":"\\u202e\\u001b[31m"}'
    assert sent_text({"x": math.nan}) == '{"x":NaN}'
    long = sent_text({"junk": ["a" * 1000] * 10})
    assert len(long) == limits.MAX_RECORDED_ACTION_CHARS and long.endswith(CUT_MARK)
    assert long.startswith('{"junk":["aaaa')


def played(bot: str, tmp_path: Path) -> tuple[object, dict]:
    spec = match_spec(
        "scout",
        [fixture_bot(bot), "random", "random"],
        replay_dir=str(tmp_path / "replays"),
        log_dir=str(tmp_path / "logs" / "m"),
    )
    (game,) = run_match(spec).games
    return game, replay.load(game.replay_path or "")


def test_the_illegal_action_is_in_the_fault_and_the_replay(tmp_path: Path) -> None:
    game, data = played("illegal_action", tmp_path)
    (fault,) = game.faults  # type: ignore[attr-defined]
    assert fault.kind is FaultKind.ILLEGAL_ACTION
    assert fault.sent == '{"kind":"teleport","where":"home"}'
    assert data["version"] == 3
    assert [entry["sent"] for entry in data["faults"]] == [fault.sent]
    assert [entry["before_action"] for entry in data["faults"]] == [fault.before_action]
    logs = [seat["log"] for seat in data["seats"]]
    assert logs[0] == "../logs/m/illegal_action.log"
    assert all(not Path(log).is_absolute() for log in logs)
    assert (tmp_path / "replays" / logs[0]).is_file()
    replay.verify(data)


def test_a_huge_illegal_action_is_kept_cut(tmp_path: Path) -> None:
    game, data = played("illegal_huge", tmp_path)
    (fault,) = game.faults  # type: ignore[attr-defined]
    assert fault.sent is not None and len(fault.sent) == limits.MAX_RECORDED_ACTION_CHARS
    assert fault.sent.endswith(CUT_MARK) and "\u202e" not in fault.sent
    assert data["faults"][0]["sent"] == fault.sent


def test_a_version_2_replay_still_loads_and_verifies(tmp_path: Path) -> None:
    _, data = played("illegal_action", tmp_path)
    old = {**data, "version": 2, "seats": [{k: v for k, v in seat.items() if k != "log"} for seat in data["seats"]]}
    old["faults"] = [{k: v for k, v in fault.items() if k != "sent"} for fault in data["faults"]]
    path = tmp_path / "v2.json"
    path.write_text(json.dumps(old))
    replay.verify(replay.load(path))

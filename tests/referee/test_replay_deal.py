"""Replays hold the deal that was played: the dealt cards deal the game again, and verify checks them."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from referee_helpers import match_spec

from referee import replay
from referee.games import load_game
from referee.match import run_match

pytestmark = pytest.mark.timeout(120)


def played_replays(game: str, players: int, tmp_path: Path) -> list[dict]:
    spec = match_spec(game, ["random"] * players, games=players, seed=11, replay_dir=str(tmp_path))
    return [replay.load(record.replay_path or "") for record in run_match(spec).games]


@pytest.mark.parametrize(("game", "players"), [("scout", 3), ("scout", 2), ("scauver", 2), ("scauver", 4)])
def test_the_replay_deal_deals_the_game_again(game: str, players: int, tmp_path: Path) -> None:
    for data in played_replays(game, players, tmp_path):
        assert data["version"] == replay.VERSION == 3
        assert data["deal"] is not None and data["deal"]["rounds"]
        replay.verify(data)
        state = load_game(game).replay(
            players,
            data["seed"],
            [(move["seat"], move["action"]) for move in data["actions"]],
            config=data["config"],
            deal=data["deal"],
        )
        assert state.is_over() and state.result() == data["result"]
        assert state.dealt == data["deal"]


def test_verify_refuses_a_replay_whose_deal_was_changed(tmp_path: Path) -> None:
    (data, *_) = played_replays("scout", 3, tmp_path)
    swapped = copy.deepcopy(data)
    hands = swapped["deal"]["rounds"][0]
    hands[0][0], hands[1][0] = hands[1][0], hands[0][0]
    with pytest.raises(replay.ReplayMismatch, match="deal is not the one seed"):
        replay.verify(swapped)
    rescored = copy.deepcopy(data)
    rescored["scores"][0] += 1
    with pytest.raises(replay.ReplayMismatch, match="final scores"):
        replay.verify(rescored)


def test_a_replay_without_the_dealt_cards_is_refused_by_version(tmp_path: Path) -> None:
    (data, *_) = played_replays("scauver", 2, tmp_path)
    old = tmp_path / "old.json"
    old.write_text(json.dumps({**data, "version": 1, "deal": None}))
    with pytest.raises(replay.ReplayError, match="replay version 1; this referee reads 2 and 3"):
        replay.load(old)
    missing = tmp_path / "missing.json"
    missing.write_text(json.dumps({key: value for key, value in data.items() if key != "deal"}))
    with pytest.raises(replay.ReplayError, match="lacks deal"):
        replay.load(missing)

"""What the replay page's parts are built from, checked without a browser: each SCOUT round's final position (it
agrees with the engine's own counts of the round's end, and the last round's with the final observation), the
legal moves of every decision with the one played, and the final scores of a forfeited seat as `play` and the
store count them."""

from __future__ import annotations

import base64
import gzip
import json
import re
from typing import Any

import pytest
from replays import forfeited, self_play

from tournaments.pages.replay_page import LEGAL_BLOCK, render_replay_page
from tournaments.pages.text import render_text
from tournaments.pages.timeline import replay_steps


def block(page: str, name: str) -> Any:
    found = re.search(rf'<script type="application/gzip\+base64" id="{name}">([^<]*)</script>', page)
    assert found is not None
    return json.loads(gzip.decompress(base64.b64decode(found.group(1))))


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_every_scout_round_end_is_the_position_the_engine_counted(players: int) -> None:
    replay = self_play("scout", (["heuristic", "random"] * 3)[:players], seed=players)
    page = render_replay_page(replay)
    ends = block(page, "replay-steps")["round_ends"]
    steps = list(replay_steps(replay))
    assert len(ends) == players  # SCOUT plays as many rounds as seats
    for step, end in ends.items():
        finished = end["finished"]
        assert [len(hand) for hand in end["hands"]] == finished["hand_sizes"]
        assert finished == steps[int(step)].observations[0]["finished_rounds"][-1]
    last = steps[-1]
    final = ends[str(last.index)]
    assert final["hands"] == [view["hand"] for view in last.observations]
    assert final["active_set"] == last.observations[0]["active_set"]
    assert final["totals"] == last.observations[0]["scores"]


@pytest.mark.parametrize("game", ["scout", "scauver"])
def test_each_decision_lists_its_legal_moves_and_marks_the_one_played(game: str) -> None:
    replay = self_play(game, ["heuristic", "random", "random"], seed=3)
    page = render_replay_page(replay)
    legal = block(page, LEGAL_BLOCK)
    chosen = block(page, "replay-steps")["chosen"]
    assert len(legal) == len(chosen) == len(replay["actions"])
    for options, index, move in zip(legal, chosen, replay["actions"], strict=True):
        assert options[index] == move["action"]
        assert all(option != move["action"] for option in options[:index])


def test_a_forfeited_seat_shows_the_forfeit_score_as_play_does() -> None:
    replay = self_play("scout", ["heuristic", "random", "random"], seed=4)
    seat = replay["result"]["scores"].index(max(replay["result"]["scores"]))
    lost = forfeited(replay, seat)
    counted, final = lost["result"]["scores"][seat], lost["scores"][seat]
    assert counted != final
    page = render_replay_page(lost)
    meta = json.loads(re.search(r'id="replay-meta">([^<]*)</script>', page).group(1))  # type: ignore[union-attr]
    row = meta["seats"][seat]
    assert (row["score"], row["game_score"], row["forfeited"]) == (final, counted, True)
    assert row["forfeited_at"] == lost["faults"][0]["before_action"] + 1
    header = re.search(r'<table class="seats">.*?</table>', page, re.S).group(0)  # type: ignore[union-attr]
    assert f">{final}</td>" in header and f">{counted}</td>" not in header and "forfeited</span>" in header
    assert f"score {final}  (forfeited; the game counted {counted})" in render_text(lost)

"""The replay page as a file (no browser): self-contained, small, and holding every seat's observation at every
step exactly as the engine made it, the replay itself, and captions that keep simultaneous choices hidden."""

from __future__ import annotations

import base64
import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest
from page_figures import FIGURES

from referee import replay as replays
from tournaments.pages.delta import apply_patch
from tournaments.pages.replay_page import render_replay_page
from tournaments.pages.replay_source import load_replay
from tournaments.pages.timeline import replay_steps

SIZE_LIMIT = 500_000


def packed_data(page: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/gzip\+base64" id="replay-steps">([^<]*)</script>', page)
    assert found is not None
    return dict(json.loads(gzip.decompress(base64.b64decode(found.group(1)))))


def rebuilt_observations(data: dict[str, Any], players: int) -> list[list[dict[str, Any]]]:
    """What the page's script rebuilds: per step, every seat's observation (shared part and its own part)."""
    shared: dict[str, Any] = {}
    own: list[dict[str, Any]] = [{} for _ in range(players)]
    steps = []
    for frame in data["frames"]:
        shared = apply_patch(shared, frame[0])
        own = [apply_patch(mine, patch) for mine, patch in zip(own, frame[1:], strict=True)]
        steps.append([{**shared, **mine} for mine in own])
    return steps


@pytest.mark.parametrize("game", ["scout", "scauver"])
def test_the_page_holds_every_observation_of_every_step(game: str, request: pytest.FixtureRequest) -> None:
    replay = request.getfixturevalue(f"{game}_replay")
    data = packed_data(request.getfixturevalue(f"{game}_page").read_text())
    rebuilt = rebuilt_observations(data, replay["players"])
    expected = [list(step.observations) for step in replay_steps(replay)]
    assert len(rebuilt) == len(expected) == len(replay["actions"]) + 1
    for number, (made, engine) in enumerate(zip(rebuilt, expected, strict=True)):
        assert json.loads(json.dumps(made)) == json.loads(json.dumps(engine)), f"step {number}"
    assert data["replay"] == json.loads(json.dumps(replay))
    assert len(data["captions"]) == len(replay["actions"])


def test_the_pages_of_a_five_seat_scout_game_and_a_round_cap_scauver_game_are_small(
    scout_replay: dict[str, Any], scauver_replay: dict[str, Any], scout_page: Path, scauver_page: Path
) -> None:
    assert replays.simulate(scauver_replay).round == scauver_replay["config"]["round_cap"]
    for replay, page in ((scout_replay, scout_page), (scauver_replay, scauver_page)):
        size = page.stat().st_size
        decisions = len(replay["actions"])
        FIGURES.append(f"{replay['game']} page, {replay['players']} seats, {decisions} decisions: {size / 1000:.0f} kB")
        assert size < SIZE_LIMIT


def test_the_page_loads_nothing_from_outside(scout_page: Path) -> None:
    page = scout_page.read_text()
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert not re.search(r"\b(src|href)\s*=", page), "a page that refers to a file or a server is not self-contained"
    assert "http://" not in page and "https://" not in page and "<link" not in page


def test_a_choice_at_a_simultaneous_decision_is_hidden_from_the_other_seats_captions(
    scout_replay: dict[str, Any], scauver_replay: dict[str, Any], scout_page: Path, scauver_page: Path
) -> None:
    scout = packed_data(scout_page.read_text())["captions"]
    orient = scout_replay["actions"][0]
    assert scout[0][0] in (
        "chooses to turn its hand around (it turns once every seat has chosen)",
        "keeps its hand as dealt",
    )
    assert scout[0][1] == "orients its hand (hidden until every seat has)", orient
    scauver = packed_data(scauver_page.read_text())["captions"]
    setups = [
        caption
        for move, caption in zip(scauver_replay["actions"], scauver, strict=True)
        if move["action"]["kind"] == "setup"
    ]
    assert setups and all(caption[1] == "sets up its field (hidden until every seat has)" for caption in setups)
    assert all(caption[0].startswith("sets up its field ") and "|" in caption[0] for caption in setups)


def test_a_page_is_a_replay_too(scout_replay: dict[str, Any], scout_page: Path, tmp_path: Path) -> None:
    assert load_replay(scout_page) == json.loads(json.dumps(scout_replay))
    broken = tmp_path / "broken.html"
    broken.write_text("<html><body>not a replay</body></html>")
    with pytest.raises(replays.ReplayError, match="not a replay page"):
        load_replay(broken)


def test_a_replay_whose_action_does_not_apply_is_refused(scout_replay: dict[str, Any]) -> None:
    bad = json.loads(json.dumps(scout_replay))
    bad["actions"][30]["action"] = {"kind": "show", "start": 40, "length": 1}
    with pytest.raises(replays.ReplayMismatch, match="action 30 does not apply"):
        render_replay_page(bad)

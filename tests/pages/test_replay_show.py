"""`referee replay show` for a person: the cards of every show and scout, each round's end with its scores
(SCOUT) or its pot, showdown and chips (Scauver), faults where they happened."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from tournaments.cli import main
from tournaments.pages.scout import cards_text
from tournaments.pages.text import render_text
from tournaments.pages.timeline import replay_steps


def show(page: Path) -> str:
    result = CliRunner().invoke(main, ["replay", "show", str(page)])
    assert result.exit_code == 0, result.output
    return result.output


def test_scout_shows_and_scouts_name_their_cards_and_every_round_its_scores(
    scout_replay: dict[str, Any], scout_page: Path
) -> None:
    text = show(scout_page)
    assert text == render_text(scout_replay) + "\n"
    steps = list(replay_steps(scout_replay))
    first_show = next(step for step in steps if step.move and step.move["action"]["kind"] == "show")
    action = first_show.move["action"]  # type: ignore[index]
    hand = steps[first_show.index - 1].observations[first_show.seat]["hand"]  # type: ignore[index]
    shown = cards_text(hand[action["start"] : action["start"] + action["length"]])
    assert f"shows {shown}" in text
    assert re.search(r"scouts \d+/\d+ from the (left|right) end", text)
    players = scout_replay["players"]
    assert len(re.findall(r"round \d+ ends: ", text)) == players
    assert text.count("round scores: ") == players
    final = steps[-1].observations[0]["scores"]
    assert f"totals: {', '.join(f'seat {seat}: {score}' for seat, score in enumerate(final))}" in text
    assert "! fault of seat 2 (heuristic#2): illegal_action: cards 9..11" in text


def test_scauver_shows_bets_showdowns_with_vanguards_and_chips(scauver_replay: dict[str, Any]) -> None:
    text = render_text(scauver_replay)
    assert re.search(r"sets up its field [\w ]* \| ", text)
    assert re.search(r": bets \d+  \[", text) and re.search(r": folds  \[", text)
    assert re.search(r"showdown: seat \d \(\+\d+\) takes the pot of \d+", text)
    assert re.search(r"seat \d: vanguards [\w ]+ \| [\w ]+ \(link \d+\), score \d+", text)
    assert text.count("= chips at the end of the round: ") == scauver_replay["config"]["round_cap"]
    assert "timeout: no reply within 1000 ms" in text and "[fallback]" in text

"""PROTOCOL.md stays true to the code: the limits it quotes, the welcome it shows, and the observation keys
and examples of each game."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from protocol import codec, limits
from protocol.logs import LogSender
from referee.games import load_game

DOC = (Path(__file__).resolve().parents[2] / "protocol" / "PROTOCOL.md").read_text()


def quoted_limits() -> dict[str, str]:
    return dict(re.findall(r"^\| `([A-Z_]+)` \| ([0-9.]+) \|", DOC, flags=re.MULTILINE))


def test_every_limit_is_quoted_with_its_value() -> None:
    quoted = quoted_limits()
    names = [name for name in vars(limits) if name.startswith(("MAX_", "DEFAULT_"))]
    assert sorted(quoted) == sorted(names)
    for name, text in quoted.items():
        assert float(text) == getattr(limits, name), name


def test_welcome_example_is_the_default_welcome() -> None:
    block = re.search(r'```\n(\{"type": "welcome".*?)```', DOC, flags=re.DOTALL)
    assert block is not None
    shown = json.loads(block.group(1))
    expected = codec.welcome(limits.DEFAULT_MOVE_TIME_MS, limits.DEFAULT_TIME_BANK_MS, limits.DEFAULT_STARTUP_TIME_S)
    assert shown == expected


def section(title: str) -> str:
    start = DOC.index(f"### {title}")
    end = DOC.find("\n### ", start + 1)
    end = DOC.find("\n## ", start) if end == -1 else end
    return DOC[start:end]


def example_request(title: str) -> dict:
    [block] = re.findall(r"```json\n(.*?)```", section(title), flags=re.DOTALL)
    return json.loads(block)


@pytest.mark.parametrize(("game", "title", "players"), [("scout", "SCOUT", 3), ("scauver", "Scauver", 2)])
def test_every_observation_key_is_documented_and_shown(game: str, title: str, players: int) -> None:
    keys = set(load_game(game).new_game(players, seed=1).observation(0))
    documented = set(re.findall(r"`([a-z_]+)`", section(title)))
    assert keys <= documented, f"undocumented observation keys: {sorted(keys - documented)}"
    assert set(example_request(title)["observation"]) == keys


def test_scout_example_is_a_real_request() -> None:
    state = load_game("scout").new_game(3, seed=4)
    for seat in state.to_move():
        state.apply(seat, {"kind": "orient", "flip": False})
    state.apply(0, {"kind": "show", "start": 2, "length": 1})
    example = example_request("SCOUT")
    assert example["observation"] == state.observation(1)
    legal = state.legal_actions(1)
    assert all(action in legal for action in example["legal_actions"])


def test_scauver_example_actions_answer_its_phase() -> None:
    example = example_request("Scauver")
    assert example["observation"]["phase"] == "answer"
    assert {action["kind"] for action in example["legal_actions"]} == {"call", "fold", "raise"}


def test_logs_example_is_the_delta_the_referee_sends() -> None:
    """The Logs section's example continues the SCOUT example request: seat 1 shows, seat 2 scouts, seat 0
    shows; seat 1's next request sends history from entry 4 on."""
    start = DOC.index("### Logs")
    section_text = DOC[start : DOC.index("### Time", start)]
    block = section_text[section_text.index("```\n") : section_text.rindex("```")]
    shown_from = int(re.search(r'"log_from": \{"history": (\d+)\}', block).group(1))  # type: ignore[union-attr]
    shown = json.loads(re.search(r'"history": (\[\s*\{.*?\}\])\}', block, flags=re.DOTALL).group(1))  # type: ignore[union-attr]
    state = load_game("scout").new_game(3, seed=4)
    sender = LogSender(load_game("scout").info.log_keys)
    sender.trim(state.observation(1))
    for seat in state.to_move():
        state.apply(seat, {"kind": "orient", "flip": False})
    state.apply(0, {"kind": "show", "start": 2, "length": 1})
    assert sender.trim(state.observation(1)) == {"history": 0}
    state.apply(1, {"kind": "show", "start": 2, "length": 3})
    state.apply(2, {"kind": "scout", "end": "left", "flip": False, "insert": 0, "and_show": False})
    state.apply(0, {"kind": "show", "start": 0, "length": 2})
    observation = state.observation(1)
    assert sender.trim(observation) == {"history": shown_from}
    assert observation["history"] == shown


def test_the_scripted_referee_example_runs() -> None:
    part = DOC[DOC.index("## Testing a Python bot without a referee") :]
    [block] = re.findall(r"```python\n(.*?)```", part, flags=re.DOTALL)
    exec(compile(block, "PROTOCOL.md", "exec"), {})

"""Helpers for the league tests: league files written from a few settings."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

LeagueWriter = Callable[..., Path]


def league_text(
    bots: Sequence[str] = ("alpha", "beta", "gamma", "delta"),
    command: str = "random",
    extra: str = "",
    **settings: object,
) -> str:
    """The TOML of a league of `bots` (all running `command`), with top-level `settings` and `extra` lines."""
    values = {"game": "scout", "players": 3, "seed": 7, **settings}
    lines = [f"{key} = {_toml(value)}" for key, value in values.items() if value is not None]
    lines.append(extra)
    for name in bots:
        lines += ["[[bots]]", f"name = {_toml(name)}", f"command = {_toml(command)}"]
    return "\n".join(lines) + "\n"


def _toml(value: object) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


@pytest.fixture
def write_league(tmp_path: Path) -> LeagueWriter:
    """write_league(file_name="league", **as league_text) -> the path of a new league file in tmp_path."""

    def write(file_name: str = "league", **kwargs: object) -> Path:
        path = tmp_path / f"{file_name}.toml"
        path.write_text(league_text(**kwargs))  # type: ignore[arg-type]
        return path

    return write

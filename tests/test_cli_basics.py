"""The command line as a user meets it first: help everywhere, the games list, clean errors."""

from __future__ import annotations

import json

import click
import pytest
from click.testing import CliRunner

from referee.games import list_games
from tournaments.cli import main


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name, command in group.commands.items():
        found.append((*prefix, name))
        if isinstance(command, click.Group):
            found.extend(_commands(command, (*prefix, name)))
    return found


@pytest.mark.parametrize("path", _commands(main), ids=" ".join)
def test_every_command_has_help(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(main, [*path, "--help"])
    assert result.exit_code == 0, result.output
    command: click.Command = main
    for name in path:
        assert isinstance(command, click.Group)
        command = command.commands[name]
    assert (command.help or "").strip(), f"referee {' '.join(path)} has no help text"


def test_games_lists_every_game_with_players() -> None:
    result = CliRunner().invoke(main, ["games", "--json"])
    assert result.exit_code == 0, result.output
    listed = json.loads(result.output)
    assert [entry["name"] for entry in listed] == list_games()
    for entry in listed:
        low, high = entry["players"]
        assert 2 <= low <= high <= 5


def test_unknown_command_is_a_clean_error() -> None:
    result = CliRunner().invoke(main, ["no-such-command"])
    assert result.exit_code == 2
    assert "No such command" in result.output

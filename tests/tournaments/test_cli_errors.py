"""The command line's edge: a library error (protocol.errors) becomes one line, `Error: ...`, with exit status 1 and
no traceback, whichever command meets it; anything else is a bug and keeps its traceback."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from protocol.errors import BadInput, BotFault, EnvironmentProblem, RefereeError
from referee.replay import ReplayError, ReplayWriteError
from tournaments.classroom.scaffold import Language, ScaffoldWriteError, new_bot
from tournaments.cli import main
from tournaments.league.store import LeagueStore
from tournaments.pages.replay_source import load_replay

REPLAY_COMMANDS = importlib.import_module("tournaments.cli.replay")
"""The module of `referee replay` (the package's attribute of that name is the command group)."""


def _one_error_line(result: Result, message: str) -> None:
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    assert result.stderr.splitlines() == [f"Error: {message}"]


def test_a_file_that_is_no_replay_is_one_line(tmp_path: Path) -> None:
    text = tmp_path / "notes.json"
    text.write_text('{"format": "a shopping list"}')
    with pytest.raises(ReplayError) as refused:
        load_replay(text)
    _one_error_line(CliRunner().invoke(main, ["replay", "show", str(text)]), str(refused.value))


def test_a_bot_folder_the_system_refuses_is_one_line(tmp_path: Path) -> None:
    """The folder would be made below a file: the OSError becomes an EnvironmentProblem where new_bot makes it."""
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    with pytest.raises(ScaffoldWriteError) as refused:
        new_bot(a_file / "bot", Language.PYTHON)
    assert isinstance(refused.value, EnvironmentProblem) and isinstance(refused.value, OSError)
    result = CliRunner().invoke(main, ["new-bot", "--lang", "python", str(a_file / "bot")])
    _one_error_line(result, str(refused.value))


def test_an_export_file_that_cannot_be_written_is_one_line(tmp_path: Path) -> None:
    db = tmp_path / "league.sqlite"
    LeagueStore(db).close()
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    target = str(a_file / "rows.csv")
    result = CliRunner().invoke(main, ["tournament", "export", "--db", str(db), "--output", target])
    _one_error_line(result, f"cannot write {target!r}: Not a directory")


@pytest.mark.parametrize(
    "error",
    [
        BadInput("the league file names no bots"),
        BotFault("the bot sent no hello"),
        EnvironmentProblem("no bubblewrap here"),
        RefereeError("a store that cannot be used"),
        ReplayWriteError(Path("/replays/x.json"), OSError(28, "No space left on device")),
    ],
    ids=lambda error: type(error).__name__,
)
def test_a_library_error_of_any_kind_is_one_line(
    error: RefereeError, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(path: object) -> None:
        raise error

    monkeypatch.setattr(REPLAY_COMMANDS, "load_replay", refuse)
    replay = tmp_path / "game.json"
    replay.write_text("{}")
    _one_error_line(CliRunner().invoke(main, ["replay", "show", str(replay)]), str(error))


def test_a_bug_keeps_its_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bug = KeyError("a key the code forgot")

    def broken(path: object) -> None:
        raise bug

    monkeypatch.setattr(REPLAY_COMMANDS, "load_replay", broken)
    replay = tmp_path / "game.json"
    replay.write_text("{}")
    result = CliRunner().invoke(main, ["replay", "show", str(replay)])
    assert result.exit_code == 1
    assert result.exception is bug and result.exc_info is not None
    assert "Error:" not in result.output
    with pytest.raises(KeyError):
        CliRunner().invoke(main, ["replay", "show", str(replay)], catch_exceptions=False)

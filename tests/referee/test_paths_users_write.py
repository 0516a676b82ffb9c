"""Paths users write work in the sandbox: a command naming its program through `..`, and a program in a folder
its bot's uid cannot enter, which gets a fault saying which folder and what to do instead of a bare
`Permission denied`."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from sandbox_checks import require_sandbox

from referee.isolation import sandbox
from tournaments.cli import main

ROOT = Path(__file__).resolve().parents[2]
FIRST_MOVE = ROOT / "tests" / "fixtures" / "class" / "first_move" / "bot.py"


def play(bot: str) -> dict:
    args = ["play", "scauver", bot, "random", "--seed", "3", "-o", "round_cap=25", "--json"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _faults(report: dict) -> list[str]:
    return [fault["detail"] for game in report["games"] for fault in game["faults"]]


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """A course folder that others may read: course/bots/mine.py, an empty course/bars."""
    tmp_path.chmod(0o755)
    (tmp_path / "bots").mkdir()
    (tmp_path / "bars").mkdir()
    shutil.copy(FIRST_MOVE, tmp_path / "bots" / "mine.py")
    return tmp_path


def test_words_through_dot_dot_name_what_the_kernel_finds(course: Path) -> None:
    (course / "link").symlink_to(course / "bots")
    command = ["python3", f"{course}/bars/../bots/mine.py", "--data", f"{course}/link/../bars", "../x"]
    assert sandbox.normalised_command(command, str(course / "bars")) == [
        "python3",
        f"{course}/bots/mine.py",
        "--data",
        f"{course}/bars",
        "../x",
    ]
    assert sandbox.normalised_command([f"{course}/link/../bots/mine.py"], None) == [f"{course}/bots/mine.py"]


def test_a_program_named_through_dot_dot_runs_in_the_sandbox(course: Path) -> None:
    require_sandbox()
    report = play(f"{sys.executable} {course}/bars/../bots/mine.py")
    assert not _faults(report), _faults(report)
    assert {game["isolation"] for game in report["games"]} != {"none"}


def test_a_program_its_uid_cannot_reach_is_told_which_folder_and_what_to_do(course: Path) -> None:
    require_sandbox()
    if not sandbox.probe().own_uid:
        pytest.skip("bots get no uid of their own here (not root): they read what the organiser reads")
    private = course / "private"
    private.mkdir(mode=0o700)
    private.chmod(0o700)
    shutil.copy(FIRST_MOVE, private / "bot.py")
    details = _faults(play(str(private / "bot.py")))
    assert details, "the bot cannot have played"
    assert f"cannot enter {private} (mode drwx------" in details[0]
    assert f"chmod o+rx {private}" in details[0] and "or move the bot" in details[0]
    assert "Permission denied" not in details[0]
    private.chmod(0o755)
    (private / "bot.py").chmod(0o600)
    details = _faults(play(str(private / "bot.py")))
    assert f"may not read {private / 'bot.py'} (mode -rw-------): run `chmod o+r" in details[0]
    (private / "bot.py").chmod(0o644)
    assert not _faults(play(str(private / "bot.py")))

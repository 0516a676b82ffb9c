"""docs/tutorials/first-bot.md stays true: its commands are run in a fresh folder, in the order written.

The tutorial's fenced blocks say what the test does with them, by their info string:
- `sh`: each line is a command, run with bash in the folder; it must exit with status 0;
- `sh interactive`: a command a person answers; run in a terminal (tmux), answering move 1 until it exits 0;
- `sh once`: the installation, run in a copy of this checkout (a fresh virtual environment made the tutorial's
  way: its `source .venv/bin/activate` is the PATH below), whose `referee` and `pytest` run everything after;
- `LANGUAGE FILE` (`toml league.toml`, `python mybot/bot.py`): the block is the content of FILE, written there.
The environment puts that virtual environment's bin folder first on PATH, as `source .venv/bin/activate` does,
and keeps run folders in the test's folder (TMPDIR).
"""

from __future__ import annotations

import csv
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from tmux_screen import EXITED, TMUX, TmuxScreen

CHECKOUT = Path(__file__).resolve().parents[1]
TUTORIAL = CHECKOUT / "docs" / "tutorials" / "first-bot.md"
COMMAND_TIMEOUT_S = 600
NOT_COPIED = shutil.ignore_patterns(".git", ".venv", "__pycache__", "node_modules", "*.sqlite", "*.egg-info")
PROMPT = re.compile(r"your decision (\d+)\)[\s\S]*Your move, 1 to \d+ \(Ctrl-C stops the match\):$")


@dataclass(frozen=True)
class Block:
    info: tuple[str, ...]
    text: str


def blocks(markdown: str) -> list[Block]:
    found = re.finditer(r"^```([^\n]*)\n(.*?)^```$", markdown, re.MULTILINE | re.DOTALL)
    return [Block(tuple(match.group(1).split()), match.group(2)) for match in found]


def _environment(folder: Path, bin_folder: Path) -> dict[str, str]:
    path = f"{bin_folder}{os.pathsep}{os.environ.get('PATH', '')}"
    outside = {name: value for name, value in os.environ.items() if name not in ("VIRTUAL_ENV", "PYTHONPATH")}
    return {**outside, "PATH": path, "TMPDIR": str(folder)}


def _install(block: Block, root: Path) -> Path:
    """The tutorial's installation, in a copy of the checkout at `root`: the bin folder of its new venv."""
    shutil.copytree(CHECKOUT, root, ignore=NOT_COPIED)
    for command in block.text.splitlines():
        if not command.startswith("source "):
            _run(command, root, Path(sys.executable).parent)
    return root / ".venv" / "bin"


def _run(command: str, folder: Path, bin_folder: Path) -> str:
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=folder,
        env=_environment(folder, bin_folder),
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, f"{command!r} exited with {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _play(command: str, folder: Path, bin_folder: Path) -> str:
    """Run a command a person answers in tmux, choosing move 1 at every decision; its screen at the end."""
    environment = " ".join(
        f"{name}={shlex.quote(_environment(folder, bin_folder)[name])}" for name in ("PATH", "TMPDIR")
    )
    with TmuxScreen(folder, f"{environment} {command}") as screen:
        answered = 0
        deadline = time.monotonic() + COMMAND_TIMEOUT_S
        while time.monotonic() < deadline:
            text = screen.text()
            prompt = PROMPT.search(text)
            if prompt is not None and int(prompt.group(1)) > answered:
                answered = int(prompt.group(1))
                screen.type("1")
            elif EXITED in text:
                break
            time.sleep(0.05)
        assert screen.exit_status(timeout_s=5) == 0, screen.text()
        assert answered > 0, screen.text()
        return screen.text()


def test_the_tutorial_says_what_to_run_and_what_to_write() -> None:
    kinds = [block.info for block in blocks(TUTORIAL.read_text())]
    assert ("sh", "once") in kinds and ("sh", "interactive") in kinds
    assert ("toml", "league.toml") in kinds and ("python", "mybot/bot.py") in kinds
    assert all(len(info) == 2 or info == ("sh",) for info in kinds), kinds


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed (the tutorial plays a game against its bot)")
def test_every_command_of_the_tutorial_runs(tmp_path: Path) -> None:
    outputs: dict[str, str] = {}
    work = tmp_path / "work"
    work.mkdir()
    bin_folder = Path(sys.executable).parent
    for block in blocks(TUTORIAL.read_text()):
        if block.info == ("sh", "once"):
            bin_folder = _install(block, tmp_path / "checkout")
        elif block.info == ("sh", "interactive"):
            (command,) = block.text.splitlines()
            outputs[command] = _play(command, work, bin_folder)
        elif block.info == ("sh",):
            for command in block.text.splitlines():
                outputs[command] = _run(command, work, bin_folder)
        else:
            path = work / block.info[1]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(block.text)
    assert bin_folder == tmp_path / "checkout" / ".venv" / "bin"
    assert "scout: 2 bots; 2 game(s)" in outputs["referee play scout mybot/bot.py random --seed 1"]
    assert re.search(r"\d+ passed", outputs["python -m pytest -q mybot/test_bot.py"])
    assert "verdict: mybot conforms" in outputs["referee check-bot scout mybot/bot.py"]
    human_game = outputs["referee play scout human mybot/bot.py --seed 1 --games 1"]
    assert re.search(r"Game over: you ranked \d of 2\.", human_game)
    with (work / "report.csv").open(newline="") as handle:
        report = {row["bot"]: row for row in csv.DictReader(handle)}
    assert set(report) == {"mybot", "random", "heuristic"}
    assert report["mybot"]["faults"] == "0" and int(report["mybot"]["games"]) == 8
    assert "mybot" in outputs["referee tournament table league.toml"]


def test_the_tutorial_s_code_is_the_copies_check_s_given_code() -> None:
    # The copies check removes the code the tutorial gives every student (tournaments.classroom.base_code) and
    # knows its strategy (tournaments.classroom.position_bank): the file it reads is the tutorial's listing.
    given = Path(__file__).resolve().parents[1] / "tournaments" / "classroom" / "given" / "scout_tutorial.py"
    listings = [block.text for block in blocks(TUTORIAL.read_text()) if block.info == ("python", "mybot/bot.py")]
    assert listings == [given.read_text()]

"""docs/tutorial.md stays true: its commands are run in a fresh folder, in the order written.

The tutorial's fenced blocks say what the test does with them, by their info string:
- `sh`: each line is a command, run with bash in the folder; it must exit with status 0;
- `sh interactive`: a command a person answers; run in a terminal (tmux), answering move 1 until it exits 0;
- `sh once`: the installation, which the test's own environment already is (not run);
- `LANGUAGE FILE` (`toml league.toml`, `python mybot/bot.py`): the block is the content of FILE, written there.
The environment puts this virtual environment's bin folder first on PATH, as `source .venv/bin/activate`
does, and keeps run folders in the test's folder (TMPDIR).
"""

from __future__ import annotations

import csv
import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from tmux_screen import EXITED, TMUX, TmuxScreen

TUTORIAL = Path(__file__).resolve().parents[1] / "docs" / "tutorial.md"
BIN = Path(sys.executable).parent
COMMAND_TIMEOUT_S = 600
PROMPT = re.compile(r"your decision (\d+)\)[\s\S]*Your move, 1 to \d+ \(Ctrl-C stops the match\):$")


@dataclass(frozen=True)
class Block:
    info: tuple[str, ...]
    text: str


def blocks(markdown: str) -> list[Block]:
    found = re.finditer(r"^```([^\n]*)\n(.*?)^```$", markdown, re.MULTILINE | re.DOTALL)
    return [Block(tuple(match.group(1).split()), match.group(2)) for match in found]


def _environment(folder: Path) -> dict[str, str]:
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "TMPDIR": str(folder)}


def _run(command: str, folder: Path) -> str:
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=folder,
        env=_environment(folder),
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, f"{command!r} exited with {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _play(command: str, folder: Path) -> str:
    """Run a command a person answers in tmux, choosing move 1 at every decision; its screen at the end."""
    environment = " ".join(f"{name}={shlex.quote(_environment(folder)[name])}" for name in ("PATH", "TMPDIR"))
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
    for block in blocks(TUTORIAL.read_text()):
        if block.info == ("sh", "once"):
            continue
        if block.info == ("sh", "interactive"):
            (command,) = block.text.splitlines()
            outputs[command] = _play(command, tmp_path)
        elif block.info == ("sh",):
            for command in block.text.splitlines():
                outputs[command] = _run(command, tmp_path)
        else:
            path = tmp_path / block.info[1]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(block.text)
    assert "verdict: mybot conforms" in outputs["referee check-bot scout mybot/bot.py"]
    human_game = outputs["referee play scout human mybot/bot.py --seed 1 --games 1"]
    assert re.search(r"Game over: you ranked \d of 2\.", human_game)
    with (tmp_path / "report.csv").open(newline="") as handle:
        report = {row["bot"]: row for row in csv.DictReader(handle)}
    assert set(report) == {"mybot", "random", "heuristic"}
    assert report["mybot"]["faults"] == "0" and int(report["mybot"]["games"]) == 8
    assert "mybot" in outputs["referee tournament table league.toml"]

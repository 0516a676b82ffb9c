"""docs/tutorials/train-a-policy.md stays true: its commands run in a fresh folder, in the order written, on a
tiny budget.

Blocks by info string, as in tests/test_tutorial.py: `sh` lines are commands (bash, must exit 0), `sh once`
is the installation (this environment already is it), `LANGUAGE FILE` is the content of FILE. The one
change: the training's `--minutes 10` becomes a second, so the whole tutorial takes a minute or two; the
league then only has to run (a policy trained that briefly need not beat anyone).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pettingzoo")

TUTORIAL = Path(__file__).resolve().parents[1] / "docs" / "tutorials" / "train-a-policy.md"
BIN = Path(sys.executable).parent
FULL_BUDGET = "--minutes 10"
TINY_BUDGET = "--minutes 0.02"


def blocks(markdown: str) -> list[tuple[tuple[str, ...], str]]:
    found = re.finditer(r"^```([^\n]*)\n(.*?)^```$", markdown, re.MULTILINE | re.DOTALL)
    return [(tuple(match.group(1).split()), match.group(2)) for match in found]


def test_the_training_tutorial_runs_end_to_end(tmp_path: Path) -> None:
    text = TUTORIAL.read_text()
    assert FULL_BUDGET in text
    environment = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "TMPDIR": str(tmp_path)}
    outputs = []
    for info, body in blocks(text):
        if info == ("sh", "once"):
            continue
        if info == ("sh",):
            for command in filter(None, body.splitlines()):
                done = subprocess.run(
                    ["bash", "-c", command.replace(FULL_BUDGET, TINY_BUDGET)],
                    cwd=tmp_path,
                    env=environment,
                    capture_output=True,
                    text=True,
                    timeout=600,
                    check=False,
                )
                assert done.returncode == 0, f"{command!r}: {done.stdout}\n{done.stderr}"
                outputs.append(done.stdout)
        else:
            _language, name = info
            (tmp_path / name).write_text(body)
    assert "decisions" in outputs[0]
    assert (tmp_path / "scout-policy.npz").is_file()
    assert re.search(r"^\s*\S*\s*policy\s", outputs[-1], re.MULTILINE), outputs[-1]

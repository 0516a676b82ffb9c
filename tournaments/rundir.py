"""Run folders: where a command that plays keeps the bots' logs (and, for check-bot, the replays) when the
user names no folder, so that a bot's output is never thrown away and its path can be printed.

    folder = new_run_dir("play", "scout")     # e.g. /tmp/referee-runs-1000/play-scout-20250101-120000-k3j2a1

The default parent is per user (the uid in its name), so users of one machine never share it.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

RUNS_FOLDER = "referee-runs"


def new_run_dir(command: str, game: str, base: Path | None = None) -> Path:
    """A new, empty folder named after the command, the game and the time, under `base` (default:
    referee-runs-UID/ in the system's temporary folder)."""
    parent = base if base is not None else Path(tempfile.gettempdir()) / f"{RUNS_FOLDER}-{os.getuid()}"
    parent.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return Path(tempfile.mkdtemp(prefix=f"{command}-{game}-{stamp}-", dir=parent))

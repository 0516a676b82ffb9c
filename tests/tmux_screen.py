"""A terminal for tests that need one: a command in a pane of a tmux server of the test's own, read with
capture-pane and typed into with send-keys.

    with TmuxScreen(tmp_path, "referee play scout human random --seed 1") as screen:
        screen.wait_for(r"Your move, 1 to (\\d+)")
        screen.type("1")

The server's socket is in the test's folder (`tmux -S`), so it shares nothing with another tmux, and closing
the screen kills that server only. When the command ends the pane shows `EXITED_WITH <status>` and stays.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import time
from pathlib import Path

TMUX = shutil.which("tmux")
EXITED = "EXITED_WITH"
POLL_S = 0.05


class ScreenTimeout(AssertionError):
    """What a test waited for never showed (the screen is in the message)."""


class TmuxScreen:
    def __init__(self, folder: Path, command: str, width: int = 200, height: int = 60) -> None:
        assert TMUX is not None, "tmux is not installed"
        self._tmux = [TMUX, "-S", str(folder / "tmux.socket"), "-f", "/dev/null"]
        shell = f"{command}; echo {EXITED} $?; exec sleep 3600"
        self._run("new-session", "-d", "-s", "test", "-x", str(width), "-y", str(height), "-c", str(folder), shell)

    def __enter__(self) -> TmuxScreen:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _run(self, *arguments: str) -> str:
        done = subprocess.run([*self._tmux, *arguments], capture_output=True, text=True, check=False, timeout=30)
        assert done.returncode == 0, f"tmux {shlex.join(arguments)}: {done.stderr}"
        return done.stdout

    def text(self) -> str:
        """The visible screen, wrapped lines joined, trailing blanks dropped (the text ends with its last character)."""
        lines = self._run("capture-pane", "-p", "-J", "-t", "test").splitlines()
        return "\n".join(line.rstrip() for line in lines).rstrip()

    def wait_for(self, pattern: str, timeout_s: float = 60.0) -> re.Match[str]:
        """The first match of `pattern` on the screen, waiting for it as long as `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        while True:
            screen = self.text()
            found = re.search(pattern, screen)
            if found is not None:
                return found
            if time.monotonic() > deadline:
                raise ScreenTimeout(f"{pattern!r} did not show within {timeout_s} s; the screen:\n{screen}")
            time.sleep(POLL_S)

    def exit_status(self, timeout_s: float = 60.0) -> int:
        return int(self.wait_for(rf"{EXITED} (\d+)", timeout_s).group(1))

    def type(self, text: str) -> None:
        """Type `text` and Enter."""
        self._run("send-keys", "-t", "test", "-l", text)
        self._run("send-keys", "-t", "test", "Enter")

    def press(self, key: str) -> None:
        """Press one key as tmux names it (C-c, C-d)."""
        self._run("send-keys", "-t", "test", key)

    def tty(self) -> str:
        """The pane's terminal device."""
        return self._run("display-message", "-p", "-t", "test", "#{pane_tty}").strip()

    def close(self) -> None:
        subprocess.run([*self._tmux, "kill-server"], capture_output=True, check=False, timeout=30)

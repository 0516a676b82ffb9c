"""The progress line of a league run on stderr: games done, a bar, the ETA and the current leader.

On a terminal the line is redrawn in place; otherwise (a log, CI) a line is written at every tenth of the run.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from typing import TextIO

from protocol.safe_text import one_line

from ..ratings.elo import rate_tallies
from ..ratings.tallies import GameTallies

_BAR_WIDTH = 24
_LEADER_EVERY_S = 2.0
_REDRAW_EVERY_S = 0.2


class Leaderboard:
    """The tallies of the games seen so far and the current Elo leader, recomputed at most every few seconds.

    Each game adds one count to the tallies; a recomputation fits the ratings on their pairwise totals, so it
    costs what the bots and their pairs cost, the same at 100 games as at 100,000.
    """

    def __init__(self, tallies: GameTallies) -> None:
        self.tallies = tallies
        self._leader = ""
        self._computed_at = -_LEADER_EVERY_S

    def add(self, ranks: Mapping[str, int]) -> None:
        self.tallies.add(ranks)

    def leader(self, fresh: bool = False) -> str:
        now = time.monotonic()
        if self.tallies.games and (fresh or now - self._computed_at >= _LEADER_EVERY_S):
            self._computed_at = now
            best = rate_tallies(self.tallies, bootstrap=0).bots[0]
            games = "1 game" if best.games == 1 else f"{best.games} games"
            self._leader = f"leader {one_line(best.bot)} {best.elo:+.0f} Elo ({games})"
        return self._leader


class ProgressLine:
    def __init__(self, total: int, done: int, leaderboard: Leaderboard, stream: TextIO | None = None) -> None:
        self.total = total
        self.start_done = done
        self.done = done
        self.leaderboard = leaderboard
        self.stream = stream or sys.stderr
        self.interactive = self.stream.isatty()
        self.started = time.monotonic()
        self._drawn_at = 0.0
        self._tenths = -1
        self._width = 0

    def advance(self, ranks: Mapping[str, int]) -> None:
        self.done += 1
        self.leaderboard.add(ranks)
        self.draw()

    def draw(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.interactive:
            if force or now - self._drawn_at >= _REDRAW_EVERY_S or self.done == self.total:
                self._drawn_at = now
                line = self.text()
                self.stream.write("\r" + line.ljust(self._width))
                self._width = len(line)
                self.stream.flush()
            return
        tenths = 10 * self.done // max(self.total, 1)
        if force or tenths > self._tenths:
            self._tenths = tenths
            self.stream.write(self.text() + "\n")
            self.stream.flush()

    def close(self) -> None:
        if self.interactive and self._width:
            self.stream.write("\n")
            self.stream.flush()

    def text(self) -> str:
        share = self.done / self.total if self.total else 1.0
        filled = round(_BAR_WIDTH * share)
        bar = "#" * filled + "-" * (_BAR_WIDTH - filled)
        parts = [f"[{bar}] {self.done}/{self.total} games {100 * share:3.0f}%", self.eta()]
        leader = self.leaderboard.leader(fresh=self.done >= self.total)
        if leader:
            parts.append(leader)
        return one_line("  ".join(part for part in parts if part))

    def eta(self) -> str:
        played = self.done - self.start_done
        if played <= 0 or self.done >= self.total:
            return ""
        seconds = (time.monotonic() - self.started) / played * (self.total - self.done)
        return f"ETA {format_duration(seconds)}"


def format_duration(seconds: float) -> str:
    """42s, 3m05s, 2h07m."""
    whole = int(round(seconds))
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"

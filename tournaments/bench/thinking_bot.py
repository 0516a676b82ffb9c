"""A bot that thinks a share of its move time (its one argument, e.g. 0.6) at every decision, then plays at random:
the remote seat of `referee bench remote-latency`. Its time is measured on its own machine; the network's round
trip comes on top on the referee's clock."""

from __future__ import annotations

import random
import sys
import time
from typing import Any

from protocol.sdk import run_bot


class Thinker:
    def __init__(self, share: float) -> None:
        self.share = share
        self.move_ms = 0

    def on_clock(self, time_left_ms: int, bank_left_ms: int) -> None:
        self.move_ms = time_left_ms

    def act(self, observation: dict[str, Any], legal_actions: list[dict[str, Any]]) -> dict[str, Any]:
        time.sleep(self.share * self.move_ms / 1000)
        return random.choice(legal_actions)


if __name__ == "__main__":
    raise SystemExit(run_bot(Thinker(float(sys.argv[1])), name="thinker"))

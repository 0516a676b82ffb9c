"""Rate limits per token or per address: at most `count` events in any `seconds`-long window (a sliding log).

Kept in the server's memory: limits protect the ladder from a loop gone wrong or a guesser, and a restart that
forgets them costs nothing. `RateLimited.retry_after` is whole seconds, for the Retry-After header."""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from protocol.errors import BadInput

SWEEP_FLOOR = 1024
"""Keys kept before a sweep of the ones whose window has passed (then twice as many as were left); past this
many, a window's time also brings a sweep."""


@dataclass(frozen=True)
class Rate:
    count: int
    seconds: float


class RateLimited(BadInput):
    """Too many requests of one kind from one token or address; `retry_after` says when one is allowed again."""

    def __init__(self, what: str, retry_after: int) -> None:
        super().__init__(f"too many {what}: try again in {retry_after} s")
        self.retry_after = retry_after


class RateLimiter:
    """One rate for one kind of request (`what`), counted per key."""

    def __init__(self, what: str, rate: Rate, clock: Callable[[], float] = time.monotonic) -> None:
        self.what = what
        self.rate = rate
        self.clock = clock
        self.events: dict[str, deque[float]] = {}
        self.lock = threading.Lock()
        self.swept_at = SWEEP_FLOOR
        self.swept_time = clock()

    def hit(self, key: str) -> None:
        """Count one request for `key`, or RateLimited (not counted) if the window is full. Keys with no request
        left in the window are forgotten now and then, so that many addresses (forged ones too) cost no memory
        once their window has passed."""
        now = self.clock()
        with self.lock:
            if len(self.events) >= self.swept_at or (
                len(self.events) > SWEEP_FLOOR and now - self.swept_time >= self.rate.seconds
            ):
                self._sweep(now)
            log = self.events.setdefault(key, deque())
            while log and log[0] <= now - self.rate.seconds:
                log.popleft()
            if len(log) >= self.rate.count:
                raise RateLimited(self.what, max(1, math.ceil(log[0] + self.rate.seconds - now)))
            log.append(now)

    def _sweep(self, now: float) -> None:
        for key in [key for key, log in self.events.items() if not log or log[-1] <= now - self.rate.seconds]:
            del self.events[key]
        self.swept_at = max(SWEEP_FLOOR, 2 * len(self.events))
        self.swept_time = now

"""Red team (issue 31): the rate limits count per address, and an address can be forged (X-Forwarded-For from a
client on the server's own machine) or simply many (IPv6). Each key once stayed in memory for good."""

from __future__ import annotations

from tournaments.server.ratelimit import SWEEP_FLOOR, Rate, RateLimited, RateLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_keys_whose_window_has_passed_are_forgotten() -> None:
    clock = Clock()
    limiter = RateLimiter("login attempts", Rate(10, 60), clock)
    for index in range(20 * SWEEP_FLOOR):
        limiter.hit(f"ip:10.{index // 65536}.{index // 256 % 256}.{index % 256}")
        clock.now += 0.001
    clock.now += 61
    for index in range(3 * SWEEP_FLOOR):
        limiter.hit(f"ip:fd00::{index:x}")
    assert len(limiter.events) <= 4 * SWEEP_FLOOR, "only the keys of the last minute are kept"


def test_forgetting_never_forgives_a_key_inside_its_window() -> None:
    clock = Clock()
    limiter = RateLimiter("login attempts", Rate(2, 60), clock)
    limiter.hit("ip:guesser")
    limiter.hit("ip:guesser")
    for index in range(4 * SWEEP_FLOOR):
        limiter.hit(f"ip:other-{index}")
    clock.now += 30
    try:
        limiter.hit("ip:guesser")
    except RateLimited as refused:
        assert refused.retry_after == 30
    else:
        raise AssertionError("the guesser's window was forgotten while it was still open")

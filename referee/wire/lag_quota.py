"""Fair clocks for remote seats: measured network lag credited from a per-game quota, lichess-style.

A remote seat's decision time on the referee's clock includes a round trip over the network (the request out, the
reply back). Each decision, the seat's clock is extended by min(its measured lag, its quota left), where its lag
is the median of its latest round trips (pings answered by `referee connect` itself, referee.wire.remote). The
quota is spent only on what the extension actually covered: the part of a decision's time past the move time, up
to the extension. So a bot whose think time plus lag stays within its move time spends nothing; a bot that thinks
within its limit over a slow link is credited the lag while the quota lasts; a bot that thinks past its limit is
charged the excess (from its bank, then a timeout) as on a local seat, the quota covering only the network's part.

The quota is per game and per remote seat (`referee play --lag-quota MS`); a local seat has none and its
decisions are timed as they always were.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

DEFAULT_LAG_QUOTA_MS = 1000
"""Each remote seat's quota per game unless `--lag-quota` says otherwise: ten decisions at 100 ms of lag past
the move time."""
RECENT_ROUND_TRIPS = 5
"""How many of a seat's latest round trips its lag estimate is the median of."""


def lag_estimate_ms(samples_ms: Sequence[float]) -> float:
    """The median of the latest RECENT_ROUND_TRIPS round trips (0 before any)."""
    recent = sorted(samples_ms[-RECENT_ROUND_TRIPS:])
    return recent[len(recent) // 2] if recent else 0.0


@dataclass(frozen=True, slots=True)
class LagCredit:
    """One remote seat's decision as the replay records it beside `ms` (its time on the referee's clock)."""

    think_ms: float
    """The bot's own share: the decision time less the measured lag (not below 0)."""
    lag_ms: float
    """The seat's round-trip estimate when it was asked."""
    credit_ms: float
    """What the quota paid of the decision time (not charged to the seat's move time or bank)."""
    in_time: bool = True
    """Within move time, bank and credit; else a timeout (not recorded: the fault says so)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "think_ms": round(self.think_ms, 3),
            "lag_ms": round(self.lag_ms, 3),
            "credit_ms": round(self.credit_ms, 3),
        }


class LagQuotas:
    """One game's lag quotas, by seat of the game. `round_trips` gives the round trips measured so far of the
    remote seat behind a connection (None for a local connection, which is never extended).

    Before a seat's first round trip is measured, its clock is extended by its whole quota left; what is credited
    is still capped by the lag measured when the answer comes (the ping sent with the request is back by then), and
    an answer later than move time, bank and that credit is a timeout."""

    def __init__(self, quota_ms: int, round_trips: Callable[[bytes], Sequence[float] | None]) -> None:
        self._quota_ms = quota_ms
        self._round_trips = round_trips
        self._left: dict[int, float] = {}
        self._granted: dict[int, tuple[bytes, float]] = {}
        """Seat -> (its connection, the extension granted) for its open request."""

    def left_ms(self, seat: int) -> float:
        return self._left.get(seat, float(self._quota_ms))

    def grant(self, seat: int, identity: bytes | None) -> float:
        """The extension of the request just sent to `seat` (through `identity`), in ms: 0 for a local seat."""
        samples = None if identity is None else self._round_trips(identity)
        if identity is None or samples is None:
            self._granted.pop(seat, None)
            return 0.0
        left = self.left_ms(seat)
        granted = min(lag_estimate_ms(samples), left) if samples else left
        self._granted[seat] = (identity, granted)
        return granted

    def settle(self, seat: int, elapsed_ms: float, move_ms: int, bank_ms: int) -> LagCredit | None:
        """The credit of `seat`'s answer after `elapsed_ms` (within its extended clock), taken from its quota;
        None for a local seat. An answer later than `move_ms` + `bank_ms` + its credit is a timeout (`in_time`
        false), and spends nothing."""
        granted = self._granted.pop(seat, None)
        if granted is None:
            return None
        identity, extension = granted
        lag = lag_estimate_ms(self._round_trips(identity) or ())
        credit = min(extension, lag, max(0.0, elapsed_ms - move_ms))
        in_time = elapsed_ms - credit <= move_ms + bank_ms
        if in_time:
            self._left[seat] = self.left_ms(seat) - credit
        return LagCredit(max(0.0, elapsed_ms - lag), lag, credit, in_time)

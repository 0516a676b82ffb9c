"""Append-only logs of an observation, sent as deltas (PROTOCOL.md, "Logs").

Some observation keys are logs: lists that only grow during a round and start afresh at the next one (SCOUT's
`history`, Scauver's `betting`). Re-sending a log in full at every decision costs O(n^2) bytes per round, so
the referee sends only the entries a seat has not been sent yet, and says in the request's `log_from` where
they start: `{"history": k}` means the observation's `history` holds the entries from index k on, and the
bot's copy of the first k entries comes first. k = 0 means the list received is the whole log (a new round,
a new game, or a resynchronisation after a fault: the referee may send a log in full at any time).

    sender = LogSender(("history",))         # referee, one per seat and game
    log_from = sender.trim(observation)      # observation[key] is now only the new entries
    ...
    receiver = LogReceiver()                 # bot, one per connection
    receiver.restore(observation, log_from)  # observation[key] is the whole log again
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from protocol.errors import BadInput

LOG_FROM = "log_from"
"""The request key that marks the observation's logs as deltas."""

ROUND = "round"
"""The observation key that identifies the round a log belongs to."""


class LogGap(BadInput, ValueError):
    """A delta that does not continue the log the receiver holds (a request was lost or skipped)."""


class LogSender:
    """The referee's side, for one seat in one game: how much of each log that seat was already sent."""

    __slots__ = ("_keys", "_round", "_sent")

    def __init__(self, keys: Sequence[str]) -> None:
        self._keys = tuple(keys)
        self._round: Any = None
        self._sent = dict.fromkeys(self._keys, 0)

    def trim(self, observation: dict[str, Any]) -> dict[str, int]:
        """Replace each log of `observation` by the entries not yet sent to this seat; return `log_from`."""
        this_round = observation[ROUND]
        same_round = this_round == self._round
        self._round = this_round
        sent = self._sent
        log_from = {}
        for key in self._keys:
            log = observation[key]
            start = sent[key] if same_round and sent[key] <= len(log) else 0
            if start:
                observation[key] = log[start:]
            sent[key] = len(log)
            log_from[key] = start
        return log_from

    def resend(self) -> None:
        """Send every log in full at the next request (after a fault, whatever the bot may have missed)."""
        self._round = None


class LogReceiver:
    """The bot's side: the logs received so far, to hand the bot whole observations."""

    __slots__ = ("_logs",)

    def __init__(self) -> None:
        self._logs: dict[str, Any] = {}

    def restore(self, observation: dict[str, Any], log_from: dict[str, int]) -> None:
        """Put the whole logs back into `observation` (lists stay lists, tuples stay tuples).

        The bot gets its own list, so a bot that changes it cannot corrupt the next reconstruction."""
        logs = self._logs
        for key, start in log_from.items():
            new = observation[key]
            if start:
                kept = logs.get(key)
                if kept is None or len(kept) != start:
                    held = "no log" if kept is None else f"{len(kept)} entries"
                    raise LogGap(f"{key!r} continues from entry {start}, but this bot holds {held}")
                new = kept + new
            logs[key] = new
            observation[key] = new if type(new) is tuple else list(new)

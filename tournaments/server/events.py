"""The live leaderboard's server-sent events: the table, sent again whenever the ladder's change counter moves.

One `TableWatch` per server polls `changes()` (one cheap read) every `poll` seconds for every open stream at
once, and keeps the last table event made for each asker: a stream waits for the counter to move (or for its
keepalive) without touching the database, and when it moves, the streams of one asker (a spectator, a student
with many tabs, or a hostile one with hundreds of streams) share one table read. So open streams cost their
sockets, not database reads, and cannot starve the workers' API of the thread pool. A comment line every
`keepalive` seconds keeps proxies from closing an idle stream. The ladder is synchronous (a database), so its
calls run in the thread pool, never on the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from typing import Any, Protocol

from starlette.concurrency import run_in_threadpool


class TableSource(Protocol):
    def changes(self) -> int: ...


def table_event(table: Any) -> str:
    """One `table` event carrying `table` as JSON (one data line: JSON has no raw newlines)."""
    return f"event: table\ndata: {json.dumps(table, separators=(',', ':'))}\n\n"


class TableWatch:
    """The change counter, polled once for all open streams while any is open, and each asker's last event."""

    def __init__(self, source: TableSource, poll: float = 0.5) -> None:
        self.source = source
        self.poll = poll
        self.counter = 0
        self.streams = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._moved = asyncio.Event()
        self._events: dict[Hashable, tuple[int, str]] = {}
        self._locks: dict[Hashable, asyncio.Lock] = {}

    async def running(self) -> None:
        """Poll from now on (the counter read once first), on this event loop."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._loop, self._task, self._moved, self._locks = loop, None, asyncio.Event(), {}
        if self._task is None or self._task.done():
            self.counter = await run_in_threadpool(self.source.changes)
            self._task = loop.create_task(self._run())

    async def _run(self) -> None:
        while self.streams > 0:
            await asyncio.sleep(self.poll)
            current = await run_in_threadpool(self.source.changes)
            if current != self.counter:
                self.counter = current
                moved, self._moved = self._moved, asyncio.Event()
                moved.set()

    async def moved(self, timeout: float) -> None:
        """Return when the counter moves, or after `timeout` seconds."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._moved.wait(), timeout)

    async def event(self, key: Hashable, table: Callable[[], Any]) -> tuple[int, str]:
        """The table event for the asker `key` at the current counter: made once per counter and asker."""
        counter = self.counter
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            made = self._events.get(key)
            if made is None or made[0] != counter:
                made = self._events[key] = (counter, table_event(await run_in_threadpool(table)))
        return made


async def table_events(
    watch: TableWatch,
    key: Hashable,
    table: Callable[[], Any],
    disconnected: Callable[[], Awaitable[bool]],
    keepalive: float = 15.0,
) -> AsyncIterator[str]:
    """Events for one open leaderboard of the asker `key`: the table at once, then on every change, until the
    client leaves (or the server closes: `disconnected` says so too)."""
    watch.streams += 1
    try:
        last: int | None = None
        quiet_since = time.monotonic()
        while not await disconnected():
            await watch.running()
            if watch.counter != last:
                last, event = await watch.event(key, table)
                yield event
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since >= keepalive:
                yield ": still here\n\n"
                quiet_since = time.monotonic()
            await watch.moved(min(keepalive, max(watch.poll, 1.0)))
    finally:
        watch.streams -= 1

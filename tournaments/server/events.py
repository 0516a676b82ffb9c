"""The live leaderboard's server-sent events: the table, sent again whenever the ladder's change counter moves.

The loop polls `changes()` (one cheap read) every `poll` seconds and reads the table only when it moved, so a
hundred open leaderboards cost a hundred counter reads a second, not a hundred tables. A comment line every
`keepalive` seconds keeps proxies from closing an idle stream. The ladder is synchronous (a database), so its
calls run in the thread pool, never on the event loop.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Protocol

from starlette.concurrency import run_in_threadpool


class TableSource(Protocol):
    def changes(self) -> int: ...


def table_event(table: Any) -> str:
    """One `table` event carrying `table` as JSON (one data line: JSON has no raw newlines)."""
    return f"event: table\ndata: {json.dumps(table, separators=(',', ':'))}\n\n"


async def table_events(
    source: TableSource,
    table: Callable[[], Any],
    disconnected: Callable[[], Awaitable[bool]],
    poll: float = 0.5,
    keepalive: float = 15.0,
) -> AsyncIterator[str]:
    """Events for one open leaderboard: the table at once, then on every change, until the client leaves."""
    last: int | None = None
    quiet_since = time.monotonic()
    while not await disconnected():
        current = await run_in_threadpool(source.changes)
        if current != last:
            last = current
            yield table_event(await run_in_threadpool(table))
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= keepalive:
            yield ": still here\n\n"
            quiet_since = time.monotonic()
        await asyncio.sleep(poll)

"""SIGTERM handled as Ctrl-C, so that a terminated command unwinds: its matches kill their bot processes on
the way out and the command can say what it got done."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block SIGTERM raises KeyboardInterrupt (outside the main thread, where no handler can be
    installed, nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)

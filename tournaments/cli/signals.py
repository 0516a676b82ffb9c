"""How every command stops on Ctrl-C or SIGTERM: in one way, with the conventional exit status.

The `referee` group runs each command within `stops_cleanly()`. There SIGTERM is raised as `Terminated`, a
KeyboardInterrupt, so that whatever cleans up after Ctrl-C (a match killing its bot processes, an executor
stopping its workers, a command saying what it got done before re-raising) does the same after SIGTERM. When
the interrupt leaves the block, any bot process started in the instant the signal arrived, before its match
knew of it, is killed with its session, and the command exits 128 + the signal's number: 130 after Ctrl-C,
143 after SIGTERM.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator

from referee.isolation.proctable import kill_with_sessions, live_processes

INTERRUPTED_STATUS = 128 + signal.SIGINT
TERMINATED_STATUS = 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived."""


def _raise_terminated(signum: int, frame: object) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Terminated


def _kill_unrecorded_bots() -> None:
    """Kill every child of this process that leads its own session, with that session: a bot, as
    BotProcess.start makes every bot a session leader. Executor workers share this session and are left to
    their executor."""
    command = os.getpid()
    kill_with_sessions(
        process.pid for process in live_processes() if process.ppid == command and process.session == process.pid
    )


@contextlib.contextmanager
def stops_cleanly() -> Iterator[None]:
    """Run the block so that Ctrl-C and SIGTERM stop it as the module says, ending in SystemExit(130 or 143).

    A second SIGTERM is ignored while the first one's cleanup runs. Outside the main thread, where no handler
    can be installed, SIGTERM keeps its disposition.
    """
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _raise_terminated) if in_main_thread else None
    try:
        yield
    except KeyboardInterrupt as interrupt:
        _kill_unrecorded_bots()
        raise SystemExit(TERMINATED_STATUS if isinstance(interrupt, Terminated) else INTERRUPTED_STATUS) from None
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)

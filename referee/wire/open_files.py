"""The referee's own open-files limit.

Every connection a bot makes to the referee costs the referee a file descriptor until the referee finds that
bot over its connection cap and stops it (referee.wire.connection_cap); connections keep arriving in that moment,
and libzmq aborts the whole referee when it cannot accept one ("Too many open files"). The usual soft limit
(1024) leaves little room for that, while the hard limit is usually far higher and any process may raise its
soft limit to its hard one. So the referee does, once, at its start (the CLI and each league worker process).
Bots do not inherit it: each bot process gets its own cap (referee.isolation.process, limits.MAX_OPEN_FILES).
"""

from __future__ import annotations

import functools
import logging
import resource

from protocol import limits

ROOM_FOR_FLOODS = 4096
"""An open-files limit below this leaves a flood of connections little room before the referee stops the bot
that makes it: warned of."""

_log = logging.getLogger(__name__)


@functools.cache
def raise_open_files_limit() -> int:
    """Raise this process's soft RLIMIT_NOFILE to its hard limit (once; later calls return at once) and return
    the soft limit now in force. Warns where it stays low."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (OSError, ValueError) as error:
            _log.warning("could not raise the open-files limit from %d to %d: %s", soft, hard, error)
    if soft != resource.RLIM_INFINITY and soft < ROOM_FOR_FLOODS:
        _log.warning(
            "the referee may open only %d files (hard limit); each bot may hold %d connections and a flood of "
            "them needs room until it is stopped: raise the hard limit (ulimit -Hn) to at least %d",
            soft,
            limits.MAX_CONNECTIONS_PER_BOT,
            ROOM_FOR_FLOODS,
        )
    return soft

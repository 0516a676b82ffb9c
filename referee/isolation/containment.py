"""The containment of an unsandboxed bot (`--no-sandbox`, or a machine where the sandbox cannot run): what holds
every process of a bot so that none outlives it.

Where the machine allows it (Linux with util-linux `unshare`, as root or with unprivileged user namespaces;
probed once per process, see `containment`), the bot runs in its own PID namespace: the referee starts
`unshare --pid --fork --kill-child -- BOT...` (plus `--user --map-root-user` when not root), so the unshare
process is the session leader and the bot's program is the namespace's init, its child. unshare exits with the
bot's status (and dies of the signal that killed it), so crashes are seen as before; /proc stays the referee's,
so pids in /proc and from SO_PEERCRED are the referee's numbers. When unshare dies, --kill-child SIGKILLs the
init, and when the init dies the kernel kills every process left in the namespace, so a daemon that
double-forked and called setsid() dies with its bot. Inside, the bot is pid 1, with the signal semantics of an
init: a signal it sends itself whose action is the default one is ignored.

Elsewhere the bot runs in its session only, and a process that leaves the session (setsid() after a double
fork) can escape. The sandbox (referee.isolation.sandbox) gives every bot a PID namespace of its own through bubblewrap.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import logging
import os
import shutil
import subprocess
from dataclasses import dataclass

_PROBE_SECONDS = 5.0
_PID_NAMESPACE_FLAGS = ("--pid", "--fork", "--kill-child")
_USER_NAMESPACE_FLAGS = ("--user", "--map-root-user")

_log = logging.getLogger(__name__)


class Containment(enum.Enum):
    """What holds every process of a bot, so that `BotProcess.kill` can end them all."""

    PID_NAMESPACE = "pid namespace"
    """The bot's own PID namespace: nothing it starts can outlive it."""
    SESSION = "session"
    """The bot's session only: a process that calls setsid() leaves it."""


@dataclass(frozen=True)
class Wrapper:
    """How unsandboxed bots are started on this machine: the containment and the command prefix that gives it."""

    containment: Containment
    prefix: tuple[str, ...] = ()


@functools.cache
def containment() -> Wrapper:
    """A PID namespace per bot if util-linux `unshare` can make one here (tried once with `true`, then cached),
    else the session only."""
    unshare = shutil.which("unshare")
    if unshare is not None:
        user = () if os.geteuid() == 0 else _USER_NAMESPACE_FLAGS
        prefix = (unshare, *user, *_PID_NAMESPACE_FLAGS, "--")
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            probe = subprocess.run(
                [*prefix, "true"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=_PROBE_SECONDS,
                check=False,
            )
            if probe.returncode == 0:
                return Wrapper(Containment.PID_NAMESPACE, prefix)
    _log.warning("bots run in a session only (no PID namespace available): a bot's daemon can outlive it")
    return Wrapper(Containment.SESSION)

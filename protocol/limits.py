"""The limits of protocol v1, in one place: the referee enforces them, sends them in `welcome`, and the
documentation (PROTOCOL.md) and the CLI defaults quote them from here."""

from __future__ import annotations

PROTOCOL_VERSION = 1

ENV_ENDPOINT = "REFEREE_ENDPOINT"
ENV_TOKEN = "REFEREE_TOKEN"

MAX_MESSAGE_BYTES = 64 * 1024
"""The largest frame a bot may send; a larger one is a protocol fault (the referee never decodes it)."""

MAX_DEPTH = 8
"""The deepest nesting of maps and arrays in a bot message."""

MAX_CONTAINER_LEN = 1024
"""The most entries in one map or array of a bot message."""

MAX_STRING_BYTES = 1024
"""The longest string (or binary) in a bot message."""

MAX_NAME_CHARS = 64
"""The longest bot name or version string in `hello`."""

MAX_OPEN_FILES = 1024
"""The most files (sockets included) each process of a bot may have open (RLIMIT_NOFILE, soft and hard)."""

DEFAULT_MOVE_TIME_MS = 1000
DEFAULT_STARTUP_TIME_S = 10.0
DEFAULT_TIME_BANK_MS = 0
UNTIMED_BANK_MS = 10**9
"""The time bank of a seat without a clock (BotSpec.timed false: a person at a terminal), about 11 days: its
deadline never comes, and no decision of any seat needs a test of whether it is timed."""
DEFAULT_FAULT_BUDGET = 3
"""Faults a seat may commit under the substitute policy before it forfeits."""

DEFAULT_MEMORY_MB = 1024
DEFAULT_LOG_CAP_BYTES = 1024 * 1024
DEFAULT_STALE_REPLY_LIMIT = 1000
"""Stale or unsolicited messages a seat may send in one game before it is faulted for flooding."""

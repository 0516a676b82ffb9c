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

MAX_RECORDED_ACTION_CHARS = 2048
"""The longest text of an illegal action the referee keeps as sent (in the fault, the replay and the store): its
JSON, cut at this many characters and marked as cut. A bot's reply may be 64 KiB; a fault record stays small."""

MAX_OPEN_FILES = 1024
"""The most files (sockets included) each process of a bot may have open (RLIMIT_NOFILE, soft and hard)."""

MAX_CONNECTIONS_PER_BOT = 16
"""The most connections to the referee that the processes of one bot may hold at once (a bot needs one); a bot
found holding more is charged a protocol error and stopped, so they close."""

DEFAULT_MOVE_TIME_MS = 1000
DEFAULT_STARTUP_TIME_S = 10.0
DEFAULT_TIME_BANK_MS = 0
UNTIMED_BANK_MS = 10**9
"""The time bank of a seat without a clock (BotSpec.timed false: a person at a terminal), about 11 days: its
deadline never comes, and no decision of any seat needs a test of whether it is timed."""
DEFAULT_FAULT_BUDGET = 3
"""Faults a seat may commit under the substitute policy before it forfeits."""
MIN_FAULT_BUDGET = 1
"""The smallest fault budget (on the command line and in league files): the seat forfeits at its first fault,
as under the forfeit policy; there is no smaller budget."""

DEFAULT_MEMORY_MB = 1024
MEMORY_LIMIT_MEANING = (
    "Memory limit of each bot, in MiB: of the bot as a whole (all its processes, its /tmp and HOME files "
    "included) where the machine has cgroups for bots, else of each of its processes (RLIMIT_DATA)."
)
"""What --memory and a league file's memory_mb limit: the CLI's help and the docs' league-file reference say it
in these words."""
DEFAULT_LOG_CAP_BYTES = 1024 * 1024
DEFAULT_STALE_REPLY_LIMIT = 1000
"""Stale or unsolicited messages a seat may send in one game before it is faulted for flooding."""

MAX_PROCESSES = 256
"""The most processes and threads a sandboxed bot may run at once, all together (a pids cgroup where the machine
has one, and RLIMIT_NPROC of the bot's own uid)."""

MAX_TMP_BYTES = 64 * 1024 * 1024
"""The size of a sandboxed bot's private /tmp, and of its private HOME (each a tmpfs; what a bot writes there also
counts against its memory limit). Also its largest file (RLIMIT_FSIZE)."""

MAX_CPU_SECONDS = 3600
"""The most CPU time each process of a sandboxed bot may use (RLIMIT_CPU): a catch for a runaway process, far
above what any move clock allows a bot to think."""

BUILD_TIME_S = 300
"""The longest a submission's build (its bot.toml `build` command, tournaments/league/builds.py) may run, in the
sandbox, before it is stopped and counted as failed."""
BUILD_MEMORY_MB = 2048
"""A build's memory (compilers need more than a bot)."""
BUILD_LOG_CAP_BYTES = 256 * 1024
"""The most of a build's output kept in its log."""
BOT_CPU_SHARE = 0.9
"""The most of the referee's CPUs a sandboxed bot's processes may use together (a cgroup's CPU quota), so that a
bot busy on every CPU leaves the referee room. Every bot also gets the same CPU weight, however many processes
or sessions it starts."""

"""Every key of a league file and of a submission's bot.toml, as data: the one list that the parsers check
unknown keys against (league_file.py, submissions.py) and that the docs site's reference tables are built from
(docs/hooks/generated.py). A key added to a parser is added here, or the parser refuses it."""

from __future__ import annotations

from dataclasses import dataclass

from protocol import limits
from referee.wire.lag_quota import DEFAULT_LAG_QUOTA_MS


@dataclass(frozen=True)
class Key:
    """One key: its name, its TOML type, its default (as a reader would write it; "" when the key must be
    given, which its meaning then says), and what it means."""

    name: str
    type: str
    default: str
    meaning: str


LEAGUE_KEYS: tuple[Key, ...] = (
    Key("name", "string", "the file's stem", "The league's name, in tables and reports."),
    Key("game", "string", "", "The game: a name that `referee games` lists. Required."),
    Key("players", "integer", "", "Seats per table. Required."),
    Key("seed", "integer", "", "The schedule (which tables meet) derives from it; the deals do not. Required."),
    Key(
        "deals_per_match",
        "integer",
        "one balanced design",
        "A multiple of the balanced design's deals (1, 2, 6 or 4 at 2, 3, 4 or 5 seats). Games = deals x players.",
    ),
    Key(
        "schedule",
        "string",
        '"round-robin"',
        '"round-robin", "gauntlet" (with challenger) or "baselines" (every other bot meets the baselines).',
    ),
    Key("challenger", "string", "", "The gauntlet's bot: it sits at every table. Required with the gauntlet."),
    Key(
        "baselines",
        "array of strings",
        "bots with baseline = true",
        "The baselines schedule's baselines. Required with that schedule unless bots are marked baseline.",
    ),
    Key("max_tables", "integer", "every table", "Above this many tables, a balanced sample of them."),
    Key(
        "peers",
        "integer",
        "0",
        "Baselines schedule only: each student also meets students at 2 x peers tables.",
    ),
    Key("fault_policy", "string", '"forfeit"', '"forfeit" or "substitute".'),
    Key(
        "fault_budget",
        "integer",
        str(limits.DEFAULT_FAULT_BUDGET),
        f"Substitute policy: faults before a forfeit (at least {limits.MIN_FAULT_BUDGET}).",
    ),
    Key(
        "max_timeouts",
        "integer",
        "never",
        "After this many timeouts in a match a bot forfeits the match's remaining games. Baselines are exempt.",
    ),
    Key("replay_dir", "path", "none", "One replay per game, relative to the league file."),
    Key("log_dir", "path", "LEAGUE.logs/", "The bots' output, MATCH/BOT.log, relative to the league file."),
    Key("build_dir", "path", "LEAGUE.builds/", "Where submission folders with a build are copied and built."),
    Key("ponder", "boolean", "false", "true lets bots run while not on move (it costs fairness)."),
    Key("kernel", "boolean", "false", "true runs every bot under a gVisor kernel of its own (needs runsc)."),
    Key("until_settled", "boolean", "false", "After the schedule, play until the table is settled."),
    Key("max_games", "integer", "schedule + 2 x ties' games", "The settling budget, every stored game counted."),
    Key("settle_los", "number", "0.95", "The LOS that separates two adjacent bots (between 0.5 and 1)."),
    Key("resolution", "number", "100", "Elo: adjacent bots known within +/- this are close enough."),
    Key("min_games", "integer", "20", "A pair is decided only when both bots have this many games."),
    Key("anchor", "table", "none", "One bot's fixed Elo in the tables: `[anchor]` then `random = 0`."),
    Key("limits", "table", "the defaults below", "Clocks and memory: the keys below."),
    Key("config", "table", "the game's defaults", "Game options; `referee games` lists them."),
    Key("marks", "table", "none", "Per baseline, [[score share, mark], ...]: marks where the shares clear them."),
    Key("pseudonyms", "table", "a keyed hash", "What a published leaderboard calls each bot."),
    Key("copies", "table", "the defaults below", "The copies check (`tournament copies`): the keys below."),
    Key("remote", "table", "none", "Where `remote:NAME` bots connect and their rules: the keys below."),
    Key("bots", "array of tables", "", "The bots: `[[bots]]` entries, below. Required."),
)
"""The top level of a league file."""

LIMIT_KEYS: tuple[Key, ...] = (
    Key("move_time_ms", "integer", str(limits.DEFAULT_MOVE_TIME_MS), "Per decision (`--move-time`)."),
    Key("startup_time_s", "number", str(limits.DEFAULT_STARTUP_TIME_S), "From start to hello (`--startup-time`)."),
    Key(
        "time_bank_ms",
        "integer",
        str(limits.DEFAULT_TIME_BANK_MS),
        "A reserve per game for overruns (`--time-bank`).",
    ),
    Key("memory_mb", "integer", str(limits.DEFAULT_MEMORY_MB), limits.MEMORY_LIMIT_MEANING),
)
"""The `[limits]` table of a league file; each is also an option of `referee play` and `check-bot`."""

DEFAULT_COPY_BANK = 200
"""Positions every student answers for the copies check, by default."""

COPIES_KEYS: tuple[Key, ...] = (
    Key(
        "base",
        "array of paths",
        "none",
        "Code every student was given besides the scaffolds (folders or files, relative to the league file): "
        "left out of the comparison.",
    ),
    Key("bank", "integer", str(DEFAULT_COPY_BANK), "Positions every student answers (one decision each)."),
    Key("bank_seed", "integer", "the league's seed", "Which positions the bank holds."),
)
"""The `[copies]` table of a league file (tournaments.classroom.copies)."""

REMOTE_KEYS: tuple[Key, ...] = (
    Key("listen", "string", "", "tcp://HOST:PORT where remote bots connect (`referee connect`), over CURVE. Required."),
    Key(
        "keys",
        "path",
        "",
        "The keys folder: referee.key_secret and NAME.key for each remote:NAME bot (relative to the league file). "
        "Required.",
    ),
    Key("lag_quota_ms", "integer", str(DEFAULT_LAG_QUOTA_MS), "Each remote seat's network allowance per game."),
    Key("rated", "boolean", "true", "false stores games with a remote seat unrated: shown, not in the ratings."),
    Key(
        "share_tables",
        "boolean",
        "false",
        "At 3 to 5 seats, true lets two remote bots sit at one table (the soft-play check covers every pair).",
    ),
)
"""The `[remote]` table of a league file: its remote seats (docs: Play a seat from another machine)."""

BOT_KEYS: tuple[Key, ...] = (
    Key("name", "string", "", "The bot's name in the league. Required."),
    Key(
        "command",
        "string, or array of words",
        "",
        "A BOT as for `referee play`: built-in name, path, command line, stdio:BOT, remote:NAME. Required.",
    ),
    Key("cwd", "path", "where referee runs", "The bot's working folder, relative to the league file."),
    Key("version", "string", "the program's digest", "Identifies the program instead of its file's digest."),
    Key("env", "table of strings", "none", "Environment variables for this bot."),
    Key("baseline", "boolean", "false", "A bot students are measured against (reported apart)."),
)
"""A `[[bots]]` entry that names one bot."""

EACH_KEYS: tuple[Key, ...] = (
    Key("each", "string", "", "A glob of folders relative to the league file: one bot per folder, named after it."),
    Key("command", "string, or array of words", "bot.toml's, else found", "What runs each bot, in its folder."),
)
"""A `[[bots]]` entry that names a folder of submissions."""

MANIFEST_KEYS: tuple[Key, ...] = (
    Key("command", "string", "bot.py, ./bot or bot.js found", "What runs the bot in its folder (after the build)."),
    Key("transport", "string", '"zmq"', '"zmq" or "stdio" (JSON lines on stdin/stdout).'),
    Key("build", "string", "none", "Run once with sh -c, in the sandbox, in a copy of the folder, before play."),
    Key("language", "string", "none", "Shown to the teacher only."),
    Key("version", "string", "none", "Shown to the teacher only; the folder's digest notices every change."),
)
"""A submission folder's bot.toml; every key is optional."""


def names(keys: tuple[Key, ...]) -> tuple[str, ...]:
    return tuple(key.name for key in keys)

"""League files: a TOML description of a tournament, parsed and checked into a frozen `League`.

    name = "scout-4"               # optional; default: the file's stem
    game = "scout"
    players = 4                    # seats per table
    seed = 1                       # every deal and seating derives from it
    deals_per_match = 2            # each deal is played once per seat rotation: games = deals x players
    schedule = "round-robin"       # or "gauntlet" (then: challenger = "bot name")
    max_tables = 40                # optional: a balanced sample when there are more tables than this
    fault_policy = "forfeit"       # or "substitute" (then fault_budget faults before a forfeit)
    replay_dir = "replays"         # optional, relative to this file: one replay per game
    log_dir = "logs"               # optional, relative to this file: the bots' stderr/stdout logs

    [limits]                       # optional; defaults from protocol/limits.py
    move_time_ms = 1000
    startup_time_s = 10
    time_bank_ms = 0

    [config]                       # optional game options (`referee games` lists them)

    [[bots]]
    name = "heuristic"
    command = "heuristic"          # a BOT as on `referee play`: built-in name, path or command line
    cwd = "bots/mine"              # optional working directory, relative to this file
    version = "2.1"                # optional: identifies the program instead of its file's digest

Relative paths in a bot's command are relative to its cwd if it has one, else to the league file's folder.

The store keeps each bot's command and program digest (tournaments.identity: the file the command names, or
the declared version) and refuses a league file in which a stored name runs another command or program.

Every mistake is a LeagueFileError naming the file, the key, what is wrong and what to do.
"""

from __future__ import annotations

import enum
import math
import shlex
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from protocol import limits as protocol_limits
from referee.botspec import BUILT_IN_MODULES, GAME_HEURISTIC, GAME_SEARCH, UnknownBot, resolve_bot
from referee.games import GameError, load_game
from referee.games.base import MAX_SEED
from referee.records import BotSpec, FaultPolicy, Limits

from .identity import ProgramUnreadable, program_digest


class LeagueFileError(ValueError):
    """A league file that cannot be read or does not describe a league."""

    def __init__(self, path: Path | str, key: str | None, problem: str, fix: str = "") -> None:
        where = f"{path}: key {key!r}" if key else str(path)
        message = f"{where}: {problem}" + (f"; {fix}" if fix else "")
        super().__init__(message)
        self.path = str(path)
        self.key = key


class ScheduleKind(enum.StrEnum):
    ROUND_ROBIN = "round-robin"
    """Every table of `players` bots from the pool (or a balanced sample of them)."""
    GAUNTLET = "gauntlet"
    """The challenger at every table, the other seats filled from the rest of the pool."""


@dataclass(frozen=True)
class LeagueBot:
    name: str
    command: str
    """A BOT string: a built-in name, a path to an executable or script, or a command line (shell words)."""
    spec: BotSpec
    """The command resolved (built-ins to their module, relative paths made absolute), named `name`."""
    digest: str
    """What program this is: "sha256:HEX" of the file the command names, or "version:V" if the file declares
    one (tournaments.identity)."""
    cwd: str | None = None
    """Absolute working directory of the bot process, if the file gave one."""
    version: str | None = None


@dataclass(frozen=True)
class League:
    path: Path
    name: str
    game: str
    players: int
    seed: int
    bots: tuple[LeagueBot, ...]
    deals_per_match: int = 1
    schedule: ScheduleKind = ScheduleKind.ROUND_ROBIN
    challenger: str | None = None
    max_tables: int | None = None
    limits: Limits = Limits()
    config: Mapping[str, Any] = field(default_factory=dict)
    """The game's options, every default filled in."""
    replay_dir: Path | None = None
    log_dir: Path | None = None

    @property
    def games_per_match(self) -> int:
        return self.deals_per_match * self.players

    @property
    def default_db(self) -> Path:
        """The store beside the league file: LEAGUE.sqlite."""
        return self.path.with_suffix(".sqlite")


_TOP_KEYS = frozenset(
    {
        "name",
        "game",
        "players",
        "seed",
        "deals_per_match",
        "schedule",
        "challenger",
        "max_tables",
        "fault_policy",
        "fault_budget",
        "replay_dir",
        "log_dir",
        "limits",
        "config",
        "bots",
    }
)
_LIMIT_KEYS = ("move_time_ms", "startup_time_s", "time_bank_ms", "memory_mb")
_BOT_KEYS = frozenset({"name", "command", "cwd", "version"})


def load_league(path: Path | str) -> League:
    """Read and check a league file; raises LeagueFileError for anything wrong with it."""
    path = Path(path)
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError:
        raise LeagueFileError(path, None, "no such file", "give the path of a league .toml file") from None
    except OSError as error:
        raise LeagueFileError(path, None, f"cannot be read ({error.strerror})") from None
    except tomllib.TOMLDecodeError as error:
        raise LeagueFileError(path, None, f"is not valid TOML ({error})", "fix the syntax") from None
    return parse_league(data, path)


def parse_league(data: Mapping[str, Any], path: Path) -> League:
    """Check the parsed TOML `data` of the file at `path` (relative directories are relative to its folder)."""
    reader = _Reader(path.resolve())
    reader.no_unknown_keys(data, _TOP_KEYS, "", "the known keys are " + ", ".join(sorted(_TOP_KEYS)))
    game_name = reader.required_string(data, "game")
    try:
        game = load_game(game_name)
    except GameError as error:
        raise reader.error("game", str(error), "use a name that `referee games` lists") from None
    info = game.info
    players = reader.integer(data, "players", required=True, minimum=info.min_players, maximum=info.max_players)
    seed = reader.integer(data, "seed", required=True, minimum=0, maximum=MAX_SEED)
    bots = reader.bots(data.get("bots"), game_name)
    schedule, challenger = reader.schedule(data, {bot.name for bot in bots})
    _check_pool_size(reader, bots, players)
    config = reader.table(data, "config")
    try:
        resolved_config = game.resolve_config(config)
    except GameError as error:
        raise reader.error("config", str(error), "see `referee games` for the options") from None
    return League(
        path=reader.path,
        name=reader.string(data, "name") or path.stem,
        game=game_name,
        players=players,
        seed=seed,
        bots=bots,
        deals_per_match=reader.integer(data, "deals_per_match", default=1, minimum=1),
        schedule=schedule,
        challenger=challenger,
        max_tables=reader.optional_integer(data, "max_tables", minimum=1),
        limits=reader.limits(data),
        config=resolved_config,
        replay_dir=reader.directory(data, "replay_dir"),
        log_dir=reader.directory(data, "log_dir"),
    )


def _check_pool_size(reader: _Reader, bots: tuple[LeagueBot, ...], players: int) -> None:
    if len(bots) < players:
        raise reader.error(
            "bots",
            f"{len(bots)} bot(s) cannot fill a table of {players} seats",
            f"list at least {players} bots (the same command may appear under several names)",
        )


def _anchored(command: str, base: Path) -> str:
    """`command` with a relative program path made absolute against `base` (built-in names stay as they are)."""
    if command in BUILT_IN_MODULES or command in (GAME_HEURISTIC, GAME_SEARCH):
        return command
    if (base / command).exists():
        return str(base / command)
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    if words and not Path(words[0]).is_absolute() and ("/" in words[0] or (base / words[0]).is_file()):
        return shlex.join([str(base / words[0]), *words[1:]])
    return command


class _Reader:
    """Typed access to the TOML data, raising LeagueFileError that names the offending key."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def error(self, key: str | None, problem: str, fix: str = "") -> LeagueFileError:
        return LeagueFileError(self.path, key, problem, fix)

    def no_unknown_keys(self, data: Mapping[str, Any], known: frozenset[str], prefix: str, fix: str) -> None:
        unknown = sorted(set(data) - known)
        if unknown:
            raise self.error(prefix + unknown[0], "is not a league setting", fix)

    def required_string(self, data: Mapping[str, Any], key: str, prefix: str = "") -> str:
        value = self.string(data, key, prefix)
        if value is None:
            raise self.error(prefix + key, "is missing", f'add {key} = "..."')
        return value

    def string(self, data: Mapping[str, Any], key: str, prefix: str = "") -> str | None:
        if key not in data:
            return None
        value = data[key]
        if not isinstance(value, str) or not value.strip():
            raise self.error(prefix + key, f"must be a non-empty string, not {value!r}")
        return value

    def integer(
        self,
        data: Mapping[str, Any],
        key: str,
        required: bool = False,
        default: int = 0,
        minimum: int | None = None,
        maximum: int | None = None,
    ) -> int:
        if key not in data:
            if required:
                raise self.error(key, "is missing", f"add {key} = <integer>")
            return default
        value = data[key]
        if type(value) is not int:
            raise self.error(key, f"must be an integer, not {value!r}")
        if minimum is not None and value < minimum:
            raise self.error(key, f"must be at least {minimum}, not {value}")
        if maximum is not None and value > maximum:
            raise self.error(key, f"must be at most {maximum}, not {value}")
        return value

    def optional_integer(self, data: Mapping[str, Any], key: str, minimum: int) -> int | None:
        return self.integer(data, key, minimum=minimum) if key in data else None

    def number(self, data: Mapping[str, Any], key: str, default: float, prefix: str) -> float:
        value = data.get(key, default)
        if type(value) not in (int, float) or not math.isfinite(value) or value <= 0:
            raise self.error(prefix + key, f"must be a positive number, not {value!r}")
        return float(value)

    def table(self, data: Mapping[str, Any], key: str) -> dict[str, Any]:
        value = data.get(key, {})
        if not isinstance(value, dict):
            raise self.error(key, f"must be a table ([{key}]), not {value!r}")
        return value

    def directory(self, data: Mapping[str, Any], key: str) -> Path | None:
        value = self.string(data, key)
        return None if value is None else self.path.parent / value

    def schedule(self, data: Mapping[str, Any], names: set[str]) -> tuple[ScheduleKind, str | None]:
        raw = data.get("schedule", ScheduleKind.ROUND_ROBIN.value)
        kinds = [kind.value for kind in ScheduleKind]
        if raw not in kinds:
            raise self.error("schedule", f"must be one of {kinds}, not {raw!r}")
        kind = ScheduleKind(raw)
        challenger = self.string(data, "challenger")
        if kind is ScheduleKind.GAUNTLET:
            if challenger is None:
                raise self.error("challenger", "is missing", 'a gauntlet needs challenger = "bot name"')
            if challenger not in names:
                raise self.error("challenger", f"names no bot ({challenger!r})", f"use one of {sorted(names)}")
        elif challenger is not None:
            raise self.error("challenger", "is only for a gauntlet", 'set schedule = "gauntlet" or remove challenger')
        return kind, challenger

    def limits(self, data: Mapping[str, Any]) -> Limits:
        table = self.table(data, "limits")
        self.no_unknown_keys(table, frozenset(_LIMIT_KEYS), "limits.", "the known limits are " + ", ".join(_LIMIT_KEYS))
        policies = [policy.value for policy in FaultPolicy]
        policy = data.get("fault_policy", FaultPolicy.FORFEIT.value)
        if policy not in policies:
            raise self.error("fault_policy", f"must be one of {policies}, not {policy!r}")
        defaults = Limits()
        return Limits(
            move_time_ms=self._limit_integer(table, "move_time_ms", defaults.move_time_ms, 1),
            startup_time_s=self.number(table, "startup_time_s", defaults.startup_time_s, "limits."),
            time_bank_ms=self._limit_integer(table, "time_bank_ms", defaults.time_bank_ms, 0),
            memory_mb=self._limit_integer(table, "memory_mb", defaults.memory_mb, 16),
            log_cap_bytes=defaults.log_cap_bytes,
            fault_policy=FaultPolicy(policy),
            fault_budget=self.integer(
                data,
                "fault_budget",
                default=protocol_limits.DEFAULT_FAULT_BUDGET,
                minimum=protocol_limits.MIN_FAULT_BUDGET,
            ),
        )

    def _limit_integer(self, table: Mapping[str, Any], key: str, default: int, minimum: int) -> int:
        value = table.get(key, default)
        if type(value) is not int or value < minimum:
            raise self.error("limits." + key, f"must be an integer of at least {minimum}, not {value!r}")
        return value

    def bots(self, raw: Any, game: str) -> tuple[LeagueBot, ...]:
        if raw is None:
            raise self.error(
                "bots", "is missing", 'add one [[bots]] table per bot with name = "..." and command = "..."'
            )
        if not isinstance(raw, list) or not all(isinstance(entry, dict) for entry in raw):
            raise self.error("bots", "must be an array of tables", "write each bot as a [[bots]] table")
        bots: list[LeagueBot] = []
        for position, entry in enumerate(raw):
            prefix = f"bots[{position}]."
            self.no_unknown_keys(entry, _BOT_KEYS, prefix, "a bot has name, command and optionally cwd and version")
            name = self.required_string(entry, "name", prefix)
            if any(bot.name == name for bot in bots):
                raise self.error(prefix + "name", f"{name!r} is used twice", "give each bot a unique name")
            relative_cwd = self.string(entry, "cwd", prefix)
            cwd = None if relative_cwd is None else str(self.path.parent / relative_cwd)
            command = self._command(entry.get("command"), prefix + "command")
            spec = self._spec(name, command, cwd, game, prefix + "command")
            version = self.string(entry, "version", prefix)
            digest = self._digest(spec, version, prefix + "command")
            bots.append(LeagueBot(name=name, command=command, spec=spec, digest=digest, cwd=cwd, version=version))
        return tuple(bots)

    def _digest(self, spec: BotSpec, version: str | None, key: str) -> str:
        try:
            return program_digest(spec.command, spec.cwd, version)
        except ProgramUnreadable as error:
            raise self.error(key, str(error), 'make the program readable, or declare version = "..."') from None

    def _spec(self, name: str, command: str, cwd: str | None, game: str, key: str) -> BotSpec:
        try:
            resolved = resolve_bot(_anchored(command, Path(cwd) if cwd else self.path.parent), game)
        except UnknownBot as error:
            raise self.error(
                key, str(error), "give a built-in bot, a path relative to the league file (or to cwd), or a command"
            ) from None
        return BotSpec(name, resolved.command, cwd)

    def _command(self, value: Any, key: str) -> str:
        if isinstance(value, list) and value and all(isinstance(word, str) and word for word in value):
            return shlex.join(value)
        if isinstance(value, str) and value.strip():
            return value
        if value is None:
            raise self.error(key, "is missing", 'add command = "random", a path, or a command line')
        raise self.error(key, f"must be a command line string or a list of words, not {value!r}")

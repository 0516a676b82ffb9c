"""League files: a TOML description of a tournament, parsed and checked into a frozen `League`.

Every key, with its type, default and meaning, is in tournaments/league/keys.py: the parser refuses any other,
and the docs site's league-file reference (docs/reference/league-file.md) is built from the same list.

A relative program path in a bot's command (its first word) is relative to its cwd if it has one, else to the
league file's folder. The bot runs in its cwd, else in the folder the referee was started from, so a relative
argument (the script after python3) is relative to that: give the bot a cwd to run it from anywhere.

The store keeps each bot's command and program digest (tournaments.league.identity: the file the command names, or
the declared version; for a submission folder, the whole folder: submissions.folder_digest) and refuses a league
file in which a stored name runs another command or program.

deals_per_match: every match plays each of its deals once from every seat, in turn orders chosen so that
every bot plays right after every other equally often (referee/seating.py). That takes a multiple of 1, 2,
6 or 4 deals at 2, 3, 4 or 5 seats (2, 6, 24 or 20 games), which is also the default; another number is
refused with the nearest ones that balance. Every table has deals of its own, from a secret key the league's
store draws when it is first used and the match's id (so a bot cannot deal them from the seed, and a note of
one match's deals is of no use in another); a rerun of the league uses the stored key, so resumed games are
the same deals.

A baselines schedule grades a class: each bot that is not a baseline (a student) plays one match against every
(players - 1) baselines, and the baselines play their own round robin; a ladder such as random < heuristic
then separates the students even when none beats the strongest baseline. Students meet each other only with
`peers = K`: in an order of the students drawn from the seed, each sits with the next K (see
tournaments.league.schedule); marks count the baseline games only. The copies check does not need them: every
student answers one bank of positions (tournaments.classroom.copies, `[copies]`).

Every mistake is a LeagueFileError naming the file, the key, what is wrong and what to do.
"""

from __future__ import annotations

import enum
import math
import shlex
import tomllib
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from protocol import limits as protocol_limits
from protocol.curve_keys import REFEREE_KEY, KeyFileError, allow_list, key_files, load_pair
from protocol.errors import BadInput
from protocol.safe_text import UnsafeName, checked_name, skeleton
from referee.botspec import UnknownBot, is_remote, resolve_bot
from referee.games import GameError, load_game
from referee.games.base import MAX_SEED
from referee.records import BotSpec, FaultPolicy, Limits
from referee.seating import design_deals
from referee.wire.lag_quota import DEFAULT_LAG_QUOTA_MS
from referee.wire.remote_seats import remote_name

from . import keys
from .identity import ProgramUnreadable, program_digest
from .submissions import (
    Submission,
    anchored,
    archive_notes,
    cannot_run,
    folder_digest,
    normalised,
    submission_spec,
    submissions,
)

REMOTE_FIX = (
    'add [remote] with listen = "tcp://0.0.0.0:5555" and keys = "keys" (docs: Play a seat from another machine)'
)


class LeagueFileError(BadInput, ValueError):
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
    BASELINES = "baselines"
    """Every other bot at a table with each (players - 1)-subset of the baselines; the baselines' round robin."""


@dataclass(frozen=True)
class LeagueBot:
    name: str
    command: str
    """A BOT string: a built-in name, a path to an executable or script, or a command line (shell words)."""
    spec: BotSpec
    """The command resolved (built-ins to their module, relative paths made absolute), named `name`."""
    digest: str
    """What program this is: "sha256:HEX" of the file the command names, or "version:V" if the file declares
    one (tournaments.league.identity)."""
    cwd: str | None = None
    """Absolute working directory of the bot process, if the file gave one."""
    version: str | None = None
    baseline: bool = False
    """Marked `baseline = true` (or listed in a baselines schedule's `baselines`): reported apart from the
    students, and the bots marks are measured against."""
    submission: Submission | None = None
    """The folder it comes from, for a bot of an `each` entry."""


@dataclass(frozen=True)
class CopySettings:
    """[copies] (keys.COPIES_KEYS)."""

    base: tuple[Path, ...] = ()
    bank: int = keys.DEFAULT_COPY_BANK
    bank_seed: int | None = None


@dataclass(frozen=True)
class RemoteSettings:
    """[remote] (keys.REMOTE_KEYS): where the league's remote:NAME bots connect, and their rules."""

    listen: str
    """tcp://HOST:PORT: one address for the whole league (its matches with remote seats are played one at a time
    on the organiser's machine: tournaments.league.remote)."""
    keys: Path
    """The keys folder: the referee's pair and each remote bot's public key (referee.wire.remote_seats)."""
    lag_quota_ms: int = DEFAULT_LAG_QUOTA_MS
    rated: bool = True
    """False: games with a remote seat are stored unrated (shown, not in the ratings)."""
    share_tables: bool = False
    """True: two remote bots may sit at one table of 3 to 5 seats (at 2 seats they always may)."""


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
    peers: int = 0
    """In a baselines schedule, the students each student sits with after it in the peer order."""
    baselines: tuple[str, ...] = ()
    """The bots every other bot meets in a baselines schedule (empty in the others)."""
    limits: Limits = Limits()
    config: Mapping[str, Any] = field(default_factory=dict)
    """The game's options, every default filled in."""
    replay_dir: Path | None = None
    log_dir: Path | None = None
    """The bots' logs: one folder per match in it, with one NAME.log per bot (a league file always has one)."""
    build_dir: Path | None = None
    """Where submissions with a build are copied and built (tournaments.league.builds)."""
    skipped: tuple[str, ...] = ()
    """Why each folder of an `each` entry that is not a bot was skipped (its name has invisible or bidirectional
    characters, or clashes with, or looks like, another bot's)."""
    marks: Mapping[str, tuple[tuple[float, float], ...]] = field(default_factory=dict)
    """Baseline -> (score share against it, mark) thresholds, ascending ([marks]; tournaments.ratings.marks)."""
    pseudonyms: Mapping[str, str] = field(default_factory=dict)
    """Bot -> the name a published leaderboard shows ([pseudonyms]; tournaments.pages.class_pages)."""
    ponder: bool = False
    """Let bots run while not on move (MatchSpec.ponder)."""
    kernel: bool = False
    """Every bot under a kernel of its own (MatchSpec.kernel: the kernel isolation level)."""
    until_settled: bool = False
    max_games: int | None = None
    settle_los: float | None = None
    resolution: float | None = None
    min_games: int | None = None
    """Settling settings the file gives (None: the command's or the library's default)."""
    anchor: tuple[str, float] | None = None
    """(bot, Elo) fixed in the tables, if the file anchors one."""
    copies: CopySettings = field(default_factory=lambda: CopySettings())
    """[copies]: the copies check's settings (tournaments.classroom.copies)."""
    remote: RemoteSettings | None = None
    """[remote]: where remote:NAME bots connect (None: the league has none)."""

    @property
    def remote_bots(self) -> tuple[str, ...]:
        """The names of its remote:NAME bots, in file order."""
        return tuple(bot.name for bot in self.bots if is_remote(bot.spec))

    def separates_remote_bots(self) -> bool:
        """Whether no table may seat two remote bots: at 3 to 5 seats, unless [remote] share_tables = true."""
        return self.remote is not None and not self.remote.share_tables and self.players > 2

    @property
    def games_per_match(self) -> int:
        return self.deals_per_match * self.players

    @property
    def default_db(self) -> Path:
        """The store beside the league file: LEAGUE.sqlite."""
        return self.path.with_suffix(".sqlite")


_TOP_KEYS = frozenset(keys.names(keys.LEAGUE_KEYS))
_LIMIT_KEYS = keys.names(keys.LIMIT_KEYS)
_BOT_KEYS = frozenset(keys.names(keys.BOT_KEYS))
_EACH_KEYS = frozenset(keys.names(keys.EACH_KEYS))


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


def parse_league(data: Mapping[str, Any], path: Path, *, students_join_later: bool = False) -> League:
    """Check the parsed TOML `data` of the file at `path` (relative directories are relative to its folder).
    `students_join_later`: a ladder's file (tournaments.ladder), whose bots are its baselines alone, fewer than
    a table's seats until students submit."""
    reader = _Reader(path.resolve())
    reader.no_unknown_keys(data, _TOP_KEYS, "", "the known keys are " + ", ".join(sorted(_TOP_KEYS)))
    reader.remote_settings = reader.remote(data)
    game_name = reader.required_string(data, "game")
    try:
        game = load_game(game_name)
    except GameError as error:
        raise reader.error("game", str(error), "use a name that `referee games` lists") from None
    info = game.info
    players = reader.integer(data, "players", required=True, minimum=info.min_players, maximum=info.max_players)
    seed = reader.integer(data, "seed", required=True, minimum=0, maximum=MAX_SEED)
    bots, skipped = reader.bots(data.get("bots"), game_name, reader.path.with_suffix(".builds"))
    schedule, challenger = reader.schedule(data, {bot.name for bot in bots})
    marked = [bot.name for bot in bots if bot.baseline]
    baselines = reader.baselines(data, schedule, [bot.name for bot in bots], players, marked)
    bots = tuple(_as_baseline(bot) if bot.name in baselines else bot for bot in bots)
    if not students_join_later:
        _check_pool_size(reader, bots, players)
    _check_remote_bots(reader, bots, players)
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
        deals_per_match=reader.deals_per_match(data, players),
        schedule=schedule,
        challenger=challenger,
        max_tables=reader.optional_integer(data, "max_tables", minimum=1),
        peers=reader.peers(data, schedule),
        baselines=baselines,
        limits=reader.limits(data),
        config=resolved_config,
        replay_dir=reader.directory(data, "replay_dir"),
        log_dir=reader.directory(data, "log_dir") or reader.path.with_suffix(".logs"),
        build_dir=reader.directory(data, "build_dir") or reader.path.with_suffix(".builds"),
        skipped=skipped,
        marks=reader.marks(data, baselines),
        pseudonyms=reader.pseudonyms(data, {bot.name for bot in bots}),
        ponder=reader.boolean(data, "ponder"),
        kernel=reader.boolean(data, "kernel"),
        until_settled=reader.boolean(data, "until_settled"),
        max_games=reader.optional_integer(data, "max_games", minimum=1),
        settle_los=reader.fraction(data, "settle_los", low=0.5, high=1.0),
        resolution=reader.number(data, "resolution", 0, "") if "resolution" in data else None,
        min_games=reader.optional_integer(data, "min_games", minimum=0),
        anchor=reader.anchor(data, [bot.name for bot in bots]),
        copies=reader.copies(data),
        remote=reader.remote_settings,
    )


def _as_baseline(bot: LeagueBot) -> LeagueBot:
    """A baseline: reported apart, and never stopped by max_timeouts (BotSpec.stopped_on_timeouts)."""
    return replace(bot, baseline=True, spec=replace(bot.spec, stopped_on_timeouts=False))


def _check_pool_size(reader: _Reader, bots: tuple[LeagueBot, ...], players: int) -> None:
    if len(bots) < players:
        raise reader.error(
            "bots",
            f"{len(bots)} bot(s) cannot fill a table of {players} seats",
            f"list at least {players} bots (the same command may appear under several names)",
        )


def _check_remote_bots(reader: _Reader, bots: tuple[LeagueBot, ...], players: int) -> None:
    """A [remote] table with remote bots to seat; at 3 to 5 seats without share_tables, enough local bots to fill
    a remote bot's table."""
    remote = [bot.name for bot in bots if is_remote(bot.spec)]
    settings = reader.remote_settings
    if settings is None or not remote:
        if settings is not None:
            raise reader.error("remote", "is for remote:NAME bots, and no bot is one", "remove [remote]")
        return
    local = len(bots) - len(remote)
    if not settings.share_tables and players > 2 and local < players - 1:
        raise reader.error(
            "remote.share_tables",
            f"is false, so a table of {players} seats holds one remote bot and {players - 1} local ones, and there "
            f"are {local} local bot(s)",
            "add local bots, or set share_tables = true (the soft-play check then covers every pair)",
        )


class _Reader:
    """Typed access to the TOML data, raising LeagueFileError that names the offending key."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.remote_settings: RemoteSettings | None = None
        self.remote_keys: dict[str, bytes] = {}
        """Remote seat name -> its public key, from [remote]'s keys folder."""
        self._remote_commands: set[tuple[str, ...]] = set()

    def remote(self, data: Mapping[str, Any]) -> RemoteSettings | None:
        """[remote], its keys folder read (the referee's pair, the allow-list)."""
        if "remote" not in data:
            return None
        table = self.table(data, "remote")
        self.no_unknown_keys(table, frozenset(keys.names(keys.REMOTE_KEYS)), "remote.", "see the league file reference")
        listen = self.required_string(table, "listen", "remote.")
        if not listen.startswith("tcp://") or ":" not in listen[len("tcp://") :]:
            raise self.error(
                "remote.listen", f"must be tcp://HOST:PORT, not {listen!r}", 'listen = "tcp://0.0.0.0:5555"'
            )
        folder = self.path.parent / self.required_string(table, "keys", "remote.")
        try:
            load_pair(key_files(folder, REFEREE_KEY)[1])
            allowed = allow_list(folder)
        except KeyFileError as error:
            raise self.error("remote.keys", str(error), "`referee keys new referee -o FOLDER` makes the pair") from None
        self.remote_keys = {name: key for key, name in allowed.items()}
        quota = table.get("lag_quota_ms", DEFAULT_LAG_QUOTA_MS)
        if type(quota) is not int or quota < 0:
            raise self.error("remote.lag_quota_ms", f"must be an integer of at least 0, not {quota!r}")
        flags = {}
        for flag, default in (("rated", True), ("share_tables", False)):
            flags[flag] = table.get(flag, default)
            if not isinstance(flags[flag], bool):
                raise self.error(f"remote.{flag}", f"must be true or false, not {flags[flag]!r}")
        return RemoteSettings(listen, folder, quota, flags["rated"], flags["share_tables"])

    def remote_digest(self, spec: BotSpec, key: str) -> str:
        """A remote bot's identity: its public key (the organiser cannot see its program)."""
        name = remote_name(spec.command)
        if self.remote_settings is None:
            raise self.error(key, f"{spec.command[0]} is a remote seat, and the file has no [remote]", REMOTE_FIX)
        if name not in self.remote_keys:
            folder = self.remote_settings.keys
            raise self.error(key, f"no public key {name}.key in {folder}", "add the key the bot's author sent")
        return "key:" + self.remote_keys[name].decode()

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

    def boolean(self, data: Mapping[str, Any], key: str) -> bool:
        value = data.get(key, False)
        if not isinstance(value, bool):
            raise self.error(key, f"must be true or false, not {value!r}")
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

    def deals_per_match(self, data: Mapping[str, Any], players: int) -> int:
        """A multiple of the balanced design's deals at `players` seats (its default)."""
        unit = design_deals(players)
        deals = self.integer(data, "deals_per_match", default=unit, minimum=1)
        if deals % unit:
            lower, higher = deals // unit * unit, (deals // unit + 1) * unit
            nearest = f"{lower} or {higher}" if lower else str(higher)
            raise self.error(
                "deals_per_match",
                f"{deals} deals do not balance {players} seats: every bot holds every seat and plays right after "
                f"every other equally often only over a multiple of {unit} deals ({unit * players} games)",
                f"use deals_per_match = {nearest}",
            )
        return deals

    def peers(self, data: Mapping[str, Any], schedule: ScheduleKind) -> int:
        if "peers" in data and schedule is not ScheduleKind.BASELINES:
            raise self.error("peers", "is only for a baselines schedule", 'set schedule = "baselines"')
        return self.integer(data, "peers", minimum=0) if "peers" in data else 0

    def optional_integer(self, data: Mapping[str, Any], key: str, minimum: int) -> int | None:
        return self.integer(data, key, minimum=minimum) if key in data else None

    def number(self, data: Mapping[str, Any], key: str, default: float, prefix: str) -> float:
        value = data.get(key, default)
        if type(value) not in (int, float) or not math.isfinite(value) or value <= 0:
            raise self.error(prefix + key, f"must be a positive number, not {value!r}")
        return float(value)

    def fraction(self, data: Mapping[str, Any], key: str, low: float, high: float) -> float | None:
        """A number strictly between `low` and `high`, or None when the key is absent."""
        if key not in data:
            return None
        value = data[key]
        if type(value) not in (int, float) or not low < value < high:
            raise self.error(key, f"must be a number between {low:g} and {high:g} (exclusive), not {value!r}")
        return float(value)

    def anchor(self, data: Mapping[str, Any], names: list[str]) -> tuple[str, float] | None:
        """[anchor] with one entry, bot name = Elo."""
        if "anchor" not in data:
            return None
        table = data["anchor"]
        if not isinstance(table, dict) or len(table) != 1:
            raise self.error("anchor", f"must be a table of one bot and its Elo, not {table!r}", "[anchor] random = 0")
        ((name, elo),) = table.items()
        if name not in names:
            raise self.error(f"anchor.{name}", "names no bot of the league", f"use one of {names}")
        if type(elo) not in (int, float) or not math.isfinite(elo):
            raise self.error(f"anchor.{name}", f"must be a number of Elo, not {elo!r}")
        return name, float(elo)

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

    def baselines(
        self, data: Mapping[str, Any], schedule: ScheduleKind, names: list[str], players: int, marked: list[str]
    ) -> tuple[str, ...]:
        """The schedule's `baselines` and the bots marked `baseline = true`, in file order."""
        raw = data.get("baselines")
        if schedule is not ScheduleKind.BASELINES:
            if raw is not None:
                raise self.error("baselines", "is only for a baselines schedule", 'set schedule = "baselines"')
            return tuple(marked)
        if data.get("max_tables") is not None:
            raise self.error("max_tables", "is not for a baselines schedule", "every bot meets every baseline")
        if raw is None and marked:
            raw = []
        if isinstance(raw, list) and all(isinstance(name, str) for name in raw):
            raw = [*raw, *marked]
        if not isinstance(raw, list) or not raw or not all(isinstance(name, str) for name in raw):
            raise self.error("baselines", f"must be a list of bot names, not {raw!r}", 'baselines = ["random", ...]')
        unknown = [name for name in raw if name not in names]
        if unknown:
            raise self.error("baselines", f"names no bot ({unknown[0]!r})", f"use names of [[bots]]: {names}")
        if len(set(raw)) < players - 1:
            raise self.error(
                "baselines", f"{len(set(raw))} baseline(s) cannot fill the {players - 1} other seats of a table"
            )
        if len(set(raw)) == len(names):
            raise self.error("baselines", "names every bot: nobody is left to meet them", "add the bots to grade")
        return tuple(name for name in names if name in raw)

    def marks(self, data: Mapping[str, Any], baselines: tuple[str, ...]) -> dict[str, tuple[tuple[float, float], ...]]:
        """[marks]: for each baseline, a list of [score share, mark] pairs (share from 0 to 1)."""
        table = self.table(data, "marks")
        marks = {}
        for name, raw in table.items():
            key = f"marks.{name}"
            if name not in baselines:
                raise self.error(key, "names no baseline", f"marks are given against baselines: {list(baselines)}")
            pairs = raw if isinstance(raw, list) and raw else None
            if pairs is None or not all(_is_threshold(pair) for pair in pairs):
                raise self.error(
                    key,
                    f"must be a list of [score share from 0 to 1, mark] pairs, not {raw!r}",
                    f"{name} = [[0.5, 60]]",
                )
            marks[name] = tuple(sorted((float(share), float(mark)) for share, mark in pairs))
        return marks

    def pseudonyms(self, data: Mapping[str, Any], names: set[str]) -> dict[str, str]:
        """[pseudonyms]: bot name -> the distinct name a published leaderboard shows instead (names of skipped or
        missing folders are allowed: a class's list is written before its folders arrive)."""
        table = self.table(data, "pseudonyms")
        for name, pseudonym in table.items():
            if not isinstance(pseudonym, str) or not pseudonym.strip():
                raise self.error(f"pseudonyms.{name}", f"must be a non-empty string, not {pseudonym!r}")
            if pseudonym in names and pseudonym != name:
                raise self.error(f"pseudonyms.{name}", f"{pseudonym!r} is another bot's name", "choose another")
        repeated = [value for value, count in Counter(table.values()).items() if count > 1]
        if repeated:
            raise self.error("pseudonyms", f"{repeated[0]!r} is given to several bots", "give each its own")
        return dict(table)

    def copies(self, data: Mapping[str, Any]) -> CopySettings:
        table = self.table(data, "copies")
        self.no_unknown_keys(table, frozenset(keys.names(keys.COPIES_KEYS)), "copies.", "see the league file reference")
        base = table.get("base", [])
        if not isinstance(base, list) or not all(isinstance(path, str) and path for path in base):
            raise self.error("copies.base", f"must be a list of paths, not {base!r}", 'base = ["handout"]')
        paths = tuple(self.path.parent / path for path in base)
        missing = [str(path) for path in paths if not path.exists()]
        if missing:
            raise self.error("copies.base", f"{missing[0]!r} does not exist", "name folders or files beside the file")
        bank = self.integer(table, "bank", minimum=1, maximum=100_000) if "bank" in table else keys.DEFAULT_COPY_BANK
        seed = self.integer(table, "bank_seed", minimum=0, maximum=MAX_SEED) if "bank_seed" in table else None
        return CopySettings(paths, bank, seed)

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
            max_timeouts=self.optional_integer(data, "max_timeouts", minimum=1),
        )

    def _limit_integer(self, table: Mapping[str, Any], key: str, default: int, minimum: int) -> int:
        value = table.get(key, default)
        if type(value) is not int or value < minimum:
            raise self.error("limits." + key, f"must be an integer of at least {minimum}, not {value!r}")
        return value

    def bots(self, raw: Any, game: str, build_dir: Path) -> tuple[tuple[LeagueBot, ...], tuple[str, ...]]:
        """The bots, in file order, and why each skipped folder of an `each` entry was skipped."""
        if raw is None:
            raise self.error(
                "bots", "is missing", 'add one [[bots]] table per bot with name = "..." and command = "..."'
            )
        if not isinstance(raw, list) or not all(isinstance(entry, dict) for entry in raw):
            raise self.error("bots", "must be an array of tables", "write each bot as a [[bots]] table")
        named: dict[int, LeagueBot] = {}
        for position, entry in enumerate(raw):
            if "each" not in entry:
                bot = self._bot(entry, game, f"bots[{position}].")
                for known in named.values():
                    if skeleton(known.name) == skeleton(bot.name):
                        same = "is used twice" if known.name == bot.name else f"looks like {known.name!r}"
                        key = f"bots[{position}].name"
                        raise self.error(key, f"{bot.name!r} {same}", "give each bot a unique name")
                named[position] = bot
        unsafe = [
            note
            for entry in raw
            if isinstance(entry.get("each"), str)
            for note in archive_notes(entry["each"], self.path.parent)
        ]
        folders = {
            position: _safe_names(self._submissions(entry, f"bots[{position}]."), unsafe)
            for position, entry in enumerate(raw)
            if "each" in entry
        }
        kept, clashes = _without_clashes(list(named.values()), [sub for subs in folders.values() for sub in subs])
        skipped = [*unsafe, *clashes]
        bots: list[LeagueBot] = []
        for position in range(len(raw)):
            if position in named:
                bots.append(named[position])
            else:
                bots += [self._folder_bot(sub, game, build_dir) for sub in folders[position] if sub in kept]
        return tuple(bots), tuple(skipped)

    def _bot(self, entry: Mapping[str, Any], game: str, prefix: str) -> LeagueBot:
        self.no_unknown_keys(
            entry,
            _BOT_KEYS,
            prefix,
            "a bot has name, command and optionally cwd, version and env (a folder of bots: each, command)",
        )
        name = self._name(self.required_string(entry, "name", prefix), prefix + "name")
        relative_cwd = self.string(entry, "cwd", prefix)
        cwd = None if relative_cwd is None else str(self.path.parent / relative_cwd)
        command = self._command(entry.get("command"), prefix + "command")
        spec = self._spec(name, command, cwd, game, prefix + "command")
        spec = replace(spec, env=self._environment(entry.get("env", {}), prefix + "env"))
        version = self.string(entry, "version", prefix)
        if is_remote(spec):
            self._check_remote_entry(entry, spec, prefix)
            return LeagueBot(name, command, spec, self.remote_digest(spec, prefix + "command"), None, version)
        digest = self._digest(spec, version, prefix + "command")
        baseline = entry.get("baseline", False)
        if not isinstance(baseline, bool):
            raise self.error(prefix + "baseline", f"must be true or false, not {baseline!r}")
        return LeagueBot(name, command, spec, digest, cwd, version, baseline)

    def _check_remote_entry(self, entry: Mapping[str, Any], spec: BotSpec, prefix: str) -> None:
        """No cwd, env or baseline for a remote bot (its program is not run here), and one entry per key."""
        for key in ("cwd", "env", "baseline"):
            if key in entry:
                raise self.error(prefix + key, "is not for a remote bot: it runs on its author's machine", "remove it")
        if spec.command in self._remote_commands:
            raise self.error(prefix + "command", f"{spec.command[0]} is seated twice: one key, one seat")
        self._remote_commands.add(spec.command)

    def _name(self, name: str, key: str) -> str:
        try:
            return checked_name(name)
        except UnsafeName as error:
            raise self.error(key, str(error)) from None

    def _submissions(self, entry: Mapping[str, Any], prefix: str) -> list[Submission]:
        """The folders of an `each` entry (tournaments.league.submissions)."""
        self.no_unknown_keys(entry, _EACH_KEYS, prefix, "an each entry has each and optionally command")
        pattern = self.required_string(entry, "each", prefix)
        given = self._command(entry["command"], prefix + "command") if "command" in entry else None
        found = submissions(pattern, self.path.parent, given)
        if not found:
            archives = archive_notes(pattern, self.path.parent)
            hint = f" (only archives: {archives[0]})" if archives else ""
            raise self.error(prefix + "each", f"{pattern!r} matches no folder beside the league file{hint}")
        return found

    def _folder_bot(self, sub: Submission, game: str, build_dir: Path) -> LeagueBot:
        """A submission's bot; one that cannot run plays and fails; one with a build runs from its copy once
        built (tournaments.league.builds), and until then is a program saying it is not built."""
        if sub.build is not None and sub.problem is None:
            copy = build_dir / sub.name
            reason = cannot_run(f"{sub.name}: not built (`tournament run` builds it)")
            spec = BotSpec(sub.name, reason, str(copy), folders=(str(copy),))
        else:
            spec = submission_spec(sub, game)
        command = sub.argument(sub.command) if sub.command else sub.build and f"(built by {sub.build!r})" or ""
        return LeagueBot(
            sub.name, command, spec, folder_digest(sub.folder), spec.cwd, sub.manifest.version, submission=sub
        )

    def _digest(self, spec: BotSpec, version: str | None, key: str) -> str:
        try:
            return program_digest(spec.command, spec.cwd, version)
        except ProgramUnreadable as error:
            raise self.error(key, str(error), 'make the program readable, or declare version = "..."') from None

    def _spec(self, name: str, command: str, cwd: str | None, game: str, key: str) -> BotSpec:
        try:
            resolved = resolve_bot(anchored(command, Path(cwd) if cwd else self.path.parent), game)
        except UnknownBot as error:
            raise self.error(
                key, str(error), "give a built-in bot, a path relative to the league file (or to cwd), or a command"
            ) from None
        return BotSpec(name, resolved.command, cwd)

    def _environment(self, value: Any, key: str) -> tuple[tuple[str, str], ...]:
        """The bot's declared environment: a table of variable names to strings."""
        if not isinstance(value, dict) or not all(
            isinstance(name, str) and name and "=" not in name and isinstance(text, str) for name, text in value.items()
        ):
            raise self.error(
                key, f"must be a table of names to strings, not {value!r}", 'write env = { NAME = "value" }'
            )
        reserved = sorted({protocol_limits.ENV_ENDPOINT, protocol_limits.ENV_TOKEN} & set(value))
        if reserved:
            raise self.error(key, f"cannot set {reserved[0]}: the referee gives every bot its own", "remove it")
        return tuple(sorted(value.items()))

    def _command(self, value: Any, key: str) -> str:
        if isinstance(value, list) and value and all(isinstance(word, str) and word for word in value):
            return shlex.join(value)
        if isinstance(value, str) and value.strip():
            return value
        if value is None:
            raise self.error(key, "is missing", 'add command = "random", a path, or a command line')
        raise self.error(key, f"must be a command line string or a list of words, not {value!r}")


def _safe_names(found: list[Submission], notes: list[str]) -> list[Submission]:
    """The folders whose names are safe to show (protocol.safe_text.checked_name, NFKC applied), a note in
    `notes` for each other: a name with invisible or bidirectional characters is skipped, not fatal."""
    safe = []
    for sub in found:
        try:
            safe.append(replace(sub, name=checked_name(sub.name)))
        except UnsafeName as error:
            notes.append(f"folder {str(sub.folder)!r} skipped: {error}; rename the folder")
    return safe


def _clash_key(name: str) -> str:
    """How names are compared for clashes: submissions.normalised of the look-alike skeleton, so "Heuristic",
    "heu_ristic" and "hеuristic" (a Cyrillic e) are one name."""
    return normalised(skeleton(name))


def _without_clashes(named: list[LeagueBot], folders: list[Submission]) -> tuple[list[Submission], list[str]]:
    """The folders whose names clash with no other bot's (`_clash_key`), and a note for each other:
    a folder named like a bot of its own [[bots]] entry gives way to it; folders named like each other are all
    skipped (which one is the student's is not for the referee to guess)."""
    entries = {_clash_key(bot.name): bot.name for bot in named}
    counts: dict[str, int] = {}
    for sub in folders:
        counts[_clash_key(sub.name)] = counts.get(_clash_key(sub.name), 0) + 1
    kept, notes = [], []
    for sub in folders:
        key = _clash_key(sub.name)
        if key in entries:
            notes.append(
                f"folder {str(sub.folder)!r} skipped: it is named like the bot {entries[key]!r} of the "
                "league file; rename the folder"
            )
        elif counts[key] > 1:
            others = [str(other.folder) for other in folders if other is not sub and _clash_key(other.name) == key]
            notes.append(
                f"folder {str(sub.folder)!r} skipped: it is named like {', '.join(map(repr, others))}; "
                "rename one of them"
            )
        else:
            kept.append(sub)
    return kept, notes


def _is_threshold(pair: Any) -> bool:
    if not isinstance(pair, list) or len(pair) != 2:
        return False
    if not all(type(value) in (int, float) and math.isfinite(value) for value in pair):
        return False
    return bool(0 <= pair[0] <= 1)

"""The ladder file (LADDER/ladder.toml): a league file (tournaments.league.league_file: game, players, seed,
limits, config, settling keys, [marks], and its baselines as [[bots]]) with a `[ladder]` table of the keys
below, and an `[open]` table (OPEN_KEYS) that opens the open division to remote seats. Its students are not in it:
they join by invitation and submission (the database)."""

from __future__ import annotations

import enum
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from tournaments.league.keys import Key, names
from tournaments.league.league_file import League, LeagueFileError, parse_league

from .errors import LadderFileError
from .public_keys import valid_public_key

LADDER_FILE = "ladder.toml"


class LatePolicy(enum.StrEnum):
    REFUSE = "refuse"
    """After the deadline, submissions are refused (LadderFrozen)."""
    UNMARKED = "unmarked"
    """After the deadline, submissions are checked and play, but the marks stay the snapshot's."""


LADDER_KEYS: tuple[Key, ...] = (
    Key("deadline", "date-time", "none", "When every student's last accepted version is snapshotted and marked."),
    Key("late_policy", "string", '"refuse"', '"refuse", or "unmarked": late versions play but are not marked.'),
    Key("quota_per_hour", "integer", "6", "Submissions a student may make in any hour."),
    Key("quota_per_day", "integer", "30", "Submissions a student may make in any 24 hours."),
    Key("pseudonyms", "boolean", "true", "The public table and students see pseudonyms; staff see names."),
    Key("claim_timeout_s", "integer", "900", "A job claimed and not reported in this time is given out again."),
    Key("pair_cap", "integer", "600", "Games any two bots play together at most (settling stops there)."),
    Key("queue_depth", "integer", "8", "Match jobs kept waiting for the workers."),
    Key("bootstrap", "integer", "200", "Resamples for the table's intervals and settling (more is slower)."),
)
"""The `[ladder]` table of a ladder file."""

_KNOWN = frozenset(names(LADDER_KEYS))

OPEN_KEYS: tuple[Key, ...] = (
    Key("remote", "boolean", "false", "Students may register a CURVE public key and play the open division remotely."),
    Key("connect", "string", "none", 'The address students connect to, "tcp://HOST:PORT": the hosting worker\'s.'),
    Key("server_key", "string", "none", "The hosting worker's public key (Z85, 40 characters: its referee.key)."),
)
"""The `[open]` table of a ladder file: the open division, whose remote games never change a mark."""

_OPEN_KNOWN = frozenset(names(OPEN_KEYS))


@dataclass(frozen=True)
class OpenDivision:
    """The open division: the baselines and the students' remote bots (tournaments.ladder.remote_keys), on a
    table of its own, played by a worker started with --listen at `connect`."""

    remote: bool = False
    connect: str | None = None
    server_key: str | None = None


@dataclass(frozen=True)
class LadderSettings:
    deadline: datetime | None = None
    late_policy: LatePolicy = LatePolicy.REFUSE
    quota_per_hour: int = 6
    quota_per_day: int = 30
    pseudonyms: bool = True
    claim_timeout_s: int = 900
    pair_cap: int = 600
    queue_depth: int = 8
    bootstrap: int = 200


@dataclass(frozen=True)
class LadderFile:
    league: League
    """Its baselines are its bots."""
    settings: LadderSettings
    open: OpenDivision = OpenDivision()


def load_ladder_file(path: Path) -> LadderFile:
    """Read and check the ladder file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise LadderFileError(f"{path}: cannot be read ({error})") from None
    return parse_ladder_file(text, path)


def parse_ladder_file(text: str, path: Path) -> LadderFile:
    """Check the ladder file's `text` as if read from `path` (LadderFileError naming the key that is wrong)."""
    try:
        return _parse(text, path)
    except LeagueFileError as error:
        raise LadderFileError(str(error)) from None


def _parse(text: str, path: Path) -> LadderFile:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise LeagueFileError(path, None, f"is not valid TOML ({error})", "fix the syntax") from None
    table = data.pop("ladder", {})
    division = _open(path, data.pop("open", {}))
    data.setdefault("bots", [])
    league = parse_league(data, path, students_join_later=True)
    return LadderFile(league, _settings(path, table), division)


def _open(path: Path, table: Any) -> OpenDivision:
    if not isinstance(table, Mapping):
        raise LeagueFileError(path, "open", f"must be a table, not {table!r}")
    unknown = sorted(set(table) - _OPEN_KNOWN)
    if unknown:
        raise LeagueFileError(path, f"open.{unknown[0]}", "is not an [open] key", f"the keys are {sorted(_OPEN_KNOWN)}")
    remote = table.get("remote", False)
    if not isinstance(remote, bool):
        raise LeagueFileError(path, "open.remote", f"must be true or false, not {remote!r}")
    if not remote:
        return OpenDivision()
    connect = table.get("connect")
    if not isinstance(connect, str) or not connect.startswith("tcp://"):
        raise LeagueFileError(
            path,
            "open.connect",
            "must be the hosting worker's address as students reach it",
            'connect = "tcp://ladder.example.edu:5600"',
        )
    key = valid_public_key(table.get("server_key"))
    if key is None:
        raise LeagueFileError(
            path,
            "open.server_key",
            "must be the hosting worker's CURVE public key (Z85, 40 characters)",
            "the public-key line of its referee.key (`referee keys new referee`)",
        )
    return OpenDivision(True, connect, key)


def _settings(path: Path, table: Any) -> LadderSettings:
    if not isinstance(table, Mapping):
        raise LeagueFileError(path, "ladder", f"must be a table, not {table!r}")
    unknown = sorted(set(table) - _KNOWN)
    if unknown:
        raise LeagueFileError(path, f"ladder.{unknown[0]}", "is not a ladder key", f"the keys are {sorted(_KNOWN)}")
    defaults = LadderSettings()
    counts = {
        key: _count(path, table, key, getattr(defaults, key))
        for key in ("quota_per_hour", "quota_per_day", "claim_timeout_s", "pair_cap", "queue_depth", "bootstrap")
    }
    pseudonyms = table.get("pseudonyms", True)
    if not isinstance(pseudonyms, bool):
        raise LeagueFileError(path, "ladder.pseudonyms", f"must be true or false, not {pseudonyms!r}")
    try:
        late = LatePolicy(table.get("late_policy", LatePolicy.REFUSE.value))
    except ValueError:
        choices = [policy.value for policy in LatePolicy]
        raise LeagueFileError(path, "ladder.late_policy", f"must be one of {choices}") from None
    return LadderSettings(_deadline(path, table.get("deadline")), late, pseudonyms=pseudonyms, **counts)


def _count(path: Path, table: Mapping[str, Any], key: str, default: int) -> int:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise LeagueFileError(path, f"ladder.{key}", f"must be a whole number of at least 1, not {value!r}")
    return value


def _deadline(path: Path, value: Any) -> datetime | None:
    """A TOML date-time (or an ISO 8601 string); one without an offset is UTC."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            value = None
    if isinstance(value, date) and not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day)
    if not isinstance(value, datetime):
        raise LeagueFileError(path, "ladder.deadline", "must be a date-time", "deadline = 2026-12-18T17:00:00Z")
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def ladder_file_text(game: str, players: int, seed: int, baselines: list[str], deadline: datetime | None) -> str:
    """A new ladder file (init_ladder): the baselines as bots, the [ladder] table with its defaults written out."""
    lines = [
        "# A class ladder: a league file whose bots are the baselines, and a [ladder] table",
        "# (docs/reference/ladder-file.md). Students join by `referee ladder invite`.",
        f'game = "{game}"',
        f"players = {players}",
        f"seed = {seed}",
        "",
        "[ladder]",
    ]
    if deadline is not None:
        lines.append(f"deadline = {deadline.astimezone(UTC).strftime('%Y-%m-%dT%H:%M:%SZ')}")
    defaults = LadderSettings()
    lines += [
        f'late_policy = "{defaults.late_policy.value}"',
        f"quota_per_hour = {defaults.quota_per_hour}",
        f"quota_per_day = {defaults.quota_per_day}",
        "pseudonyms = true",
    ]
    for name in baselines:
        lines += ["", "[[bots]]", f'name = "{name}"', f'command = "{name}"', "baseline = true"]
    example = baselines[0] if baselines else "heuristic"
    lines += [
        "",
        "# The marks at the deadline: per baseline, [score share, mark] pairs (docs/how-to/grade-a-class.md).",
        "# Without a [marks] table the marks' column stays empty. For example:",
        "# [marks]",
        f"# {example} = [[0.25, 70], [0.65, 100]]",
    ]
    return "\n".join(lines) + "\n"

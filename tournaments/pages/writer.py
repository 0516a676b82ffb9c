"""Replay pages written beside the JSON replays as games end (`--replay-format html|both` of `play` and
`tournament run`).

The referee writes the JSON replay (referee/match.py); a PagesRunner wraps the match runner and, as each game
ends and before its record goes on, renders the page beside it: REPLAY.html next to REPLAY.json. With the html
format the JSON file is then removed (the page embeds the whole replay) and the record names the page. It runs
where the match runs (a league's worker processes, or a Dask worker), between games, when no clock runs.
"""

from __future__ import annotations

import enum
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from protocol.errors import EnvironmentProblem
from referee import replay as replays
from referee.match import run_match
from referee.records import GameRecord, MatchRecord, MatchSpec

from .html import AssetError
from .replay_page import render_replay_page


class ReplayFormat(enum.StrEnum):
    JSON = "json"
    HTML = "html"
    BOTH = "both"


class PageWarning(UserWarning):
    """A replay page could not be written; the JSON replay is kept."""


class PageWriteError(EnvironmentProblem, OSError):
    """A replay page that could not be written (its folder cannot be made, no permission, a full disk)."""

    def __init__(self, path: Path, error: OSError) -> None:
        super().__init__(f"cannot write {path}: {error.strerror or error}")
        self.errno = error.errno


def page_path(replay_path: Path | str) -> Path:
    return Path(replay_path).with_suffix(".html")


def write_replay_page(replay: dict[str, Any], path: Path) -> Path:
    """Render `replay` into `path` (through a temporary file, so no half-written page is ever seen); PageWriteError
    if it cannot be written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".html.tmp")
        temporary.write_text(render_replay_page(replay), encoding="utf-8")
        temporary.replace(path)
    except OSError as error:
        raise PageWriteError(path, error) from error
    return path


def with_page(record: GameRecord, replay_format: ReplayFormat) -> GameRecord:
    """The record after writing its replay's page (format html or both); with html the JSON is removed and the
    record names the page. A page that cannot be written leaves the JSON and the record as they were."""
    if record.replay_path is None or replay_format is ReplayFormat.JSON:
        return record
    source = Path(record.replay_path)
    try:
        page = write_replay_page(replays.load(source), page_path(source))
    except (OSError, replays.ReplayError, replays.ReplayMismatch, AssetError) as error:
        warnings.warn(PageWarning(f"no replay page for {source}: {error}"), stacklevel=2)
        return record
    if replay_format is ReplayFormat.BOTH:
        return record
    source.unlink()
    return replace(record, replay_path=str(page))


@dataclass(frozen=True)
class PagesRunner:
    """A match runner (run_match's signature) that writes each game's replay page as the game ends."""

    replay_format: ReplayFormat
    runner: Callable[..., MatchRecord] = run_match

    def __call__(
        self, spec: MatchSpec, on_game: Callable[[GameRecord], None] | None = None, **options: Any
    ) -> MatchRecord:
        records: list[GameRecord] = []

        def paged(record: GameRecord) -> None:
            record = with_page(record, self.replay_format)
            records.append(record)
            if on_game is not None:
                on_game(record)

        played = self.runner(spec, on_game=paged, **options)
        return replace(played, games=tuple(records))

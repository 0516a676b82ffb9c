"""Game results from elsewhere, as JSON lines: one game a line, as Ordo and BayesElo read a PGN file.

    {"ranks": {"alice": 1, "bob": 2, "carol": 2}}     rank 1 best, equal ranks tie
    {"scores": {"alice": 31, "bob": 12}}             higher is better, equal scores tie

Blank lines are skipped; other keys on a line (a game id, a seed) are ignored. Every error names its line.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from protocol.errors import BadInput
from referee.games.base import shared_ranks


class ResultsFileError(BadInput, ValueError):
    """A line that is not a game result; the message names the line and what is wrong."""


def read_results(path: str | Path) -> list[dict[str, int]]:
    """The games of a JSON lines file, each as bot name -> rank. Raises ResultsFileError or OSError."""
    return parse_results(decode_lines(Path(path).read_bytes()))


def decode_lines(data: bytes) -> list[str]:
    """The lines of UTF-8 text; a ResultsFileError names the first line that is not UTF-8."""
    try:
        return data.decode("utf-8").splitlines()
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise ResultsFileError(f"line {line}: not UTF-8 text ({error.reason})") from None


def parse_results(lines: Iterable[str]) -> list[dict[str, int]]:
    """The games of JSON lines, each as bot name -> rank (1 best, ties share a rank)."""
    games = []
    for number, line in enumerate(lines, start=1):
        if line.strip():
            try:
                games.append(_game(line))
            except ResultsFileError as error:
                raise ResultsFileError(f"line {number}: {error}") from None
    return games


def _game(line: str) -> dict[str, int]:
    try:
        record = json.loads(line, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as error:
        raise ResultsFileError(f"not valid JSON ({error.msg} at column {error.colno})") from None
    if not isinstance(record, dict):
        raise ResultsFileError(f'expected an object with "ranks" or "scores", got {type(record).__name__}')
    kinds = [kind for kind in ("ranks", "scores") if kind in record]
    if len(kinds) != 1:
        raise ResultsFileError('expected exactly one of "ranks" and "scores"')
    (kind,) = kinds
    values = record[kind]
    if not isinstance(values, dict) or len(values) < 2:
        raise ResultsFileError(f'"{kind}" must be an object naming at least two bots')
    if any(not name for name in values):
        raise ResultsFileError(f'"{kind}" has an empty bot name')
    if kind == "ranks":
        return _ranks(values)
    return _ranks_of_scores(values)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    for key in keys:
        if keys.count(key) > 1:
            raise ResultsFileError(f"{key!r} appears twice in one object")
    return dict(pairs)


def _ranks(values: dict[str, Any]) -> dict[str, int]:
    for bot, rank in values.items():
        if type(rank) is not int or rank < 1:
            raise ResultsFileError(f"the rank of {bot!r} must be a positive integer, got {json.dumps(rank)}")
    return dict(values)


def _ranks_of_scores(values: dict[str, Any]) -> dict[str, int]:
    for bot, score in values.items():
        if type(score) not in (int, float) or not math.isfinite(score):
            raise ResultsFileError(f"the score of {bot!r} must be a number, got {json.dumps(score)}")
    return dict(zip(values, shared_ranks(list(values.values())), strict=True))

"""Storing what a job gave: a check's verdict on its version, a match's games (each once: a game's id is its
job and index, so a repeated or late report adds nothing) with their seats and the bots' logs."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from sqlalchemy import Connection, insert, select, update

from . import schema
from .database import now
from .errors import BadResult
from .values import Division, VersionStatus


def record_check(connection: Connection, version_id: str, data: dict[str, Any]) -> None:
    status = VersionStatus.ACCEPTED if data.get("passed") is True else VersionStatus.REFUSED
    connection.execute(
        update(schema.versions)
        .where(schema.versions.c.id == version_id)
        .values(
            status=status.value,
            verdict=str(data.get("verdict") or ""),
            check_report=data.get("report"),
            build_log=data.get("build_log"),
        )
    )


def record_match(connection: Connection, job_id: str, payload: dict[str, Any], data: dict[str, Any]) -> int:
    """Store the games of the match job `job_id` that are not stored yet; how many were added."""
    students = {entrant["name"]: entrant.get("student") for entrant in payload["entrants"]}
    seeds = {game["index"]: game["seed"] for game in payload["games"]}
    frozen = bool(connection.execute(select(schema.state.c.frozen)).scalar_one())
    added = 0
    games, logs = data.get("games", []), data.get("logs", {})
    if not isinstance(games, list) or not isinstance(logs, dict):
        raise BadResult("a match result's games are not a list, or its logs not an object")
    for game in games:
        _check_game(game, students, seeds)
        game_id = f"{job_id}:{game['index']}"
        if connection.execute(select(schema.games.c.id).where(schema.games.c.id == game_id)).first() is not None:
            continue
        connection.execute(
            insert(schema.games).values(
                id=game_id,
                job_id=job_id,
                game_index=game["index"],
                seed=game["seed"],
                stored=now(),
                final=frozen,
                isolation=str(game.get("isolation", "none")),
                division=Division(payload.get("division", Division.GRADED.value)).value,
                replay=game.get("replay"),
            )
        )
        faults: dict[int, list[str]] = {}
        for fault in game.get("faults", []):
            faults.setdefault(int(fault["seat"]), []).append(str(fault["cause"]))
        forfeited = game.get("forfeited") or [False] * len(game["seats"])
        connection.execute(
            insert(schema.seats),
            [
                {
                    "game_id": game_id,
                    "seat": seat,
                    "entrant": name,
                    "student": students[name],
                    "rank": game["ranks"][seat],
                    "score": game["scores"][seat],
                    "faults": faults.get(seat, []),
                    "forfeited": bool(forfeited[seat]),
                }
                for seat, name in enumerate(game["seats"])
            ],
        )
        added += 1
    _record_logs(connection, job_id, students, logs)
    return added


def _check_game(game: object, students: dict[str, str | None], seeds: dict[int, Any]) -> None:
    """A game of a match result fits its job: one of the job's indices (an int, not True or 1.0, which would
    store it again under another id) with its seed, a seat for each entrant, an int rank and a number score for
    each seat, faults of seats that exist; else BadResult (nothing of the result is stored)."""
    if not isinstance(game, dict):
        raise BadResult("a game of the result is not an object")
    index, seats, count = game.get("index"), game.get("seats"), len(students)
    if type(index) is not int or index not in seeds or game.get("seed") != seeds[index]:
        raise BadResult(f"a game of the result is not one of its job's (index {index!r})")
    if not _each(seats, count, lambda seat: isinstance(seat, str)) or sorted(seats or ()) != sorted(students):
        raise BadResult(f"game {index} of the result does not seat its job's entrants")
    ranks, scores = game.get("ranks"), game.get("scores")
    if not _each(ranks, count, lambda rank: type(rank) is int and 1 <= rank <= count):
        raise BadResult(f"game {index} of the result has no rank from 1 to {count} for some seat")
    if not _each(scores, count, lambda score: type(score) in (int, float) and math.isfinite(score)):
        raise BadResult(f"game {index} of the result has no score for some seat")
    forfeited = game.get("forfeited") or [False] * count
    if not _each(forfeited, count, lambda flag: isinstance(flag, bool)):
        raise BadResult(f"game {index} of the result says forfeited or not for some seat only")
    faults = game.get("faults", [])
    if not isinstance(faults, list) or not all(_fault_fits(fault, count) for fault in faults):
        raise BadResult(f"game {index} of the result has a fault of no seat")
    if not isinstance(game.get("replay"), dict | None) or not isinstance(game.get("isolation", ""), str):
        raise BadResult(f"game {index} of the result has a replay or isolation of the wrong kind")


def _each(values: object, count: int, fits: Callable[[Any], bool]) -> bool:
    return isinstance(values, list) and len(values) == count and all(fits(value) for value in values)


def _fault_fits(fault: object, seats: int) -> bool:
    if not isinstance(fault, dict) or not isinstance(fault.get("cause"), str):
        return False
    return type(fault.get("seat")) is int and 0 <= fault["seat"] < seats


def _record_logs(connection: Connection, job_id: str, students: dict[str, str | None], logs: dict[str, str]) -> None:
    for entrant, text in logs.items():
        if entrant not in students:
            continue
        known = connection.execute(
            select(schema.logs.c.entrant).where(schema.logs.c.job_id == job_id, schema.logs.c.entrant == entrant)
        ).first()
        if known is None:
            connection.execute(insert(schema.logs).values(job_id=job_id, entrant=entrant, log=str(text)))

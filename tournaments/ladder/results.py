"""Storing what a job gave: a check's verdict on its version, a match's games (each once: a game's id is its
job and index, so a repeated or late report adds nothing) with their seats and the bots' logs."""

from __future__ import annotations

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
    indices = {game["index"] for game in payload["games"]}
    frozen = bool(connection.execute(select(schema.state.c.frozen)).scalar_one())
    added = 0
    for game in data.get("games", []):
        _check_game(game, students, indices)
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
    _record_logs(connection, job_id, students, data.get("logs", {}))
    return added


def _check_game(game: dict[str, Any], students: dict[str, str | None], indices: set[int]) -> None:
    seats = game.get("seats")
    if game.get("index") not in indices or not isinstance(seats, list) or sorted(seats) != sorted(students):
        raise BadResult(f"a game of the result is not one of its job's (index {game.get('index')!r})")
    if len(game.get("ranks", ())) != len(seats) or len(game.get("scores", ())) != len(seats):
        raise BadResult("a game of the result has no rank or score for some seat")


def _record_logs(connection: Connection, job_id: str, students: dict[str, str | None], logs: dict[str, str]) -> None:
    for entrant, text in logs.items():
        if entrant not in students:
            continue
        known = connection.execute(
            select(schema.logs.c.entrant).where(schema.logs.c.job_id == job_id, schema.logs.c.entrant == entrant)
        ).first()
        if known is None:
            connection.execute(insert(schema.logs).values(job_id=job_id, entrant=entrant, log=str(text)))

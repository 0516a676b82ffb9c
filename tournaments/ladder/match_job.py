"""A match job: one balanced match between entrants (versions, fetched by content hash and built as a league
builds them; baselines, built-in bots), played by the referee in the sandbox, its games returned as plain data
(records, replays, each bot's output capped).

    payload = {"match_id", "game", "config", "limits", "ponder",
               "entrants": [{"name", "baseline": bool, "command" (a baseline's) | "digest" (a version's)}],
               "games": [{"index", "seed", "seating"}]}
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from referee.botspec import resolve_bot
from referee.match import run_match
from referee.records import BotSpec, FaultPolicy, GameRecord, GameSpec, Limits, MatchSpec
from tournaments.league.builds import prepare_submission
from tournaments.league.submissions import load_submission

from .limits import capped_text


def match_limits(data: dict[str, Any]) -> Limits:
    return Limits(**{**data, "fault_policy": FaultPolicy(data.get("fault_policy", FaultPolicy.FORFEIT.value))})


def limits_data(limits: Limits) -> dict[str, Any]:
    return {**asdict(limits), "fault_policy": limits.fault_policy.value}


def run_match_job(payload: dict[str, Any], fetch_version: Callable[[str], Path], *, sandbox: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ladder-match-") as work:
        root = Path(work)
        bots = tuple(_bot(entrant, payload["game"], fetch_version, root, sandbox) for entrant in payload["entrants"])
        spec = MatchSpec(
            match_id=payload["match_id"],
            game=payload["game"],
            bots=bots,
            games=tuple(GameSpec(g["index"], g["seed"], tuple(g["seating"])) for g in payload["games"]),
            config=payload.get("config", {}),
            limits=match_limits(payload.get("limits", {})),
            replay_dir=str(root / "replays"),
            log_dir=str(root / "logs"),
            sandbox=sandbox,
            ponder=bool(payload.get("ponder", False)),
        )
        (root / "replays").mkdir()
        (root / "logs").mkdir()
        record = run_match(spec)
        games = [_game(game) for game in record.games]
        logs = {
            run.name: capped_text(Path(run.log_path))
            for run in record.bots
            if run.log_path and Path(run.log_path).is_file()
        }
    return {"games": games, "logs": logs}


def _bot(
    entrant: dict[str, Any], game: str, fetch_version: Callable[[str], Path], root: Path, sandbox: bool
) -> BotSpec:
    name = entrant["name"]
    if entrant.get("baseline"):
        return replace(resolve_bot(entrant["command"], game), name=name, stopped_on_timeouts=False)
    folder = fetch_version(entrant["digest"])
    submission = load_submission(folder, name=name)
    spec, _ = prepare_submission(
        submission, entrant["digest"], game, root / "builds" / name, root / "builds" / f"{name}.log", sandbox=sandbox
    )
    return replace(spec, name=name)


def _game(record: GameRecord) -> dict[str, Any]:
    replay = None
    if record.replay_path is not None and Path(record.replay_path).is_file():
        replay = json.loads(Path(record.replay_path).read_text(encoding="utf-8"))
    return {
        "index": record.index,
        "seed": record.seed,
        "seats": list(record.seats),
        "ranks": list(record.ranks),
        "scores": list(record.scores),
        "faults": [{"seat": fault.seat, "cause": fault.cause.value} for fault in record.faults],
        "forfeited": list(record.forfeited) or [False] * len(record.seats),
        "isolation": record.isolation.value,
        "replay": replay,
    }

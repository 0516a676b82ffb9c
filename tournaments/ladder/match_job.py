"""A match job: one balanced match between entrants (versions, fetched by content hash and built as a league
builds them; baselines, built-in bots), played by the referee in the sandbox, its games returned as plain data
(records, replays, each bot's output capped).

    payload = {"match_id", "division", "game", "config", "limits", "ponder", "kernel" (the ladder file's
               `kernel = true`, graded matches: every bot under a gVisor kernel of its own),
               "entrants": [{"name", "baseline": bool, "command" (a baseline's) | "digest" (a version's)
                             | "remote": true, "public_key" (a remote bot's, open division)}],
               "games": [{"index", "seed", "seating"}],
               "server_key" (open division: the public key students were told the hosting worker has)}

A match with remote seats is played only by a worker that hosts them (`RemoteHost`: where it listens and its key
pair): the allow-list is the public keys of that match's remote seats and nobody else's, each seat named by its
entrant; a seat whose author does not connect within the startup limit forfeits with the startup fault, as in
`referee play`. Its games are recorded with isolation `remote`.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from protocol.curve_keys import KeyPair
from protocol.errors import EnvironmentProblem
from referee.botspec import resolve_bot
from referee.isolation.process import BotProcess
from referee.isolation.sandbox import Isolation
from referee.match import run_match
from referee.records import BotSpec, FaultPolicy, GameRecord, GameSpec, Limits, MatchSpec
from referee.session import BotTransport
from referee.wire.connection import Transport
from referee.wire.lag_quota import DEFAULT_LAG_QUOTA_MS
from referee.wire.remote_seats import RemoteSeats
from tournaments.league.builds import prepare_submission
from tournaments.league.submissions import load_submission

from .limits import capped_text


@dataclass(frozen=True)
class RemoteHost:
    """A worker that hosts remote seats (`referee worker --listen`): it listens at `listen` with `pair`."""

    listen: str
    pair: KeyPair
    lag_quota_ms: int = DEFAULT_LAG_QUOTA_MS


class NotTheHost(EnvironmentProblem):
    """A match with remote seats given to a worker that does not host them, or whose key is not the one the
    students were told."""


def remote_transport(payload: dict[str, Any], host: RemoteHost | None) -> Transport | BotTransport:
    """The local transport, or, for a match with remote seats, one whose allow-list is theirs alone."""
    remote = {
        entrant["public_key"].encode(): entrant["name"] for entrant in payload["entrants"] if entrant.get("remote")
    }
    if not remote:
        return Transport.IPC
    if host is None:
        raise NotTheHost("a match with remote seats needs a worker that hosts them (referee worker --listen)")
    expected = payload.get("server_key")
    if expected is not None and host.pair.public.decode() != expected:
        raise NotTheHost("this worker's key is not the ladder file's [open] server_key, which the students connect to")
    seats = RemoteSeats(host.listen, host.pair, remote, host.lag_quota_ms)
    return BotTransport(Transport.IPC, seats.open_wire, seats.start_bot(BotProcess.start), isolation=Isolation.REMOTE)


def match_limits(data: dict[str, Any]) -> Limits:
    return Limits(**{**data, "fault_policy": FaultPolicy(data.get("fault_policy", FaultPolicy.FORFEIT.value))})


def limits_data(limits: Limits) -> dict[str, Any]:
    return {**asdict(limits), "fault_policy": limits.fault_policy.value}


def run_match_job(
    payload: dict[str, Any],
    fetch_version: Callable[[str], Path],
    *,
    sandbox: bool,
    host: RemoteHost | None = None,
) -> dict[str, Any]:
    transport = remote_transport(payload, host)
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
            kernel=bool(payload.get("kernel", False)),
        )
        (root / "replays").mkdir()
        (root / "logs").mkdir()
        record = run_match(spec, transport=transport)
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
    if entrant.get("remote"):
        return resolve_bot(f"remote:{name}", game)
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

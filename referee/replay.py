"""Replays: one JSON file per game with all it takes to re-simulate the game exactly and to show it.

    {"format": "card-referee-replay", "version": 3, "match_id", "game_index", "game", "players", "seed",
     "config", "deal", "seats": [{"seat", "bot", "command", "log"}], "limits": {...},
     "actions": [{"seat", "action", "ms", "by": "bot"|"fallback", "at_ms"}],
     "faults": [{"seat", "bot", "kind", "cause", "facts", "detail", "before_action", "sent"}],
     "result": {"scores", "ranks"}  (as the game counted them), "forfeited": [bool],
     "ranks": [final ranks], "scores": [final scores]}

`ms` is the bot's decision time on the referee's clock (null for fallback actions); `at_ms` is when the
action was applied, in milliseconds from the start of the game. A remote seat's answers also carry `think_ms`,
`lag_ms` and `credit_ms` (referee.wire.lag_quota.LagCredit: its think time, its measured round trip, and what its
lag quota paid of `ms`), keys a reader may ignore. `before_action` is the index in `actions` the
fault came before; `sent` is an illegal action as the bot sent it (its JSON text, cut to
protocol.limits.MAX_RECORDED_ACTION_CHARS: data to show, never parsed), null for other faults. A fault's `cause` is
its referee.records.FaultCause and `facts` the FaultFacts its `detail` was made from (FaultFacts.to_json): what the
fault means is read from them, never from `detail`. A seat's `log` is
its bot's log file as a path relative to the replay's folder, null when the match kept no logs.
`deal` holds the cards dealt, in the game's explicit-deal format (`state.dealt`):
`new_game(players, seed, config, deal=replay["deal"])` deals them again. Final ranks and scores are the game's
with the forfeits applied (referee.faults). Verification re-deals from the seed (run_match never deals
explicitly), replays every action through the rules engine, and checks that the game dealt the recorded cards
and ends with the recorded result, ranks and scores.

Showing a replay to a person (as text or as a page) is tournaments.pages' work.

Version 2 added the dealt cards (version 1 recorded null there) and the final scores; version 3 added the
faults' `sent` and the seats' `log`. Versions 2 and 3 are read (and verified) alike: a version 2 replay's faults
and seats simply lack those keys, so readers use `.get`. The faults' `cause` and `facts` were added within version 3
(keys a reader may ignore, so a referee of before them still reads newer replays): a fault written before them
has no recorded cause, and reads as its kind and detail alone.
"""

from __future__ import annotations

import contextlib
import errno
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protocol.errors import BadInput, EnvironmentProblem
from referee.faults import forfeit_ranks, forfeit_scores
from referee.games import GameError, GameState, load_game
from referee.records import Fault
from referee.wire.lag_quota import LagCredit

FORMAT = "card-referee-replay"
VERSION = 3
READABLE_VERSIONS = frozenset({2, VERSION})
"""The versions this referee reads: 3 only added keys to 2."""


class ReplayError(BadInput, ValueError):
    """A file that is not a readable replay of this format."""


class ReplayMismatch(BadInput, ValueError):
    """A replay whose actions, result or ranks do not re-simulate as recorded."""


DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})
"""The errnos of a write that found no room: the disk (or the user's quota) is full."""


class ReplayWriteError(EnvironmentProblem, OSError):
    """A replay that could not be written (its directory cannot be made, or the disk is full); the message says
    where and what to do. `errno` is that of the failed write."""

    def __init__(self, path: Path, error: OSError) -> None:
        reason = error.strerror or str(error)
        advice = "the disk is full: free space there, or write replays elsewhere" if error.errno in DISK_FULL else ""
        super().__init__(f"cannot write replay {path}: {reason}" + (f"; {advice}" if advice else ""))
        self.errno = error.errno


@dataclass(frozen=True, slots=True)
class Move:
    seat: int
    action: dict[str, Any]
    ms: float | None
    by_bot: bool
    at: float
    """When the action was applied, in seconds on the referee's monotonic clock."""
    lag: LagCredit | None = None
    """A remote seat's answer: its think time, measured lag and credit (referee.wire.lag_quota)."""

    def to_json(self, game_started: float) -> dict[str, Any]:
        entry = {
            "seat": self.seat,
            "action": self.action,
            "ms": None if self.ms is None else round(self.ms, 3),
            "by": "bot" if self.by_bot else "fallback",
            "at_ms": round((self.at - game_started) * 1000, 3),
        }
        if self.lag is not None:
            entry.update(self.lag.to_json())
        return entry


def fault_entry(fault: Fault, before_action: int) -> dict[str, Any]:
    """One fault as the replay records it."""
    return {
        "seat": fault.seat,
        "bot": fault.bot,
        "kind": fault.kind.value,
        "cause": fault.cause.value,
        "facts": fault.facts.to_json(),
        "detail": fault.detail,
        "before_action": before_action,
        "sent": fault.sent,
    }


def write(path: Path, replay: dict[str, Any]) -> None:
    """Write the replay whole or not at all (through a temporary file, removed if the write fails); raises
    ReplayWriteError."""
    temporary = path.with_suffix(".tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_text(json.dumps(replay, separators=(",", ":")))
        temporary.replace(path)
    except OSError as error:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise ReplayWriteError(path, error) from error


_REQUIRED = (
    "game",
    "players",
    "seed",
    "config",
    "deal",
    "seats",
    "actions",
    "faults",
    "result",
    "forfeited",
    "ranks",
    "scores",
)


def load(path: Path | str) -> dict[str, Any]:
    try:
        replay = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ReplayError(f"cannot read replay {str(path)!r}: {error}") from None
    return checked(replay, str(path))


def checked(replay: Any, source: str) -> dict[str, Any]:
    """`replay` if it is a replay of this format and version with every key; ReplayError naming `source` if not."""
    if type(replay) is not dict or replay.get("format") != FORMAT:
        raise ReplayError(f"{source!r} is not a {FORMAT} file")
    if replay.get("version") not in READABLE_VERSIONS:
        readable = " and ".join(map(str, sorted(READABLE_VERSIONS)))
        raise ReplayError(f"{source!r} is replay version {replay.get('version')!r}; this referee reads {readable}")
    missing = [key for key in _REQUIRED if key not in replay]
    if missing:
        raise ReplayError(f"{source!r} lacks {', '.join(missing)}")
    return replay


def _history(replay: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    try:
        return [(move["seat"], move["action"]) for move in replay["actions"]]
    except (TypeError, KeyError) as error:
        raise ReplayError(f"malformed action list: {error}") from None


def simulate(replay: dict[str, Any]) -> GameState:
    """The final state of the replayed game; raises ReplayMismatch if an action does not apply."""
    try:
        game = load_game(replay["game"])
        state = game.new_game(replay["players"], replay["seed"], replay["config"])
        for number, (seat, action) in enumerate(_history(replay)):
            try:
                state.apply(seat, action)
            except GameError as error:
                raise ReplayMismatch(f"action {number} (seat {seat}) does not apply: {error}") from None
    except (GameError, TypeError) as error:
        if isinstance(error, ReplayMismatch):
            raise
        raise ReplayError(f"cannot set the game up: {error}") from None
    return state


def verify(replay: dict[str, Any]) -> GameState:
    """Re-simulate the replay and check that it dealt and ends as recorded; raises ReplayMismatch if not."""
    state = simulate(replay)
    if not state.is_over():
        raise ReplayMismatch(f"the game is not over after its {len(replay['actions'])} actions")
    result = state.result()
    if result != replay["result"]:
        raise ReplayMismatch(f"the game ends with {result}, the replay says {replay['result']}")
    if state.dealt != replay["deal"]:
        raise ReplayMismatch(f"the replay's deal is not the one seed {replay['seed']} deals for its actions")
    ranks = forfeit_ranks(result["ranks"], replay["forfeited"])
    if ranks != replay["ranks"]:
        raise ReplayMismatch(f"the final ranks are {ranks}, the replay says {replay['ranks']}")
    scores = forfeit_scores(result["scores"], replay["forfeited"])
    if scores != replay["scores"]:
        raise ReplayMismatch(f"the final scores are {scores}, the replay says {replay['scores']}")
    faulted = {fault["seat"] for fault in replay["faults"]}
    unexplained = [seat for seat, lost in enumerate(replay["forfeited"]) if lost and seat not in faulted]
    if unexplained:
        raise ReplayMismatch(f"seats {unexplained} forfeited without a recorded fault")
    return state

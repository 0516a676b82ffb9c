"""Replays for the page tests, played in-process (no bot processes): the policies of the built-in bots decide,
each decision gets a made-up but plausible time, and chosen decisions are recorded as faults whose action a
fallback played, as the referee records a fault under the substitute policy (the policy's own choice stands in
for the fallback's, so that faults do not change the game). Every replay made here verifies."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

from bots.python import scauver_heuristic, scout_heuristic
from referee import replay as replays
from referee.faults import forfeit_ranks, forfeit_scores
from referee.games import load_game

Policy = Callable[[dict[str, Any], list[dict[str, Any]]], dict[str, Any]]
HEURISTICS: dict[str, Policy] = {"scout": scout_heuristic.choose, "scauver": scauver_heuristic.choose}


def self_play(
    game: str, bots: list[str], seed: int, faults: Mapping[int, tuple[str, str]] | None = None
) -> dict[str, Any]:
    """A replay of `bots` (names "heuristic" or "random", numbered as the referee numbers them) playing one
    game; `faults` maps an action's index to (kind, detail) of a fault of the seat to move then."""
    faults = faults or {}
    engine = load_game(game)
    config = engine.resolve_config({})
    state = engine.new_game(len(bots), seed, config)
    rng = random.Random(seed)
    policies = [
        HEURISTICS[game] if bot == "heuristic" else _random(random.Random(seed + seat)) for seat, bot in enumerate(bots)
    ]
    names = _numbered(bots)
    actions: list[dict[str, Any]] = []
    recorded: list[dict[str, Any]] = []
    while not state.is_over():
        for seat in state.to_move():
            legal = state.legal_actions(seat)
            number = len(actions)
            action = policies[seat](state.observation(seat), legal)
            ms: float | None = round(rng.uniform(0.05, 4.0), 3)
            if number in faults:
                kind, detail = faults[number]
                recorded.append(
                    {"seat": seat, "bot": names[seat], "kind": kind, "detail": detail, "before_action": number}
                )
                ms = None
            state.apply(seat, action)
            by = "bot" if ms is not None else "fallback"
            actions.append({"seat": seat, "action": action, "ms": ms, "by": by, "at_ms": round(3.0 * number, 3)})
    result = state.result()
    replay = {
        "format": replays.FORMAT,
        "version": replays.VERSION,
        "match_id": f"test-{game}-{len(bots)}",
        "game_index": 0,
        "game": game,
        "players": len(bots),
        "seed": seed,
        "config": config,
        "deal": state.dealt,
        "seats": [{"seat": seat, "bot": name, "command": [name]} for seat, name in enumerate(names)],
        "limits": {
            "move_time_ms": 1000,
            "time_bank_ms": 0,
            "startup_time_s": 10,
            "fault_policy": "substitute",
            "fault_budget": 3,
        },
        "actions": actions,
        "faults": recorded,
        "result": result,
        "forfeited": [False] * len(bots),
        "ranks": result["ranks"],
        "scores": result["scores"],
    }
    replays.verify(replay)
    return replay


def forfeited(replay: dict[str, Any], seat: int) -> dict[str, Any]:
    """The replay with `seat` forfeited by a crash at its first decision, as the referee records it (its later
    decisions stay as they were: the fallback's choices are the policy's here); it still verifies."""
    first = next(number for number, move in enumerate(replay["actions"]) if move["seat"] == seat)
    lost = [other == seat for other in range(replay["players"])]
    fault = {
        "seat": seat,
        "bot": replay["seats"][seat]["bot"],
        "kind": "crash",
        "detail": "gone",
        "before_action": first,
    }
    result = replay["result"]
    changed = {
        **replay,
        "faults": [fault],
        "forfeited": lost,
        "ranks": forfeit_ranks(result["ranks"], lost),
        "scores": forfeit_scores(result["scores"], lost),
    }
    replays.verify(changed)
    return changed


def _random(rng: random.Random) -> Policy:
    return lambda observation, legal: rng.choice(legal)


def _numbered(bots: list[str]) -> list[str]:
    counts: dict[str, int] = {}
    names = []
    for bot in bots:
        counts[bot] = counts.get(bot, 0) + 1
        names.append(f"{bot}#{counts[bot]}")
    return names

"""`referee replay show`: a replayed game told round by round for a terminal."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .captions import Caption
from .games import game_pages
from .timeline import replay_steps


def move_timing(move: Mapping[str, Any]) -> str:
    return "fallback" if move.get("by") == "fallback" else f"{move['ms']:.1f} ms"


def fault_line(fault: Mapping[str, Any]) -> str:
    return f"! fault of seat {fault['seat']} ({fault['bot']}): {fault['kind']}: {fault['detail']}"


def render_text(replay: Mapping[str, Any]) -> str:
    """Hands at each round's start, every action with its seat, bot, cards and decision time, faults where
    they happened, each round's end with its scores (SCOUT) or pot and chips (Scauver), and the result."""
    narrator = game_pages(replay["game"]).narrator
    seats = [seat["bot"] for seat in replay["seats"]]
    lines = [
        f"{replay['game']} game {replay.get('game_index', 0)} of match {replay.get('match_id', '?')}, "
        f"seed {replay['seed']}, {replay['players']} players: {', '.join(seats)}"
    ]
    before: Sequence[Any] = ()
    shown_round = 0
    for step in replay_steps(replay):
        lines += ["  " + fault_line(fault) for fault in step.faults]
        if step.move is not None:
            seat = int(step.move["seat"])
            caption: Caption = narrator.caption(seat, step.move["action"], before, step.observations)
            lines.append(f"  seat {seat} {seats[seat]}: {caption.text}  [{move_timing(step.move)}]")
            lines += [f"  = {note}" for note in caption.notes]
        current = step.observations[0]
        if current["round"] != shown_round and current["phase"] != "over":
            shown_round = current["round"]
            lines += narrator.round_lines(step.observations, seats)
        before = step.observations
    lines.append("result")
    lines += narrator.final_lines(before, seats)
    for seat, bot in enumerate(seats):
        counted = replay["result"]["scores"][seat]
        forfeit = f"  (forfeited; the game counted {counted})" if replay["forfeited"][seat] else ""
        lines.append(f"  seat {seat} {bot}: rank {replay['ranks'][seat]}, score {replay['scores'][seat]}{forfeit}")
    return "\n".join(lines)

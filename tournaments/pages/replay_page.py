"""`referee replay html`: one game as a self-contained page to step through, from its replay.

The page holds every step's observations as the engine made them (re-simulated here from the replay's seed
and actions): the steps carry, per seat, the patch from that seat's previous observation (delta.py), split
into what every seat was shown alike and what only that seat was; the page's script rebuilds each
observation exactly. The full view joins every seat's private part (its hand, its own setup); a seat's view
draws that seat's observation alone.

    data = {"replay": the replay itself,                                 # so the page is a replay too
            "frames": [[common patch, seat 0 patch, ...], ...],           # one per step, from the deal
            "captions": [[text, public text or null, [notes]], ...],      # steps 1..N (captions.py)
            "chosen": [index of the action among its seat's legal actions, ...],  # steps 1..N
            "round_ends": {step: the table as that step's action left it}}  # Narrator.round_end
    legal = [[legal actions of the seat to move], ...]                   # steps 1..N, a block of its own

The legal actions are the largest part of a long game and only the decision view reads them: they are packed
apart (LEGAL_BLOCK) and unpacked when a decision is first looked at, so they do not delay the first drawing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from referee.games import Observation

from .captions import Caption
from .delta import Patch, diff
from .fault_text import without_paths
from .games import game_pages
from .html import document, json_block, packed_block
from .timeline import replay_steps

STYLES = ("page.css", "replay.css")
CORE_SCRIPT = "replay.js"
META_BLOCK = "replay-meta"
STEPS_BLOCK = "replay-steps"
LEGAL_BLOCK = "replay-legal"
PART_SCRIPTS = ("movelist.js", "ends.js", "chart.js", "decision.js")
"""The viewer's parts beside the board, each drawn at every step (replay.js calls them)."""


def render_replay_page(replay: Mapping[str, Any]) -> str:
    """The page of one replay (its actions are applied by the engine: ReplayMismatch if one does not apply)."""
    pages = game_pages(replay["game"])
    data, legal, rounds = _steps_data(replay)
    meta = {**_meta(replay, rounds), "constants": dict(pages.constants)}
    title = f"{replay['game']} game {meta['game_index']} of {meta['match_id']}"
    return document(
        title,
        STYLES,
        _body(meta),
        (CORE_SCRIPT, *PART_SCRIPTS, pages.script),
        (json_block(META_BLOCK, meta), packed_block(STEPS_BLOCK, data), packed_block(LEGAL_BLOCK, legal)),
    )


def _steps_data(replay: Mapping[str, Any]) -> tuple[dict[str, Any], list[Any], list[list[int]]]:
    narrator = game_pages(replay["game"]).narrator
    frames: list[list[Patch | None]] = []
    captions: list[list[Any]] = []
    rounds: list[list[int]] = []
    legal: list[list[Any]] = []
    chosen: list[int | None] = []
    round_ends: dict[str, Any] = {}
    shared_before: dict[str, Any] = {}
    private_before: list[dict[str, Any]] = [{} for _ in range(replay["players"])]
    before: Sequence[Observation] = ()
    for step in replay_steps(replay):
        shared, private = split_views(step.observations)
        frames.append([diff(shared_before, shared), *map(diff, private_before, private)])
        shared_before, private_before = shared, private
        if step.move is not None:
            seat = int(step.move["seat"])
            action = step.move["action"]
            caption = narrator.caption(seat, action, before, step.observations)
            captions.append(_caption_entry(caption))
            legal.append(list(step.legal))
            chosen.append(next((at for at, option in enumerate(step.legal) if option == action), None))
            end = narrator.round_end(seat, action, before, step.observations)
            if end is not None:
                round_ends[str(step.index)] = end
        number = step.observations[0]["round"]
        if not rounds or rounds[-1][0] != number:
            rounds.append([number, step.index])
        before = step.observations
    data = {"replay": replay, "frames": frames, "captions": captions, "chosen": chosen, "round_ends": round_ends}
    return data, legal, rounds


def split_views(observations: Sequence[Observation]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the keys every seat was shown alike, each seat's keys that differ from another seat's)."""
    first, others = observations[0], observations[1:]
    shared = {key: value for key, value in first.items() if all(other.get(key) == value for other in others)}
    return shared, [{key: value for key, value in view.items() if key not in shared} for view in observations]


def _caption_entry(caption: Caption) -> list[Any]:
    return [caption.text, None if caption.public == caption.text else caption.public, list(caption.notes)]


def seat_timings(replay: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per seat: its bot, decisions made by the bot and their times, fallback actions, faults, rank, score (the
    final one, forfeits applied, as `play` and the store count it; `game_score` is what the game itself counted),
    the step its forfeit began at (None: it played to the end) and the link to its bot's log (None: not kept)."""
    rows = []
    steps = len(replay["actions"])
    for seat, entry in enumerate(replay["seats"]):
        times = [m["ms"] for m in replay["actions"] if m["seat"] == seat and m.get("by") != "fallback"]
        faults = [fault for fault in replay["faults"] if fault["seat"] == seat]
        forfeited = bool(replay["forfeited"][seat])
        rows.append(
            {
                "seat": seat,
                "bot": entry["bot"],
                "decisions": len(times),
                "mean_ms": round(sum(times) / len(times), 3) if times else None,
                "max_ms": round(max(times), 3) if times else None,
                "fallbacks": sum(1 for m in replay["actions"] if m["seat"] == seat and m.get("by") == "fallback"),
                "faults": len(faults),
                "rank": replay["ranks"][seat],
                "score": replay["scores"][seat],
                "game_score": replay["result"]["scores"][seat],
                "forfeited": forfeited,
                "forfeited_at": fault_step(faults[-1], steps) if forfeited and faults else None,
                "log": entry.get("log"),
            }
        )
    return rows


def fault_step(fault: Mapping[str, Any], actions: int) -> int:
    """The step a fault is shown at: the one its faulted decision led to (timeline.replay_steps)."""
    return min(int(fault.get("before_action", 0)) + 1, actions)


def _meta(replay: Mapping[str, Any], rounds: list[list[int]]) -> dict[str, Any]:
    actions = len(replay["actions"])
    return {
        "game": replay["game"],
        "match_id": replay.get("match_id", "?"),
        "game_index": replay.get("game_index", 0),
        "seed": replay["seed"],
        "players": replay["players"],
        "config": replay["config"],
        "limits": replay.get("limits", {}),
        "seats": seat_timings(replay),
        "steps": actions + 1,
        "rounds": rounds,
        "faults": [
            {**fault, "detail": without_paths(fault["detail"]), "step": fault_step(fault, actions)}
            for fault in replay["faults"]
        ],
    }


def _body(meta: Mapping[str, Any]) -> str:
    limits = meta["limits"]
    facts = [f"seed {meta['seed']}", f"{meta['players']} seats", f"{meta['steps'] - 1} decisions"]
    if limits:
        facts.append(f"move time {limits.get('move_time_ms')} ms, fault policy {limits.get('fault_policy')}")
    return f"""
<header class="replay-header">
  <div>
    <h1>{escape(meta["game"].upper() if meta["game"] == "scout" else meta["game"].title())}
      <small>game {meta["game_index"]} of match {escape(str(meta["match_id"]))}</small></h1>
    <p class="facts">{escape(" · ".join(facts))}</p>
  </div>
  {_seats_table(meta["seats"])}
</header>
<section id="player" aria-label="Replay controls">
  <div class="controls">
    <button type="button" id="first" title="First step (Home)">{_icon("M3 2h2v12H3zM14 2 6 8l8 6z")}</button>
    <button type="button" id="back" title="Step back (&#x2190;)">{_icon("M12 2 4 8l8 6z")}</button>
    <button type="button" id="play" title="Play / pause (space)">{_icon("M4 2l10 6-10 6z", "when-paused")}
      {_icon("M3 2h4v12H3zM9 2h4v12H9z", "when-playing")}</button>
    <button type="button" id="forward" title="Step forward (&#x2192;)">{_icon("M4 2l8 6-8 6z")}</button>
    <button type="button" id="last" title="Last step (End)">{_icon("M2 2l8 6-8 6zM11 2h2v12h-2z")}</button>
    <span id="position" class="position">step 0</span>
    <label>round <select id="round"></select></label>
    <label>speed <select id="speed"></select></label>
    <label title="A seat's view draws what that seat's bot was shown, nothing more">view
      <select id="view"></select></label>
  </div>
  <div class="timeline">
    <input type="range" id="slider" min="0" max="{meta["steps"] - 1}" value="0" aria-label="Step">
    <div id="marks" class="marks"></div>
  </div>
  <div id="caption" class="caption" aria-live="polite"></div>
</section>
<div class="stage">
  <main id="board" class="board"><p class="loading">Unpacking the game&hellip;</p></main>
  <aside class="side">
    <section id="decision" class="decision" aria-label="The decision of this step"></section>
    <section id="chart" class="chart-box" aria-label="Chart over the game"></section>
    <section id="moves" class="move-list" aria-label="Moves"></section>
  </aside>
</div>
<details id="raw" class="raw" hidden><summary>Observation of this seat at this step</summary><pre></pre></details>
<footer>Keys: &#x2190; &#x2192; step (with Shift: 10), PageUp PageDown round, Home End, space play, F full view,
0-9 a seat's view; they work whichever control was used last. Click a move, a round or the chart to go there.
A step is the table after one decision; a seat's view draws only what that seat's bot was shown.</footer>
"""


def _game_score(seat: Mapping[str, Any]) -> str:
    """A title on a forfeited seat's score saying what the game counted before the forfeit rule."""
    if seat["score"] == seat["game_score"]:
        return ""
    return f' title="forfeited: the table\'s lowest score; the game counted {seat["game_score"]}"'


def _icon(path: str, css_class: str = "") -> str:
    return f'<svg class="icon {css_class}" viewBox="0 0 16 16" aria-hidden="true"><path d="{path}"/></svg>'


def _seats_table(seats: Sequence[Mapping[str, Any]]) -> str:
    rows = []
    for seat in seats:
        mean = "-" if seat["mean_ms"] is None else f"{seat['mean_ms']:.1f}"
        most = "-" if seat["max_ms"] is None else f"{seat['max_ms']:.1f}"
        forfeit = ' <span class="badge forfeit">forfeited</span>' if seat["forfeited"] else ""
        faults = f'<td class="num{" bad" if seat["faults"] else ""}" data-label="faults">{seat["faults"]}</td>'
        rows.append(
            f'<tr><td class="num" data-label="seat">{seat["seat"]}</td><td class="bot">{escape(seat["bot"])}</td>'
            f'<td class="num" data-label="rank">{seat["rank"]}{forfeit}</td>'
            f'<td class="num" data-label="score"{_game_score(seat)}>{seat["score"]}</td>'
            f'<td class="num" data-label="decisions">{seat["decisions"]}</td>'
            f'<td class="num" data-label="mean ms">{mean}</td><td class="num" data-label="max ms">{most}</td>'
            f'<td class="num" data-label="fallbacks">{seat["fallbacks"]}</td>{faults}</tr>'
        )
    return (
        '<table class="seats"><thead><tr><th>seat</th><th>bot</th><th>rank</th><th>score</th><th>decisions</th>'
        "<th>mean ms</th><th>max ms</th><th>fallbacks</th><th>faults</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )

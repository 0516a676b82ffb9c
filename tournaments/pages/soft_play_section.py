"""The league report page's soft-play section (tournaments/ratings/soft_play.py): the flagged pairs, and the
most significant of the others, with what the test is. Its own module, so that the report page gains one
call for it."""

from __future__ import annotations

from html import escape

from ..ratings.soft_play import PairCheck, SoftPlayCheck

SHOWN = 10
"""Pairs listed when none is flagged (the most significant first)."""


def soft_play_section(check: SoftPlayCheck | None) -> str:
    if check is None:
        return ""
    flagged = check.flagged
    shown = flagged or check.pairs[:SHOWN]
    verdict = (
        f"{len(flagged)} pair(s) flagged: look at their games and replays."
        if flagged
        else f"No pair flagged among {len(check.pairs)} tested."
    )
    rows = "".join(_row(pair) for pair in shown)
    table = (
        '<table class="soft-play"><thead><tr><th>bot</th><th>partner at its table</th><th>games</th>'
        "<th>places gained</th><th>z</th><th>p</th><th>p (Holm)</th><th></th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
        if shown
        else ""
    )
    return (
        f'<section id="soft-play"><h2>Soft play</h2><p>{escape(verdict)}</p>{table}'
        '<p class="muted">For each pair: how much better (or worse) the bot ranked with its partner at its table '
        "than the Elo ratings predict, as a score test of the Bradley-Terry fit with a two-sided p-value, "
        f"adjusted for every pair tested (Holm); flagged below {check.alpha:g}. A matchup effect looks the same "
        "as collusion: a flag is a reason to look, not a verdict.</p></section>"
    )


def _row(pair: PairCheck) -> str:
    mark = "flagged" if pair.flagged else ""
    return (
        f'<tr class="{mark}"><td class="bot">{escape(pair.bot)}</td><td class="bot">{escape(pair.partner)}</td>'
        f'<td class="num">{pair.games}</td><td class="num">{pair.excess:+.1f}</td>'
        f'<td class="num">{pair.z:+.2f}</td><td class="num">{pair.p_value:.2g}</td>'
        f'<td class="num">{pair.p_adjusted:.2g}</td><td>{escape(mark)}</td></tr>'
    )

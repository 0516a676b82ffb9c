"""The league report page's soft-play section (tournaments/ratings/soft_play.py): the flagged pairs, and the
most significant of the others, each with its effect and interval, and the power figure. Its own module, so
that the report page gains one call for it."""

from __future__ import annotations

import math
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
    rows = "".join(_row(pair, check) for pair in shown)
    table = (
        '<table class="soft-play"><thead><tr><th>bot</th><th>partner at its table</th><th>games</th>'
        "<th>effect (Elo)</th><th>interval</th><th>places gained</th><th>p</th><th>p (Holm)</th>"
        f"<th>games for {check.effect:g} Elo</th><th></th></tr></thead><tbody>{rows}</tbody></table>"
        if shown
        else ""
    )
    return (
        f'<section id="soft-play"><h2>Soft play</h2><p>{escape(verdict)} {escape(_capitalised(check.power_line()))}.'
        f"</p>{table}"
        '<p class="muted">For each pair: the effect is how many Elo the bot plays above its rating when its partner '
        "sits at its table (negative: below it), estimated from the Bradley-Terry fit; the interval is corrected for "
        "every pair tested (Holm), and a pair is flagged when it is clear of zero (family-wise level "
        f"{check.alpha:g}). "
        "The last column: the games the pair would need to share for an effect of that size to show. Games with a "
        "forfeiting seat are left out. A matchup effect looks the same as collusion: a flag is a reason to look, not "
        "a verdict.</p></section>"
    )


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def _games(value: float) -> str:
    return f"{value:,.0f}" if math.isfinite(value) else "-"


def _elo(value: float) -> str:
    return f"{value:+.0f}" if math.isfinite(value) else "-"


def _row(pair: PairCheck, check: SoftPlayCheck) -> str:
    mark = "flagged" if pair.flagged else "suspected" if pair.suspected(check.effect) else ""
    low, high = pair.interval
    return (
        f'<tr class="{mark}"><td class="bot">{escape(pair.bot)}</td><td class="bot">{escape(pair.partner)}</td>'
        f'<td class="num">{pair.games}</td><td class="num">{_elo(pair.effect)}</td>'
        f'<td class="num">{_elo(low)} to {_elo(high)}</td><td class="num">{pair.excess:+.1f}</td>'
        f'<td class="num">{pair.p_value:.2g}</td><td class="num">{pair.p_adjusted:.2g}</td>'
        f'<td class="num">{_games(pair.games_for(check.effect))}</td><td>{escape(mark)}</td></tr>'
    )

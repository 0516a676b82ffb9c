"""`referee tournament report --format html` (and `tournament rate --html`): a league as one self-contained page.

The Elo table with each bot's 95% interval drawn as a bar on one shared scale (SVG), the crosstable as a
heatmap of scores, and, from a store: games, faults and decision times per bot, every fault, and every game
with a link to its replay page where one exists. Links are relative to the folder the page is written to.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from urllib.parse import quote

from ..league.store import StoredFault
from ..league_report import BotActivity, GameEntry, LeagueReport
from ..ratings.elo import BotRating, Ratings
from ..ratings.settling import settlement
from ..ratings.tables import settlement_line, table_notes
from .fault_text import FaultGroup, fault_groups
from .html import document
from .soft_play_section import soft_play_section

STYLES = ("page.css", "report.css")
SCRIPT = "report.js"
BAR_WIDTH = 260
BAR_HEIGHT = 18
FAULTS_SHOWN = 200
"""At most this many groups of faults are listed (the counts per bot cover them all)."""
FAULT_PLACES_SHOWN = 12
"""At most this many places of one group of faults are linked."""


def render_report_page(report: LeagueReport, link_base: Path) -> str:
    """The page; `link_base` is the folder it will be written to (replay links are relative to it)."""
    ratings = report.ratings
    sections = [_header(report), _elo_section(report), _crosstable_section(ratings)]
    if report.from_store:
        pages = {(game.match_id, game.index): game.page for game in report.games if game.page is not None}
        sections += [
            _activity_section(report.activity),
            _faults_section(report.faults, pages, link_base),
            _games_section(report, link_base),
            soft_play_section(report.soft_play),
        ]
    title = f"{report.name}: league report"
    return document(title, STYLES, "\n".join(section for section in sections if section), (SCRIPT,), ())


def _header(report: LeagueReport) -> str:
    ratings = report.ratings
    facts = []
    if report.game:
        facts.append(report.game)
    if report.from_store:
        facts.append(f"{len(report.games)} games")
    facts.append(f"{len(ratings.bots)} bots rated")
    if ratings.seats:
        facts.append(f"tables of {', '.join(map(str, ratings.seats))} seats")
    return (
        f"<header><h1>{escape(report.name)} <small>league report</small></h1>"
        f'<p class="facts">{escape(" · ".join(facts))}</p></header>'
    )


def _elo_section(report: LeagueReport) -> str:
    ratings = report.ratings
    if not ratings.bots:
        return '<section id="elo"><h2>Elo</h2><p class="muted">No games to rate.</p></section>'
    scale = EloScale.of(ratings.bots)
    faults = {entry.bot: entry.fault_count for entry in report.activity} if report.from_store else None
    headers = ["#", "bot", "Elo", "\u00b1", f"95% interval<br>{scale.axis()}", "games", "score"]
    headers.append("W/D/L" if ratings.two_seat else "mean rank")
    if faults is not None:
        headers.append("faults")
    headers.append("LOS")
    verdict = settlement(ratings, report.rule)
    if verdict is not None:
        headers.append("group")
    if ratings.pools > 1:
        headers.insert(0, "pool")
    rows = []
    rank, pool = 0, None
    for bot in ratings.bots:
        rank = rank + 1 if bot.pool == pool else 1
        pool = bot.pool
        cells = [
            _num(rank),
            f'<td class="bot">{escape(bot.bot)}</td>',
            _num(f"{bot.elo:.1f}"),
            _num("" if bot.error is None else f"{bot.error:.1f}"),
            f'<td class="bar">{scale.bar(bot)}</td>',
            _num(bot.games),
            _num(f"{100 * bot.score:.1f}%"),
            _num(f"{bot.wins}/{bot.draws}/{bot.losses}" if ratings.two_seat else f"{bot.mean_rank:.2f}"),
        ]
        if faults is not None:
            count = faults.get(bot.bot, 0)
            cells.append(f'<td class="num{" bad" if count else ""}">{count}</td>')
        cells.append(_num("" if bot.los_next is None else f"{100 * bot.los_next:.0f}%"))
        if verdict is not None:
            cells.append(_num(verdict.groups[bot.bot]))
        if ratings.pools > 1:
            cells.insert(0, _num(bot.pool))
        rows.append(f'<tr data-bot="{escape(bot.bot)}">{"".join(cells)}</tr>')
    head = "".join(f"<th>{header}</th>" for header in headers)
    lines = table_notes(ratings) if verdict is None else [settlement_line(verdict), *table_notes(ratings)]
    lines += report.notes
    notes = "".join(f"<li>{escape(note)}</li>" for note in lines)
    return (
        f'<section id="elo"><h2>Elo</h2><table class="elo"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
        '<p class="muted">Bradley-Terry Elo with BayesElo\'s prior of virtual draws, mean 0; the bar is the 95% '
        "interval, the dot the rating. LOS: likelihood that the bot is "
        f'stronger than the next one.</p><ul class="notes">{notes}</ul></section>'
    )


class EloScale:
    """One horizontal scale for every bot's bar, from the lowest interval end to the highest."""

    def __init__(self, low: float, high: float) -> None:
        self.low, self.high = low, high

    @classmethod
    def of(cls, bots: Sequence[BotRating]) -> EloScale:
        values = [bot.elo for bot in bots] + [end for bot in bots if bot.ci95 for end in bot.ci95]
        low, high = min(values), max(values)
        if high - low < 1:
            low, high = low - 50, high + 50
        margin = (high - low) * 0.06
        return cls(low - margin, high + margin)

    def x(self, elo: float) -> float:
        return round((elo - self.low) / (self.high - self.low) * BAR_WIDTH, 1)

    def bar(self, bot: BotRating) -> str:
        parts = []
        if self.low < 0 < self.high:
            parts.append(f'<line class="zero" x1="{self.x(0)}" x2="{self.x(0)}" y1="0" y2="{BAR_HEIGHT}"/>')
        if bot.ci95 is not None:
            left, right = self.x(bot.ci95[0]), self.x(bot.ci95[1])
            parts.append(
                f'<rect class="interval" x="{left}" y="5" width="{max(round(right - left, 1), 1)}" height="8" rx="3"/>'
            )
        middle = self.x(bot.elo)
        parts.append(f'<circle class="rating" cx="{middle}" cy="9" r="4"/>')
        interval = "" if bot.ci95 is None else f" (95%: {bot.ci95[0]:.0f} to {bot.ci95[1]:.0f})"
        return (
            f'<svg class="interval-bar" width="{BAR_WIDTH}" height="{BAR_HEIGHT}" '
            f'viewBox="0 0 {BAR_WIDTH} {BAR_HEIGHT}" '
            f'role="img" data-bot="{escape(bot.bot)}"><title>{escape(bot.bot)}: {bot.elo:.0f}{interval}</title>'
            f"{''.join(parts)}</svg>"
        )

    def axis(self) -> str:
        step = _nice_step((self.high - self.low) / 6)
        first = math.ceil(self.low / step) * step
        ticks = []
        value = first
        while value <= self.high:
            x = self.x(value)
            ticks.append(f'<line x1="{x}" x2="{x}" y1="12" y2="16"/><text x="{x}" y="10">{value:g}</text>')
            value += step
        return (
            f'<svg class="axis" width="{BAR_WIDTH}" height="16" viewBox="0 0 {BAR_WIDTH} 16" aria-hidden="true">'
            f"{''.join(ticks)}</svg>"
        )


def _nice_step(rough: float) -> float:
    power = 10 ** math.floor(math.log10(rough))
    return next(factor * power for factor in (1, 2, 5, 10) if factor * power >= rough)


def _crosstable_section(ratings: Ratings) -> str:
    if len(ratings.bots) < 2:
        return ""
    names = [bot.bot for bot in ratings.bots]
    head = "".join(f'<th class="opponent" scope="col"><span>{escape(name)}</span></th>' for name in names)
    rows = []
    for name in names:
        cells = []
        for other in names:
            record = ratings.record(name, other)
            if other == name:
                cells.append('<td class="self"></td>')
            elif not record.games:
                cells.append('<td class="never" title="never met"></td>')
            else:
                tip = f"{name} against {other}: {record.wins} won, {record.draws} drawn, {record.losses} lost"
                cells.append(
                    f'<td class="heat" style="background:{_heat(record.score)}" title="{escape(tip)}">'
                    f'<a href="#games">{100 * record.score:.0f}%'
                    f"<small>{record.points:g}/{record.games}</small></a></td>"
                )
        rows.append(f'<tr><th class="bot" scope="row">{escape(name)}</th>{"".join(cells)}</tr>')
    return (
        '<section id="crosstable"><h2>Crosstable</h2>'
        '<p class="muted">The row bot\'s share of the points against the column bot (pairwise results of every '
        "game they shared); green: it scored more, red: less. A cell lists the pair's games below.</p>"
        '<div class="crosstable-box"><table class="crosstable"><thead><tr><th class="corner">bot</th>'
        f"{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
        "</section>"
    )


def _heat(score: float) -> str:
    """White at an even score, greener above, redder below."""
    strength = min(abs(score - 0.5) * 2, 1.0)
    hue = 135 if score >= 0.5 else 5
    return f"hsl({hue} {25 + 35 * strength:.0f}% {97 - 24 * strength:.0f}%)"


def _activity_section(activity: Sequence[BotActivity]) -> str:
    slowest = max((entry.timing.mean_ms for entry in activity), default=0.0) or 1.0
    rows = []
    for entry in activity:
        kinds = ", ".join(f"{count} {kind.replace('_', ' ')}" for kind, count in sorted(entry.faults.items()))
        width = round(entry.timing.mean_ms / slowest * 120, 1)
        bar = (
            '<svg class="time-bar" width="120" height="10" aria-hidden="true">'
            f'<rect width="{width}" height="10" rx="2"/></svg>'
        )
        rows.append(
            f'<tr><td class="bot">{escape(entry.bot)}</td>{_num(entry.games)}'
            f'<td class="num{" bad" if entry.fault_count else ""}">{entry.fault_count}</td><td>{escape(kinds)}</td>'
            f"{_num(entry.timing.decisions)}{_num(_ms(entry.timing.mean_ms, entry))}<td>{bar}</td>"
            f"{_num(_ms(entry.timing.max_ms, entry))}</tr>"
        )
    warnings = "".join(
        f"<li>{escape(entry.bot)}: {escape(entry.clock_warning)}</li>" for entry in activity if entry.clock_warning
    )
    notes = f'<ul class="notes clock-warnings">{warnings}</ul>' if warnings else ""
    return (
        '<section id="activity"><h2>Games, faults and decision times per bot</h2><table class="activity"><thead><tr>'
        "<th>bot</th><th>games</th><th>faults</th><th>kinds</th><th>decisions</th><th>mean ms</th><th></th>"
        f"<th>max ms</th></tr></thead><tbody>{''.join(rows)}</tbody></table>{notes}</section>"
    )


def _ms(value: float, entry: BotActivity) -> str:
    return f"{value:.2f}" if entry.timing.decisions else "-"


def _faults_section(faults: Sequence[StoredFault], pages: Mapping[tuple[str, int], Path], link_base: Path) -> str:
    if not faults:
        return (
            '<section id="faults"><h2>Faults</h2>'
            '<p class="muted">None: every bot answered every request in time.</p></section>'
        )
    groups = fault_groups(faults)
    rows = "".join(_fault_group_row(group, pages, link_base) for group in groups[:FAULTS_SHOWN])
    more = f'<p class="muted">and {len(groups) - FAULTS_SHOWN} more kinds.</p>' if len(groups) > FAULTS_SHOWN else ""
    return (
        f'<section id="faults"><h2>Faults ({len(faults)}, {len(groups)} different)</h2>'
        '<p class="muted">Faults that say the same (game and request numbers aside) are one row with their count; '
        "each place opens the replay at the fault's step, in the faulty seat's view. Paths are shown as file "
        'names.</p><table class="faults">'
        "<thead><tr><th>bot</th><th>kind</th><th>count</th><th>detail</th><th>where</th>"
        f"</tr></thead><tbody>{rows}</tbody></table>{more}</section>"
    )


def _fault_group_row(group: FaultGroup, pages: Mapping[tuple[str, int], Path], link_base: Path) -> str:
    places = [_fault_place(fault, pages.get((fault.match_id, fault.index)), link_base) for fault in group.faults]
    shown = ", ".join(places[:FAULT_PLACES_SHOWN])
    if len(places) > FAULT_PLACES_SHOWN:
        shown += f" and {len(places) - FAULT_PLACES_SHOWN} more"
    return (
        f'<tr data-bot="{escape(group.bot)}"><td class="bot">{escape(group.bot)}</td>'
        f"<td>{escape(group.kind.replace('_', ' '))}</td>{_num(group.count)}"
        f'<td class="detail">{_detail(group.detail)}{_sent(group)}</td><td class="where">{shown}</td></tr>'
    )


def _sent(group: FaultGroup) -> str:
    """The illegal action the group's first fault sent, as data."""
    sent = group.faults[0].sent
    return "" if sent is None else f'<div class="sent">it sent <code>{escape(sent)}</code></div>'


def _detail(detail: str) -> str:
    """One line as it is; more lines collapsed under the first, their line breaks kept."""
    first, _, rest = detail.partition("\n")
    if not rest:
        return escape(first)
    count = rest.count("\n") + 1
    return (
        f'<details><summary>{escape(first)} <span class="muted">({count} more line{"s" * (count != 1)})</span>'
        f"</summary><pre>{escape(rest)}</pre></details>"
    )


def _fault_place(fault: StoredFault, page: Path | None, link_base: Path) -> str:
    """Where a fault happened; a link opening its replay at the fault's step and seat when there is a page."""
    label = escape(f"{fault.match_id} game {fault.index} seat {fault.seat}")
    if page is None:
        return label
    step = 0 if fault.before_action is None else fault.before_action + 1
    return f'<a href="{escape(_href(page, link_base))}#step={step}&amp;view={fault.seat}">{label}</a>'


def _games_section(report: LeagueReport, link_base: Path) -> str:
    bots = "".join(f'<option value="{escape(entry.bot)}">{escape(entry.bot)}</option>' for entry in report.activity)
    rows = "".join(_game_row(game, link_base) for game in report.games)
    pages = sum(game.page is not None for game in report.games)
    headers = "".join(
        f'<th class="{kind}" data-kind="{kind}"><button type="button" class="sort">{label}</button></th>'
        for label, kind in GAME_COLUMNS
    )
    return (
        f'<section id="games"><h2>Games ({len(report.games)}, {pages} with a replay page)</h2>'
        '<p class="filters"><label>games of <select id="bot-filter"><option value="">every bot</option>'
        f'{bots}</select></label> <label>with <select id="pair-filter"><option value="">any bot</option>{bots}'
        '</select></label> <span id="games-shown" class="muted"></span></p>'
        f'<table class="games"><thead><tr>{headers}</tr></thead><tbody>{rows}</tbody></table>'
        '<p class="muted">Click a column\'s name to sort by it (again: the other way). Games are numbered from 0 '
        "within their match, as in their replays; length is the decisions the bots made. Replay pages are "
        "written by <code>--replay-format html</code> (or <code>referee replay html</code>).</p></section>"
    )


GAME_COLUMNS = (
    ("match", "text"),
    ("game", "number"),
    ("seats: rank, score", "text"),
    ("length", "number"),
    ("faults", "number"),
    ("replay", "text"),
)
"""The games table's columns and how each sorts."""


def _game_row(game: GameEntry, link_base: Path) -> str:
    scores = game.scores or (None,) * len(game.seats)
    seats = ", ".join(
        f"{escape(bot)} ({rank}{'' if score is None else f', {score}'})"
        for bot, rank, score in zip(game.seats, game.ranks, scores, strict=True)
    )
    link = _link(game.page, link_base)
    bots = escape(json.dumps(list(game.seats)))
    length = "" if game.decisions is None else str(game.decisions)
    return (
        f'<tr data-bots="{bots}"><td>{escape(game.match_id)}</td>{_num(game.index)}<td>{seats}</td>'
        f'{_num(length)}<td class="num{" bad" if game.faults else ""}">{game.faults}</td><td>{link}</td></tr>'
    )


def _link(page: Path | None, base: Path) -> str:
    return "-" if page is None else f'<a href="{escape(_href(page, base))}">open</a>'


def _href(page: Path, base: Path) -> str:
    try:
        relative = os.path.relpath(page.resolve(), base.resolve())
    except ValueError:
        return page.resolve().as_uri()
    return quote(Path(relative).as_posix())


def _num(value: object) -> str:
    return f'<td class="num">{escape(str(value))}</td>'

"""A check-bot report in its three forms: text for a person, the project's JSON (docs/check-bot.md), and
Gradescope's results.json (tournaments/classroom/gradescope.py).

Gradescope tests, one point each: the handshake; one per player count ("no fault in its games"); the decision
times within the limit. The JSON holds everything the text shows.
"""

from __future__ import annotations

import shlex
from typing import Any, TypedDict

from protocol.safe_text import escape_control
from referee.records import Handshake

from . import gradescope
from .checkbot import CheckReport, DecisionTimes, TableCheck

FORMAT = "card-referee-check"
VERSION = 1


class HelloJson(TypedDict):
    name: str
    version: str | None
    protocol: int


class FaultJson(TypedDict):
    game: int
    kind: str
    detail: str


class TableJson(TypedDict):
    players: int
    games: int
    decisions: int
    fallback_decisions: int
    faults: list[FaultJson]
    opponent_faults: int
    log: str | None
    replays: str
    output_tail: list[str]


class TimesJson(TypedDict):
    decisions: int
    median_ms: float
    p95_ms: float
    max_ms: float
    limit_ms: int


class ReasonJson(TypedDict):
    kind: str
    handshake: bool
    players: int
    detail: str
    games: int


class IsolationJson(TypedDict):
    level: str
    missing: list[str]


class CheckJson(TypedDict):
    format: str
    version: int
    game: str
    bot: dict[str, Any]
    isolation: IsolationJson
    seed: int
    limits: dict[str, Any]
    conforms: bool
    reasons: list[ReasonJson]
    legality: dict[str, int]
    decision_times: TimesJson
    tables: list[TableJson]
    run_dir: str


def _hello(handshake: Handshake | None) -> HelloJson | None:
    if handshake is None:
        return None
    return {"name": handshake.name, "version": handshake.version, "protocol": handshake.protocol}


def _table_json(table: TableCheck) -> TableJson:
    return {
        "players": table.players,
        "games": table.games,
        "decisions": table.decisions,
        "fallback_decisions": table.fallback_decisions,
        "faults": [{"game": f.game_index, "kind": f.kind.value, "detail": f.detail} for f in table.faults],
        "opponent_faults": table.opponent_faults,
        "log": table.log_path,
        "replays": table.replay_dir,
        "output_tail": list(table.output_tail),
    }


def _times_json(times: DecisionTimes) -> TimesJson:
    return {
        "decisions": times.decisions,
        "median_ms": round(times.median_ms, 3),
        "p95_ms": round(times.p95_ms, 3),
        "max_ms": round(times.max_ms, 3),
        "limit_ms": times.limit_ms,
    }


def report_json(report: CheckReport) -> CheckJson:
    limits = report.limits
    return {
        "format": FORMAT,
        "version": VERSION,
        "game": report.game,
        "bot": {"name": report.name, "command": list(report.command), "hello": _hello(report.handshake)},
        "isolation": {"level": report.isolation.value, "missing": list(report.isolation_missing)},
        "seed": report.seed,
        "limits": {
            "move_time_ms": limits.move_time_ms,
            "time_bank_ms": limits.time_bank_ms,
            "startup_time_s": limits.startup_time_s,
            "fault_policy": limits.fault_policy.value,
        },
        "conforms": report.verdict.conforms,
        "reasons": [
            {"kind": r.kind.value, "handshake": r.handshake, "players": r.players, "detail": r.detail, "games": r.count}
            for r in report.verdict.reasons
        ],
        "legality": {"decisions": report.decisions, "illegal_actions": report.illegal_actions},
        "decision_times": _times_json(report.times),
        "tables": [_table_json(table) for table in report.tables],
        "run_dir": report.run_dir,
    }


def _indented(detail: str, prefix: str = "      ") -> str:
    return detail.replace("\n", "\n" + prefix)


def isolation_line(report: CheckReport) -> str:
    missing = f" (missing: {'; '.join(report.isolation_missing)})" if report.isolation_missing else ""
    return f"isolation: {report.isolation.value}{missing}"


def handshake_line(handshake: Handshake | None) -> str:
    if handshake is None:
        return "handshake: none (the bot never completed one)"
    version = "no version" if handshake.version is None else f"version {handshake.version!r}"
    return f"handshake: name {handshake.name!r}, {version}, protocol {handshake.protocol}"


def table_lines(game: str, table: TableCheck) -> list[str]:
    faults = f"{len(table.faults)} fault(s)" if table.faults else "no faults"
    lines = [f"{game} at {table.players} players: {table.games} game(s), {table.decisions} decisions, {faults}"]
    lines += [f"  game {f.game_index}: {f.kind.value}: {_indented(f.detail)}" for f in table.faults]
    if table.fallback_decisions:
        lines.append(f"  {table.fallback_decisions} of its decisions were played for it by the fallback")
    if table.opponent_faults:
        lines.append(f"  the random bots faulted {table.opponent_faults} time(s): is the machine overloaded?")
    if table.output_tail:
        lines.append(f"  the last lines of its output ({table.log_path}):")
        lines += [f"    | {line}" for line in table.output_tail]
    return _shown(lines)


def _shown(lines: list[str]) -> list[str]:
    """Lines for a person: the controls a bot's output, name or fault detail may hold shown escaped."""
    return [escape_control(line, multiline=True) for line in lines]


def times_line(times: DecisionTimes) -> str:
    if not times.decisions:
        return f"decision times: no decision answered (limit {times.limit_ms} ms)"
    share = 100 * times.max_ms / times.limit_ms
    return (
        f"decision times: median {times.median_ms:.2f} ms, p95 {times.p95_ms:.2f} ms, max {times.max_ms:.2f} ms "
        f"(limit {times.limit_ms} ms; the max is {share:.1f}% of it)"
    )


def verdict_line(report: CheckReport) -> str:
    if report.verdict.conforms:
        return f"verdict: {report.name} conforms"
    return escape_control(
        f"verdict: {report.name} does not conform: "
        + "; ".join(_indented(reason.summary(), "  ") for reason in report.verdict.reasons),
        multiline=True,
    )


def report_text(report: CheckReport) -> list[str]:
    lines = [f"check-bot {report.game}: {report.name} ({shlex.join(report.command)}), seed {report.seed}"]
    lines.append(isolation_line(report))
    lines.append(handshake_line(report.handshake))
    for table in report.tables:
        lines += table_lines(report.game, table)
    illegal = report.illegal_actions
    legality = "all legal" if not illegal else f"{illegal} illegal action(s)"
    lines.append(f"legality: {report.decisions} decisions answered, {legality}")
    lines.append(times_line(report.times))
    lines.append(f"run folder (logs, replays): {report.run_dir}")
    lines.append(verdict_line(report))
    return _shown(lines)


def gradescope_results(report: CheckReport, execution_time_s: float) -> gradescope.GradescopeResults:
    tests = [gradescope.test_result("handshake", report.handshake is not None, handshake_line(report.handshake))]
    for table in report.tables:
        tests.append(
            gradescope.test_result(
                f"{report.game} at {table.players} players: every game without a fault",
                not table.faults,
                "\n".join(table_lines(report.game, table)),
            )
        )
    times = report.times
    in_time = times.decisions > 0 and times.max_ms <= times.limit_ms
    tests.append(gradescope.test_result("decision times within the limit", in_time, times_line(times)))
    return gradescope.results(tests, "\n".join(report_text(report)), execution_time_s, report.isolation.value)

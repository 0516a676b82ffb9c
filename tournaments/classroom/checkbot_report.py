"""A check-bot report in its three forms: text for a person, the project's JSON (docs/how-to/check-a-bot.md), and
Gradescope's results.json (tournaments/classroom/gradescope.py).

Gradescope tests, one point each: the handshake; one per player count ("every game without a fault"); the
decision times within the limit (every decision it was asked answered in time: a timeout, or a decision the
fallback played for it after a fault, fails it); then one per strength test, worth its weight. A submission that
cannot run gets the same tests, all failed, the reason its output (`unrunnable_results`). The student sees no
machine path: the caller passes a checkbot_submission.Redactor. The JSON holds everything the text shows.
"""

from __future__ import annotations

import re
import shlex
from typing import Any, TypedDict

from protocol.safe_text import escape_control
from referee.botspec import STDIO_BRIDGE_MODULE
from referee.isolation.sandbox import Isolation
from referee.records import Handshake

from . import gradescope
from .checkbot import CheckReport, DecisionTimes, TableCheck
from .checkbot_strength import StrengthResult, StrengthTest
from .checkbot_submission import Redactor
from .fault_groups import FaultGroup, group_faults

STDIO_HINT = (
    "it printed a hello on its standard output, as a bot of the stdio transport does: a submission folder whose "
    'bot speaks JSON lines on stdin/stdout says transport = "stdio" in its bot.toml (a program is given as stdio:BOT)'
)
_PRINTED_HELLO = re.compile(r'"type"\s*:\s*"hello"')

FORMAT = "card-referee-check"
VERSION = 2
"""2: tables[].faults are groups of identical faults, each with its count and games (1 listed every fault)."""


class HelloJson(TypedDict):
    name: str
    version: str | None
    protocol: int


class FaultJson(TypedDict):
    kind: str
    detail: str
    count: int
    games: list[int]


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
    over_half_limit: int


class ReasonJson(TypedDict):
    kind: str
    handshake: bool
    players: int
    detail: str
    games: int


class IsolationJson(TypedDict):
    level: str
    missing: list[str]


class StrengthJson(TypedDict):
    baseline: str
    share_needed: float
    weight: float
    games: int
    points: float
    share: float
    faults: int
    passed: bool
    not_played: str | None


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
    strength: list[StrengthJson]
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
        "faults": [
            {"kind": group.kind.value, "detail": group.detail, "count": group.count, "games": sorted(group.where)}
            for group in _groups(table)
        ],
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
        "over_half_limit": times.over_half,
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
        "strength": [_strength_json(result) for result in report.strength],
        "run_dir": report.run_dir,
    }


def _strength_json(result: StrengthResult) -> StrengthJson:
    return {
        "baseline": result.baseline_name,
        "share_needed": result.test.share,
        "weight": result.test.weight,
        "games": result.games,
        "points": result.points,
        "share": round(result.share, 4),
        "faults": result.faults,
        "passed": result.passed,
        "not_played": result.not_played,
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


def _groups(table: TableCheck) -> tuple[FaultGroup[int], ...]:
    return group_faults((fault.fault, fault.game_index) for fault in table.faults)


def _where(group: FaultGroup[int]) -> str:
    games = sorted(set(group.where))
    if group.count == 1:
        return f"game {games[0]}"
    listed = ", ".join(str(game) for game in games)
    return f"{group.count} times the same, in game{'s' if len(games) > 1 else ''} {listed}; the first"


def _quotes_its_output(table: TableCheck) -> bool:
    """Whether the faults' details already quote the bot's last lines of output (a crash's do)."""
    quoted = "\n".join(fault.detail for fault in table.faults)
    return all(f"| {line}" in quoted for line in table.output_tail)


def table_lines(game: str, table: TableCheck) -> list[str]:
    faults = f"{len(table.faults)} fault(s)" if table.faults else "no faults"
    lines = [f"{game} at {table.players} players: {table.games} game(s), {table.decisions} decisions, {faults}"]
    lines += [f"  {_where(group)}: {group.kind.value}: {_indented(group.detail)}" for group in _groups(table)]
    if table.fallback_decisions:
        lines.append(f"  {table.fallback_decisions} of its decisions were played for it by the fallback")
    if table.opponent_faults:
        lines.append(f"  the random bots faulted {table.opponent_faults} time(s): is the machine overloaded?")
    if table.output_tail and not _quotes_its_output(table):
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
        f"verdict: {report.name} does not conform: " + "; ".join(reason.summary() for reason in report.verdict.reasons),
        multiline=True,
    )


def stdio_hint(report: CheckReport) -> str | None:
    """STDIO_HINT for a bot run over ZeroMQ that never completed a handshake but printed a JSON hello."""
    if report.handshake is not None or STDIO_BRIDGE_MODULE in report.command:
        return None
    said = [reason.detail for reason in report.verdict.reasons if reason.handshake]
    said += [line for table in report.tables for line in table.output_tail]
    return STDIO_HINT if any(_PRINTED_HELLO.search(text) for text in said) else None


def report_text(report: CheckReport) -> list[str]:
    lines = [f"check-bot {report.game}: {report.name} ({shlex.join(report.command)}), seed {report.seed}"]
    lines.append(isolation_line(report))
    lines.append(handshake_line(report.handshake))
    if (hint := stdio_hint(report)) is not None:
        lines.append(f"  note: {hint}")
    for table in report.tables:
        lines += table_lines(report.game, table)
    illegal = report.illegal_actions
    legality = "all legal" if not illegal else f"{illegal} illegal action(s)"
    lines.append(f"legality: {report.decisions} decisions answered, {legality}")
    lines.append(times_line(report.times))
    if report.times.warning is not None:
        lines.append(report.times.warning)
    lines += [f"strength: {result.line()}" for result in report.strength]
    lines.append(f"run folder (logs, replays): {report.run_dir}")
    lines.append(verdict_line(report))
    return _shown(lines)


def clock_test(report: CheckReport) -> tuple[bool, str]:
    """Whether every decision the bot was asked was answered within the limit, and the output saying so: the
    times of its answers, and what it did not answer (timeouts, decisions the fallback played after a fault)."""
    times = report.times
    lines = [times_line(times)]
    if times.warning is not None:
        lines.append(times.warning)
    if report.timeouts:
        lines.append(f"{report.timeouts} decision(s) timed out: no answer within the limit")
    if report.fallback_decisions:
        lines.append(
            f"{report.fallback_decisions} decision(s) were played for it by the fallback (after a fault, or while it "
            "was down): only a bot that plays every game to its end passes this test"
        )
    passed = (
        times.decisions > 0 and times.max_ms <= times.limit_ms and not report.timeouts and not report.fallback_decisions
    )
    return passed, "\n".join(lines)


def _handshake_output(report: CheckReport) -> str:
    """The handshake line, and for a bot that never completed one, what stopped it."""
    first = report.verdict.reasons[0] if report.verdict.reasons else None
    if report.handshake is None and first is not None and first.handshake:
        hint = stdio_hint(report)
        said = f"{handshake_line(report.handshake)}: {first.kind.value}: {first.detail}"
        return said if hint is None else f"{said}\n{hint}"
    return handshake_line(report.handshake)


def _strength_name(game: str, test: StrengthTest, baseline_name: str) -> str:
    return f"{game} against {baseline_name}: a score share of at least {test.share:.0%}"


def _strength_test(game: str, result: StrengthResult) -> gradescope.GradescopeTest:
    test = result.test
    name = _strength_name(game, test, result.baseline_name)
    visibility = None if test.visibility is None else test.visibility.value
    return gradescope.test_result(name, result.passed, result.line(), test.weight, visibility)


def _leaderboard(results: tuple[StrengthResult, ...]) -> list[gradescope.LeaderboardEntry]:
    return [
        {"name": f"score share against {result.baseline_name}", "value": round(result.share, 4), "order": "desc"}
        for result in results
    ]


def gradescope_results(
    report: CheckReport, execution_time_s: float, redactor: Redactor | None = None
) -> gradescope.GradescopeResults:
    handshake = escape_control(_handshake_output(report), multiline=True)
    tests = [gradescope.test_result("handshake", report.handshake is not None, handshake)]
    for table in report.tables:
        tests.append(
            gradescope.test_result(
                table_test_name(report.game, table.players),
                not table.faults,
                "\n".join(table_lines(report.game, table)),
            )
        )
    in_time, output = clock_test(report)
    tests.append(gradescope.test_result(CLOCK_TEST, in_time, output))
    tests += [_strength_test(report.game, result) for result in report.strength]
    results = gradescope.results(
        tests, "\n".join(report_text(report)), execution_time_s, report.isolation.value, _leaderboard(report.strength)
    )
    return results if redactor is None else redactor.value(results)


CLOCK_TEST = "decision times within the limit"


def table_test_name(game: str, players: int) -> str:
    return f"{game} at {players} players: every game without a fault"


def unrunnable_results(
    game: str,
    players: tuple[int, ...],
    strength: tuple[tuple[StrengthTest, str], ...],
    problem: str,
    execution_time_s: float,
    redactor: Redactor | None = None,
    isolation: Isolation = Isolation.NONE,
) -> gradescope.GradescopeResults:
    """The results of a submission that cannot run (or that check-bot refused to run below full isolation): the
    tests a running one gets (so that every submission has the same list), each failed, `problem` (why it cannot
    run, its controls escaped: it may quote a build's output) as the handshake's output and the whole file's.
    `strength`: each strength test with its baseline's name; `isolation`: what the machine would have given."""
    problem = escape_control(problem, multiline=True)
    not_played = "not played: the bot could not be run"
    tests = [gradescope.test_result("handshake", False, problem)]
    tests += [gradescope.test_result(table_test_name(game, count), False, not_played) for count in players]
    tests.append(gradescope.test_result(CLOCK_TEST, False, not_played))
    for test, name in strength:
        visibility = None if test.visibility is None else test.visibility.value
        tests.append(
            gradescope.test_result(_strength_name(game, test, name), False, not_played, test.weight, visibility)
        )
    leaderboard: list[gradescope.LeaderboardEntry] = [
        {"name": f"score share against {name}", "value": 0.0, "order": "desc"} for _, name in strength
    ]
    results = gradescope.results(tests, problem, execution_time_s, isolation.value, leaderboard)
    return results if redactor is None else redactor.value(results)

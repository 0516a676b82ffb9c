"""Feedback a student can act on: each fixture bot is broken in exactly one way, and check-bot's report says
so in words (identical faults told once with a count, a traceback without the SDK's frames, how late a timeout
was, a signal by its name, the memory limit named, a warning for a bot close to its clock)."""

from __future__ import annotations

import io
import json
import traceback
from pathlib import Path

import msgpack
import pytest
from click.testing import CliRunner

from protocol.sdk import print_bot_traceback, run_session
from referee.botspec import resolve_bot
from referee.isolation.process import describe_exit_status
from referee.records import Fault, FaultCause, FaultFacts, FaultKind, FaultPolicy, Limits, Stage, crash_cause
from tournaments.classroom.checkbot import CheckPlan, CheckReport, check_bot
from tournaments.classroom.checkbot_report import gradescope_results, report_json, report_text
from tournaments.classroom.fault_groups import group_faults
from tournaments.cli import main
from tournaments.league.store import LeagueStore, StoredFault
from tournaments.league_report import clock_warning, league_report
from tournaments.pages.report_page import render_report_page

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "tests" / "fixtures" / "bots"

pytestmark = pytest.mark.timeout(240)


def _check(bot: str, tmp_path: Path, limits: Limits, games: int = 1) -> CheckReport:
    spec = resolve_bot(str(BOTS / f"{bot}.py"), "scout", named_by_hello=True)
    return check_bot(CheckPlan("scout", spec, tmp_path, players=(2,), games=games, limits=limits))


QUICK = Limits(move_time_ms=1000, startup_time_s=10.0)

# fixture bot -> (limits, games, the fault kind, words its report must say, words it must not)
BROKEN = {
    "crash_mid_game": (QUICK, 3, FaultKind.CRASH, "3 times the same, in games 0, 1, 2; the first: crash", None),
    "sdk_raises": (QUICK, 1, FaultKind.CRASH, "in choose\n", "sdk.py"),
    "segfaults": (QUICK, 1, FaultKind.CRASH, "was killed by SIGSEGV (signal 11)", "status 139"),
    "memory_hog": (
        Limits(move_time_ms=1000, startup_time_s=10.0, memory_mb=512),
        1,
        FaultKind.CRASH,
        "hit the memory limit of 512 MiB",
        None,
    ),
    "late_once": (
        Limits(move_time_ms=300, startup_time_s=10.0, fault_policy=FaultPolicy.SUBSTITUTE),
        1,
        FaultKind.TIMEOUT,
        " ms of a 300 ms limit",
        "no answer to request",
    ),
}


@pytest.mark.parametrize("bot", list(BROKEN), ids=list(BROKEN))
def test_the_report_says_what_went_wrong_in_words(bot: str, tmp_path: Path) -> None:
    limits, games, kind, says, never = BROKEN[bot]
    report = _check(bot, tmp_path, limits, games)
    text = "\n".join(report_text(report))
    assert report.verdict.reasons[0].kind is kind
    assert says in text, text
    if never is not None:
        assert never not in text, text


def test_identical_faults_are_told_once_with_their_count(tmp_path: Path) -> None:
    report = _check("crash_mid_game", tmp_path, QUICK, games=3)
    text = "\n".join(report_text(report))
    assert text.count("RuntimeError: crashing mid-game, on purpose") == 1, text
    (table,) = report_json(report)["tables"]
    (group,) = table["faults"]
    assert (group["kind"], group["count"], group["games"]) == ("crash", 3, [0, 1, 2])


def test_a_bot_close_to_its_clock_is_warned(tmp_path: Path) -> None:
    report = _check("near_its_clock", tmp_path, Limits(move_time_ms=1000, startup_time_s=10.0))
    assert report.verdict.conforms
    assert report.times.over_half == 2
    warning = "warning: 2 of its"
    assert any(line.startswith(warning) for line in report_text(report))
    clock = gradescope_results(report, 1.0)["tests"][2]
    assert clock["status"] == "passed" and warning in clock["output"]
    assert report_json(report)["decision_times"]["over_half_limit"] == 2


def test_a_fast_bot_gets_no_warning(tmp_path: Path) -> None:
    spec = resolve_bot("random", "scout", named_by_hello=True)
    report = check_bot(CheckPlan("scout", spec, tmp_path, players=(2,), games=1, limits=Limits(5000)))
    assert report.times.over_half == 0 and report.times.warning is None


@pytest.mark.parametrize(
    "code, wrapped, said",
    [
        (-11, False, "was killed by SIGSEGV (signal 11)"),
        (-9, True, "was killed by SIGKILL (signal 9)"),
        (139, True, "was killed by SIGSEGV (signal 11)"),
        (134, False, "exited with status 134 (the status a shell gives a program killed by SIGABRT, signal 6)"),
        (1, True, "exited with status 1"),
        (255, True, "exited with status 255"),
    ],
)
def test_an_exit_status_is_told_by_its_signal(code: int, wrapped: bool, said: str) -> None:
    assert describe_exit_status(code, wrapped) == said


class _OneRequest:
    """A transport that hands the SDK's loop one request."""

    def __init__(self) -> None:
        self.frames = [msgpack.packb({"type": "request", "id": 1, "observation": {}, "legal_actions": [{}]})]

    def recv(self) -> bytes:
        return self.frames.pop()

    def send(self, frame: bytes) -> None:
        pass


def test_the_sdks_frames_are_left_out_of_a_bots_traceback() -> None:
    def choose(observation: dict, legal_actions: list) -> dict:
        raise ValueError("wrong")

    with pytest.raises(ValueError) as raised:
        run_session(choose, _OneRequest(), "x")
    full = "".join(traceback.format_exception(raised.value))
    printed = io.StringIO()
    print_bot_traceback(raised.value, printed)
    text = printed.getvalue()
    assert "sdk.py" in full
    assert "in choose" in text and text.endswith("ValueError: wrong\n") and "sdk.py" not in text


def test_faults_that_differ_only_in_where_are_grouped() -> None:
    def timeout(request_id: int, **late: float) -> Fault:
        cause = FaultCause.LATE_ANSWER if late else FaultCause.DECISION_TIMEOUT
        return Fault(0, "bot", cause, FaultFacts(request_id=request_id, allowed_ms=1000, **late))

    def crash(game: int, **ending: int) -> Fault:
        facts = FaultFacts(stage=Stage.GAME, game=game, **ending)
        return Fault(0, "bot", crash_cause(facts), facts)

    faults = [timeout(3), timeout(9, answered_ms=1234), timeout(12), crash(3, exit_status=1), crash(4, exit_status=1)]
    groups = group_faults(zip([*faults, crash(5, signal=11)], range(6), strict=True))
    assert [(group.kind, group.count, group.where) for group in groups] == [
        (FaultKind.TIMEOUT, 2, (0, 2)),
        (FaultKind.TIMEOUT, 1, (1,)),
        (FaultKind.CRASH, 2, (3, 4)),
        (FaultKind.CRASH, 1, (5,)),
    ]
    assert groups[2].detail == "the bot exited with status 1 during game 3"


def test_faults_stored_before_causes_are_grouped_by_their_words() -> None:
    """An older store's faults have no cause or facts: their words, where and how late aside, are all there is."""
    groups = group_faults(
        (StoredFault("m", game, 0, "bot", kind, detail), game)
        for game, (kind, detail) in enumerate(
            [
                ("timeout", "no answer to request 3 within 1000 ms"),
                ("timeout", "request 9 answered after 1,234 ms of a 1,000 ms limit"),
                ("timeout", "no answer to request 12 within 1000 ms"),
                ("crash", "the bot exited with status 1 during game 3"),
                ("crash", "the bot exited with status 1 during game 4"),
                ("crash", "the bot was killed by SIGSEGV (signal 11) during game 5"),
            ]
        )
    )
    assert [(group.kind, group.count, group.where) for group in groups] == [
        (FaultKind.TIMEOUT, 2, (0, 2)),
        (FaultKind.TIMEOUT, 1, (1,)),
        (FaultKind.CRASH, 2, (3, 4)),
        (FaultKind.CRASH, 1, (5,)),
    ]


def test_crashes_that_printed_other_words_are_told_apart() -> None:
    def crash(game: int, error: str) -> Fault:
        facts = FaultFacts(exit_status=1, stage=Stage.GAME, game=game, output=("Traceback", error))
        return Fault(0, "bot", FaultCause.EXITED, facts)

    faults = [crash(0, "IndexError"), crash(1, "KeyError: 'hand'"), crash(2, "IndexError")]
    groups = group_faults((fault, index) for index, fault in enumerate(faults))
    assert [group.where for group in groups] == [(0, 2), (1,)]


@pytest.mark.parametrize(
    "max_ms, move_time_ms, warned",
    [(600.0, 1000, True), (500.0, 1000, False), (40.0, 100, False), (900.0, None, False)],
)
def test_the_grading_report_warns_of_a_bot_close_to_its_clock(
    max_ms: float, move_time_ms: int | None, warned: bool
) -> None:
    warning = clock_warning(max_ms, move_time_ms)
    assert (warning is not None) == warned
    if warning is not None:
        assert warning.startswith(f"its slowest decision took {max_ms:,.0f} ms of {move_time_ms:,} ms")


def test_the_league_report_warns_of_a_bot_close_to_its_clock(tmp_path: Path) -> None:
    """A league where one bot takes 70% of its clock at two decisions a game: the HTML report's activity
    section and the grading JSON both say so; the fast bot gets no warning."""
    league = tmp_path / "close.toml"
    league.write_text(
        'game = "scout"\nplayers = 2\nseed = 3\ndeals_per_match = 1\n[limits]\nmove_time_ms = 1000\n'
        f'[[bots]]\nname = "slow"\ncommand = "{BOTS / "near_its_clock.py"}"\n'
        '[[bots]]\nname = "fast"\ncommand = "random"\n'
    )
    runner = CliRunner()
    ran = runner.invoke(main, ["tournament", "run", str(league), "-j", "1", "--bootstrap", "0"])
    assert ran.exit_code == 0, ran.output
    with LeagueStore(league.with_suffix(".sqlite"), create=False) as store:
        activity = {entry.bot: entry for entry in league_report(store, bootstrap=0).activity}
        page = render_report_page(league_report(store, bootstrap=0), tmp_path)
    assert activity["fast"].clock_warning is None
    assert activity["slow"].clock_warning is not None and "ms of 1,000 ms" in activity["slow"].clock_warning
    assert "slow: its slowest decision took" in page
    graded = runner.invoke(main, ["tournament", "report", str(league), "--format", "json", "--bootstrap", "0"])
    rows = {row["bot"]: row for row in json.loads(graded.stdout)["bots"]}
    assert rows["slow"]["clock_warning"] == activity["slow"].clock_warning and rows["fast"]["clock_warning"] is None


def test_a_bot_that_prints_at_every_decision_crashes_once_in_the_grading_report(tmp_path: Path) -> None:
    """chatty_crash prints its hand before each decision and crashes the same way in every game: the grading
    report had one group per game (its output differed before the traceback), now one for all."""
    league = tmp_path / "chatty.toml"
    league.write_text(
        'game = "scout"\nplayers = 2\nseed = 3\ndeals_per_match = 4\n'
        f'[[bots]]\nname = "chatty"\ncommand = "{BOTS / "chatty_crash.py"}"\n'
        '[[bots]]\nname = "rnd"\ncommand = "random"\n'
    )
    runner = CliRunner()
    ran = runner.invoke(main, ["tournament", "run", str(league), "-j", "1", "--bootstrap", "0"])
    assert ran.exit_code == 0, ran.output
    graded = runner.invoke(main, ["tournament", "report", str(league), "--format", "json", "--bootstrap", "0"])
    rows = {row["bot"]: row for row in json.loads(graded.stdout)["bots"]}
    (group,) = rows["chatty"]["fault_groups"]
    assert group["count"] == 8 and "RuntimeError: crashing mid-game, on purpose" in group["detail"]

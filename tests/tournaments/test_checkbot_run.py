"""check-bot's library entry point: options checked before anything runs, and a results file for every
submission, whether its bot ran, could not be built or run, or was refused below the isolation allowed."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from gradescope_schema import problems

from protocol.errors import BadInput
from referee.botspec import UnknownBot
from referee.isolation import sandbox as sandboxing
from referee.isolation.cgroups import CgroupMode, CgroupSupport
from referee.isolation.sandbox import Isolation
from referee.records import Limits
from tournaments.classroom.checkbot import CheckError, isolation_refusal
from tournaments.classroom.checkbot_run import CheckRequest, check_options, check_submission
from tournaments.classroom.checkbot_strength import StrengthTest
from tournaments.cli import main

CLASS = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "class"
QUICK = {"players": (2,), "games": 1, "limits": Limits(move_time_ms=1000, startup_time_s=5.0)}
AGAINST = (StrengthTest("heuristic", 0.5),)

pytestmark = pytest.mark.timeout(240)


def test_options_given_wrong_are_refused_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(CheckError, match="scout is for 2 to 5 players, not 9") as wrong:
        check_options(CheckRequest("scout", "random", players=(9,), run_dir=tmp_path / "run"))
    assert isinstance(wrong.value, BadInput)
    with pytest.raises(UnknownBot):
        check_options(CheckRequest("scout", "random", against=(StrengthTest("no-such-bot", 0.5),)))
    assert not (tmp_path / "run").exists()
    assert check_options(CheckRequest("scout", "random", players=(3, 2))).players == (2, 3)


def _test_names(results: dict) -> list[str]:
    return [test["name"] for test in results["tests"]]


def test_a_bot_that_runs_gets_its_report_and_its_results(tmp_path: Path) -> None:
    cleared = []
    request = CheckRequest("scout", "random", sandbox=False, run_dir=tmp_path / "run", against=AGAINST, **QUICK)
    outcome = check_submission(request, on_cleared=lambda: cleared.append(True))
    assert cleared == [True] and outcome.problem is None
    assert outcome.report is not None and outcome.report.verdict.conforms
    results = outcome.gradescope()
    assert problems(results) == [] and results["tests"][0]["status"] == "passed"
    assert len(results["tests"]) == 4, "handshake, one player count, decision times, one strength test"


def test_a_submission_that_cannot_run_gets_the_same_tests_each_failed(tmp_path: Path) -> None:
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / "bot.py").write_text((CLASS / "first_move" / "bot.py").read_text())
    (folder / "bot.toml").write_text('transport = "pigeon"\n')
    request = CheckRequest("scout", str(folder), sandbox=False, run_dir=tmp_path / "run", against=AGAINST, **QUICK)
    outcome = check_submission(request)
    assert outcome.report is None and outcome.problem is not None and "transport" in outcome.problem
    results = outcome.gradescope()
    runs = check_submission(CheckRequest("scout", "random", sandbox=False, against=AGAINST, **QUICK)).gradescope()
    assert problems(results) == [] and _test_names(results) == _test_names(runs)
    assert results["score"] == 0 and all(test["status"] == "failed" for test in results["tests"])
    assert outcome.problem in results["output"] and str(tmp_path) not in str(results)


def test_a_check_refused_below_full_isolation_still_gets_its_results(tmp_path: Path) -> None:
    refusal = isolation_refusal(sandbox=True, allow_partial=False)
    if refusal is None:
        pytest.skip("this machine gives the full sandbox: nothing is refused")
    cleared = []
    request = CheckRequest("scout", "random", run_dir=tmp_path / "run", against=AGAINST, **QUICK)
    outcome = check_submission(request, on_cleared=lambda: cleared.append(True))
    assert outcome.report is None and outcome.problem == refusal and cleared == []
    results = outcome.gradescope()
    assert problems(results) == [] and len(results["tests"]) == 4
    assert results["score"] == 0 and all(test["status"] == "failed" for test in results["tests"])


def test_a_refusal_shows_the_student_no_path_of_the_grading_machine(tmp_path: Path, monkeypatch) -> None:
    """A machine without cgroups for bots refused the check, and results.json quoted why, with the cgroup folder
    of the grading machine in it. The student reads what is missing, without the machine's paths."""
    cgroup = "/sys/fs/cgroup/user.slice/user-1000.slice/referee-bots"
    lacking = CgroupSupport(CgroupMode.NONE, reason=f"cannot create {cgroup}: Permission denied")
    found = dataclasses.replace(sandboxing.probe(), cgroups=lacking)
    monkeypatch.setattr(sandboxing, "probe", lambda: found)
    if found.isolation is Isolation.FULL or found.problem is not None:
        pytest.skip("a machine without the sandbox is refused for that, not for its cgroups")
    out = tmp_path / "results.json"
    args = ["check-bot", "scout", "random", "-p", "2", "-n", "1", "--format", "gradescope", "-o", str(out)]
    result = CliRunner().invoke(main, [*args, "--run-dir", str(tmp_path / "run")])
    text = out.read_text()
    assert result.exit_code == 1 and cgroup in result.stderr
    assert "Permission denied" in text and "check-bot needs the full sandbox" in text
    assert "/sys/fs" not in text and "/sys/" not in text and str(tmp_path) not in text
    assert problems(json.loads(text)) == []

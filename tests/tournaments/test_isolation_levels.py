"""Isolation is never lost silently: check-bot fails closed below the full sandbox unless told, every run below
full says at its start what is missing, --no-sandbox warns, and each game and report states its real level.

The levels below full are made by replacing the sandbox's probe (its single source of truth) with one that
finds no bubblewrap, or a sandbox without a uid or cgroups of the bots' own: the bots then really run so.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from gradescope_schema import problems
from sandbox_checks import require_sandbox

from referee.isolation import sandbox
from referee.isolation.cgroups import CgroupMode, CgroupSupport
from referee.isolation.sandbox import Isolation
from tournaments.cli import main
from tournaments.league.executors import meets

pytestmark = pytest.mark.timeout(240)

NO_BWRAP = sandbox.SandboxProbe("bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
OWN_UID_PROBLEM = "the referee does not run as root, so it cannot give bots other uids"
CHECK = ["check-bot", "scauver", "random", "-p", "2", "-n", "1", "--seed", "2"]
PLAY = ["play", "scauver", "random", "random", "--seed", "3", "-o", "round_cap=25", "--json"]


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def partial(monkeypatch: pytest.MonkeyPatch) -> sandbox.SandboxProbe:
    """The sandbox as it is without root and without a delegated cgroup: bubblewrap, nothing of the bots' own."""
    require_sandbox()
    real = sandbox.probe()
    found = sandbox.SandboxProbe(
        None,
        bwrap=real.bwrap,
        version=real.version,
        setpriv=real.setpriv,
        own_uid_problem=OWN_UID_PROBLEM,
        cgroups=CgroupSupport(CgroupMode.NONE, reason="no delegated cgroup v2 subtree is writable"),
        seccomp_problem=real.seccomp_problem,
    )
    monkeypatch.setattr(sandbox, "probe", lambda: found)
    return found


def test_check_bot_refuses_to_run_without_the_sandbox(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(sandbox, "probe", lambda: NO_BWRAP)
    result = invoke(*CHECK, "--run-dir", str(tmp_path / "run"))
    assert result.exit_code == 1
    assert "check-bot needs the full sandbox and this machine gives none isolation" in result.stderr
    assert "bubblewrap (bwrap) is not installed" in result.stderr and "--no-sandbox runs the bot" in result.stderr
    assert not (tmp_path / "run").exists(), "no bot ran"


def test_check_bot_without_the_sandbox_on_purpose_warns_and_says_so(tmp_path: Path) -> None:
    result = invoke(*CHECK, "--no-sandbox", "--json", "--run-dir", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert "warning: --no-sandbox: bots run unsandboxed" in result.stderr
    assert json.loads(result.stdout)["isolation"] == {
        "level": "none",
        "missing": ["no sandbox: --no-sandbox was given"],
    }


def test_check_bot_refuses_a_partial_sandbox_unless_allowed(partial: sandbox.SandboxProbe, tmp_path: Path) -> None:
    refused = invoke(*CHECK, "--run-dir", str(tmp_path / "refused"))
    assert refused.exit_code == 1
    assert "gives partial isolation" in refused.stderr and OWN_UID_PROBLEM in refused.stderr
    assert "--allow-partial accepts this partial sandbox" in refused.stderr
    allowed = invoke(*CHECK, "--allow-partial", "--json", "--run-dir", str(tmp_path / "allowed"))
    assert allowed.exit_code == 0, allowed.output
    assert "warning: bots run with partial isolation" in allowed.stderr and OWN_UID_PROBLEM in allowed.stderr
    isolation = json.loads(allowed.stdout)["isolation"]
    assert isolation["level"] == "partial"
    assert f"own uid per bot: {OWN_UID_PROBLEM}" in isolation["missing"]
    graded = invoke(*CHECK, "--allow-partial", "--format", "gradescope", "--run-dir", str(tmp_path / "graded"))
    results = json.loads(graded.stdout)
    assert results["extra_data"]["isolation"] == "partial"
    assert "isolation: partial (missing: own uid per bot:" in results["output"]


def test_a_refused_check_still_writes_a_gradescope_file_saying_why(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A refusal is the autograder's problem, not the student's bot: every test fails with the reason shown
    (score 0), the file says the isolation the machine gives, and no bot starts."""
    monkeypatch.setattr(sandbox, "probe", lambda: NO_BWRAP)
    out = tmp_path / "results" / "results.json"
    against = ("--against", "heuristic:0.5")
    result = invoke(*CHECK, *against, "--run-dir", str(tmp_path / "run"), "--format", "gradescope", "-o", str(out))
    assert result.exit_code == 1
    assert "check-bot needs the full sandbox" in result.stderr
    results = json.loads(out.read_text())
    assert problems(results) == []
    assert results["score"] == 0 and results["extra_data"]["isolation"] == "none"
    assert "check-bot needs the full sandbox and this machine gives none isolation" in results["output"]
    handshake, *others = results["tests"]
    assert handshake["status"] == "failed" and "bubblewrap (bwrap) is not installed" in handshake["output"]
    assert len(others) == 3 and all(test["status"] == "failed" for test in others)
    assert not (tmp_path / "run").exists(), "no bot ran"


def test_check_bot_in_the_full_sandbox_says_so(tmp_path: Path) -> None:
    require_sandbox()
    if sandbox.probe().isolation is not sandbox.Isolation.FULL:
        pytest.skip(f"this machine gives {sandbox.probe().isolation.value} isolation")
    result = invoke(*CHECK, "--json", "--run-dir", str(tmp_path / "json"))
    assert result.exit_code == 0, result.output
    assert "warning" not in result.stderr
    assert json.loads(result.stdout)["isolation"] == {"level": "full", "missing": []}
    text = invoke(*CHECK, "--run-dir", str(tmp_path / "text"))
    assert "\nisolation: full\n" in text.stdout


def test_play_below_full_says_what_is_missing_and_records_the_level(partial: sandbox.SandboxProbe) -> None:
    result = invoke(*PLAY)
    assert result.exit_code == 0, result.output
    assert result.stderr.count("warning: bots run with partial isolation") == 1
    assert OWN_UID_PROBLEM in result.stderr and "no delegated cgroup v2 subtree" in result.stderr
    games = json.loads(result.stdout)["games"]
    assert [(game["isolation"], game["sandboxed"]) for game in games] == [("partial", True)] * 2


def test_no_sandbox_warns(monkeypatch: pytest.MonkeyPatch) -> None:
    result = invoke(*PLAY, "--no-sandbox")
    assert result.exit_code == 0, result.output
    assert "warning: --no-sandbox: bots run unsandboxed, as your user" in result.stderr
    assert {game["isolation"] for game in json.loads(result.stdout)["games"]} == {"none"}


def test_a_league_below_full_warns_at_its_start(partial: sandbox.SandboxProbe, write_league) -> None:
    league = write_league(bots=["a", "b", "c"], command="random")
    run = invoke("tournament", "run", str(league), "-j", "1", "--bootstrap", "0")
    assert run.exit_code == 0, run.output
    assert run.stderr.count("warning: bots run with partial isolation") == 1 and OWN_UID_PROBLEM in run.stderr


def test_the_table_counts_the_games_at_each_level(write_league) -> None:
    """The store's levels as the table shows them (the levels the matches really had are checked end to end,
    without root, in tests/tournaments/test_rootless.py; league workers probe the machine themselves)."""
    league = write_league(bots=["a", "b", "c"], command="random")
    assert invoke("tournament", "run", str(league), "-j", "1", "--bootstrap", "0", "--no-sandbox").exit_code == 0
    with sqlite3.connect(league.with_suffix(".sqlite")) as db:
        db.execute("UPDATE games SET isolation = 'partial' WHERE rowid % 2 = 0")
    result = invoke("tournament", "table", str(league), "--bootstrap", "0")
    table = json.loads(invoke("tournament", "table", str(league), "--json", "--bootstrap", "0").stdout)
    levels = table["isolation_games"]
    assert levels["full"] == 0 and levels["partial"] > 0 and levels["partial"] + levels["none"] == table["games"]
    assert f"{levels['partial']} game(s) were played with partial isolation" in result.stdout
    assert f"{levels['none']} game(s) were played without the sandbox" in result.stdout


def test_a_required_level_is_met_by_itself_and_every_stronger_one() -> None:
    assert sandbox.STRENGTH[0] is Isolation.REMOTE and sandbox.STRENGTH[-1] is Isolation.KERNEL
    assert meets(Isolation.KERNEL, Isolation.FULL) and meets(Isolation.FULL, Isolation.FULL)
    assert not meets(Isolation.PARTIAL, Isolation.FULL) and not meets(Isolation.NONE, Isolation.PARTIAL)
    assert not meets(Isolation.REMOTE, Isolation.NONE)

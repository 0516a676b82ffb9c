"""The sandbox at the command line: `referee doctor`, --sandbox/--no-sandbox, the warning where the sandbox cannot
run, the games recorded and counted as unsandboxed, and a league file's declared bot environment."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from sandbox_checks import require_sandbox

from referee.isolation import sandbox
from referee.isolation.cgroups import CgroupMode, CgroupSupport
from tournaments.cli import main
from tournaments.league.league_file import LeagueFileError, load_league

pytestmark = pytest.mark.timeout(240)

PLAY = ["play", "scauver", "random", "random", "--seed", "3", "-o", "round_cap=25", "--json"]
"""Two games: the balanced match at two seats."""
NO_BWRAP = sandbox.SandboxProbe("bubblewrap (bwrap) is not installed: apt-get install bubblewrap")


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def test_doctor_reports_each_part_and_exits_0_only_with_the_full_sandbox() -> None:
    result = invoke("doctor", "--json")
    data = json.loads(result.stdout)
    assert data["isolation"] == sandbox.probe().isolation.value
    assert result.exit_code == (0 if data["full"] else 1)
    names = [check["name"] for check in data["checks"]]
    assert names[:2] == ["bubblewrap", "sandbox starts"]
    if data["full"]:
        assert all(check["ok"] for check in data["checks"] if check["required"])


def test_doctor_says_why_the_sandbox_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "probe", lambda: NO_BWRAP)
    result = invoke("doctor")
    assert result.exit_code == 1
    assert "MISSING  bubblewrap: bubblewrap (bwrap) is not installed" in result.stdout
    assert "isolation: none" in result.stdout
    assert "bubblewrap: install bubblewrap (apt install bubblewrap" in result.stdout


def test_doctor_says_what_a_partial_sandbox_lacks(monkeypatch: pytest.MonkeyPatch) -> None:
    partial = sandbox.SandboxProbe(
        None,
        bwrap="/usr/bin/bwrap",
        version="bubblewrap 0.8.0",
        own_uid_problem="the referee does not run as root, so it cannot give bots other uids",
        cgroups=CgroupSupport(CgroupMode.NONE, reason="cgroup v1 memory at /sys/fs/cgroup/memory is not writable"),
    )
    monkeypatch.setattr(sandbox, "probe", lambda: partial)
    data = json.loads(invoke("doctor", "--json").stdout)
    assert data["isolation"] == "partial" and not data["full"]
    missing = {check["name"]: check["detail"] for check in data["checks"] if not check["ok"]}
    assert "does not run as root" in missing["own uid per bot"]
    assert "not writable" in missing["limits for a bot as a whole"]
    advice = data["to_get_more"]
    assert [line.split(":")[0] for line in advice] == [
        "own uid per bot",
        "limits for a bot as a whole",
        "shared kernel objects closed (seccomp)",
        "bots frozen while not on move",
        "equal CPU weight and a CPU quota per bot",
        "CPUs kept to the referee's",
    ]
    assert "run the referee as root" in advice[0]


def test_doctor_on_a_laptop_says_what_would_give_the_full_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not root: no uid per bot, no cgroups. The exit status is 1, and the text says how to get the rest."""
    laptop = sandbox.SandboxProbe(
        None,
        bwrap="/usr/bin/bwrap",
        version="bubblewrap 0.8.0",
        own_uid_problem="the referee does not run as root, so it cannot give bots other uids",
        cgroups=CgroupSupport(CgroupMode.NONE, reason="no delegated cgroup v2 subtree"),
        seccomp_problem=None,
    )
    monkeypatch.setattr(sandbox, "probe", lambda: laptop)
    result = invoke("doctor")
    assert result.exit_code == 1
    assert "to get the full sandbox:\n  own uid per bot: run the referee as root (sudo)" in result.stdout
    assert "systemd-run --user --scope -p Delegate=yes" in result.stdout
    assert "grade other people's code on a machine where `referee doctor` exits 0" in result.stdout


def test_play_warns_once_and_records_the_games_unsandboxed_where_the_sandbox_cannot_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sandbox, "probe", lambda: NO_BWRAP)
    result = invoke(*PLAY)
    assert result.exit_code == 0, result.output
    assert result.stderr.count("the sandbox cannot run here (bubblewrap (bwrap) is not installed") == 1
    assert "--no-sandbox" in result.stderr
    assert [game["sandboxed"] for game in json.loads(result.stdout)["games"]] == [False, False]


def test_play_in_the_sandbox_and_without_it() -> None:
    require_sandbox()
    sandboxed = invoke(*PLAY)
    assert sandboxed.exit_code == 0, sandboxed.output
    assert [game["sandboxed"] for game in json.loads(sandboxed.stdout)["games"]] == [True, True]
    isolation = sandbox.probe().isolation.value
    assert [game["isolation"] for game in json.loads(sandboxed.stdout)["games"]] == [isolation, isolation]
    unsandboxed = invoke(*PLAY, "--no-sandbox")
    assert unsandboxed.exit_code == 0 and "warning: --no-sandbox" in unsandboxed.stderr
    assert [game["sandboxed"] for game in json.loads(unsandboxed.stdout)["games"]] == [False, False]


def test_play_over_tcp_needs_no_sandbox() -> None:
    refused = invoke(*PLAY, "--transport", "tcp")
    assert refused.exit_code == 1
    assert "use the ipc transport, or run without the sandbox (--no-sandbox)" in refused.output
    assert invoke(*PLAY, "--transport", "tcp", "--no-sandbox").exit_code == 0


def test_the_table_counts_the_games_played_unsandboxed(write_league) -> None:
    league = write_league(bots=["a", "b", "c"], command="random")
    run = invoke("tournament", "run", str(league), "-j", "1", "--bootstrap", "0", "--no-sandbox")
    assert run.exit_code == 0, run.output
    table = json.loads(invoke("tournament", "table", str(league), "--json", "--bootstrap", "0").stdout)
    assert table["games"] > 0 and table["unsandboxed_games"] == table["games"]
    assert f"{table['games']} game(s) were played without the sandbox" in run.stdout


def test_a_league_played_in_the_sandbox_has_no_such_note(write_league) -> None:
    require_sandbox()
    league = write_league(bots=["a", "b", "c"], command="random")
    run = invoke("tournament", "run", str(league), "-j", "1", "--bootstrap", "0", "--json")
    assert run.exit_code == 0, run.output
    assert json.loads(run.stdout)["unsandboxed_games"] == 0


def _league_declaring(tmp_path: Path, env: str) -> Path:
    """A league of three random bots, the first declaring `env` (TOML)."""
    path = tmp_path / "league.toml"
    bots = "".join(f'[[bots]]\nname = "{name}"\ncommand = "random"\n' for name in ("b", "c"))
    first = f'[[bots]]\nname = "a"\ncommand = "random"\nenv = {env}\n'
    path.write_text(f'game = "scout"\nplayers = 3\nseed = 1\n{first}{bots}')
    return path


def test_a_league_file_declares_a_bots_environment(tmp_path: Path) -> None:
    league = load_league(_league_declaring(tmp_path, '{ LEVEL = "3", MODEL = "small" }'))
    assert league.bots[0].spec.env == (("LEVEL", "3"), ("MODEL", "small"))
    assert league.bots[1].spec.env == ()


@pytest.mark.parametrize(
    "env, problem", [('{ REFEREE_TOKEN = "x" }', "cannot set REFEREE_TOKEN"), ("{ LEVEL = 3 }", "names to strings")]
)
def test_a_league_file_cannot_declare_a_bad_environment(tmp_path: Path, env: str, problem: str) -> None:
    with pytest.raises(LeagueFileError, match=problem):
        load_league(_league_declaring(tmp_path, env))

"""A league file's `kernel = true`: every bot under a gVisor kernel of its own, the games stored at the kernel
level; refused before anything is played where that cannot be (see tests/referee/test_gvisor.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from referee.isolation import gvisor
from tournaments.cli import main
from tournaments.league.store import LeagueStore


@pytest.mark.skipif(
    not gvisor.probe().usable and not os.environ.get("REFEREE_REQUIRE_KERNEL"),
    reason=f"no kernel per bot here: {gvisor.probe().problem}",
)
def test_a_kernel_league_stores_its_games_at_the_kernel_level(write_league, tmp_path: Path) -> None:
    league = write_league(bots=("alpha", "beta"), players=2, deals_per_match=1, kernel=True)
    result = CliRunner().invoke(main, ["tournament", "run", str(league), "-j", "1", "--bootstrap", "0", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.output[result.output.index("{") :])
    assert document["games"] == 2
    assert document["isolation_games"] == {"full": 0, "partial": 0, "none": 0, "kernel": 2, "remote": 0}


def test_a_kernel_league_is_refused_before_play_where_runsc_cannot_run(
    write_league, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gvisor, "probe", lambda: gvisor.KernelProbe(f"runsc is not installed: {gvisor.INSTALL}"))
    league = write_league(bots=("alpha", "beta"), players=2, deals_per_match=1, kernel=True)
    result = CliRunner().invoke(main, ["tournament", "run", str(league), "-j", "1", "--bootstrap", "0"])
    assert result.exit_code == 1
    assert "apt-get install runsc" in result.output
    stores = list(tmp_path.glob("*.sqlite"))
    for path in stores:
        with LeagueStore(path, create=False) as store:
            assert store.game_count() == 0


def test_a_kernel_league_is_refused_without_the_sandbox(write_league) -> None:
    league = write_league(bots=("alpha", "beta"), players=2, deals_per_match=1, kernel=True)
    result = CliRunner().invoke(main, ["tournament", "run", str(league), "-j", "1", "--no-sandbox"])
    assert result.exit_code == 1
    assert "cannot run with --no-sandbox" in result.output

"""Planning a class: max_timeouts stops a hanging bot for the rest of its match; --dry-run counts the games and
estimates the time without playing or writing anything."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tournaments.cli import main
from tournaments.league.league_file import load_league
from tournaments.league.planning import plan_estimate

CLASS = Path(__file__).resolve().parents[1] / "fixtures" / "class"


def invoke(*args: str) -> Any:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result


def _league(tmp_path: Path, extra: str = "") -> Path:
    shutil.copytree(CLASS / "timeout", tmp_path / "submissions" / "hangs")
    shutil.copytree(CLASS / "first_move", tmp_path / "submissions" / "plays")
    league = tmp_path / "class.toml"
    league.write_text(
        'game = "scout"\nplayers = 2\nseed = 2\ndeals_per_match = 2\nschedule = "baselines"\n'
        f"{extra}\n[limits]\nmove_time_ms = 200\nstartup_time_s = 20\n"
        '[[bots]]\nname = "random"\ncommand = "random"\nbaseline = true\n'
        '[[bots]]\nname = "random-2"\ncommand = "random"\nbaseline = true\n'
        '[[bots]]\neach = "submissions/*"\n'
    )
    return league


def _faults(league: Path, bot: str) -> list[tuple[int, str]]:
    with sqlite3.connect(league.with_suffix(".sqlite")) as db:
        rows = db.execute(
            "SELECT game_index, detail FROM faults WHERE bot = ? AND match_id = (SELECT MIN(match_id) FROM faults "
            "WHERE bot = ?) ORDER BY game_index, position",
            (bot, bot),
        )
        return list(rows)


def test_a_bot_is_stopped_after_max_timeouts_in_a_match(tmp_path: Path) -> None:
    league = _league(tmp_path, "max_timeouts = 2")
    invoke("tournament", "run", str(league), "-j", "2", "--bootstrap", "0")
    faults = _faults(league, "hangs")
    assert len(faults) == 4 and sorted({index for index, _ in faults}) == [0, 1, 2, 3]
    timed_out = [detail for _, detail in faults if detail.startswith("no answer to request")]
    stopped = [detail for _, detail in faults if "stopped after 2 timeouts in this match (max_timeouts = 2)" in detail]
    assert len(timed_out) == 2 and len(stopped) == 2, faults
    assert _faults(league, "plays") == []


def test_a_dry_run_counts_and_estimates_and_writes_nothing(tmp_path: Path) -> None:
    league = _league(tmp_path, "max_timeouts = 1")
    before = invoke("tournament", "run", str(league), "--dry-run", "-j", "2")
    assert "class: 4 bots (0 folder(s) skipped, 0 to build); 20 games in 5 matches to play, 0 stored" in before.stdout
    assert "estimate at -j 2: " in before.stdout and "assumed: " in before.stdout and "5 ms each" in before.stdout
    assert "at worst, every decision at the 200 ms clock" in before.stdout
    assert not league.with_suffix(".sqlite").exists() and not league.with_suffix(".logs").exists()
    invoke("tournament", "run", str(league), "-j", "2", "--bootstrap", "0")
    after = invoke("tournament", "run", str(league), "--dry-run")
    assert "0 games in 0 matches to play, 20 stored" in after.stdout and "measured: " in after.stdout
    (tmp_path / "submissions" / "plays" / "bot.py").write_text(
        "# resubmitted\n" + (CLASS / "first_move" / "bot.py").read_text()
    )
    changed = invoke("tournament", "run", str(league), "--dry-run")
    assert "0 games in 0 matches to play, 20 stored" in changed.stdout
    assert "changed since their stored games: plays; 8 stored game(s) of their matches held" in changed.stdout
    replayed = invoke("tournament", "run", str(league), "--dry-run", "--replay-changed")
    assert "8 games in 2 matches to play, 12 stored" in replayed.stdout
    assert "8 stored game(s) of their matches replayed" in replayed.stdout
    assert "Played" not in replayed.stderr and "replaying" not in replayed.stderr
    league.write_text(league.read_text().replace("move_time_ms = 200", "move_time_ms = 300"))
    refused = CliRunner().invoke(main, ["tournament", "run", str(league), "--dry-run"])
    assert refused.exit_code == 1 and "the run would be refused: " in refused.output
    assert "move_time_ms = 200 in the store, 300 in the league file" in refused.output


def test_a_baseline_is_never_stopped_by_max_timeouts(tmp_path: Path) -> None:
    shutil.copytree(CLASS / "first_move", tmp_path / "submissions" / "plays")
    league = tmp_path / "class.toml"
    league.write_text(
        'game = "scout"\nplayers = 2\nseed = 2\ndeals_per_match = 2\nmax_timeouts = 1\n'
        "[limits]\nmove_time_ms = 200\nstartup_time_s = 20\n"
        '[[bots]]\nname = "random"\ncommand = "random"\nbaseline = true\n'
        f'[[bots]]\nname = "slow"\ncommand = "{CLASS / "timeout" / "bot.py"}"\nbaseline = true\n'
        '[[bots]]\neach = "submissions/*"\n'
    )
    invoke("tournament", "run", str(league), "-j", "2", "--bootstrap", "0")
    with sqlite3.connect(league.with_suffix(".sqlite")) as db:
        details = [detail for (detail,) in db.execute("SELECT detail FROM faults WHERE bot = 'slow'")]
    assert len(details) == 8 and all(detail.startswith("no answer to request") for detail in details), details


def test_retry_faulted_replays_only_the_games_with_that_fault(tmp_path: Path) -> None:
    league = _league(tmp_path, "max_timeouts = 1")
    invoke("tournament", "run", str(league), "-j", "2", "--bootstrap", "0")
    retried = invoke("tournament", "run", str(league), "-j", "2", "--bootstrap", "0", "--retry-faulted", "timeout")
    assert "retrying 8 game(s) with a timeout fault" in retried.stderr and "Played 8 games" in retried.stderr
    startup = invoke("tournament", "run", str(league), "--retry-faulted", "startup", "--bootstrap", "0")
    assert "retrying 0 game(s) with a startup fault" in startup.stderr and "Played" not in startup.stderr
    refused = CliRunner().invoke(main, ["tournament", "run", str(league), "--retry-faulted", "bad"])
    assert refused.exit_code == 2 and "'bad' is not one of 'startup', 'timeout'" in refused.output


def test_the_worst_case_gives_every_bot_its_whole_start_up_one_bot_at_a_time(tmp_path: Path) -> None:
    """Bots start one at a time (no two awake at once), so a match's worst start is a startup limit per seat."""
    league = load_league(_league(tmp_path))
    estimate = plan_estimate(league, None, concurrency=1)
    starts = estimate.matches * league.players * league.limits.startup_time_s
    decisions = estimate.games * estimate.decisions_per_game * league.limits.move_time_ms / 1000
    assert estimate.matches > 0 and league.players == 2
    assert estimate.worst_seconds == pytest.approx(decisions + starts)

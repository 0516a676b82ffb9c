"""Settling a league: rounds go to the open pairs, stop when settled or at the budget, and resume exactly."""

from __future__ import annotations

import json
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from referee.records import GameRecord, GameSpec, MatchRecord, MatchSpec
from tournaments.cli import main
from tournaments.league.executors import DaskExecutor, Executor, GameSink
from tournaments.league.league_file import load_league
from tournaments.league.runner import plan_league, play_league
from tournaments.league.store import LeagueStore
from tournaments.ratings.settling import SettleRule
from tournaments.settle import SettleSettings, Stop, default_budget, settle_league

pytestmark = pytest.mark.timeout(600)

EXAMPLES = Path(__file__).resolve().parents[2] / "tournaments" / "examples"
STRENGTH = {"strong-a": 400.0, "strong-b": 400.0, "weak-a": 0.0, "weak-b": 0.0}


class StrengthExecutor(Executor):
    """Plays here, without bots: each two-seat game is won as Elo expects of STRENGTH, decided by the game's
    seed and match (so a game played again would end the same). `stop_after` raises KeyboardInterrupt once
    that many games have been handed back, as Ctrl-C would."""

    def __init__(self, stop_after: int | None = None) -> None:
        self.stop_after = stop_after
        self.handed = 0
        self.played: list[tuple[str, int]] = []

    def run(self, specs: Sequence[MatchSpec], on_game: GameSink) -> None:
        for spec in specs:
            for game in spec.games:
                if self.stop_after is not None and self.handed >= self.stop_after:
                    raise KeyboardInterrupt
                self.played.append((spec.match_id, game.index))
                on_game(self._record(spec, game))
                self.handed += 1

    def _record(self, spec: MatchSpec, game: GameSpec) -> GameRecord:
        return strength_record(spec, game)


def strength_record(spec: MatchSpec, game: GameSpec) -> GameRecord:
    seats = tuple(spec.bots[index].name for index in game.seating)
    first, second = (STRENGTH[name] for name in seats)
    chance = 1 / (1 + 10 ** ((second - first) / 400))
    won = random.Random(f"{spec.match_id}/{game.index}").random() < chance
    ranks = (1, 2) if won else (2, 1)
    return GameRecord(spec.match_id, game.index, spec.game, game.seed, seats, ranks, (0, 0), (), ())


def strength_runner(spec: MatchSpec, on_game=None) -> MatchRecord:
    """run_match's stand-in for an executor's workers: StrengthExecutor's games."""
    records = tuple(strength_record(spec, game) for game in spec.games)
    for record in records:
        if on_game is not None:
            on_game(record)
    return MatchRecord(spec, records)


def copies_league(write_league, **settings: object) -> Path:
    return write_league(bots=list(STRENGTH), game="scauver", players=2, deals_per_match=1, **settings)


def settle(path: Path, executor: Executor, settings: SettleSettings) -> tuple[Stop, int, list[str]]:
    league = load_league(path)
    with LeagueStore(league.default_db) as store:
        plan = plan_league(league, store, sandbox=False)
        play_league(plan, store, executor)
        result = settle_league(league, store, executor, settings, scheduled_games=plan.scheduled, sandbox=False)
        rounds = store.settle_rounds()
        return result.stop, result.games, sorted(f"{r}:{entry.match_id}" for r in rounds for entry in rounds[r])


WIDE = SettleSettings(SettleRule(resolution=150), max_games=2000, bootstrap=200)


def test_rounds_play_the_open_pairs_until_the_table_is_settled(write_league):
    path = copies_league(write_league)
    first = settle(path, StrengthExecutor(), WIDE)
    stop, games, listed = first
    assert stop is Stop.SETTLED and 12 < games < 2000 and listed
    with LeagueStore(path.with_suffix(".sqlite")) as store:
        rounds = store.settle_rounds()
        assert store.game_count() == games
    tables = [entry.table for entries in rounds.values() for entry in entries]
    copies = {("strong-a", "strong-b"), ("weak-a", "weak-b")}
    most = [table for table, _ in Counter(tables).most_common(2)]
    assert set(most) == copies, "the pairs hardest to settle get the most matches"
    last = Counter(entry.table for entry in rounds[max(rounds)])
    ((busiest, count),) = last.most_common(1)
    assert busiest in copies and count > last.total() / 3, "at the end a pair of copies is what is open"
    assert len(last) > 2, "the rest of the last round: its uniform half and the window"
    assert settle(path, StrengthExecutor(), WIDE) == first, "a settled league plays no more"


def test_the_budget_stops_the_rounds_with_whole_matches(write_league):
    settings = SettleSettings(SettleRule(resolution=5), max_games=41, bootstrap=100)
    path = copies_league(write_league)
    stop, games, _ = settle(path, StrengthExecutor(), settings)
    assert stop is Stop.BUDGET and 40 <= games <= 41 and games % 2 == 0
    table = CliRunner().invoke(main, ["tournament", "table", str(path), "--resolution", "5", "--bootstrap", "100"])
    line = next(line for line in table.output.splitlines() if line.startswith("Not settled: "))
    assert "more games like these would settle them" in line and "within +/-5 Elo" in line


def test_without_max_games_the_budget_is_what_ties_would_need(write_league):
    """The default budget: the schedule plus twice tie_games(resolution) for each adjacent pair, which is
    enough for two pairs of copies even at +/-20 Elo."""
    settings = SettleSettings(SettleRule(resolution=20), bootstrap=100)
    league = load_league(copies_league(write_league))
    with LeagueStore(league.default_db) as store:
        plan = plan_league(league, store, sandbox=False)
        play_league(plan, store, StrengthExecutor())
        result = settle_league(league, store, StrengthExecutor(), settings, scheduled_games=plan.scheduled)
    assert result.budget == default_budget(plan.scheduled, 4, settings.rule) == plan.scheduled + 2 * 3 * 4638
    assert result.stop is Stop.SETTLED and result.games <= result.budget
    assert result.verdict.groups == {"strong-a": 1, "strong-b": 1, "weak-a": 2, "weak-b": 2}


def test_a_stopped_run_resumes_where_it_was_and_plays_nothing_twice(write_league):
    """Stopped three times (in the schedule, then in settling rounds) and rerun, the league ends exactly as
    one uninterrupted run: the same rounds and matches, the same games, none played twice."""
    whole = StrengthExecutor()
    expected = settle(copies_league(write_league, file_name="whole"), whole, WIDE)
    path = copies_league(write_league, file_name="stopped")
    played: list[tuple[str, int]] = []
    for stop_after in (7, 9, 30):
        executor = StrengthExecutor(stop_after)
        with pytest.raises(KeyboardInterrupt):
            settle(path, executor, WIDE)
        played += executor.played
    finisher = StrengthExecutor()
    assert settle(path, finisher, WIDE) == expected
    played += finisher.played
    assert len(played) == len(set(played)), "a game was played twice"
    assert sorted(played) == sorted(whole.played)


def test_settling_on_dask_ends_as_it_does_here(write_league):
    """The rounds are a function of the stored results: on a Dask cluster, whose games arrive in any order, the
    league ends with the same rounds, matches and games."""
    distributed = pytest.importorskip("distributed")
    expected = settle(copies_league(write_league, file_name="here"), StrengthExecutor(), WIDE)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:
        executor = DaskExecutor(cluster.scheduler_address, runner=strength_runner)
        assert settle(copies_league(write_league, file_name="dask"), executor, WIDE) == expected


def short_copies_league(folder: Path) -> Path:
    """The shipped scauver-2 league (heuristic and random, two copies each, 2 seats) with short games: 12 chips,
    at most 30 rounds, one deal a match."""
    league = folder / "scauver-2.toml"
    shutil.copy(EXAMPLES / "scauver-2.toml", league)
    text = league.read_text().replace("deals_per_match = 8", "deals_per_match = 1")
    league.write_text(text + "\n[config]\nstarting_chips = 12\nround_cap = 30\n")
    return league


def test_a_killed_settling_run_resumes_through_the_cli(tmp_path):
    """SIGTERM (a kill) in a settling round: exit 143, the resume command printed; the rerun finishes the
    stopped round's matches and goes on, and the store holds each game once."""
    league = short_copies_league(tmp_path)
    args = ["tournament", "run", str(league), "--until-settled", "--resolution", "150", "--max-games", "400"]
    args += ["--bootstrap", "200", "-j", "1"]
    command = [sys.executable, "-c", "from tournaments.cli import main; main()", *args]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    seen = []
    for line in process.stderr:
        seen.append(line)
        if "settling round 1:" in line:
            process.send_signal(signal.SIGTERM)
            break
    _, rest = process.communicate(timeout=120)
    assert process.returncode == 143, "".join(seen) + rest
    assert "Resume with: referee tournament run" in rest
    assert "--until-settled --max-games 400 --settle-los 0.95 --resolution 150 --min-games 20" in rest
    with sqlite3.connect(league.with_suffix(".sqlite")) as db:
        (rounds,) = db.execute("SELECT COUNT(DISTINCT round) FROM settle_rounds").fetchone()
    assert rounds == 1
    again = CliRunner().invoke(main, [*args[:-2], "--json"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["settling"]["stop"] == "settled"
    with sqlite3.connect(league.with_suffix(".sqlite")) as db:
        counted = db.execute("SELECT COUNT(*), COUNT(DISTINCT match_id || '/' || game_index) FROM games").fetchone()
        missing = db.execute(
            "SELECT COUNT(*) FROM settle_rounds JOIN matches USING (match_id) WHERE games > "
            "(SELECT COUNT(*) FROM games WHERE games.match_id = settle_rounds.match_id)"
        ).fetchone()
    assert counted[0] == counted[1] and missing == (0,), "every round's match complete, no game twice"


def test_the_two_copies_league_settles_through_the_cli(tmp_path):
    """The must-show: heuristic and random, two copies each, at 2 seats (the shipped scauver-2 league, with
    short games, 12 chips and at most 30 rounds, and one deal a match) ends settled within its budget at the
    CLI's defaults (resolution, levels, budget, bootstrap): the heuristic copies one group, the randoms another
    below it."""
    league = short_copies_league(tmp_path)
    result = CliRunner().invoke(main, ["tournament", "run", str(league), "--until-settled", "-j", "2", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["settling"]["stop"] == "settled" and data["games"] <= data["settling"]["budget"]
    assert data["settlement"]["settled"] is True and data["settlement"]["resolution"] == 100
    group = {entry["bot"]: entry["group"] for entry in data["ratings"]}
    assert group["heuristic-a"] == group["heuristic-b"], result.output
    assert group["random-a"] == group["random-b"] == group["heuristic-a"] + 1, result.output
    assert "Settled after" in result.stderr and "settling round 1:" in result.stderr
    table = CliRunner().invoke(main, ["tournament", "table", str(league)])
    assert table.exit_code == 0 and "Settled: every adjacent pair" in table.output
    assert "within +/-100 Elo" in table.output, "the table states the resolution it was settled at"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--max-games", "10"], "--max-games is the settling budget"),
        (["--until-settled", "--bootstrap", "0"], "judges the table by its bootstrap"),
    ],
)
def test_settling_options_that_cannot_work_are_usage_errors(write_league, args, message):
    result = CliRunner().invoke(main, ["tournament", "run", str(copies_league(write_league)), *args])
    assert result.exit_code == 2 and message in result.output

"""The league library without the command line: run_league plans, plays, settles and rates, telling a RunProgress
as it goes; league_results is what `tournament table` prints."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_settle import STRENGTH, StrengthExecutor, copies_league

from protocol.errors import BadInput, EnvironmentProblem
from referee.records import Fault, FaultCause, FaultFacts, GameRecord, GameSpec, MatchSpec
from tournaments.cli import main
from tournaments.league.builds import BuildOutcome
from tournaments.league.executors import ExecutorError, GameSink
from tournaments.league.league_file import load_league
from tournaments.league.runner import LeaguePlan
from tournaments.league.store import Forgotten, LeagueStore
from tournaments.league_report import league_results
from tournaments.league_run import (
    LeagueRun,
    RunFailed,
    RunOptions,
    RunProgress,
    RunRefused,
    Stage,
    estimate_run,
    run_league,
)
from tournaments.ratings.marks import against_baselines, mark_of
from tournaments.ratings.settling import SettleRule
from tournaments.settle import SettleResult, SettleRound, Stop

pytestmark = pytest.mark.timeout(300)

SCHEDULE = 12
"""Games of copies_league's schedule: 6 pairs, one deal each at both seats."""

QUICK = RunOptions(sandbox=False, bootstrap=50)


class Recorder(RunProgress):
    """Every event a run tells, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[object, ...]] = []

    def replaying(self, bot: str, why: str, forgotten: Forgotten) -> None:
        self.events.append(("replaying", bot, forgotten.games))

    def retrying(self, kind: str, dropped: int) -> None:
        self.events.append(("retrying", kind, dropped))

    def note(self, text: str) -> None:
        self.events.append(("note", text))

    def built(self, outcome: BuildOutcome) -> None:
        self.events.append(("built", outcome.bot))

    def planned(self, plan: LeaguePlan, store: LeagueStore) -> None:
        self.events.append(("planned", plan.scheduled, plan.stored))

    def stored(self, record: GameRecord) -> None:
        self.events.append(("stored",))

    def play_ended(self) -> None:
        self.events.append(("play_ended",))

    def played(self, added: int, seconds: float) -> None:
        self.events.append(("played", added))

    def settling_round(self, settle_round: SettleRound) -> None:
        self.events.append(("settling_round", settle_round.number))

    def settled(self, result: SettleResult) -> None:
        self.events.append(("settled", result.stop))

    def stopped(self, stage: Stage, plan: LeaguePlan, store: LeagueStore) -> None:
        self.events.append(("stopped", stage, store.game_count()))

    def kinds(self) -> list[object]:
        return [event[0] for event in self.events]


def run(path: Path, executor: StrengthExecutor, options: RunOptions = QUICK) -> tuple[LeagueRun, Recorder]:
    league = load_league(path)
    recorder = Recorder()
    with LeagueStore(league.default_db) as store:
        return run_league(league, store, executor, options, recorder), recorder


def test_a_run_plays_the_schedule_then_a_rerun_plays_nothing(write_league) -> None:
    path = copies_league(write_league)
    first, told = run(path, StrengthExecutor())
    assert first.played == first.plan.scheduled == first.results.games == SCHEDULE
    assert first.settled is None
    assert {rating.bot for rating in first.results.ratings.bots} == set(STRENGTH)
    assert first.results.faults == {} and first.results.retired == () and first.results.unsandboxed == 0
    assert first.results.isolation == {"full": SCHEDULE, "partial": 0, "none": 0, "kernel": 0, "remote": 0}
    assert told.events == [("planned", SCHEDULE, 0), *[("stored",)] * SCHEDULE, ("play_ended",), ("played", SCHEDULE)]
    again, told_again = run(path, StrengthExecutor())
    assert again.played == 0 and told_again.events == [("planned", SCHEDULE, SCHEDULE)]
    assert again.results == first.results, "the same games give the same results"


def test_the_results_are_what_tournament_table_prints(write_league) -> None:
    path = copies_league(write_league)
    played, _ = run(path, StrengthExecutor())
    table = CliRunner().invoke(main, ["tournament", "table", str(path), "--json", "--bootstrap", "50"])
    assert table.exit_code == 0, table.output
    shown = json.loads(table.stdout)
    with LeagueStore(path.with_suffix(".sqlite"), create=False) as store:
        results = league_results(store, load_league(path), bootstrap=50)
    assert results == played.results
    assert shown["league"] == results.name and shown["games"] == results.games
    assert [entry["bot"] for entry in shown["ratings"]] == [rating.bot for rating in results.ratings.bots]
    assert [entry["elo"] for entry in shown["ratings"]] == pytest.approx(
        [rating.elo for rating in results.ratings.bots], abs=0.5
    )
    assert shown["isolation_games"] == dict(results.isolation) and shown["retired"] == list(results.retired)


def test_an_interrupt_keeps_the_games_says_where_and_a_rerun_finishes(write_league) -> None:
    path = copies_league(write_league)
    with pytest.raises(KeyboardInterrupt):
        run(path, StrengthExecutor(stop_after=5))
    resumed, told = run(path, StrengthExecutor())
    assert resumed.played == SCHEDULE - 5 and resumed.results.games == SCHEDULE
    assert told.events[0] == ("planned", SCHEDULE, 5)


def test_the_progress_hears_of_the_interrupt_after_playing_ends(write_league) -> None:
    league = load_league(copies_league(write_league))
    told = Recorder()
    with LeagueStore(league.default_db) as store, pytest.raises(KeyboardInterrupt):
        run_league(league, store, StrengthExecutor(stop_after=5), QUICK, told)
    assert told.events[-2:] == [("play_ended",), ("stopped", Stage.PLAY, 5)]


class BrokenExecutor(StrengthExecutor):
    """Hands back the first match's games, then fails as a lost worker would."""

    def run(self, specs: Sequence[MatchSpec], on_game: GameSink) -> None:
        super().run(specs[:1], on_game)
        raise ExecutorError("a worker died")


def test_an_executor_error_is_a_run_failed_that_keeps_the_games(write_league) -> None:
    league = load_league(copies_league(write_league))
    told = Recorder()
    with LeagueStore(league.default_db) as store:
        with pytest.raises(RunFailed, match=r"a worker died \(the games stored so far are kept; rerun to resume\)"):
            run_league(league, store, BrokenExecutor(), QUICK, told)
        assert store.game_count() == 2
    assert told.kinds()[-1] == "play_ended"
    assert issubclass(RunFailed, EnvironmentProblem)


def test_until_settled_plays_rounds_after_the_schedule(write_league) -> None:
    path = copies_league(write_league)
    options = RunOptions(
        sandbox=False, until_settled=True, max_games=2000, rule=SettleRule(resolution=150), bootstrap=200
    )
    settled, told = run(path, StrengthExecutor(), options)
    assert settled.settled is not None and settled.settled.stop is Stop.SETTLED
    assert settled.results.games == settled.settled.games > SCHEDULE
    assert told.kinds().count("settling_round") == settled.settled.rounds >= 1
    assert told.events[-1] == ("settled", Stop.SETTLED)


def test_an_interrupt_while_settling_is_told_as_such(write_league) -> None:
    path = copies_league(write_league)
    options = RunOptions(
        sandbox=False, until_settled=True, max_games=2000, rule=SettleRule(resolution=150), bootstrap=200
    )
    league = load_league(path)
    told = Recorder()
    with LeagueStore(league.default_db) as store, pytest.raises(KeyboardInterrupt):
        run_league(league, store, StrengthExecutor(stop_after=SCHEDULE + 3), options, told)
    assert told.events[-1] == ("stopped", Stage.SETTLE, SCHEDULE + 3)


class CrashingExecutor(StrengthExecutor):
    """StrengthExecutor's games, where strong-a crashes in each game it plays at seat 0 of deal 0."""

    def _record(self, spec: MatchSpec, game: GameSpec) -> GameRecord:
        record = super()._record(spec, game)
        if record.seats[0] != "strong-a" or game.index != 0:
            return record
        fault = Fault(0, "strong-a", FaultCause.EXITED, FaultFacts(exit_status=1))
        return replace(record, ranks=(2, 1), faults=(fault,))


def test_retry_faulted_drops_the_games_of_that_fault_and_plays_them_again(write_league) -> None:
    path = copies_league(write_league)
    first, _ = run(path, CrashingExecutor())
    crashes = first.results.faults["strong-a"]
    assert crashes >= 1
    retried, told = run(path, StrengthExecutor(), RunOptions(sandbox=False, bootstrap=0, retry_faulted=("crash",)))
    assert told.events[0] == ("retrying", "crash", crashes)
    assert retried.played == crashes and retried.results.faults == {}


def test_replay_changed_forgets_a_changed_bot_and_plays_its_matches_again(write_league) -> None:
    path = copies_league(write_league)
    run(path, StrengthExecutor())
    text = path.read_text().replace('name = "weak-b"\ncommand = "random"', 'name = "weak-b"\ncommand = "heuristic"')
    path.write_text(text)
    held, told_held = run(path, StrengthExecutor())
    assert held.played == 0 and "replaying" not in told_held.kinds()
    replayed, told = run(path, StrengthExecutor(), RunOptions(sandbox=False, bootstrap=0, replay_changed=True))
    assert ("replaying", "weak-b", 6) in told.events and replayed.played == 6


def test_a_dry_run_estimates_and_says_when_the_store_would_refuse(write_league) -> None:
    path = copies_league(write_league)
    league = load_league(path)
    assert estimate_run(league, league.default_db, 2).games == SCHEDULE
    run(path, StrengthExecutor())
    assert estimate_run(league, league.default_db, 2).stored == SCHEDULE
    path.write_text(path.read_text().replace("seed = 7", "seed = 8"))
    with pytest.raises(RunRefused, match="the run would be refused: ") as refused:
        estimate_run(load_league(path), league.default_db, 2)
    assert isinstance(refused.value, BadInput)


def test_results_give_each_student_its_results_against_the_baselines_and_its_mark(write_league) -> None:
    marks = "[marks]\nweak-a = [[0.5, 60.0], [0.9, 90.0]]\n"
    path = copies_league(write_league, schedule="baselines", baselines=["weak-a"], extra=marks)
    league = load_league(path)
    with LeagueStore(league.default_db) as store:
        results = run_league(league, store, StrengthExecutor(), QUICK).results
        games = store.games()
        bare = league_results(store, bootstrap=0)
    assert results.baselines == ("weak-a",)
    assert set(results.against) == {"strong-a", "strong-b", "weak-b"}
    for student, against in results.against.items():
        assert against == against_baselines(games, student, ("weak-a",))
        held = results.held_marks[student]
        assert held.low <= mark_of(against, league.marks) <= held.high  # type: ignore[operator]
        assert results.marks.get(student) == (mark_of(against, league.marks) if held.holds else None)
    assert mark_of(results.against["strong-a"], league.marks) >= 60.0  # type: ignore[operator]
    assert bare.baselines == () and bare.against == {} and bare.marks == {} and bare.held_marks == {}


@pytest.mark.parametrize("prior_draws", ["2", "20"])
def test_report_and_table_rate_with_the_same_prior_draws(write_league, prior_draws: str) -> None:
    path = copies_league(write_league)
    run(path, StrengthExecutor())
    options = ["--bootstrap", "0", "--prior-draws", prior_draws]
    report = CliRunner().invoke(main, ["tournament", "report", str(path), "--format", "json", *options])
    table = CliRunner().invoke(main, ["tournament", "table", str(path), "--json", *options])
    assert report.exit_code == table.exit_code == 0, report.output + table.output
    with LeagueStore(path.with_suffix(".sqlite"), create=False) as store:
        results = league_results(store, bootstrap=0, prior_draws=float(prior_draws))
    expected = {rating.bot: round(rating.elo, 1) for rating in results.ratings.bots}
    assert {row["bot"]: row["elo"] for row in json.loads(report.stdout)["bots"]} == expected
    assert {row["bot"]: round(row["elo"], 1) for row in json.loads(table.stdout)["ratings"]} == expected


def test_report_and_table_refuse_an_infinite_elo_in_the_same_words(write_league) -> None:
    path = copies_league(write_league)
    run(path, StrengthExecutor())
    options = ["--bootstrap", "0", "--prior-draws", "0"]
    report = CliRunner().invoke(main, ["tournament", "report", str(path), "--format", "csv", *options])
    table = CliRunner().invoke(main, ["tournament", "table", str(path), *options])
    assert report.exit_code == table.exit_code == 1
    assert report.stderr == table.stderr and "the Elo is infinite" in table.stderr and "Traceback" not in table.output


class BuiltSeen(StrengthExecutor):
    """StrengthExecutor that records, for every match it is given, the command the built submission ran as."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.commands: list[tuple[str, ...]] = []

    def run(self, specs: Sequence[MatchSpec], on_game: GameSink) -> None:
        self.commands += [bot.command for spec in specs for bot in spec.bots if bot.name == self.name]
        super().run(specs, on_game)


def test_settling_rounds_play_a_built_submission_from_its_build_made_again_where_it_is_gone(tmp_path: Path) -> None:
    """A class run, its builds folder cleared, then `--until-settled`: the settling rounds seated the built
    submission as the program saying "not built", so a working student forfeited every settling game."""
    folder = tmp_path / "submissions" / "weak-b"
    folder.mkdir(parents=True)
    (folder / "main.py").write_text("")
    (folder / "bot.toml").write_text('build = "cp main.py bot.py"\n')
    others = "".join(f'[[bots]]\nname = "{name}"\ncommand = "random"\n' for name in ("strong-a", "strong-b", "weak-a"))
    path = tmp_path / "class.toml"
    path.write_text(f'game = "scauver"\nplayers = 2\nseed = 1\n{others}[[bots]]\neach = "submissions/*"\n')
    first = BuiltSeen("weak-b")
    run(path, first)
    copy = tmp_path / "class.builds" / "weak-b"
    assert first.commands and all(command[-1] == str(copy / "bot.py") for command in first.commands)
    shutil.rmtree(copy)
    again = BuiltSeen("weak-b")
    settling = RunOptions(sandbox=False, until_settled=True, max_games=400, rule=SettleRule(resolution=150))
    settled, recorder = run(path, again, replace(settling, bootstrap=50))
    assert settled.settled is not None and settled.settled.rounds > 0 and again.commands
    assert all(command[-1] == str(copy / "bot.py") for command in again.commands), again.commands[0]
    assert (copy / "bot.py").is_file() and "built" in recorder.kinds()

"""`referee tournament run` and `table` as a user meets them: tables, resume, clean errors, clean stops."""

from __future__ import annotations

import json
import os
import random
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from referee.deals import DealKey
from referee.isolation.proctable import live_processes
from tournaments.cli import main
from tournaments.cli.league import RunPrinter
from tournaments.league.league_file import load_league
from tournaments.league.runner import LeaguePlan
from tournaments.league.store import LeagueStore
from tournaments.league_run import RunOptions, Stage

pytestmark = pytest.mark.timeout(240)

BOTS = ["heuristic-a", "random-a", "random-b"]


def small_league(write_league, **settings: object) -> Path:
    path = write_league(bots=BOTS, command="random", deals_per_match=2, **settings)
    text = path.read_text().replace(
        'name = "heuristic-a"\ncommand = "random"', 'name = "heuristic-a"\ncommand = "heuristic"'
    )
    path.write_text(text)
    return path


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def test_run_prints_the_table_then_resumes_without_playing(write_league) -> None:
    league = small_league(write_league)
    first = invoke("tournament", "run", str(league), "--concurrency", "1", "--json", "--bootstrap", "50")
    assert first.exit_code == 0, first.output
    data = json.loads(first.stdout)
    assert data["games"] == 6 and data["league"] == "league"
    assert {entry["bot"] for entry in data["ratings"]} == set(BOTS)
    assert all(entry["faults"] == 0 and entry["games"] == 6 for entry in data["ratings"])
    assert league.with_suffix(".sqlite").exists()
    again = invoke("tournament", "run", str(league), "--bootstrap", "0")
    assert again.exit_code == 0, again.output
    assert "6 games scheduled, 6 already in" in again.stderr
    assert "Played" not in again.stderr
    assert "Rank" in again.stdout and "heuristic-a" in again.stdout


def test_table_reads_the_store(write_league) -> None:
    league = small_league(write_league)
    db = league.parent / "elsewhere.sqlite"
    assert invoke("tournament", "run", str(league), "--db", str(db), "-j", "2", "--bootstrap", "0").exit_code == 0
    by_db = invoke("tournament", "table", "--db", str(db), "--tablefmt", "github", "--crosstable")
    assert by_db.exit_code == 0, by_db.output
    assert by_db.stdout.startswith("league: 6 games") and "Rank |" in by_db.stdout and "Score" in by_db.stdout
    as_json = json.loads(invoke("tournament", "table", "--db", str(db), "--json", "--crosstable").stdout)
    assert set(as_json["crosstable"]) == set(BOTS)
    missing = invoke("tournament", "table", str(league))
    assert missing.exit_code == 1 and "no league store there" in missing.output


def test_adding_a_bot_plays_only_its_matches(write_league) -> None:
    league = small_league(write_league)
    assert invoke("tournament", "run", str(league), "-j", "1", "--bootstrap", "0").exit_code == 0
    league.write_text(league.read_text() + '[[bots]]\nname = "random-c"\ncommand = "random"\n')
    grown = invoke("tournament", "run", str(league), "-j", "2", "--no-pin", "--bootstrap", "0")
    assert grown.exit_code == 0, grown.output
    assert "24 games scheduled, 6 already in" in grown.stderr and "Played 18 games" in grown.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["tournament", "run", "absent.toml"], "absent.toml: no such file"),
        (["tournament", "run", "a.toml", "b.toml", "--db", "x.sqlite"], "--db names one store"),
        (["tournament", "run", "a.toml", "--scheduler", "tcp://h:8786", "-j", "2"], "--concurrency is for local"),
        (["tournament", "table"], "give either LEAGUE.toml or --db FILE"),
    ],
)
def test_usage_errors_are_one_line(args: list[str], message: str) -> None:
    result = invoke(*args)
    assert result.exit_code in (1, 2)
    assert message in result.output and "Traceback" not in result.output


def test_bad_league_and_changed_league_are_clean_errors(write_league) -> None:
    bad = write_league(file_name="bad", players=9)
    result = invoke("tournament", "run", str(bad))
    assert result.exit_code == 1 and "key 'players': must be at most 5" in result.output
    league = small_league(write_league)
    assert invoke("tournament", "run", str(league), "-j", "1", "--bootstrap", "0").exit_code == 0
    league.write_text(league.read_text().replace("seed = 7", "seed = 8"))
    changed = invoke("tournament", "run", str(league))
    assert changed.exit_code == 1 and "seed = 7, but the league file says seed = 8" in changed.output


def test_more_workers_than_cores_is_warned(write_league) -> None:
    league = small_league(write_league)
    assert invoke("tournament", "run", str(league), "-j", "1", "--bootstrap", "0").exit_code == 0
    result = invoke("tournament", "run", str(league), "-j", str((os.cpu_count() or 1) + 1), "--bootstrap", "0")
    assert result.exit_code == 0 and "warning: --concurrency" in result.stderr


def bot_processes_in(folder: Path) -> list[int]:
    """Live processes whose working directory is `folder` (the league's bots run there)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if Path(os.readlink(entry / "cwd")) == folder:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def wait_until_gone(folder: Path, seconds: float = 10.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := bot_processes_in(folder)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def league_with_bot_folder(tmp_path: Path, bots: int, deals: int) -> tuple[Path, Path]:
    folder = tmp_path / "bots"
    folder.mkdir()
    lines = ['game = "scout"', "players = 3", "seed = 11", f"deals_per_match = {deals}"]
    for number in range(bots):
        command = "heuristic" if number % 2 else "random"
        lines += ["[[bots]]", f'name = "bot{number}"', f'command = "{command}"', 'cwd = "bots"']
    league = tmp_path / "league.toml"
    league.write_text("\n".join(lines) + "\n")
    return league, folder


def referee_command(*args: str) -> list[str]:
    return [sys.executable, "-c", "from tournaments.cli import main; main()", *args]


def stored_games(db: Path) -> list[tuple[str, int]]:
    """The (match, game) keys in the store; none while the store is not there or not yet set up."""
    if not db.exists():
        return []
    with sqlite3.connect(db) as connection:
        try:
            return connection.execute("SELECT match_id, game_index FROM games").fetchall()
        except sqlite3.OperationalError:
            return []


def test_ctrl_c_stops_cleanly_and_says_how_to_resume(tmp_path: Path) -> None:
    league, folder = league_with_bot_folder(tmp_path, bots=5, deals=2)
    process = subprocess.Popen(
        referee_command("tournament", "run", str(league), "-j", "2"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while not stored_games(league.with_suffix(".sqlite")):
        assert time.monotonic() < deadline and process.poll() is None, process.communicate()
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGINT)
    out, err = process.communicate(timeout=60)
    if process.returncode == 0:
        pytest.skip("the league finished before the interrupt arrived")
    assert process.returncode == 130, err
    assert "Resume with: referee tournament run" in err and "Traceback" not in err
    assert wait_until_gone(folder) == []
    resumed = subprocess.run(
        referee_command("tournament", "run", str(league), "-j", "2", "--bootstrap", "0"),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert len(stored_games(league.with_suffix(".sqlite"))) == 60


def test_sigkill_at_random_moments_then_rerun_leaves_exactly_the_schedule(tmp_path: Path) -> None:
    league, folder = league_with_bot_folder(tmp_path, bots=5, deals=2)
    db = tmp_path / "kill.sqlite"
    command = referee_command("tournament", "run", str(league), "--db", str(db), "-j", "2", "--bootstrap", "0")
    delays = sorted(random.Random().uniform(0.5, 3.0) for _ in range(4))
    counts = []
    for delay in delays:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        process.kill()
        process.wait()
        assert wait_until_gone(folder) == [], "bot processes outlived a killed run"
        counts.append(len(stored_games(db)))
    finished = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert finished.returncode == 0, finished.stderr
    games = stored_games(db)
    with sqlite3.connect(db) as connection:
        seats = connection.execute("SELECT COUNT(*) FROM seats").fetchone()[0]
        matches = connection.execute("SELECT match_id, games FROM matches").fetchall()
        seeds = connection.execute("SELECT match_id, game_index, seed FROM games").fetchall()
        ((secret,),) = connection.execute("SELECT secret FROM deal_key").fetchall()
    expected = {(match_id, index) for match_id, count in matches for index in range(count)}
    print(f"killed after {[round(delay, 2) for delay in delays]} s with {counts} games stored")
    assert len(games) == len(set(games)) == 60, counts
    assert set(games) == expected
    assert seats == 3 * 60
    key = DealKey(secret)
    assert all(seed == key.deal_seed(index // 3, match) for match, index, seed in seeds), (
        "every rerun deals from the stored key"
    )
    assert counts == sorted(counts), "a killed run never loses a committed game"


HUNDRED_MATCHES = 100


def hundred_match_league(folder: Path) -> tuple[Path, Path]:
    """A league of 100 two-seat matches (two games each) of the deterministic heuristic bot under 15 names, so
    that the same deals give the same results however a run is stopped and resumed; its bots run in
    `folder`/bots. More matches than the executor's pipe could hold at once."""
    bots = folder / "bots"
    bots.mkdir(parents=True)
    lines = ['game = "scout"', "players = 2", "seed = 5", f"max_tables = {HUNDRED_MATCHES}"]
    for number in range(15):
        lines += ["[[bots]]", f'name = "bot{number:02d}"', 'command = "heuristic"', 'cwd = "bots"']
    league = folder / "league.toml"
    league.write_text("\n".join(lines) + "\n")
    return league, bots


def keyed_store(path: Path, template: Path) -> Path:
    """A store holding only the deal key of `template`: leagues played into either are dealt the same deals."""
    path.write_bytes(template.read_bytes())
    return path


def store_contents(db: Path) -> dict[str, list[tuple[object, ...]]]:
    """What a run stored: every game with its deal, every seat's result, every fault."""
    queries = {
        "matches": "SELECT match_id, bots, games FROM matches",
        "games": "SELECT match_id, game_index, seed, isolation FROM games",
        "seats": "SELECT match_id, game_index, seat, bot, rank, score, forfeited FROM seats",
        "faults": "SELECT match_id, game_index, seat, bot, kind, cause FROM faults",
    }
    with sqlite3.connect(db) as connection:
        return {name: sorted(connection.execute(query).fetchall()) for name, query in queries.items()}


def session_processes(session: int, seconds: float = 10.0) -> list[int]:
    """Live processes of `session` (a stopped run's own session: its executor's workers, and multiprocessing's
    resource tracker, which ends by itself a moment after the run: it is given `seconds` to)."""
    deadline = time.monotonic() + seconds
    while (left := [process.pid for process in live_processes() if process.session == session]) and (
        time.monotonic() < deadline
    ):
        time.sleep(0.1)
    return left


@pytest.fixture(scope="module")
def clean_hundred(tmp_path_factory) -> tuple[Path, dict[str, list[tuple[object, ...]]]]:
    """The template store (only a deal key) and what an uninterrupted run of the 100-match league stores."""
    folder = tmp_path_factory.mktemp("clean")
    league, _ = hundred_match_league(folder)
    template = folder / "template.sqlite"
    with LeagueStore(template) as store:
        store.deal_key()
    db = keyed_store(folder / "clean.sqlite", template)
    command = referee_command(
        "tournament", "run", str(league), "--db", str(db), "-j", "2", "--no-sandbox", "--bootstrap", "0"
    )
    completed = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr
    contents = store_contents(db)
    assert len(contents["matches"]) == HUNDRED_MATCHES and len(contents["games"]) == 2 * HUNDRED_MATCHES
    return template, contents


@pytest.mark.timeout(900)
@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl-c", "sigterm"])
def test_a_stopped_hundred_match_league_exits_at_once_and_resumes_to_the_clean_runs_games(
    tmp_path: Path, clean_hundred, signum: signal.Signals, status: int
) -> None:
    template, clean = clean_hundred
    league, bots = hundred_match_league(tmp_path)
    db = keyed_store(tmp_path / "stopped.sqlite", template)
    command = referee_command(
        "tournament", "run", str(league), "--db", str(db), "-j", "2", "--no-sandbox", "--bootstrap", "0"
    )
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 300
        while len(stored_games(db)) < 10:
            assert time.monotonic() < deadline and process.poll() is None, process.communicate()
            time.sleep(0.05)
        process.send_signal(signum)
        sent = time.monotonic()
        _, errors = process.communicate(timeout=60)
        stopped_in = time.monotonic() - sent
    finally:
        process.kill()
    print(f"{signum.name}: exited {stopped_in:.2f} s after the signal, {len(stored_games(db))} games stored")
    assert process.returncode == status, errors
    assert "Traceback" not in errors and "Exception ignored" not in errors and "leaked" not in errors, errors
    assert "Resume with: referee tournament run" in errors
    assert wait_until_gone(bots) == [], "bot processes outlived the stopped run"
    assert session_processes(process.pid) == [], "worker processes outlived the stopped run"
    assert len(stored_games(db)) < 2 * HUNDRED_MATCHES, "the run ended before the signal stopped it"
    resumed = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert store_contents(db) == clean


def test_run_on_a_dask_scheduler(write_league) -> None:
    distributed = pytest.importorskip("distributed")
    league = small_league(write_league)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:
        result = invoke("tournament", "run", str(league), "--scheduler", cluster.scheduler_address, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["games"] == 6


def test_several_leagues_in_one_run(write_league) -> None:
    first = small_league(write_league)
    second = write_league(file_name="duel", game="scauver", players=2, bots=["x", "y"], command="random")
    text = invoke("tournament", "run", str(first), str(second), "-j", "2", "--bootstrap", "0")
    assert text.exit_code == 0, text.output
    assert "league: 6 games" in text.stdout and "duel: 2 games" in text.stdout
    as_json = json.loads(invoke("tournament", "run", str(first), str(second), "--json").stdout)
    assert [document["league"] for document in as_json] == ["league", "duel"]


def test_bot_logs_are_kept_beside_the_league_by_default_one_folder_per_match(write_league) -> None:
    league = small_league(write_league)
    result = invoke("tournament", "run", str(league), "-j", "1", "--bootstrap", "0")
    assert result.exit_code == 0, result.output
    logs = league.with_suffix(".logs")
    assert f"bot logs in {logs}/MATCH/BOT.log" in result.stderr
    matches = list(logs.iterdir())
    assert matches and all({log.stem for log in match.glob("*.log")} <= set(BOTS) for match in matches)


def test_replays_and_logs_go_where_the_league_says(write_league) -> None:
    league = small_league(write_league, replay_dir="replays", log_dir="logs")
    assert invoke("tournament", "run", str(league), "-j", "1", "--bootstrap", "0").exit_code == 0
    replays = sorted((league.parent / "replays").glob("*.json"))
    assert len(replays) == 6 and list((league.parent / "logs").glob("*/*.log"))
    with sqlite3.connect(league.with_suffix(".sqlite")) as connection:
        stored = sorted(path for (path,) in connection.execute("SELECT replay_path FROM games"))
    assert stored == [str(path) for path in replays]
    verified = CliRunner().invoke(main, ["replay", "verify", str(replays[0])])
    assert verified.exit_code == 0, verified.output


def test_missing_dask_is_one_line(write_league, monkeypatch) -> None:
    league = small_league(write_league)
    monkeypatch.setitem(sys.modules, "distributed", None)
    missing = invoke("tournament", "run", str(league), "--scheduler", "tcp://127.0.0.1:9")
    assert missing.exit_code == 1 and "pip install 'card-referee[dask]'" in missing.output


def test_the_resume_hint_repeats_the_runs_options(tmp_path: Path) -> None:
    """The hint printed at a stop gave `referee tournament run LEAGUE --db FILE` alone: a run with --no-sandbox,
    -j 2 and --bootstrap 0 resumed with the sandbox, the machine's cores and a bootstrap. The hint repeats
    them, and running it as printed completes the schedule."""
    league, folder = league_with_bot_folder(tmp_path, bots=5, deals=2)
    db = tmp_path / "hint.sqlite"
    options = ["--db", str(db), "--concurrency", "2", "--no-sandbox", "--bootstrap", "0", "--retry-faulted", "crash"]
    process = subprocess.Popen(
        referee_command("tournament", "run", str(league), *options),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while not stored_games(db):
        assert time.monotonic() < deadline and process.poll() is None, process.communicate()
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=60)
    if process.returncode == 0:
        pytest.skip("the league finished before the interrupt arrived")
    hint = shlex.split(err.split("Resume with: ", 1)[1].splitlines()[0])
    assert hint[:4] == ["referee", "tournament", "run", str(league)]
    assert " ".join(hint[4:]) == f"--concurrency 2 --db {db} --no-sandbox --bootstrap 0"
    assert wait_until_gone(folder) == []
    resumed = subprocess.run(referee_command(*hint[1:]), capture_output=True, text=True, timeout=180)
    assert resumed.returncode == 0, resumed.stderr
    assert "sandbox" in resumed.stderr and len(stored_games(db)) == 60


def test_a_settling_stops_hint_keeps_the_runs_options_and_spells_the_settling_ones_once(
    write_league, capsys: pytest.CaptureFixture[str]
) -> None:
    path = small_league(write_league)
    league = load_league(path)
    given = ["--concurrency", "2", "--db", "x.sqlite", "--until-settled", "--max-games", "500", "--no-sandbox"]
    options = RunOptions(until_settled=True, max_games=500)
    with LeagueStore(path.with_suffix(".sqlite")) as store:
        plan = LeaguePlan(league, 0, 0, ())
        RunPrinter(str(path), "x.sqlite", options, league, given).stopped(Stage.SETTLE, plan, store)
    hint = shlex.split(capsys.readouterr().err.split("Resume with: ", 1)[1])
    assert hint[4:7] == ["--concurrency", "2", "--no-sandbox"]
    assert hint.count("--db") == hint.count("--until-settled") == hint.count("--max-games") == 1
    assert hint[hint.index("--max-games") + 1] == "500" and hint[hint.index("--db") + 1] == "x.sqlite"

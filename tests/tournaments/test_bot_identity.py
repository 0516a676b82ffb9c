"""Bot identity in the store: a resubmitted program, a changed command, changed limits or options are refused
with what changed and what to do; `forget` drops a bot's games so that a rerun plays them again; a bot
removed from the file is listed as retired."""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_store import record_of

from referee.botspec import resolve_bot
from tournaments.cli import main
from tournaments.league.identity import ProgramUnreadable, program_digest, program_file
from tournaments.league.league_file import load_league
from tournaments.league.schedule import league_schedule
from tournaments.league.store import BotChanged, LeagueStore, StoreMismatch, UnknownStoredBot

pytestmark = pytest.mark.timeout(240)

RANDOM_BOT = Path(__file__).resolve().parents[2] / "bots" / "python" / "random_bot.py"


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def script_league(tmp_path: Path, bots: dict[str, str], file_name: str = "league", **settings: str) -> Path:
    """A two-seat Scauver league (one deal per match) of `bots`: name -> command, in FILE_NAME.toml."""
    lines = ['game = "scauver"', "players = 2", "seed = 3", *(f"{key} = {value}" for key, value in settings.items())]
    for name, command in bots.items():
        lines += ["[[bots]]", f'name = "{name}"', f'command = "{command}"']
    path = tmp_path / f"{file_name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def filled_store(league_path: Path, db: Path) -> LeagueStore:
    """A store of `league_path` holding every scheduled game (scripted records, no bots run)."""
    league = load_league(league_path)
    store = LeagueStore(db)
    store.bind(league)
    schedule = league_schedule(league, store.deal_key())
    store.add_matches(schedule)
    for match in schedule:
        for spec in match.games:
            store.add_game(dataclasses.replace(record_of(match, spec), game="scauver"))
    return store


# The digest.


def test_the_digest_is_of_the_file_the_command_names(tmp_path: Path) -> None:
    script = tmp_path / "mine.py"
    shutil.copy(RANDOM_BOT, script)
    assert program_file(resolve_bot(str(script), "scout").command, None) == script
    built_in = resolve_bot("random", "scout").command
    assert program_file(built_in, None) == RANDOM_BOT
    assert program_file(["node", "bot.js", "--fast"], str(tmp_path)) == Path(shutil.which("node") or "node")
    (tmp_path / "bot.js").write_text("// a bot\n")
    assert program_file(["node", "--fast", "bot.js"], str(tmp_path)) == tmp_path / "bot.js"
    executable = tmp_path / "bot"
    executable.write_text("#!/bin/sh\n")
    executable.chmod(0o755)
    assert program_file([str(executable), "bot.js"], str(tmp_path)) == executable
    before = program_digest([sys.executable, str(script)], None)
    assert before.startswith("sha256:") and before == program_digest([sys.executable, str(script)], None)
    script.write_text(script.read_text() + "# resubmitted\n")
    assert program_digest([sys.executable, str(script)], None) != before
    assert program_digest([sys.executable, str(script)], None, version="2") == "version:2"


def test_a_program_that_cannot_be_read_is_said_so(tmp_path: Path) -> None:
    with pytest.raises(ProgramUnreadable, match="cannot read '/nonexistent/bot' to identify the bot"):
        program_digest(["/nonexistent/bot"], None)
    with pytest.raises(ProgramUnreadable, match="not on PATH"):
        program_digest(["no-such-program-anywhere", "x.py"], str(tmp_path))


# Refusals.


def test_a_resubmitted_program_is_held_then_forgotten_and_played_again(tmp_path: Path) -> None:
    script = tmp_path / "mine.py"
    shutil.copy(RANDOM_BOT, script)
    league = script_league(tmp_path, {"mine": "mine.py", "rand-a": "random", "rand-b": "random"})
    first = invoke("tournament", "run", str(league), "-j", "1", "--bootstrap", "0", "--json")
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["games"] == 6
    script.write_text(script.read_text() + "# a better bot, resubmitted under the same name\n")
    held = invoke("tournament", "run", str(league), "-j", "1", "--bootstrap", "0")
    assert held.exit_code == 0, held.output
    message = held.stderr
    assert "bot 'mine' is held: its 4 stored game(s) were played by 'mine.py' (program sha256 " in message
    assert "the league file now runs 'mine.py' (program sha256 " in message
    assert "--replay-changed" in message and "Traceback" not in message
    forgotten = invoke("tournament", "forget", str(league), "mine")
    assert forgotten.exit_code == 0, forgotten.output
    assert "dropped 4 game(s) of 2 match(es)" in forgotten.output
    rerun = invoke("tournament", "run", str(league), "-j", "1", "--bootstrap", "0", "--json")
    assert rerun.exit_code == 0, rerun.output
    assert "6 games scheduled, 2 already in" in rerun.stderr and "Played 4 games" in rerun.stderr
    assert json.loads(rerun.stdout)["games"] == 6


def test_replay_changed_replays_only_the_changed_bot_s_matches(tmp_path: Path) -> None:
    script = tmp_path / "mine.py"
    shutil.copy(RANDOM_BOT, script)
    league = script_league(tmp_path, {"mine": "mine.py", "rand-a": "random", "rand-b": "random"})
    assert invoke("tournament", "run", str(league), "-j", "1", "--bootstrap", "0").exit_code == 0
    script.write_text(script.read_text() + "# fixed\n")
    rerun = invoke("tournament", "run", str(league), "-j", "1", "--bootstrap", "0", "--replay-changed")
    assert rerun.exit_code == 0, rerun.output
    assert "replaying 'mine': its 4 stored game(s) were played by" in rerun.stderr
    assert "dropped 4 game(s) of 2 match(es)" in rerun.stderr and "Played 4 games" in rerun.stderr
    again = invoke("tournament", "run", str(league), "-j", "1", "--bootstrap", "0", "--replay-changed")
    assert "replaying" not in again.stderr and "Played" not in again.stderr


def test_a_changed_command_under_a_stored_name_is_refused(tmp_path: Path) -> None:
    league = script_league(tmp_path, {"a": "random", "b": "random"})
    filled_store(league, tmp_path / "db.sqlite").close()
    changed = load_league(script_league(tmp_path, {"a": "heuristic", "b": "random"}))
    with LeagueStore(tmp_path / "db.sqlite") as store, pytest.raises(BotChanged) as refused:
        store.bind(changed)
    assert refused.value.bots == ("a",)
    assert "bot 'a': its 2 stored game(s) were played by 'random' (program sha256" in str(refused.value)
    assert "the league file now runs 'heuristic' (program sha256" in str(refused.value)
    assert f"--db {tmp_path / 'db.sqlite'}" in str(refused.value)


def test_a_declared_version_identifies_the_program(tmp_path: Path) -> None:
    script = tmp_path / "mine.py"
    shutil.copy(RANDOM_BOT, script)
    path = script_league(tmp_path, {"mine": "mine.py", "b": "random"})
    path.write_text(path.read_text().replace('command = "mine.py"', 'command = "mine.py"\nversion = "1.0"'))
    filled_store(path, tmp_path / "db.sqlite").close()
    script.write_text(script.read_text() + "# the same version, edited\n")
    with LeagueStore(tmp_path / "db.sqlite") as store:
        assert store.bind(load_league(path)) == []
    path.write_text(path.read_text().replace('version = "1.0"', 'version = "1.1"'))
    with (
        LeagueStore(tmp_path / "db.sqlite") as store,
        pytest.raises(BotChanged, match="now runs 'mine.py' .version '1.1'."),
    ):
        store.bind(load_league(path))


def test_a_bot_without_stored_games_may_change(tmp_path: Path) -> None:
    with LeagueStore(tmp_path / "db.sqlite") as store:
        store.bind(load_league(script_league(tmp_path, {"a": "random", "b": "random"})))
        notes = store.bind(load_league(script_league(tmp_path, {"a": "heuristic", "b": "random"})))
    (note,) = notes
    assert note.startswith("bot 'a' now runs 'heuristic' (program sha256 ") and "instead of 'random'" in note
    assert note.endswith("it has no stored game, so nothing is mixed")


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"fault_policy": '"substitute"'}, 'fault_policy = "forfeit" in the store, "substitute" in the league file'),
        ({"fault_budget": "5"}, "fault_budget = 3 in the store, 5 in the league file"),
        ({"extra": "[limits]\nmove_time_ms = 250"}, "move_time_ms = 1000 in the store, 250 in the league file"),
        ({"extra": "[config]\nround_cap = 50"}, "game options (round_cap = 200 in the store, 50 in the league file)"),
    ],
)
def test_changed_limits_and_options_are_refused_by_name(tmp_path: Path, settings: dict, named: str) -> None:
    bots = {"a": "random", "b": "random"}
    filled_store(script_league(tmp_path, bots), tmp_path / "db.sqlite").close()
    extra = settings.pop("extra", "")
    path = script_league(tmp_path, bots, **settings)
    path.write_text(path.read_text().replace("[[bots]]", extra + "\n[[bots]]", 1))
    league = load_league(path)
    with LeagueStore(tmp_path / "db.sqlite") as store, pytest.raises(StoreMismatch) as refused:
        store.bind(league)
    assert named in str(refused.value) and "another --db" in str(refused.value)
    assert not isinstance(refused.value, BotChanged)


# Retired bots and forget.


def test_a_bot_removed_from_the_file_is_listed_as_retired(tmp_path: Path) -> None:
    db = tmp_path / "league.sqlite"
    full = script_league(tmp_path, {"a": "random", "b": "random", "c": "random"}, file_name="full")
    filled_store(full, db).close()
    smaller = script_league(tmp_path, {"a": "random", "b": "random"})
    with LeagueStore(db) as store:
        (note,) = store.bind(load_league(smaller))
        assert store.retired_bots() == ["c"]
    assert "bot 'c' is no longer in the league file: listed as retired" in note
    assert f"referee tournament forget {smaller} c" in note
    table = invoke("tournament", "table", str(smaller), "--bootstrap", "0")
    assert table.exit_code == 0, table.output
    assert "Retired (no longer in the league file; their games still count): c" in table.stdout
    as_json = json.loads(invoke("tournament", "table", str(smaller), "--json", "--bootstrap", "0").stdout)
    assert as_json["retired"] == ["c"] and {entry["bot"] for entry in as_json["ratings"]} == {"a", "b", "c"}
    with LeagueStore(db) as store:
        store.bind(load_league(full))
        assert store.retired_bots() == []


def test_forget_drops_the_bots_matches_and_nothing_else(tmp_path: Path) -> None:
    db = tmp_path / "league.sqlite"
    league = script_league(tmp_path, {"a": "random", "b": "random", "c": "random"})
    with filled_store(league, db) as store:
        assert store.game_count() == 6
        forgotten = store.forget(["c"])
        assert (forgotten.matches, forgotten.games) == (2, 4)
        assert store.game_count() == 2 and store.bot_names() == ["a", "b"]
        assert all(set(game.ranks) == {"a", "b"} for game in store.games())
        with pytest.raises(UnknownStoredBot, match="holds no bot 'zed'; it holds 'a', 'b'"):
            store.forget(["zed"])
        schedule = league_schedule(load_league(league), store.deal_key())
        store.bind(load_league(league))
        store.add_matches(schedule)
        assert sum(len(match.games) for match in store.missing(schedule)) == 4
    unknown = invoke("tournament", "forget", str(league), "nobody")
    assert unknown.exit_code == 1 and "holds no bot 'nobody'" in unknown.output and "Traceback" not in unknown.output


FROM_LOG = """import pathlib
from protocol.sdk import run_bot

exec(pathlib.Path(__file__).with_name("moves.log").read_text())

if __name__ == "__main__":
    raise SystemExit(run_bot(choose, name="ann"))
"""


@pytest.mark.parametrize(
    ("name", "first", "second"),
    [
        (
            "moves.log",
            "def choose(observation, legal):\n    return legal[0]\n",
            "def choose(o, legal):\n    return legal[-1]\n",
        ),
        ("__pycache__/helper.cpython-311.pyc", "", "x"),
    ],
)
def test_a_change_to_any_file_of_a_folder_is_replayed(tmp_path: Path, name: str, first: str, second: str) -> None:
    # A .log the bot executes, byte code beside it: the folder's digest covers them, so --replay-changed replays.
    folder = tmp_path / "subs" / "ann"
    (folder / "__pycache__").mkdir(parents=True)
    (folder / "bot.py").write_text(FROM_LOG)
    (folder / "moves.log").write_text("def choose(observation, legal):\n    return legal[0]\n")
    (folder / name).write_text(first)
    league = script_league(tmp_path, {"rand-a": "random", "rand-b": "random"})
    league.write_text(league.read_text() + '[[bots]]\neach = "subs/*"\n')
    played = invoke("tournament", "run", str(league), "-j", "1", "--bootstrap", "0", "--json")
    assert played.exit_code == 0, played.output
    assert json.loads(played.stdout)["games"] == 6
    still = invoke("tournament", "run", str(league), "-j", "1", "--bootstrap", "0")
    assert "held" not in still.stderr and "Played" not in still.stderr, "running a bot changes nothing in its folder"
    (folder / name).write_text(second)
    held = invoke("tournament", "run", str(league), "-j", "1", "--bootstrap", "0")
    assert "bot 'ann' is held" in held.stderr, held.stderr
    rerun = invoke("tournament", "run", str(league), "-j", "1", "--bootstrap", "0", "--replay-changed")
    assert rerun.exit_code == 0, rerun.output
    assert "replaying 'ann'" in rerun.stderr and "Played 4 games" in rerun.stderr

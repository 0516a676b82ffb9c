"""League files: the examples load, defaults fill in, and every mistake names its key and what to do."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from protocol import limits as protocol_limits
from referee.deals import DealKey
from referee.records import FaultPolicy, Limits
from tournaments.cli import main
from tournaments.league.league_file import League, LeagueFileError, ScheduleKind, load_league
from tournaments.league.schedule import league_schedule, match_spec

EXAMPLES = sorted((Path(__file__).parents[2] / "tournaments" / "examples").glob("*.toml"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda path: path.stem)
def test_every_example_league_loads(path: Path) -> None:
    league = load_league(path)
    assert len(league.bots) >= league.players
    assert {bot.command for bot in league.bots} <= {"random", "heuristic", "search"}


def test_examples_cover_both_games_and_every_table_size() -> None:
    sizes = {(league.game, league.players) for league in map(load_league, EXAMPLES)}
    assert {("scout", 3), ("scout", 4), ("scout", 5), ("scauver", 2), ("scauver", 4)} <= sizes


def test_defaults(write_league) -> None:
    league = load_league(write_league(file_name="my-league"))
    assert isinstance(league, League)
    assert league.name == "my-league"
    assert league.schedule is ScheduleKind.ROUND_ROBIN
    assert league.deals_per_match == 2 and league.games_per_match == 6, "the smallest balanced match at 3 seats"
    assert league.limits == Limits()
    assert league.limits.fault_budget == protocol_limits.DEFAULT_FAULT_BUDGET
    assert league.max_tables is None and league.challenger is None
    assert league.default_db == league.path.with_suffix(".sqlite")
    assert league.ponder is False, "bots are frozen while not on move unless the league lets them ponder"


@pytest.mark.parametrize(("players", "deals", "games"), [(2, 1, 2), (3, 2, 6), (4, 6, 24), (5, 4, 20)])
def test_deals_default_to_the_smallest_balanced_match(write_league, players: int, deals: int, games: int) -> None:
    league = load_league(write_league(bots=[f"bot{number}" for number in range(players)], players=players))
    assert (league.deals_per_match, league.games_per_match) == (deals, games)
    doubled = load_league(
        write_league(
            file_name="doubled",
            players=players,
            deals_per_match=2 * deals,
            bots=[f"bot{number}" for number in range(players)],
        )
    )
    assert doubled.games_per_match == 2 * games


def test_settings_are_read(write_league, tmp_path: Path) -> None:
    extra = "[limits]\nmove_time_ms = 250\nstartup_time_s = 2.5\ntime_bank_ms = 900\nmemory_mb = 256\n"
    path = write_league(
        deals_per_match=4,
        fault_policy="substitute",
        fault_budget=5,
        max_tables=2,
        schedule="gauntlet",
        challenger="beta",
        extra=extra,
    )
    league = load_league(path)
    assert league.limits == Limits(
        move_time_ms=250,
        startup_time_s=2.5,
        time_bank_ms=900,
        memory_mb=256,
        fault_policy=FaultPolicy.SUBSTITUTE,
        fault_budget=5,
    )
    assert (league.deals_per_match, league.max_tables, league.challenger) == (4, 2, "beta")
    assert league.schedule is ScheduleKind.GAUNTLET


def test_a_league_may_let_its_bots_ponder(write_league) -> None:
    league = load_league(write_league(ponder=True))
    assert league.ponder is True
    (match, *_) = league_schedule(league, DealKey.from_seed(1))
    assert match_spec(league, match).ponder is True


def test_bot_commands_and_directories(tmp_path: Path) -> None:
    path = tmp_path / "league.toml"
    path.write_text(
        'game = "scauver"\nplayers = 2\nseed = 1\n'
        '[[bots]]\nname = "a"\ncommand = ["python3", "my bot.py"]\ncwd = "bots/a"\n'
        '[[bots]]\nname = "b"\ncommand = "random"\n'
    )
    first, second = load_league(path).bots
    assert first.command == "python3 'my bot.py'"
    assert first.cwd == str(tmp_path.resolve() / "bots" / "a")
    assert second.cwd is None


BAD_SETTINGS = [
    ({"game": None}, "game", "is missing"),
    ({"game": "chess"}, "game", "no game named"),
    ({"game": 3}, "game", "non-empty string"),
    ({"players": None}, "players", "is missing"),
    ({"players": "four"}, "players", "must be an integer"),
    ({"players": 9}, "players", "at most"),
    ({"players": 5}, "bots", "cannot fill a table of 5"),
    ({"seed": None}, "seed", "is missing"),
    ({"seed": -1}, "seed", "at least 0"),
    ({"seed": 1.5}, "seed", "must be an integer"),
    ({"deals_per_match": 0}, "deals_per_match", "at least 1"),
    ({"deals_per_match": 3}, "deals_per_match", "3 deals do not balance 3 seats.*use deals_per_match = 2 or 4"),
    ({"deals_per_match": 1}, "deals_per_match", "multiple of 2 deals \\(6 games\\); use deals_per_match = 2$"),
    ({"players": 4, "deals_per_match": 2}, "deals_per_match", "multiple of 6 deals \\(24 games\\); use .* = 6$"),
    (
        {"players": 5, "deals_per_match": 7, "bots": [f"bot{number}" for number in range(5)]},
        "deals_per_match",
        "multiple of 4 deals \\(20 games\\); use .* 4 or 8$",
    ),
    ({"schedule": "swiss"}, "schedule", "must be one of"),
    ({"schedule": "gauntlet"}, "challenger", "is missing"),
    ({"schedule": "gauntlet", "challenger": "nobody"}, "challenger", "names no bot"),
    ({"challenger": "alpha"}, "challenger", "only for a gauntlet"),
    ({"max_tables": 0}, "max_tables", "at least 1"),
    ({"fault_policy": "pardon"}, "fault_policy", "must be one of"),
    ({"fault_budget": -2}, "fault_budget", "at least 1"),
    ({"fault_budget": 0}, "fault_budget", "at least 1"),
    ({"name": ""}, "name", "non-empty string"),
    ({"replay_dir": 5}, "replay_dir", "non-empty string"),
    ({"colour": "red"}, "colour", "is not a league setting"),
    ({"config": 3}, "config", "must be a table"),
    ({"ponder": "yes"}, "ponder", "must be true or false"),
]


@pytest.mark.parametrize(("settings", "key", "problem"), BAD_SETTINGS, ids=[key for _, key, _ in BAD_SETTINGS])
def test_bad_setting_names_its_key(write_league, settings: dict, key: str, problem: str) -> None:
    with pytest.raises(LeagueFileError, match=problem) as caught:
        load_league(write_league(**settings))
    assert caught.value.key == key
    assert f"key {key!r}" in str(caught.value)


BAD_TABLES = [
    ("[limits]\nmove_time_ms = 0\n", "limits.move_time_ms", "at least 1"),
    ("[limits]\nmove_time_ms = 1.5\n", "limits.move_time_ms", "integer"),
    ("[limits]\nstartup_time_s = -1\n", "limits.startup_time_s", "positive number"),
    ("[limits]\ntime_bank_ms = -5\n", "limits.time_bank_ms", "at least 0"),
    ("[limits]\nmemory_mb = 1\n", "limits.memory_mb", "at least 16"),
    ("[limits]\nmove_time = 5\n", "limits.move_time", "not a league setting"),
    ("[config]\nno_such_option = 1\n", "config", "has no option"),
]


@pytest.mark.parametrize(("extra", "key", "problem"), BAD_TABLES, ids=[key for _, key, _ in BAD_TABLES])
def test_bad_limit_or_config_names_its_key(write_league, extra: str, key: str, problem: str) -> None:
    with pytest.raises(LeagueFileError, match=problem) as caught:
        load_league(write_league(extra=extra))
    assert caught.value.key == key


BAD_BOTS = [
    ('bots = "random"\n', "bots", "array of tables"),
    ('[[bots]]\nname = "a"\n', "bots[0].command", "is missing"),
    ('[[bots]]\ncommand = "random"\n', "bots[0].name", "is missing"),
    ('[[bots]]\nname = "a"\ncommand = []\n', "bots[0].command", "command line string or a list"),
    ('[[bots]]\nname = "a"\ncommand = "random"\nflavour = 1\n', "bots[0].flavour", "not a league setting"),
    ('[[bots]]\nname = "a"\ncommand = "random"\n[[bots]]\nname = "a"\ncommand = "random"\n', "bots[1].name", "twice"),
]


@pytest.mark.parametrize(("bots", "key", "problem"), BAD_BOTS, ids=[key for _, key, _ in BAD_BOTS])
def test_bad_bot_names_its_key(tmp_path: Path, bots: str, key: str, problem: str) -> None:
    path = tmp_path / "league.toml"
    path.write_text('game = "scout"\nplayers = 3\nseed = 1\n' + bots)
    with pytest.raises(LeagueFileError, match=problem) as caught:
        load_league(path)
    assert caught.value.key == key


def test_no_bots(tmp_path: Path) -> None:
    path = tmp_path / "league.toml"
    path.write_text('game = "scout"\nplayers = 3\nseed = 1\n')
    with pytest.raises(LeagueFileError, match=r"key 'bots': is missing; add one \[\[bots\]\]"):
        load_league(path)


def test_missing_file_and_bad_syntax(tmp_path: Path) -> None:
    with pytest.raises(LeagueFileError, match="no such file"):
        load_league(tmp_path / "absent.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("game = \n")
    with pytest.raises(LeagueFileError, match="not valid TOML"):
        load_league(broken)


def test_bot_paths_are_relative_to_the_league_file(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    script = tmp_path / "mine" / "bot.py"
    script.write_text("print('a bot')\n")
    path = tmp_path / "league.toml"
    path.write_text(
        'game = "scauver"\nplayers = 2\nseed = 1\n'
        '[[bots]]\nname = "mine"\ncommand = "mine/bot.py"\n'
        '[[bots]]\nname = "local"\ncommand = "bot.py --fast"\ncwd = "mine"\n'
        '[[bots]]\nname = "heuristic"\ncommand = "heuristic"\n'
    )
    mine, local, heuristic = load_league(path).bots
    assert mine.spec.command[-1] == str(script.resolve()) and mine.spec.name == "mine"
    assert local.spec.command[-2:] == (str(script.resolve()), "--fast") and local.spec.cwd == str(tmp_path / "mine")
    assert heuristic.spec.command[-1] == "bots.python.scauver_heuristic"


def test_a_stdio_bots_path_is_relative_to_the_league_file(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    program = tmp_path / "mine" / "bot.sh"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    path = tmp_path / "league.toml"
    path.write_text(
        'game = "scout"\nplayers = 2\nseed = 1\n'
        '[[bots]]\nname = "mine"\ncommand = "stdio:mine/bot.sh"\n'
        '[[bots]]\nname = "random"\ncommand = "random"\n'
    )
    mine, _ = load_league(path).bots
    assert mine.spec.command[1:] == ("-m", "protocol.stdio_bridge", "--", str(program.resolve()))
    assert mine.spec.name == "mine" and not mine.spec.named_by_hello


def test_unknown_bot_names_its_key(write_league) -> None:
    with pytest.raises(LeagueFileError, match="no-such-program-here") as caught:
        load_league(write_league(command="no-such-program-here --fast"))
    assert caught.value.key == "bots[0].command"


def test_the_fault_budget_has_one_minimum_in_files_and_on_the_command_line(write_league) -> None:
    lowest = protocol_limits.MIN_FAULT_BUDGET
    assert load_league(write_league(fault_budget=lowest)).limits.fault_budget == lowest
    with pytest.raises(LeagueFileError, match=f"at least {lowest}"):
        load_league(write_league(fault_budget=lowest - 1))
    refused = CliRunner().invoke(main, ["play", "scout", *["random"] * 3, "--fault-budget", str(lowest - 1)])
    assert refused.exit_code == 2 and f"{lowest - 1} is not in the range x>={lowest}" in refused.output

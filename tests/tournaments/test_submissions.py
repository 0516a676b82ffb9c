"""A league's folder of submissions (`each`) and its baselines schedule: parsing, the command found in each
folder, submissions that cannot run, and the tables."""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tournaments.cli import main
from tournaments.league.league_file import LeagueFileError, ScheduleKind, load_league
from tournaments.league.schedule import league_tables
from tournaments.league.submissions import found_command

HEAD = 'game = "scout"\nplayers = {players}\nseed = 1\n'
BASELINES = 'schedule = "baselines"\nbaselines = ["random", "heuristic"]\n'
LADDER = '[[bots]]\nname = "random"\ncommand = "random"\n[[bots]]\nname = "heuristic"\ncommand = "heuristic"\n'


def _class(tmp_path: Path, folders: dict[str, dict[str, str]], each: str = "", players: int = 2) -> Path:
    """A league beside `submissions/NAME/FILE` for each folder's files ("+x" after a file name: executable)."""
    for name, files in folders.items():
        folder = tmp_path / "submissions" / name
        folder.mkdir(parents=True)
        for file, text in files.items():
            path = folder / file.removesuffix("+x")
            path.write_text(text)
            if file.endswith("+x"):
                path.chmod(0o755)
    league = tmp_path / "class.toml"
    each = each or '[[bots]]\neach = "submissions/*"\n'
    league.write_text(HEAD.format(players=players) + BASELINES + LADDER + each)
    return league


def _run(command: tuple[str, ...], cwd: str | None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=60, check=False)


def test_each_folder_is_a_bot_named_after_it_with_the_program_found_in_it(tmp_path: Path) -> None:
    league = load_league(
        _class(tmp_path, {"zoe": {"bot.py": "", "bot.js": ""}, "al": {"bot+x": "#!/bin/sh\n"}, "bea": {"bot.js": ""}})
    )
    students = {bot.name: bot for bot in league.bots if bot.name not in league.baselines}
    assert list(students) == ["al", "bea", "zoe"]
    folder = tmp_path / "submissions"
    assert students["zoe"].spec.command == (sys.executable, str(folder / "zoe" / "bot.py"))
    assert students["al"].spec.command == (str(folder / "al" / "bot"),)
    assert all(bot.cwd == str(folder / name) and bot.spec.cwd == bot.cwd for name, bot in students.items())
    assert found_command(folder / "bea") == "node bot.js"
    assert (students["zoe"].command, students["al"].command) == ("bot.py", "./bot")


def test_a_given_command_runs_in_each_folder(tmp_path: Path) -> None:
    each = '[[bots]]\neach = "submissions/*"\ncommand = "main.py --fast"\n'
    league = load_league(_class(tmp_path, {"kim": {"main.py": "", "bot.py": ""}}, each))
    (kim,) = [bot for bot in league.bots if bot.name == "kim"]
    assert kim.spec.command == (sys.executable, str(tmp_path / "submissions" / "kim" / "main.py"), "--fast")


def test_a_submission_that_cannot_run_still_plays_and_says_why(tmp_path: Path) -> None:
    folders = {"empty": {"README.md": "x"}, "unbuilt": {"Makefile": "bot:\n", "bot.c": ""}, "lazy": {"bot": ""}}
    league = load_league(_class(tmp_path, folders))
    bots = {bot.name: bot for bot in league.bots}
    for name, says in [
        ("empty", "no bot program in"),
        ("unbuilt", 'no bot program in the submission folder, and its Makefile was not built: add build = "make"'),
        ("lazy", "'bot' is not executable"),
    ]:
        ran = _run(bots[name].spec.command, bots[name].spec.cwd)
        assert ran.returncode == 1 and says in ran.stderr, (name, ran.stderr)
    each = '[[bots]]\neach = "submissions/*"\ncommand = "./run.sh --fast"\n'
    unstarted = load_league(_class(tmp_path / "given", {"jo": {"bot.py": ""}}, each)).bots[-1]
    ran = _run(unstarted.spec.command, unstarted.spec.cwd)
    assert ran.returncode == 1 and "cannot run './run.sh --fast' in" in ran.stderr
    assert "no such bot program" in ran.stderr


@pytest.mark.parametrize(
    "each, problem",
    [
        ('[[bots]]\neach = "nowhere/*"\n', "key 'bots[2].each': 'nowhere/*' matches no folder"),
        ('[[bots]]\neach = "submissions/*"\nname = "x"\n', "key 'bots[2].name': is not a league setting"),
    ],
)
def test_bad_each_entries_name_their_key(tmp_path: Path, each: str, problem: str) -> None:
    with pytest.raises(LeagueFileError, match=re.escape(problem)):
        load_league(_class(tmp_path, {"ann": {"bot.py": ""}}, each))


def test_folders_with_unsafe_or_taken_names_are_skipped_with_a_note(tmp_path: Path) -> None:
    """A student cannot stop the class's league, nor pass for a baseline, by naming a folder: the folder is
    skipped and the organiser told why. A folder name is normalised (NFKC) and compared by its look-alike
    skeleton; folders that look like each other are all skipped (which is the student's is not for the
    referee to guess)."""
    each = '[[bots]]\neach = "submissions/*"\n[[bots]]\nname = "ann"\ncommand = "random"\n'
    names = ["ann", "heuristic", "RANDOM", "r\u0430ndom", "bob\u200b", "\u202ebob", "\uff43\uff41\uff52\uff4c", "carl"]
    names += ["dan"]
    league = load_league(_class(tmp_path, {name: {"bot.py": ""} for name in names}, each))
    assert sorted(bot.name for bot in league.bots) == ["ann", "dan", "heuristic", "random"]
    assert next(bot for bot in league.bots if bot.name == "dan").cwd == str(tmp_path / "submissions" / "dan")
    notes = "\n".join(league.skipped)
    assert len(league.skipped) == 8, notes
    assert "U+200B" in notes and "U+202E" in notes and "\\u202ebob" in notes
    assert notes.count("skipped: it is named like the bot 'random' of the league file") == 2
    assert notes.count("skipped: it is named like the bot 'ann' of the league file") == 1
    assert notes.count("skipped: it is named like the bot 'heuristic' of the league file") == 1
    assert "submissions/carl' skipped: it is named like" in notes


def test_explicit_bot_names_are_checked(tmp_path: Path) -> None:
    cases = [("r\u0430ndom", "looks like 'random'"), ("a\u202eb", "U+202E"), ("heuristic", "used twice")]
    for number, (name, problem) in enumerate(cases):
        (tmp_path / str(number)).mkdir()
        bot = f'[[bots]]\nname = "{name}"\ncommand = "random"\n'
        with pytest.raises(LeagueFileError, match=re.escape(problem)):
            load_league(_class(tmp_path / str(number), {}, bot))


@pytest.mark.parametrize(
    "settings, problem",
    [
        ('schedule = "baselines"\n', "key 'baselines': must be a list of bot names"),
        ('schedule = "baselines"\nbaselines = ["random", "nobody"]\n', "names no bot ('nobody')"),
        ('schedule = "baselines"\nbaselines = ["random", "heuristic", "ann"]\n', "names every bot"),
        ('baselines = ["random"]\n', "is only for a baselines schedule"),
        ('schedule = "baselines"\nbaselines = ["random"]\nmax_tables = 3\n', "is not for a baselines schedule"),
        ("peers = 1\n", "key 'peers': is only for a baselines schedule"),
        ('schedule = "baselines"\nbaselines = ["random"]\npeers = -1\n', "key 'peers'"),
    ],
)
def test_bad_baselines_name_their_key(tmp_path: Path, settings: str, problem: str) -> None:
    (tmp_path / "ann").mkdir()
    league = tmp_path / "league.toml"
    league.write_text(HEAD.format(players=2) + settings + LADDER + '[[bots]]\nname = "ann"\ncommand = "random"\n')
    with pytest.raises(LeagueFileError, match=re.escape(problem)):
        load_league(league)


def test_peers_seat_students_together_and_only_students(tmp_path: Path) -> None:
    names = ("ann", "bo", "cy", "di", "ed")
    league_file = _class(tmp_path, {name: {"bot.py": ""} for name in names})
    assert all(set(table) & {"random", "heuristic"} for table in league_tables(load_league(league_file)))
    league_file.write_text(league_file.read_text().replace(BASELINES, BASELINES + "peers = 2\n"))
    league = load_league(league_file)
    peers = [table for table in league_tables(league) if not set(table) & {"random", "heuristic"}]
    assert league.peers == 2 and sorted(peers) == sorted(itertools.combinations(names, 2))


def test_three_seats_need_two_baselines(tmp_path: Path) -> None:
    league = tmp_path / "league.toml"
    one = 'schedule = "baselines"\nbaselines = ["random"]\n'
    league.write_text(HEAD.format(players=3) + one + LADDER + '[[bots]]\nname = "ann"\ncommand = "random"\n')
    with pytest.raises(LeagueFileError, match="1 baseline\\(s\\) cannot fill the 2 other seats of a table"):
        load_league(league)


@pytest.mark.parametrize("players", [2, 3])
def test_students_meet_every_baseline_table_and_never_each_other(tmp_path: Path, players: int) -> None:
    text = HEAD.format(players=players) + 'schedule = "baselines"\nbaselines = ["b1", "b2", "b3"]\n'
    for name in ("b1", "b2", "b3", "s1", "s2"):
        text += f'[[bots]]\nname = "{name}"\ncommand = "random"\n'
    (tmp_path / "league.toml").write_text(text)
    league = load_league(tmp_path / "league.toml")
    assert league.schedule is ScheduleKind.BASELINES and league.baselines == ("b1", "b2", "b3")
    tables = league_tables(league)
    ladder = [tuple(table) for table in itertools.combinations(("b1", "b2", "b3"), players)]
    others = list(itertools.combinations(("b1", "b2", "b3"), players - 1))
    students = [tuple(sorted((student, *rest))) for student in ("s1", "s2") for rest in others]
    assert tables == [*ladder, *students]
    assert not any({"s1", "s2"} <= set(table) for table in tables)


def test_a_zip_among_the_folders_is_named_with_what_to_do(tmp_path: Path) -> None:
    """A student's zip beside the folders was passed over without a word: the class ran without them."""
    league = _class(tmp_path, {"ann": {"bot.py": ""}})
    (tmp_path / "submissions" / "bob.zip").write_bytes(b"PK\x05\x06" + bytes(18))
    (tmp_path / "submissions" / "notes.txt").write_text("not a submission")
    ran = CliRunner().invoke(main, ["tournament", "run", str(league), "--dry-run"])
    assert ran.exit_code == 0, ran.output
    assert "bob.zip' skipped: an archive is not a submission folder" in ran.stderr
    assert "unzip bob.zip -d bob" in ran.stderr and "notes.txt" not in ran.stderr
    assert len(load_league(league).skipped) == 1


def test_a_pattern_that_matches_only_archives_says_so(tmp_path: Path) -> None:
    league = _class(tmp_path, {})
    (tmp_path / "submissions").mkdir()
    (tmp_path / "submissions" / "ann.tar.gz").write_bytes(b"")
    with pytest.raises(
        LeagueFileError, match=r"matches no folder beside the league file \(only archives: .*ann\.tar\.gz"
    ):
        load_league(league)

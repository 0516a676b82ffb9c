"""The commonest ways a class's folder misses its program, each told precisely and in the same words by the
league (the crash each of its games records) and by check-bot (its refusal): a program in another case, the
program one folder down, a `bot` without its run bit, a Makefile nothing built, a JavaScript bot without its
node_modules. And check-bot's --build applies only to a folder with something to build."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from tournaments.cli import main
from tournaments.league.league_file import load_league

PACKAGE = '{"name": "b", "type": "module", "dependencies": {"@msgpack/msgpack": "3.1.3", "zeromq": "6.8.0"}}\n'
LEAGUE = 'game = "scout"\nplayers = 2\nseed = 1\n[[bots]]\nname = "random"\ncommand = "random"\n'
LEAGUE += '[[bots]]\neach = "submissions/*"\n'

# case -> (files of the folder, "+x" after a name: executable; words its message must hold)
CASES = {
    "Bot.py": ({"Bot.py": "print(1)\n"}, "but Bot.py is there: names are case-sensitive, rename it to bot.py"),
    "one folder down": (
        {"mybot/bot.py": "print(1)\n", "mybot/README.md": "x\n"},
        "but there is mybot/bot.py one folder down: hand in the contents of mybot/",
    ),
    "bot without its run bit": ({"bot": "#!/bin/sh\n"}, "'bot' is not executable (a zip or a web upload may drop"),
    "unbuilt Makefile": (
        {"Makefile": "bot:\n", "bot.c": ""},
        'and its Makefile was not built: add build = "make" to its bot.toml',
    ),
    "JS without node_modules": (
        {"bot.js": "import 'zeromq';\n", "package.json": PACKAGE},
        "its package.json needs packages its node_modules folder lacks (@msgpack/msgpack, zeromq): run npm install "
        "in the folder",
    ),
}


def _folder(base: Path, name: str, files: dict[str, str]) -> Path:
    folder = base / "submissions" / name
    for file, text in files.items():
        path = folder / file.removesuffix("+x")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(0o755 if file.endswith("+x") else 0o644)
    return folder


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_the_league_and_check_bot_say_the_same_precise_thing(case: str, tmp_path: Path) -> None:
    files, words = CASES[case]
    folder = _folder(tmp_path, "ann", files)
    league_file = tmp_path / "class.toml"
    league_file.write_text(LEAGUE)
    (ann,) = [bot for bot in load_league(league_file).bots if bot.name == "ann"]
    played = subprocess.run(ann.spec.command, cwd=ann.spec.cwd, capture_output=True, text=True, timeout=60)
    league_says = played.stderr.strip()
    checked = CliRunner().invoke(main, ["check-bot", "scout", str(folder), "-n", "1", "-p", "2"])
    check_says = checked.stderr.strip().removeprefix("Error: ")
    assert played.returncode == 1 and checked.exit_code == 1
    assert words in league_says, league_says
    assert check_says == league_says
    assert str(tmp_path) not in league_says and len(league_says) <= 200, "a fault quotes lines of at most 200"


def test_a_js_program_given_by_its_path_is_told_of_its_packages_too(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "ann", {"bot.js": "import 'zeromq';\n", "package.json": PACKAGE})
    checked = CliRunner().invoke(main, ["check-bot", "scout", str(folder / "bot.js"), "-n", "1", "-p", "2"])
    assert checked.exit_code == 1 and CASES["JS without node_modules"][1] in checked.stderr


def test_a_folder_with_its_packages_is_not_refused(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "ann", {"bot.js": "", "package.json": PACKAGE})
    for package in ("@msgpack/msgpack", "zeromq"):
        (folder / "node_modules" / package).mkdir(parents=True)
    (tmp_path / "class.toml").write_text(LEAGUE)
    (ann,) = [bot for bot in load_league(tmp_path / "class.toml").bots if bot.name == "ann"]
    assert ann.spec.command[-1] == "bot.js" and ann.spec.cwd == str(folder)


def test_check_bots_build_is_skipped_in_a_folder_with_nothing_to_build(tmp_path: Path) -> None:
    """`--build make` for a whole class failed every Python student ("make: no makefile found")."""
    folder = tmp_path / "ann"
    assert CliRunner().invoke(main, ["new-bot", "--lang", "python", str(folder)]).exit_code == 0
    args = ["check-bot", "scout", str(folder), "-n", "1", "-p", "2", "--build", "make", "--move-time", "5000"]
    checked = CliRunner().invoke(main, [*args, "--run-dir", str(tmp_path / "run")])
    assert checked.exit_code == 0, checked.output
    assert "conforms" in checked.stdout and not (tmp_path / "run" / "build").exists()

"""new-bot: each language's scaffold, generated into a fresh folder and built as its README says, passes
check-bot at both games; its files are readable by every user whatever the umask; and a folder in use or a
name unfit for a bot is refused."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from referee.botspec import resolve_bot
from referee.records import Limits
from tournaments.classroom.checkbot import CheckPlan, check_bot
from tournaments.classroom.scaffold import Language, Scaffold, ScaffoldError, new_bot
from tournaments.cli import main

ROOT = Path(__file__).resolve().parents[2]
JS_PACKAGES = ROOT / "bots" / "js" / "node_modules"
GENEROUS = Limits(move_time_ms=5000, startup_time_s=30.0)

pytestmark = pytest.mark.timeout(300)


def _generate(directory: Path, language: str, *extra: str) -> None:
    result = CliRunner().invoke(main, ["new-bot", "--lang", language, *extra, str(directory)])
    assert result.exit_code == 0, result.output
    assert "referee check-bot" in result.output


def _conforms(bot: str, game: str, run_dir: Path, name: str) -> None:
    spec = resolve_bot(bot, game, named_by_hello=True)
    report = check_bot(CheckPlan(game=game, bot=spec, run_dir=run_dir, players=(2,), games=1, limits=GENEROUS))
    assert report.verdict.conforms, report.verdict.reasons
    assert report.name == name and report.handshake is not None and report.handshake.version == "0.1"


@pytest.mark.parametrize("game", ["scout", "scauver"])
def test_the_python_scaffold_passes_check_bot_and_its_own_test(game: str, tmp_path: Path) -> None:
    folder = tmp_path / "py-bot"
    _generate(folder, "python", "--game", game)
    _conforms(str(folder / "bot.py"), game, tmp_path / "run", "py-bot")
    test = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_bot.py"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    assert test.returncode == 0, test.stdout + test.stderr


def test_the_c_scaffold_builds_with_make_and_passes_check_bot(c_bot: Path, tmp_path: Path) -> None:
    folder = tmp_path / "c-bot"
    _generate(folder, "c", "--game", "scout")
    build = subprocess.run(["make", "-C", str(folder)], capture_output=True, text=True, check=False)
    assert build.returncode == 0, build.stdout + build.stderr
    assert "warning" not in build.stderr
    for game in ("scout", "scauver"):
        _conforms(str(folder / "bot"), game, tmp_path / f"run-{game}", "c-bot")


def test_the_js_scaffold_passes_check_bot(js_bot: list[str], tmp_path: Path) -> None:
    """Its packages are copied from bots/js (the same versions as its package.json), so the test needs no
    network."""
    folder = tmp_path / "js-bot"
    _generate(folder, "js", "--game", "scauver", "--name", "mine")
    shutil.copytree(JS_PACKAGES, folder / "node_modules", symlinks=True)
    for game in ("scout", "scauver"):
        _conforms(f"node {folder / 'bot.js'}", game, tmp_path / f"run-{game}", "mine")


@pytest.mark.parametrize("language", list(Language))
def test_a_scaffold_is_readable_by_every_user_whatever_the_umask(language: Language, tmp_path: Path) -> None:
    previous = os.umask(0o077)
    try:
        scaffold = new_bot(tmp_path / "bot", language)
    finally:
        os.umask(previous)
    assert stat.S_IMODE(scaffold.directory.stat().st_mode) == 0o755
    for path in scaffold.files:
        assert stat.S_IMODE(path.stat().st_mode) in (0o644, 0o755), path
    assert {path.name for path in scaffold.files} >= {"README.md"}


def test_the_scaffold_names_its_game_or_any(tmp_path: Path) -> None:
    scout = new_bot(tmp_path / "a", Language.PYTHON, game="scout")
    anything = new_bot(tmp_path / "b", Language.C)
    assert "SCOUT, 2 to 5 players" in (scout.directory / "bot.py").read_text()
    assert "Any game of the referee" in (anything.directory / "bot.c").read_text()
    assert "{{" not in "".join(path.read_text() for path in (*scout.files, *anything.files))
    assert (
        isinstance(scout, Scaffold)
        and scout.build is None
        and anything.build == ("make", "-C", str(anything.directory))
    )


def test_a_folder_in_use_or_a_bad_name_is_refused(tmp_path: Path) -> None:
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "notes.txt").write_text("mine")
    result = CliRunner().invoke(main, ["new-bot", "--lang", "python", str(tmp_path / "used")])
    assert result.exit_code == 1 and "is not an empty folder" in result.stderr
    with pytest.raises(ScaffoldError, match="cannot name a bot"):
        new_bot(tmp_path / "fresh", Language.JS, name="my bot!")
    assert not (tmp_path / "fresh").exists()

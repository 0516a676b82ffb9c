"""Text for people is safe: a bot's crash output, its hello name and its submission folder's name reach the
organiser's terminal with every control escaped and spreadsheets with no formula; folder names that hide
characters or look like another bot's are skipped with a note.

Run through the CLI: `referee play` as a real process (its output bytes), check-bot, a league of submissions
through CliRunner. The last test reads the CLI's source, so that no command writes around tournaments/cli/output.py.
"""

from __future__ import annotations

import ast
import csv
import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tournaments.cli import main

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
ESCAPES_BOT = FIXTURES / "bots" / "escapes_then_crash.py"
REFEREE = Path(sys.executable).with_name("referee")
RAW = ("\x1b", "\x9b", "\x07", "\u202e")
"""ESC, the C1 CSI, BEL and the right-to-left override: none may reach a terminal raw."""


def assert_nothing_raw(text: str) -> None:
    found = [char for char in RAW if char in text]
    assert not found, (found, text)


def test_play_shows_a_crashing_bots_escape_sequences_escaped(tmp_path: Path) -> None:
    command = [str(REFEREE), "play", "scout", str(ESCAPES_BOT), "random", "--games", "2", "--seed", "1"]
    result = subprocess.run(
        [*command, "--log-dir", str(tmp_path / "logs")], capture_output=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    for stream in (result.stdout, result.stderr):
        for raw in (b"\x1b", b"\xc2\x9b", b"\x07", "\u202e".encode()):
            assert raw not in stream, (raw, stream)
    out = result.stdout.decode()
    assert "crash" in out
    assert "\\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\\x07" in out, out
    assert "\\x1b[2J" in out and "\\x9b2K" in out and "\\u202eemos" in out
    assert not [line for line in out.splitlines() if "me       1" in line and "| " not in line], "a forged row"
    assert "evil ]52;c;cm0gLXJmIH4=" in out, "the hello name, its controls turned into spaces"
    assert "\x1b" in (tmp_path / "logs").joinpath("evil_52_c_cm0gLXJmIH4_.log").read_text(), "the log is kept as is"


@pytest.mark.parametrize("report_format", ["text", "gradescope"])
def test_check_bot_reports_show_the_bots_output_escaped(tmp_path: Path, report_format: str) -> None:
    report = tmp_path / "report"
    args = ["check-bot", "scout", str(ESCAPES_BOT), "-p", "2", "--format", report_format]
    shown = CliRunner().invoke(main, [*args, "--run-dir", str(tmp_path / "run")])
    written = CliRunner().invoke(main, [*args, "--run-dir", str(tmp_path / "run2"), "-o", str(report)])
    assert shown.exit_code == written.exit_code == 1
    for text in (shown.output, shown.stderr, written.stderr, report.read_text()):
        assert_nothing_raw(text)
    assert "\\x1b]52;c;" in shown.output and "does not conform" in shown.stderr


LEAGUE = """
game = "scout"
players = 2
seed = 3
deals_per_match = 1
schedule = "baselines"
baselines = ["random", "heuristic"]

[limits]
move_time_ms = 2000

[[bots]]
name = "random"
command = "random"

[[bots]]
name = "heuristic"
command = "heuristic"

[[bots]]
each = "submissions/*"
"""
FORMULA = '=HYPERLINK("x")'
CYRILLIC = "r\u0430ndom"
BIDI = "good\u202edab"


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A class with a formula folder, a look-alike of a baseline, a folder with a bidi override, and a bot
    that crashes with escape sequences: (its league file, `tournament run`'s output, stdout and stderr)."""
    folder = tmp_path_factory.mktemp("safe")
    submissions = folder / "submissions"
    for name in (FORMULA, CYRILLIC, BIDI):
        shutil.copytree(FIXTURES / "class" / "first_move", submissions / name)
    (submissions / "evil").mkdir()
    shutil.copy(ESCAPES_BOT, submissions / "evil" / "bot.py")
    shutil.copy(FIXTURES / "bots" / "_raw.py", submissions / "evil" / "_raw.py")
    path = folder / "class.toml"
    path.write_text(LEAGUE)
    result = CliRunner().invoke(main, ["tournament", "run", str(path), "-j", "1", "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    return path, result.output + result.stderr


def test_unsafe_and_lookalike_folders_are_skipped_with_a_note(league: tuple[Path, str]) -> None:
    path, output = league
    assert_nothing_raw(output)
    assert "good\\u202edab' skipped: " in output and "U+202E" in output
    assert f"{CYRILLIC}' skipped: it is named like the bot 'random' of the league file" in output
    assert "4 bots" in output


def _csv(*args: str) -> tuple[str, list[dict[str, str]]]:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout, list(csv.DictReader(io.StringIO(result.stdout)))


def test_csv_cells_are_neutralised_and_hold_no_controls(league: tuple[Path, str]) -> None:
    path, _ = league
    text, rows = _csv("tournament", "report", str(path), "--format", "csv", "--bootstrap", "0")
    assert_nothing_raw(text)
    bots = {row["bot"] for row in rows}
    assert bots == {"random", "heuristic", "'" + FORMULA, "evil"}
    evil = next(row for row in rows if row["bot"] == "evil")
    assert evil["first_fault_kind"] == "crash" and "\\u202eemos" in evil["first_fault"]
    text, rows = _csv("tournament", "export", str(path))
    assert_nothing_raw(text)
    assert {row["bot"] for row in rows} == bots
    formulas = [cell for row in rows for cell in row.values() if cell[:1] in "=+-@\t\r" and not _number(cell)]
    assert not formulas


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def test_the_table_shows_the_names_escaped(league: tuple[Path, str]) -> None:
    path, _ = league
    result = CliRunner().invoke(main, ["tournament", "table", str(path), "--bootstrap", "0", "--crosstable"])
    assert result.exit_code == 0, result.output
    assert_nothing_raw(result.output)
    assert FORMULA in result.output


WRITERS = {("click", "echo"), ("click", "secho"), ("sys.stdout", "write"), ("sys.stderr", "write")}


def _writes(path: Path) -> list[str]:
    """The calls in `path` that write text for people other than through tournaments/cli/output.py."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Name) and node.func.id == "print":
            found.append(f"{path.name}:{node.lineno} print")
        elif isinstance(node.func, ast.Attribute) and (ast.unparse(node.func.value), node.func.attr) in WRITERS:
            found.append(f"{path.name}:{node.lineno} {ast.unparse(node.func)}")
    return found


def test_no_command_writes_around_the_escaping() -> None:
    """Every command writes through output.echo / output.write (the progress line, which writes to its stream
    itself, escapes its one line in ProgressLine.text)."""
    sources = [*(ROOT / "tournaments" / "cli").glob("*.py"), *(ROOT / "tournaments" / "classroom").glob("*.py")]
    bypasses = [found for path in sources if path.name != "output.py" for found in _writes(path)]
    assert not bypasses, bypasses


def test_error_messages_quoting_a_folder_show_its_controls_escaped(tmp_path: Path) -> None:
    folder = tmp_path / "x\x1b]52;c;ZWNobw==\x07"
    folder.mkdir()
    (folder / "bad.toml").write_text("game = \n")
    result = CliRunner().invoke(main, ["tournament", "run", str(folder / "bad.toml")])
    assert result.exit_code == 1
    assert "is not valid TOML" in result.stderr and "x\\x1b]52;c;ZWNobw==\\x07" in result.stderr
    assert_nothing_raw(result.output + result.stderr)

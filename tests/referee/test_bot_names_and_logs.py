"""Seeing why a bot failed: the name a bot plays under (a chosen name, else its hello's, else its program's),
its log named after it, the last lines of its output in a crash's fault, and a timeout that says the bot
answered with another request's id."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from referee_helpers import FIXTURE_BOTS, fixture_bot, match_spec

from referee.botspec import log_file_names, match_names, program_name, resolve_bot
from referee.isolation.process import OUTPUT_TAIL_LINES
from referee.match import run_match
from referee.records import BotSpec, FaultKind, Handshake

GAME = "scout"


def _by_hello(argument: str) -> BotSpec:
    return resolve_bot(argument, GAME, named_by_hello=True)


def test_bots_play_under_their_hello_names_made_unique_and_log_under_them(tmp_path: Path) -> None:
    spec = match_spec(
        GAME, [_by_hello("random"), _by_hello("random"), _by_hello("scout-heuristic")], log_dir=str(tmp_path)
    )
    record = run_match(spec)
    assert [bot.name for bot in record.bots] == ["random#1", "random#2", "scout-heuristic"]
    assert set(record.games[0].seats) == {"random#1", "random#2", "scout-heuristic"}
    assert record.bots[0].handshake == Handshake("random", "1", 1)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["random#1.log", "random#2.log", "scout-heuristic.log"]
    assert [bot.log_path for bot in record.bots] == [str(tmp_path / f"{bot.name}.log") for bot in record.bots]


def test_a_chosen_name_stays_and_a_bot_without_hello_keeps_its_programs_name(tmp_path: Path) -> None:
    chosen = fixture_bot("double_reply")  # says hello as "raw"
    silent = _by_hello(str(FIXTURE_BOTS / "crash_at_start.py"))
    record = run_match(match_spec(GAME, [chosen, silent], log_dir=str(tmp_path)))
    assert [bot.name for bot in record.bots] == ["double_reply", "crash_at_start"]
    assert record.bots[0].handshake is not None and record.bots[1].handshake is None
    assert (tmp_path / "crash_at_start.log").read_text().strip().endswith("crashing at start, on purpose")


def test_without_a_log_dir_no_log_path_is_reported() -> None:
    record = run_match(match_spec(GAME, ["random", "random"]))
    assert [bot.log_path for bot in record.bots] == [None, None]


def test_a_crash_quotes_the_last_lines_of_output_of_the_bots_latest_start(tmp_path: Path) -> None:
    record = run_match(match_spec(GAME, [fixture_bot("many_lines_then_crash"), "random"], games=2))
    for game in record.games:
        (fault,) = game.faults
        assert fault.kind is FaultKind.CRASH and "exited with status 3" in fault.detail
        quoted = [line for line in fault.detail.splitlines() if line.startswith("| ")]
        assert quoted == [f"| line {number}" for number in range(31 - OUTPUT_TAIL_LINES, 31)]


def test_a_crash_after_a_restart_quotes_only_that_starts_output() -> None:
    record = run_match(match_spec(GAME, [fixture_bot("crash_mid_game"), "random"], games=2))
    assert [game.faults[0].detail.count("Traceback") for game in record.games] == [1, 1]


@pytest.mark.parametrize("bot, which", [("stale_id", "stale"), ("wrong_id", "wrong")])
def test_a_timeout_says_that_the_bot_answered_with_another_id(bot: str, which: str) -> None:
    (game,) = run_match(match_spec(GAME, [fixture_bot(bot), "random"])).games
    (fault,) = game.faults
    assert fault.kind is FaultKind.TIMEOUT
    assert f"with the {which} id" in fault.detail and "answer with" in fault.detail


@pytest.mark.parametrize(
    "words, name",
    [
        (["/usr/bin/fast-bot", "--level", "3"], "fast-bot"),
        ([sys.executable, "-m", "bots.python.random_bot"], "random_bot"),
        (["node", str(FIXTURE_BOTS / "stale_id.py"), "--stats-dir", str(FIXTURE_BOTS)], "stale_id"),
        (["python3", "-u", "missing.py"], "python3"),
        (["java", "-cp", "classes", "Main"], "java"),
    ],
)
def test_a_bot_is_named_after_its_program_never_an_argument(words: list[str], name: str) -> None:
    assert program_name(words) == name


def test_a_shell_command_bot_is_named_after_its_script(tmp_path: Path) -> None:
    script = tmp_path / "mine.py"
    script.write_text("")
    assert resolve_bot(f"python3 {script} --stats-dir {tmp_path}/stats", GAME).name == "mine"
    assert resolve_bot(f"stdio:python3 {script}", GAME).name == "mine"


def test_match_names_prefer_hello_names_only_where_asked() -> None:
    specs = [BotSpec("a", ("x",), named_by_hello=True), BotSpec("b", ("y",)), BotSpec("c", ("z",), named_by_hello=True)]
    assert match_names(specs, ["me", "me", None]) == ("me", "b", "c")
    assert match_names(specs, ["b", "me", "b"]) == ("b#1", "b", "b#2")
    assert match_names(specs, ["c", "me", None]) == ("c#1", "b", "c#2")
    assert match_names(specs[:1], ["  tab\tand\nnewline "]) == ("tab and newline",)
    assert match_names(specs[:1], ["\n"]) == ("a",)


def test_hello_names_are_normalised_and_look_alikes_told_apart() -> None:
    hello = {"named_by_hello": True}
    specs = [BotSpec("a", ("x",), **hello), BotSpec("random", ("y",)), BotSpec("c", ("z",), **hello)]
    cyrillic = "r\u0430ndom"
    assert match_names(specs, [cyrillic, "me", None]) == (f"{cyrillic}#1", "random", "c")
    assert match_names(specs, ["ｍｅ", "me", "m\u0435"]) == ("me#1", "random", "m\u0435#2")
    assert match_names(specs[:1], ["ev\u202eil\x1b]52;c;x\x07\u200b"]) == ("ev il ]52;c;x",)


def test_log_file_names_are_safe_and_distinct() -> None:
    assert log_file_names(["random#1", "../etc/passwd", "a b", "a_b", ""]) == (
        "random#1.log",
        "_etc_passwd.log",
        "a_b.log",
        "a_b-3.log",
        "bot.log",
    )


def test_a_program_path_keeps_its_symlinks(tmp_path: Path) -> None:
    """A virtual environment's python is a symlink; its target would run without the environment's packages."""
    link = tmp_path / "python"
    link.symlink_to(sys.executable)
    assert resolve_bot(f"{link} -m bots.python.random_bot", GAME).command[0] == str(link)
    assert resolve_bot(str(link), GAME).command == (str(link),)


def test_a_chosen_names_log_grows_when_its_match_is_played_again(tmp_path: Path) -> None:
    """A league's match resumed after a stop keeps the earlier output of its bots."""
    spec = match_spec(GAME, [fixture_bot("crash_at_start"), "random"], log_dir=str(tmp_path))
    run_match(spec)
    run_match(spec)
    assert (tmp_path / "crash_at_start.log").read_text().count("crashing at start, on purpose") == 2
    assert sorted(path.name for path in tmp_path.iterdir()) == ["crash_at_start.log", "random.log"]

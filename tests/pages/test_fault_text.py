"""Fault details for people: no organiser's folders, identical faults counted once, and the report showing them
so (line breaks kept under a collapsed first line, each place linked to its step and seat)."""

from __future__ import annotations

from pathlib import Path

from tournaments.league.store import StoredFault
from tournaments.pages.fault_text import fault_groups, without_paths
from tournaments.pages.report_page import _faults_section

TRACEBACK = (
    "the bot exited with status 1 during game {game}; its last output:\n| Traceback (most recent call last):\n"
    '|   File "/home/organiser/league/bots/crashy/bot.py", line 12, in <module>\n| RuntimeError: oops'
)


def test_absolute_paths_become_file_names() -> None:
    assert without_paths('File "/home/org/x/bot.py", line 3') == 'File "bot.py", line 3'
    assert without_paths("cannot open /tmp/referee-abc/sock: gone") == "cannot open sock: gone"
    assert without_paths("keeps 1/2 and ./rel/path and 9..11") == "keeps 1/2 and ./rel/path and 9..11"


def crash(game: int, bot: str = "crashy", before: int | None = 7) -> StoredFault:
    return StoredFault(f"m{game}", 0, 1, bot, "crash", TRACEBACK.format(game=game), before_action=before)


def test_identical_faults_are_one_group_with_a_count() -> None:
    faults = [crash(game) for game in range(124)] + [crash(5, "other")]
    groups = fault_groups(faults)
    assert [(group.bot, group.count) for group in groups] == [("crashy", 124), ("other", 1)]
    assert groups[0].detail.startswith("the bot exited with status 1 during game #;")
    assert "/home" not in groups[0].detail and 'File "bot.py"' in groups[0].detail
    assert groups[1].detail.startswith("the bot exited with status 1 during game 5;")


def test_the_report_lists_a_group_once_with_its_lines_and_links_to_step_and_seat(tmp_path: Path) -> None:
    page = tmp_path / "replays" / "m3-0000.html"
    faults = [crash(game) for game in range(124)]
    html = _faults_section(faults, {("m3", 0): page}, tmp_path)
    assert html.count("<tr data-bot=") == 1 and ">124</td>" in html
    assert "<details><summary>the bot exited with status 1 during game #; its last output:" in html
    assert "| Traceback (most recent call last):\n|   File &quot;bot.py&quot;" in html
    assert '<a href="replays/m3-0000.html#step=8&amp;view=1">m3 game 0 seat 1</a>' in html
    assert "/home/organiser" not in html

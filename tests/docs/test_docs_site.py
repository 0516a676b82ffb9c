"""The docs site builds with `mkdocs build --strict`, and what it generates from the code says what the code
does: the command-line reference names every command and option of `referee`, the league-file and bot.toml
references every key the parsers accept, the faults page every fault kind. The README stays a front door."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from referee.records import FaultCause, FaultKind
from tournaments.cli import main
from tournaments.league import keys

ROOT = Path(__file__).resolve().parents[2]
README_MAX_LINES = 150


def _mkdocs_missing() -> str | None:
    try:
        import material  # noqa: F401
        import mkdocs  # noqa: F401
        import mkdocs_click  # noqa: F401
    except ImportError as error:
        return f"the docs extra is not installed ({error.name}): pip install -e '.[docs]'"
    return None


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    missing = _mkdocs_missing()
    if missing and os.environ.get("CI") == "true":
        pytest.fail(missing)
    if missing:
        pytest.skip(missing)
    folder = tmp_path_factory.mktemp("site")
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(folder)]
    built = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert built.returncode == 0, built.stdout + built.stderr
    return folder


def _words(text: str) -> str:
    """The words of a text, markup and punctuation aside, to compare markdown with what a page shows."""
    return " ".join(re.findall(r"\w+", text))


def _page_text(site: Path, page: str) -> str:
    return _words(html.unescape(re.sub(r"<[^>]+>", " ", (site / page / "index.html").read_text())))


def _commands(command: click.Command, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    yield path, command
    if isinstance(command, click.Group):
        for name, sub in sorted(command.commands.items()):
            yield from _commands(sub, (*path, name))


def _sections(site: Path) -> dict[str, str]:
    """The CLI reference page cut at each command's heading: heading id -> the text up to the next heading."""
    page = (site / "reference" / "cli" / "index.html").read_text()
    heads = list(re.finditer(r'<h\d id="(referee[\w-]*)"', page))
    ends = [head.start() for head in heads[1:]] + [len(page)]
    return {
        head.group(1): html.unescape(re.sub(r"<[^>]+>", " ", page[head.start() : end]))
        for head, end in zip(heads, ends, strict=True)
    }


def test_the_site_builds_strict(site: Path) -> None:
    assert (site / "index.html").is_file()
    assert "<!-- generated:" not in (site / "reference" / "league-file" / "index.html").read_text()


def test_the_cli_reference_names_every_command_and_option(site: Path) -> None:
    sections = _sections(site)
    for path, command in _commands(main, ("referee",)):
        anchor = "-".join(path)
        assert anchor in sections, f"{' '.join(path)} has no section in the CLI reference"
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                for name in (*param.opts, *param.secondary_opts):
                    assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", sections[anchor]), (
                        f"{' '.join(path)}: {name} is not in its CLI reference section"
                    )


def test_the_league_file_reference_lists_every_key(site: Path) -> None:
    text = _page_text(site, "reference/league-file")
    for table in (keys.LEAGUE_KEYS, keys.LIMIT_KEYS, keys.BOT_KEYS, keys.EACH_KEYS):
        for key in table:
            assert key.name in text and _words(key.meaning) in text, key


def test_the_ladder_file_reference_lists_every_key(site: Path) -> None:
    from tournaments.ladder.ladder_file import LADDER_KEYS, OPEN_KEYS

    text = _page_text(site, "reference/ladder-file")
    for key in (*LADDER_KEYS, *OPEN_KEYS):
        assert key.name in text and _words(key.meaning) in text, key


def test_the_bot_toml_reference_lists_every_key(site: Path) -> None:
    text = _page_text(site, "reference/bot-toml")
    for key in keys.MANIFEST_KEYS:
        assert key.name in text and _words(key.meaning) in text, key


def test_the_faults_page_lists_every_fault_kind_and_cause(site: Path) -> None:
    text = _page_text(site, "reference/faults")
    for kind in FaultKind:
        assert kind.value in text, kind
    for cause in FaultCause:
        assert _words(cause.value) in text and _words(cause.meaning) in text, cause


def test_the_protocol_and_rules_are_included_from_where_they_live(site: Path) -> None:
    for page, source in (
        ("reference/protocol", "protocol/PROTOCOL.md"),
        ("reference/rules-scout", "referee/games/scout.md"),
        ("reference/rules-scauver", "referee/games/scauver.md"),
    ):
        first_heading = next(line for line in (ROOT / source).read_text().splitlines() if line.startswith("# "))
        assert _words(first_heading[2:]) in _page_text(site, page), page


def test_the_readme_is_a_front_door() -> None:
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; at most {README_MAX_LINES}"


def test_every_relative_link_of_the_readme_exists() -> None:
    readme = (ROOT / "README.md").read_text()
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    assert targets
    for target in targets:
        if not re.match(r"^[a-z]+:", target):
            assert (ROOT / target).exists(), target


def test_the_exit_statuses_page_has_every_status_the_help_names() -> None:
    said = (main.help or "").split("Exit status:")[1]
    statuses = set(re.findall(r"\b\d+\b", said))
    assert {"0", "1", "2", "130", "143"} <= statuses
    rows = set(re.findall(r"^\| (\d+) \|", (ROOT / "docs" / "reference" / "faults.md").read_text(), re.MULTILINE))
    assert rows == statuses

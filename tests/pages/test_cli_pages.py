"""The page commands as a user meets them: `replay html`, `play` and `tournament run --replay-format`,
`tournament report`, `tournament rate --html`; clean one-line errors."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from referee import replay as replays
from tournaments.cli import main
from tournaments.league.store import LeagueStore

FAST = ["--move-time", "2000", "--startup-time", "20"]


def invoke(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def test_replay_html_writes_the_page_beside_the_replay_or_where_asked(
    scout_replay: dict[str, Any], tmp_path: Path
) -> None:
    source = tmp_path / "game.json"
    replays.write(source, scout_replay)
    beside = invoke("replay", "html", str(source))
    assert beside.exit_code == 0, beside.output
    assert beside.output.strip() == str(tmp_path / "game.html")
    assert (tmp_path / "game.html").read_text().startswith("<!DOCTYPE html>")
    elsewhere = tmp_path / "pages" / "one.html"
    assert invoke("replay", "html", str(source), "-o", str(elsewhere)).exit_code == 0
    verified = invoke("replay", "verify", str(elsewhere))
    assert verified.exit_code == 0 and "re-simulates exactly" in verified.output
    again = invoke("replay", "html", str(elsewhere), "-o", str(tmp_path / "again.html"))
    assert again.exit_code == 0, again.output


def test_replay_html_refuses_a_bad_replay_in_one_line(scout_replay: dict[str, Any], tmp_path: Path) -> None:
    broken = json.loads(json.dumps(scout_replay))
    broken["actions"][5]["action"] = {"kind": "fly"}
    source = tmp_path / "broken.json"
    replays.write(source, broken)
    result = invoke("replay", "html", str(source))
    assert result.exit_code == 1 and result.output.startswith("Error: action 5 (seat")
    assert not (tmp_path / "broken.html").exists()
    page = tmp_path / "page.html"
    page.write_text("<p>hello</p>")
    assert "is the replay itself" in invoke("replay", "html", str(page), "-o", str(page)).output
    assert "is not a replay page" in invoke("replay", "show", str(page)).output


def test_replay_html_that_cannot_be_written_says_where_in_one_line(
    scout_replay: dict[str, Any], tmp_path: Path
) -> None:
    source = tmp_path / "game.json"
    replays.write(source, scout_replay)
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    target = a_file / "page.html"
    result = invoke("replay", "html", str(source), "-o", str(target))
    assert result.exit_code == 1 and "Traceback" not in result.output
    (line,) = result.stderr.splitlines()
    assert line == f"Error: cannot write {target}: File exists"  # its folder is a file


def test_play_writes_pages_beside_or_instead_of_the_replays(tmp_path: Path) -> None:
    both = invoke("play", "scout", "random", "random", "--seed", "1", "--games", "1", "--replay-dir",
                  str(tmp_path / "both"), "--replay-format", "both", *FAST)  # fmt: skip
    assert both.exit_code == 0, both.output
    names = sorted(path.name for path in (tmp_path / "both").iterdir())
    assert [Path(name).suffix for name in names] == [".html", ".json"] and Path(names[0]).stem == Path(names[1]).stem
    assert re.fullmatch(r"scout-[0-9a-f]+-0000", Path(names[0]).stem), "the match id is opaque: no seed in it"
    assert "game 0 (1 of 1)" in both.output
    only = invoke("play", "scauver", "random", "random", "--seed", "1", "--games", "2",
                  "--replay-dir", str(tmp_path / "html"), "--replay-format", "html", *FAST)  # fmt: skip
    assert only.exit_code == 0, only.output
    pages = sorted((tmp_path / "html").iterdir())
    assert [path.suffix for path in pages] == [".html", ".html"]
    assert [path.stem[-4:] for path in pages] == ["0000", "0001"]
    assert f"replay: {pages[1]}" in only.output and "game 1 (2 of 2)" in only.output
    assert invoke("replay", "verify", *map(str, pages)).exit_code == 0
    missing = invoke("play", "scout", "random", "random", "--replay-format", "html")
    assert missing.exit_code == 2 and "--replay-format html writes into --replay-dir" in missing.output


def test_a_league_with_html_replays_records_the_pages_and_reports_them(played_league: Path, tmp_path: Path) -> None:
    replay_dir = played_league.parent / "replays"
    assert sorted(path.suffix for path in replay_dir.iterdir()) == [".html"] * 6
    with LeagueStore(played_league.with_suffix(".sqlite"), create=False) as store:
        assert sorted(Path(path).name for path in store.replay_paths().values()) == sorted(
            path.name for path in replay_dir.iterdir()
        )
    out = tmp_path / "reports" / "demo.html"
    out.parent.mkdir()
    report = invoke("tournament", "report", str(played_league), "-o", str(out), "--bootstrap", "20")
    assert report.exit_code == 0, report.output
    page = out.read_text()
    for bot in ("heuristic", "random", "illegal"):
        assert f'<tr data-bot="{bot}">' in page
    links = re.findall(r'<a href="([^"]+)">open</a>', page)
    assert links and all((out.parent / link).is_file() for link in links)
    assert "illegal action" in page
    printed = invoke("tournament", "report", "--db", str(played_league.with_suffix(".sqlite")), "--bootstrap", "0")
    assert printed.exit_code == 0 and printed.output.startswith("<!DOCTYPE html>")


def test_report_and_run_errors_say_what_to_do(tmp_path: Path, played_league: Path) -> None:
    neither = invoke("tournament", "report")
    assert neither.exit_code == 2 and "give either LEAGUE.toml or --db FILE" in neither.output
    absent = invoke("tournament", "report", "--db", str(tmp_path / "none.sqlite"))
    assert absent.exit_code == 1 and "no league store there" in absent.output
    league = tmp_path / "no-replays.toml"
    league.write_text(played_league.read_text().replace('replay_dir = "replays"\n', ""))
    run = invoke("tournament", "run", str(league), "--replay-format", "html")
    assert run.exit_code == 1 and "set replay_dir" in run.output
    assert not league.with_suffix(".sqlite").exists()


def test_rate_writes_its_table_as_a_report_page(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    games = [{"ranks": {"alpha": 1, "beta": 2, "gamma": 3}}, {"ranks": {"beta": 1, "gamma": 2, "alpha": 3}}] * 3
    results.write_text("".join(json.dumps(game) + "\n" for game in games))
    out = tmp_path / "rated.html"
    result = invoke("tournament", "rate", str(results), "--bootstrap", "20", "--html", str(out))
    assert result.exit_code == 0, result.output
    assert "alpha" in result.output
    page = out.read_text()
    assert all(f'<tr data-bot="{bot}">' in page for bot in ("alpha", "beta", "gamma"))
    assert page.count('class="interval-bar"') == 3 and 'class="crosstable"' in page

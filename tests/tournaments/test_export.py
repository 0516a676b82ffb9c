"""`tournament export` rows against the store, and forfeits in the league table's Faults column."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from tournaments.cli import main

pytestmark = pytest.mark.timeout(240)

FAULTY = Path(__file__).resolve().parents[1] / "fixtures" / "bots" / "illegal_action.py"


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A two-seat Scauver league of a bot that forfeits every game and two random bots, played."""
    folder = tmp_path_factory.mktemp("league")
    lines = ['game = "scauver"', "players = 2", "seed = 5", "[limits]", "move_time_ms = 2000"]
    for name, command in (("faulty", str(FAULTY)), ("rand-a", "random"), ("rand-b", "random")):
        lines += ["[[bots]]", f'name = "{name}"', f'command = "{command}"']
    league = folder / "league.toml"
    league.write_text("\n".join(lines) + "\n")
    result = invoke("tournament", "run", str(league), "-j", "1", "--bootstrap", "0")
    assert result.exit_code == 0, result.output
    return league


def stored_seats(db: Path) -> list[dict]:
    """Every seat as the store's own tables hold it, read with SQL here (not through LeagueStore)."""
    with sqlite3.connect(db) as connection:
        connection.row_factory = sqlite3.Row
        seats = connection.execute(
            "SELECT s.match_id, s.game_index, g.seed, s.seat, s.bot, s.rank, s.score, s.forfeited, "
            "t.decisions, t.mean_ms, t.max_ms FROM seats s JOIN games g USING (match_id, game_index) "
            "JOIN timings t USING (match_id, game_index, seat) ORDER BY s.match_id, s.game_index, s.seat"
        ).fetchall()
        faults = connection.execute("SELECT match_id, game_index, seat FROM faults").fetchall()
    fault_count: dict[tuple, int] = {}
    for fault in faults:
        fault_count[tuple(fault)] = fault_count.get(tuple(fault), 0) + 1
    return [
        {**dict(row), "faults": fault_count.get((row["match_id"], row["game_index"], row["seat"]), 0)} for row in seats
    ]


def test_export_rows_match_the_store(played: Path) -> None:
    stored = stored_seats(played.with_suffix(".sqlite"))
    assert len(stored) == 6 * 2
    as_csv = invoke("tournament", "export", str(played), "--format", "csv")
    assert as_csv.exit_code == 0, as_csv.output
    csv_rows = list(csv.DictReader(io.StringIO(as_csv.stdout)))
    as_jsonl = invoke("tournament", "export", "--db", str(played.with_suffix(".sqlite")), "--format", "jsonl")
    assert as_jsonl.exit_code == 0, as_jsonl.output
    json_rows = [json.loads(line) for line in as_jsonl.stdout.splitlines()]
    assert len(csv_rows) == len(json_rows) == len(stored)
    seatings: dict[tuple[str, int], list[str]] = {}
    for row in stored:
        seatings.setdefault((row["match_id"], row["game_index"]), []).append(row["bot"])
    for row, from_csv, from_json in zip(stored, csv_rows, json_rows, strict=True):
        expected = {
            "match": row["match_id"],
            "game": row["game_index"],
            "seed": row["seed"],
            "seat": row["seat"],
            "seating": seatings[row["match_id"], row["game_index"]],
            "bot": row["bot"],
            "rank": row["rank"],
            "score": row["score"],
            "forfeited": bool(row["forfeited"]),
            "faults": row["faults"],
            "decisions": row["decisions"],
            "mean_ms": round(row["mean_ms"], 3),
            "max_ms": round(row["max_ms"], 3),
        }
        assert from_json == expected
        assert from_csv == {
            **{key: str(value) for key, value in expected.items()},
            "seating": json.dumps(expected["seating"]),
            "forfeited": str(int(expected["forfeited"])),
        }
    faulty = [row for row in json_rows if row["bot"] == "faulty"]
    assert len(faulty) == 4 and all(row["forfeited"] and row["rank"] == 2 and row["faults"] >= 1 for row in faulty)
    assert all(
        row["score"] == min(o["score"] for o in json_rows if o["match"] == row["match"] and o["game"] == row["game"])
        for row in faulty
    )


def test_export_to_a_file_and_usage_errors(played: Path, tmp_path: Path) -> None:
    out = tmp_path / "rows.csv"
    written = invoke("tournament", "export", str(played), "-o", str(out))
    assert written.exit_code == 0, written.output
    assert "Wrote 12 row(s)" in written.stderr
    assert out.read_text().splitlines()[0] == (
        "match,game,seed,seat,seating,bot,rank,score,forfeited,faults,decisions,mean_ms,max_ms"
    )
    both = invoke("tournament", "export", str(played), "--db", "x.sqlite")
    assert both.exit_code == 2 and "give either LEAGUE.toml or --db FILE" in both.output
    absent = invoke("tournament", "export", "--db", str(tmp_path / "absent.sqlite"))
    assert absent.exit_code == 1 and "no league store there" in absent.output


def test_the_faults_column_says_how_many_games_were_forfeited(played: Path) -> None:
    table = invoke("tournament", "table", str(played), "--bootstrap", "0")
    assert table.exit_code == 0, table.output
    (faulty,) = [line for line in table.stdout.splitlines() if " faulty " in line]
    assert "4 (4 forfeited)" in faulty
    as_json = json.loads(invoke("tournament", "table", str(played), "--json", "--bootstrap", "0").stdout)
    entries = {entry["bot"]: entry for entry in as_json["ratings"]}
    assert (entries["faulty"]["faults"], entries["faulty"]["forfeits"]) == (4, 4)
    assert entries["rand-a"]["forfeits"] == entries["rand-b"]["forfeits"] == 0

from __future__ import annotations

import csv
import json
from pathlib import Path

from click.testing import CliRunner

from tournaments.cli import main
from tournaments.ladder import Role, open_ladder


def test_init_prints_working_tokens_as_json_and_invite_writes_a_roster_of_tokens(tmp_path: Path) -> None:
    folder = tmp_path / "class"
    made = CliRunner().invoke(
        main, ["ladder", "init", str(folder), "--game", "scout", "--players", "3", "--baseline", "heuristic", "--json"]
    )
    assert made.exit_code == 0, made.output
    tokens = json.loads(made.output)
    roster = tmp_path / "roster.csv"
    roster.write_text("name\nann\nbob\n")
    out = tmp_path / "tokens.csv"
    invited = CliRunner().invoke(main, ["ladder", "invite", str(folder), "--roster", str(roster), "-o", str(out)])
    assert invited.exit_code == 0, invited.output
    rows = list(csv.DictReader(out.open()))
    assert [row["name"] for row in rows] == ["ann", "bob"]
    with open_ladder(folder) as ladder:
        assert ladder.authenticate(tokens["admin_token"]).role is Role.STAFF
        assert ladder.authenticate(tokens["worker_token"]).role is Role.WORKER
        assert ladder.authenticate(rows[1]["token"]).name == "bob"


def test_errors_are_one_line_without_a_traceback(tmp_path: Path) -> None:
    folder = tmp_path / "class"
    args = ["ladder", "init", str(folder), "--game", "scout", "--players", "3"]
    assert CliRunner().invoke(main, args).exit_code == 0
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 1
    assert "holds a ladder already" in again.output and "Traceback" not in again.output
    nobody = CliRunner().invoke(main, ["ladder", "invite", str(folder)])
    assert nobody.exit_code == 1 and "at least one student" in nobody.output


def test_invite_json_maps_each_name_to_a_new_token(tmp_path: Path) -> None:
    folder = tmp_path / "class"
    CliRunner().invoke(main, ["ladder", "init", str(folder), "--game", "scout", "--players", "3"])
    first = json.loads(CliRunner().invoke(main, ["ladder", "invite", str(folder), "ann", "--json"]).output)
    second = json.loads(CliRunner().invoke(main, ["ladder", "invite", str(folder), "ann", "--json"]).output)
    assert first["ann"] != second["ann"]


def test_freeze_then_marks_prints_the_csv_and_writes_the_gradescope_results(tmp_path: Path) -> None:
    folder = tmp_path / "class"
    CliRunner().invoke(main, ["ladder", "init", str(folder), "--game", "scout", "--players", "3"])
    CliRunner().invoke(main, ["ladder", "invite", str(folder), "ann", "bob"])
    frozen = CliRunner().invoke(main, ["ladder", "freeze", str(folder)])
    assert frozen.exit_code == 0 and "0 student(s)" in frozen.output
    printed = CliRunner().invoke(main, ["ladder", "marks", str(folder)])
    assert printed.exit_code == 0
    assert [row["student"] for row in csv.DictReader(printed.output.splitlines())] == ["ann", "bob"]
    written = CliRunner().invoke(main, ["ladder", "marks", str(folder), "-o", str(tmp_path / "out")])
    assert written.exit_code == 0
    assert set(json.loads((tmp_path / "out" / "gradescope.json").read_text())) == {"ann", "bob"}

"""`referee play`, `referee replay show|verify` and the protocol benchmarks, through Click's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from referee.isolation import sandbox
from referee.seating import design_games
from tournaments.cli import main

FAST = ["--move-time", "2000", "--startup-time", "10"]


def invoke(*args: str) -> object:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_play_prints_every_game_and_writes_verifiable_replays(tmp_path: Path) -> None:
    result = invoke(
        "play",
        "scout",
        "random",
        "random",
        "random",
        "--games",
        "2",
        "--seed",
        "4",
        "--replay-dir",
        str(tmp_path),
        *FAST,
    )
    assert result.exit_code == 0, result.output
    assert "game 0 (1 of 2)" in result.output and "game 1 (2 of 2)" in result.output
    assert "random#3" in result.output and "mean ms" in result.output
    replays = sorted(tmp_path.glob("*.json"))
    assert len(replays) == 2
    verified = invoke("replay", "verify", *map(str, replays))
    assert verified.exit_code == 0, verified.output
    assert verified.output.count("ok") == 2
    shown = invoke("replay", "show", str(replays[0]))
    assert shown.exit_code == 0
    assert "round 1" in shown.output and "result" in shown.output


def test_play_json_has_per_game_seats_ranks_scores_faults(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["play", "scauver", "random", "random", "--games", "2", "--seed", "9", "--json", *FAST]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["seed"] == 9
    assert [game["index"] for game in report["games"]] == [0, 1]
    for game in report["games"]:
        assert set(game) >= {"seed", "seats", "ranks", "scores", "faults"}
        assert sorted(game["seats"]) == ["random#1", "random#2"]
        assert sorted(game["ranks"]) in ([1, 2], [1, 1])
        assert game["faults"] == []


def test_play_reports_bot_faults_and_still_exits_zero() -> None:
    bot = str(Path(__file__).resolve().parents[1] / "fixtures" / "bots" / "illegal_action.py")
    result = CliRunner().invoke(main, ["play", "scauver", bot, "random", "--json", "--seed", "2", *FAST])
    assert result.exit_code == 0, result.output
    games = json.loads(result.stdout)["games"]  # the raw fixture bots say hello as "raw"
    assert [game["seats"].index("raw") for game in games] == [0, 1], "one deal from both seats"
    for game in games:
        seat = game["seats"].index("raw")
        assert [(fault["seat"], fault["kind"]) for fault in game["faults"]] == [(seat, "illegal_action")]
        assert game["faults"][0]["sent"] == '{"kind":"teleport","where":"home"}'
        assert game["faults"][0]["cause"] == "illegal-action"
        assert game["ranks"][seat] == 2 and game["ranks"][1 - seat] == 1


def _played(*args: str) -> dict:
    result = CliRunner().invoke(main, ["play", "scout", "random", "random", "random", "--json", *args, *FAST])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_public_seed_deals_the_same_games_and_a_secret_other_ones() -> None:
    def games(report: dict) -> list[tuple[int, int, list[str]]]:
        return [(game["index"], game["seed"], game["seats"]) for game in report["games"]]

    first = _played("--seed", "3")
    assert first["seed"] == 3 and games(first) == games(_played("--seed", "3"))
    assert [index for index, _, _ in games(first)] == [0, 3, 1, 4, 2, 5], "rotation by rotation"
    seeds = {index: seed for index, seed, _ in games(first)}
    assert seeds[0] == seeds[1] == seeds[2] != seeds[3] == seeds[4] == seeds[5]
    secret = _played()
    assert secret["seed"] is None and len(secret["games"]) == 6, "the smallest balanced match at 3 seats"
    assert not {seed for _, seed, _ in games(secret)} & set(seeds.values())
    assert {seed for _, seed, _ in games(_played())}.isdisjoint(seed for _, seed, _ in games(secret))


@pytest.mark.parametrize(
    ("bots", "games", "note"),
    [
        (
            2,
            "3",
            "the last deal is not played from every seat (2 games a deal). For a balanced match use --games 2 or 4",
        ),
        (3, "3", "right after whom is balanced only over multiples of 6 games. For a balanced match use --games 6"),
        (
            3,
            "13",
            "not played from every seat (3 games a deal); who plays right after whom is balanced only over "
            "multiples of 6 games. For a balanced match use --games 12 or 18",
        ),
    ],
)
def test_a_match_that_is_not_balanced_is_played_with_a_note(bots: int, games: str, note: str) -> None:
    result = CliRunner().invoke(main, ["play", "scout", *["random"] * bots, "-n", games, "--json", *FAST])
    assert result.exit_code == 0, result.output
    assert note in result.stderr
    report = json.loads(result.stdout)
    assert sorted(game["index"] for game in report["games"]) == list(range(int(games))), "the first games, deal by deal"
    balanced = CliRunner().invoke(main, ["play", "scout", *["random"] * bots, "-n", str(design_games(bots)), *FAST])
    assert balanced.exit_code == 0 and "note:" not in balanced.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["play", "scout", "random", "no-such-bot", "random"], "no bot 'no-such-bot'"),
        (["play", "scout", "random", "./missing/bot.py", "random"], "no such bot program"),
        (["play", "scauver", *["random"] * 5], "scauver is for 2 to 4 players, not 5 bots"),
        (["play", "chess", "random", "random"], "'chess' is not one of"),
        (["play", "scout", "random", "random", "random", "--move-time", "0"], "--move-time"),
        (["play", "scout", "random", "random", "random", "-o", "nonsense=1"], "has no option 'nonsense'"),
        (["play", "scout", "random", "random", "random", "-o", "novalue"], "is not KEY=VALUE"),
        (["play", "scout", "random", "random", "random", "--fault-policy", "pray"], "--fault-policy"),
    ],
)
def test_play_refuses_what_it_cannot_play_with_one_clear_line(args: list[str], message: str) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code != 0
    assert message in result.output
    assert "Traceback" not in result.output


def test_replay_verify_fails_on_a_tampered_replay(tmp_path: Path) -> None:
    result = invoke(
        "play", "scout", "random", "random", "random", "-n", "1", "--seed", "5", "--replay-dir", str(tmp_path), *FAST
    )
    assert result.exit_code == 0
    (path,) = tmp_path.glob("*.json")
    data = json.loads(path.read_text())
    data["result"]["scores"][0] += 1
    path.write_text(json.dumps(data))
    verified = CliRunner().invoke(main, ["replay", "verify", str(path)])
    assert verified.exit_code == 1
    assert "FAILED" in verified.output
    not_a_replay = tmp_path / "other.json"
    not_a_replay.write_text("{}")
    shown = CliRunner().invoke(main, ["replay", "show", str(not_a_replay)])
    assert shown.exit_code == 1 and "is not a card-referee-replay file" in shown.output


def test_bench_protocol_and_reuse_print_their_figures() -> None:
    protocol = CliRunner().invoke(
        main, ["bench", "protocol", "--games", "2", "--repeats", "1", "--players", "3", "--json"]
    )
    assert protocol.exit_code == 0, protocol.output
    figures = json.loads(protocol.stdout)
    assert figures["raw_round_trip_us"] > 0 and figures["referee_decision_us"] > 0 and figures["ratio"] > 0
    assert figures["prepared_round_trip_us"] > 0 and figures["prepared_ratio"] > 0
    assert figures["own_us"] == pytest.approx(
        figures["referee_decision_us"] - figures["prepared_round_trip_us"], abs=0.2
    )
    assert figures["decisions_per_game"] > 0
    frozen = figures["sandbox"] and sandbox.probe().cgroups.freezer
    assert ("freezing_us" in figures) == frozen and ("pondering_decision_us" in figures) == frozen
    if frozen:
        freezing = figures["referee_decision_us"] - figures["pondering_decision_us"]
        assert figures["freezing_us"] == pytest.approx(freezing, abs=0.2)
    pondering = CliRunner().invoke(main, ["bench", "protocol", "--games", "2", "--repeats", "1", "--ponder", "--json"])
    assert pondering.exit_code == 0 and "freezing_us" not in json.loads(pondering.stdout)
    reuse = CliRunner().invoke(main, ["bench", "reuse", "--games", "2", "--players", "2", "--json"])
    assert reuse.exit_code == 0, reuse.output
    rows = json.loads(reuse.stdout)
    assert [(row["game"], row["players"]) for row in rows] == [("scauver", 2), ("scout", 2)]
    assert all(row["speedup"] > 0 and row["decisions_per_game"] > 0 for row in rows)
    assert all(row["rotation_cost"] > 0 and row["rotated_games_per_s"] > 0 for row in rows)
    assert [row["rotated_starts_per_game"] for row in rows] == [2.0, 2.0], "2 bots started for each of 2 rotations"
    one_core = CliRunner().invoke(main, ["bench", "reuse", "--game", "scout", "--games", "2", "-p", "2", "--one-core"])
    assert one_core.exit_code == 0 and "scout" in one_core.output
    no_table = CliRunner().invoke(main, ["bench", "reuse", "--game", "scauver", "--players", "5"])
    assert no_table.exit_code == 1 and "scauver is not played by 5 players" in no_table.output


def test_play_keeps_each_bots_log_under_its_hello_name_in_a_printed_run_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    result = invoke("play", "scout", "random", "scout-heuristic", "--seed", "2", *FAST)
    assert result.exit_code == 0, result.output
    header = result.output.splitlines()[0]
    folder = Path(header.split("bot logs in ")[1])
    assert folder.parent.parent == tmp_path
    assert sorted(path.name for path in folder.iterdir()) == ["random.log", "scout-heuristic.log"]
    assert f"bot logs in {folder}: random.log, scout-heuristic.log" in result.output


def test_play_json_names_each_bot_with_its_hello_and_log(tmp_path: Path) -> None:
    result = invoke("play", "scauver", "random", "random", "--log-dir", str(tmp_path), "--json", *FAST)
    bots = json.loads(result.stdout)["bots"]
    assert [bot["name"] for bot in bots] == ["random#1", "random#2"]
    assert bots[0]["hello"] == {"name": "random", "version": "1", "protocol": 1}
    assert bots[1]["log"] == str(tmp_path / "random#2.log")


def _table_rows(block: str) -> list[list[str]]:
    return [line.split() for line in block.splitlines()[2:] if line.strip()]


def test_the_match_summary_credits_each_bot_with_its_own_games() -> None:
    """Games are played rotation by rotation (0, 2, 4, 1, 3, 5 for three deals at two seats), not in index order:
    the summary must follow each game's own seating."""
    result = invoke("play", "scauver", "heuristic", "random", "--games", "6", "--seed", "3", *FAST)
    assert result.exit_code == 0, result.output
    games_text, summary_text = result.output.split("\nmatch\n")
    wins: dict[str, int] = {}
    ranks: dict[str, list[int]] = {}
    for block in games_text.split("\n\n")[1:]:
        for row in _table_rows(block.split("\n", 1)[1]):
            bot, rank = row[1], int(row[2])
            wins[bot] = wins.get(bot, 0) + (rank == 1)
            ranks.setdefault(bot, []).append(rank)
    summary = {row[0]: row for row in _table_rows(summary_text.split("\nbot logs")[0])}
    assert set(summary) == set(wins) == {"scauver-heuristic", "random"}
    for bot, row in summary.items():
        assert int(row[1]) == len(ranks[bot]) == 6
        assert int(row[2]) == wins[bot], result.output
        assert float(row[3]) == pytest.approx(sum(ranks[bot]) / 6, abs=0.01)

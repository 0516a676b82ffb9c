import json

import pytest
from click.testing import CliRunner
from known_results import KNOWN_RESULTS

from tournaments.cli import main
from tournaments.ratings.elo import rate
from tournaments.ratings.results_file import ResultsFileError, parse_results
from tournaments.ratings.tables import crosstable, ratings_json, ratings_table


def known_lines() -> list[str]:
    lines = []
    for (first, second), (wins, draws, losses) in KNOWN_RESULTS.items():
        lines += [json.dumps({"ranks": {first: 1, second: 2}})] * wins
        lines += [json.dumps({"scores": {first: 5, second: 5}})] * draws
        lines += [json.dumps({"scores": {first: 0.5, second: 7}})] * losses
    return lines


def run(tmp_path, lines, *options):
    path = tmp_path / "games.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return CliRunner().invoke(main, ["tournament", "rate", str(path), *options])


def test_rate_prints_the_table_of_the_known_answer(tmp_path):
    result = run(tmp_path, known_lines(), "--bootstrap", "50", "--prior-draws", "0")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["Rank", "Bot", "Elo", "+/-", "Games", "Score", "W/D/L", "LOS", "Group"]
    assert lines[2].split()[:3] == ["1", "A", "137.2"]
    assert lines[5].split()[:3] == ["4", "D", "-120.5"]
    assert "24/5/7" in lines[2]
    assert "50 bootstrap resamples" in result.output and "no prior" in result.output


def test_rate_uses_the_prior_by_default(tmp_path):
    result = run(tmp_path, known_lines(), "--bootstrap", "0")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[2].split()[:3] == ["1", "A", "128.4"]
    assert "prior of 2 virtual draws per bot" in result.output


def test_rate_json_has_the_ratings(tmp_path):
    result = run(
        tmp_path, known_lines(), "--json", "--bootstrap", "20", "--seed", "5", "--crosstable", "--prior-draws", "0"
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    first = data["ratings"][0]
    assert (first["bot"], first["rank"], first["games"], data["prior_draws"]) == ("A", 1, 36, 0)
    assert first["elo"] == pytest.approx(137.18, abs=0.05)
    assert first["ci95"][0] < first["elo"] < first["ci95"][1]
    assert first["score"] == pytest.approx(26.5 / 36, abs=1e-4)
    assert data["bootstrap"] == {"samples": 20, "seed": 5}
    assert data["crosstable"]["A"]["B"] == {
        "wins": 7,
        "draws": 2,
        "losses": 3,
        "score": pytest.approx(8 / 12, abs=1e-4),
    }


def test_rate_multi_seat_shows_mean_rank_and_crosstable(tmp_path):
    lines = [
        '{"ranks": {"x": 1, "y": 2, "z": 3}}',
        "",
        '{"scores": {"x": 10, "y": 30, "z": 20}, "game": 7}',
        '{"ranks": {"x": 1, "y": 1, "z": 3}}',
    ]
    result = run(tmp_path, lines, "--crosstable", "--bootstrap", "0", "--tablefmt", "github")
    assert result.exit_code == 0, result.output
    assert "Mean rank" in result.output and "W/D/L" not in result.output
    assert result.output.startswith("|")
    assert "Score" in result.output.split("\n\n")[-1]


def test_rate_shows_an_unbeaten_bot_finite_and_first(tmp_path):
    lines = ['{"ranks": {"strong": 1, "weak": 2}}'] * 4
    data = json.loads(run(tmp_path, lines, "--json", "--bootstrap", "10").output)
    assert [entry["bot"] for entry in data["ratings"]] == ["strong", "weak"]
    assert data["ratings"][0]["elo"] > 0
    table = run(tmp_path, lines, "--bootstrap", "0").output
    assert ">=" not in table and "<=" not in table and "floor" not in table


def test_rate_without_the_prior_refuses_an_infinite_elo(tmp_path):
    result = run(tmp_path, ['{"ranks": {"strong": 1, "weak": 2}}'] * 4, "--prior-draws", "0")
    assert result.exit_code == 1
    assert "strong never lost a point" in result.output and "Traceback" not in result.output


def test_rate_an_empty_file(tmp_path):
    result = run(tmp_path, [""])
    assert result.exit_code == 0
    assert "No games" in result.output


@pytest.mark.parametrize(
    "bad_line, message",
    [
        ("{not json", "line 2: not valid JSON"),
        ("[1, 2]", "line 2: expected an object"),
        ('{"ranks": {"a": 1, "b": 2}, "scores": {"a": 1, "b": 2}}', 'line 2: expected exactly one of "ranks"'),
        ('{"result": {"a": 1}}', 'line 2: expected exactly one of "ranks"'),
        ('{"ranks": {"a": 1}}', 'line 2: "ranks" must be an object naming at least two bots'),
        ('{"ranks": {"a": 1, "b": 0}}', "line 2: the rank of 'b' must be a positive integer, got 0"),
        ('{"ranks": {"a": 1, "b": "2"}}', "line 2: the rank of 'b' must be a positive integer"),
        ('{"scores": {"a": 1, "b": true}}', "line 2: the score of 'b' must be a number, got true"),
        ('{"scores": {"a": 1, "b": NaN}}', "line 2: the score of 'b' must be a number"),
        ('{"scores": {"a": 1, "a": 2}}', "line 2: 'a' appears twice"),
        ('{"scores": {"a": 1, "": 2}}', 'line 2: "scores" has an empty bot name'),
    ],
)
def test_rate_bad_lines_name_the_line(tmp_path, bad_line, message):
    result = run(tmp_path, ['{"ranks": {"a": 1, "b": 2}}', bad_line])
    assert result.exit_code == 1
    assert message in result.output
    assert "Traceback" not in result.output


def test_rate_missing_file_is_a_clear_error(tmp_path):
    result = CliRunner().invoke(main, ["tournament", "rate", str(tmp_path / "missing.jsonl")])
    assert result.exit_code == 2
    assert "does not exist" in result.output


def test_rate_file_that_is_not_text(tmp_path):
    path = tmp_path / "games.jsonl"
    path.write_bytes(b'{"ranks": {"a": 1, "b": 2}}\n\xff\xfe\n')
    result = CliRunner().invoke(main, ["tournament", "rate", str(path)])
    assert result.exit_code == 1
    assert "line 2: not UTF-8" in result.output


def test_rate_reads_standard_input():
    result = CliRunner().invoke(
        main, ["tournament", "rate", "-", "--bootstrap", "0"], input='{"ranks": {"a": 1, "b": 2}}\n' * 3
    )
    assert result.exit_code == 0, result.output
    assert "a" in result.output.splitlines()[2]


def test_scores_become_shared_ranks():
    assert parse_results(['{"scores": {"a": 3, "b": 9, "c": 3}}']) == [{"a": 2, "b": 1, "c": 2}]
    with pytest.raises(ResultsFileError, match="line 1"):
        parse_results(["3"])


def test_table_functions_for_the_league():
    ratings = rate([{"a": 1, "b": 2, "c": 3}, {"a": 2, "b": 1, "c": 1}, {"a": 1, "b": 3, "c": 2}], bootstrap=10)
    table = ratings_table(ratings, tablefmt="plain", faults={"b": 3})
    header = table.splitlines()[0].split()
    assert header == ["Rank", "Bot", "Elo", "+/-", "Games", "Score", "Mean", "rank", "Faults", "LOS", "Group"]
    row_b = next(line for line in table.splitlines() if line.split()[1:2] == ["b"])
    assert row_b.split()[-3] == "3"
    data = ratings_json(ratings, faults={"b": 3})
    assert {entry["bot"]: entry["faults"] for entry in data["ratings"]} == {"a": 0, "b": 3, "c": 0}
    assert "crosstable" not in data
    assert crosstable(ratings, tablefmt="plain").splitlines()[1].split()[-1] == f"{ratings.bots[0].points:g}/6"


def test_split_pools_are_numbered_and_ranked_separately():
    ratings = rate([{"a": 1, "b": 2}, {"a": 2, "b": 1}, {"c": 1, "d": 1}], bootstrap=0)
    table = ratings_table(ratings)
    assert table.splitlines()[0].split()[:3] == ["Pool", "Rank", "Bot"]
    assert "2 pools" in table
    assert [entry["rank"] for entry in ratings_json(ratings)["ratings"]] == [1, 2, 1, 2]

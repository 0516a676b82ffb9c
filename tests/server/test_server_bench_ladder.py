"""`referee bench ladder` run tiny (3 students, one of them broken, a short run): every verdict comes back and
every figure of the report is a real number."""

from __future__ import annotations

import json
import math
from typing import Any

from click.testing import CliRunner

from tournaments.cli import main


def numbers(report: dict[str, Any], *path: str) -> float:
    value: Any = report
    for key in path:
        value = value[key]
    assert isinstance(value, int | float) and not isinstance(value, bool), (path, value)
    assert math.isfinite(value), (path, value)
    return float(value)


def test_a_tiny_ladder_bench_reports_every_verdict_and_real_numbers() -> None:
    result = CliRunner().invoke(main, ["bench", "ladder", "--students", "3", "--minutes", "0.3", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["students"] == 3
    assert report["verdicts"] == 3, "every verdict came back"
    assert (report["accepted"], report["refused"]) == (2, 1), "the third student's bot is the broken one"
    assert report["first_game_s"]["placed"] == 2, "both accepted versions reached a rated game"
    assert 0 <= numbers(report, "first_game_s", "median") <= numbers(report, "first_game_s", "p95")
    assert numbers(report, "table_ms", "polls") > 0 and numbers(report, "table_ms", "p95") > 0
    assert numbers(report, "ladder", "games") > 0 and numbers(report, "ladder", "per_core_hour") > 0
    assert numbers(report, "league", "games") > 0 and numbers(report, "league", "per_core_hour") > 0
    assert numbers(report, "server_cost") < 1
    assert len(report["load_average"]) == 3

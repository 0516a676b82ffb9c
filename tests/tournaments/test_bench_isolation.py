"""`referee bench isolation`: the same random-bot matches at each isolation level asked for."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from referee.isolation import gvisor
from referee.isolation.sandbox import Isolation
from tournaments.bench.isolation import match_isolation
from tournaments.cli import main


def test_each_level_asks_the_match_for_what_it_is() -> None:
    assert match_isolation(Isolation.NONE) == {"sandbox": False, "kernel": False}
    assert match_isolation(Isolation.FULL) == {"sandbox": True, "kernel": False}
    assert match_isolation(Isolation.KERNEL) == {"sandbox": True, "kernel": True}


def _bench(*levels: str) -> list[dict[str, object]]:
    arguments = ["bench", "isolation", "--players", "2", "--games", "2", "--repeats", "1", "--json"]
    result = CliRunner().invoke(main, [*arguments, *(word for level in levels for word in ("--isolation", level))])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["levels"]
    assert [row["isolation"] for row in rows] == list(levels)
    for row in rows:
        assert row["table_start_ms"] > 0 and row["decision_us"] > 0 and row["games_per_s"] > 0
    return rows


def test_the_bench_gives_ratios_to_no_sandbox() -> None:
    none, full = _bench("none", "full")
    assert none["table_start_ratio"] == none["decision_ratio"] == none["games_per_s_ratio"] == 1.0
    assert {"table_start_ratio", "decision_ratio", "games_per_s_ratio"} <= full.keys()


@pytest.mark.skipif(
    not gvisor.probe().usable and not os.environ.get("REFEREE_REQUIRE_KERNEL"),
    reason=f"no kernel per bot here: {gvisor.probe().problem}",
)
def test_the_bench_measures_the_kernel_level() -> None:
    (kernel,) = _bench("kernel")
    assert "table_start_ratio" not in kernel

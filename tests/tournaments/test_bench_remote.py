"""`referee bench protocol --remote` runs its mixed table of remote and local seats and its floors, and its figures
hold together (no timing is asserted: the figures are the bench's, for docs/results.md)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tournaments.cli import main


def test_bench_protocol_remote_prints_each_kind_of_seat_and_their_ratio() -> None:
    result = CliRunner().invoke(main, ["bench", "protocol", "--remote", "--games", "2", "--repeats", "1", "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)
    for kind in ("local", "remote"):
        seats = figures[kind]
        assert seats["decisions"] > 0 and seats["round_trip_median_us"] > 0
        assert seats["own_least_us"] == seats["own_median_us"] == seats["own_most_us"]
        own = seats["decision_median_us"] - seats["round_trip_median_us"]
        assert seats["own_median_us"] == pytest.approx(own, abs=0.2)
        assert seats["outside_clock_median_us"] > 0
    remote, local = figures["remote"]["own_median_us"], figures["local"]["own_median_us"]
    # Both medians are printed to 0.1 us and the ratio, from the unrounded ones, to 0.01: a few-microsecond local
    # median leaves the printed figures a few hundredths of the ratio apart.
    # (A loaded machine can leave the local median at zero or below, where no ratio is checkable.)
    if local > 0.05:
        assert (remote - 0.05) / (local + 0.05) - 0.005 <= figures["ratio"] <= (remote + 0.05) / (local - 0.05) + 0.005
    assert figures["pooled_ratio"] == pytest.approx(figures["ratio"], abs=0.02)

"""Lag quotas (referee.wire.lag_quota): a remote seat's clock is extended by min(lag, quota left), and the quota
pays only for what the extension covered; a local seat is never extended."""

from __future__ import annotations

import pytest

from referee.wire.lag_quota import LagQuotas, lag_estimate_ms

REMOTE, LOCAL = b"remote", b"local"


def _quotas(quota_ms: int, lag_ms: float) -> LagQuotas:
    return LagQuotas(quota_ms, lambda identity: [lag_ms] if identity == REMOTE else None)


def test_a_local_seat_is_neither_extended_nor_recorded() -> None:
    quotas = _quotas(500, 100.0)
    assert quotas.grant(0, LOCAL) == 0.0
    assert quotas.grant(1, None) == 0.0
    assert quotas.settle(0, 450.0, 300, 0) is None
    assert quotas.settle(1, 450.0, 300, 0) is None


def test_an_answer_within_the_move_time_spends_nothing() -> None:
    quotas = _quotas(500, 100.0)
    assert quotas.grant(0, REMOTE) == 100.0
    credit = quotas.settle(0, 280.0, 300, 0)
    assert credit is not None
    assert (credit.think_ms, credit.lag_ms, credit.credit_ms) == (180.0, 100.0, 0.0)
    assert quotas.left_ms(0) == 500.0


def test_the_quota_pays_the_lag_past_the_move_time_until_it_runs_out() -> None:
    quotas = _quotas(250, 100.0)
    credits = []
    for _ in range(4):
        extension = quotas.grant(0, REMOTE)
        credit = quotas.settle(0, 300 + extension + 50, 300, 1000)
        assert credit is not None
        credits.append(credit.credit_ms)
    assert credits == [100.0, 100.0, 50.0, 0.0]
    assert quotas.left_ms(0) == 0.0
    assert quotas.grant(0, REMOTE) == 0.0


def test_only_the_part_past_the_move_time_is_credited() -> None:
    quotas = _quotas(500, 100.0)
    quotas.grant(3, REMOTE)
    credit = quotas.settle(3, 340.0, 300, 0)
    assert credit is not None and credit.credit_ms == 40.0
    assert quotas.left_ms(3) == 460.0
    assert quotas.left_ms(0) == 500.0


def test_before_any_round_trip_the_clock_is_extended_by_the_quota_left_but_only_the_lag_is_credited() -> None:
    samples: list[float] = []
    quotas = LagQuotas(500, lambda identity: samples)
    assert quotas.grant(0, REMOTE) == 500.0
    samples.append(100.0)
    credit = quotas.settle(0, 450.0, 300, 50)
    assert credit is not None and (credit.lag_ms, credit.credit_ms) == (100.0, 100.0)
    assert quotas.left_ms(0) == 400.0
    assert quotas.grant(0, REMOTE) == 100.0


@pytest.mark.parametrize(
    ("samples", "estimate"), [([], 0.0), ([100.0], 100.0), ([900.0, 100.0, 101.0, 99.0, 500.0, 102.0], 101.0)]
)
def test_the_lag_is_the_median_of_the_latest_round_trips(samples: list[float], estimate: float) -> None:
    assert lag_estimate_ms(samples) == estimate


def test_an_answer_past_move_time_bank_and_credit_is_not_in_time_and_spends_nothing() -> None:
    quotas = _quotas(500, 100.0)
    quotas.grant(0, REMOTE)
    credit = quotas.settle(0, 460.0, 300, 50)
    assert credit is not None and not credit.in_time
    assert quotas.left_ms(0) == 500.0
    quotas.grant(0, REMOTE)
    credit = quotas.settle(0, 450.0, 300, 50)
    assert credit is not None and credit.in_time and credit.credit_ms == 100.0
    assert quotas.left_ms(0) == 400.0

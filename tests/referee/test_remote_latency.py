"""Remote seats' clocks behind a slow link, with real processes on loopback (tournaments.bench.latency): a delay proxy
adds 0, 50 and 150 ms each way with jitter between the referee's CURVE socket and a remote SDK bot that thinks a
share of its move time, against three local random bots.

A bot thinking 60% of its move time forfeits nothing over 100 decisions at each delay (at 150 ms the lag quota pays
for what the network put past its move time); one thinking 120% forfeits, and at 50 and 150 ms only once its quota
has run out; the lag the referee records matches the round trip the proxy itself says it added within 10 ms.

The move time is 100 ms, so that 100 decisions behind 150 ms each way take under a minute; each run's time bank
(2 s at 60%, 1 s at 120%) absorbs a loaded machine's stalls, which the bot's 40 ms of slack could not. With no
delay the 120% bot's bank is 200 ms, so that it runs out within any game (20 ms a decision: 10 decisions). The six
runs go side by side, each in a process of its own (they mostly wait on their clocks)."""

from __future__ import annotations

import pytest

from tournaments.bench.latency import LatencyRun, LatencySettings, bank_120_ms, latency_runs

DELAYS_MS = (0, 50, 150)
QUOTA_120_MS = 600
TOLERANCE_MS = 10.0
TIMEOUTS = {"decision-timeout", "late-answer", "no-answer"}


@pytest.fixture(scope="module")
def runs() -> dict[tuple[int, float], LatencyRun]:
    settings = [LatencySettings(delay, 0.6, quota_ms=60_000, bank_ms=2000, decisions=100) for delay in DELAYS_MS]
    settings += [
        LatencySettings(delay, 1.2, quota_ms=QUOTA_120_MS, bank_ms=bank_120_ms(delay), decisions=1, seed=7)
        for delay in DELAYS_MS
    ]
    return {(int(run.settings.delay_ms), run.settings.share): run for run in latency_runs(settings)}


@pytest.mark.parametrize("delay", DELAYS_MS)
def test_a_bot_thinking_within_its_time_forfeits_nothing_over_a_hundred_decisions(
    runs: dict[tuple[int, float], LatencyRun], delay: int
) -> None:
    run = runs[(delay, 0.6)]
    assert run.decisions >= 100
    assert run.fault_causes == () and run.forfeited_games == 0
    if delay == 150:
        assert run.credit_ms > 0, "60% of 100 ms and a 300 ms round trip are past the move time: the quota pays"


@pytest.mark.parametrize("delay", DELAYS_MS)
def test_a_bot_thinking_past_its_time_forfeits_and_behind_a_slow_link_only_once_its_quota_is_spent(
    runs: dict[tuple[int, float], LatencyRun], delay: int
) -> None:
    run = runs[(delay, 1.2)]
    assert run.forfeited_games >= 1
    assert run.fault_causes and set(run.fault_causes) <= TIMEOUTS, run.fault_causes
    if delay > 0:
        assert run.quota_left_at_faults_ms == pytest.approx([0.0] * run.forfeited_games, abs=0.01)
    else:
        assert min(run.quota_left_at_faults_ms) > QUOTA_120_MS / 2, "no lag: the bank, not the quota, ran out"


@pytest.mark.parametrize("delay", DELAYS_MS)
def test_the_recorded_lag_matches_what_the_proxy_added_within_ten_ms(
    runs: dict[tuple[int, float], LatencyRun], delay: int
) -> None:
    run = runs[(delay, 0.6)]
    assert run.added_round_trip_ms >= 2 * delay
    assert abs(run.lag_error_ms) <= TOLERANCE_MS, (run.lag_median_ms, run.added_round_trip_ms)

"""Executors: every game reaches the caller once and while its match still runs; failures and stops are clean."""

from __future__ import annotations

import json
import multiprocessing
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from fake_runner import (
    IN_FORK_HOOK,
    PLAYED_ON,
    ack_path,
    fork_hook_runner,
    placement_runner,
    scripted_runner,
)

from referee.deals import DealKey
from referee.records import GameRecord, MatchSpec
from tournaments.league.executors import (
    DaskUnavailable,
    ExecutorError,
    LocalExecutor,
    import_distributed,
)
from tournaments.league.league_file import load_league
from tournaments.league.placement import usable_cpus
from tournaments.league.schedule import league_schedule, match_spec

pytestmark = pytest.mark.timeout(180)

KEY = DealKey.from_seed(7)


@pytest.fixture
def specs(write_league) -> list[MatchSpec]:
    """The league's matches without a log folder: scripted_runner takes one as the folder to wait for acks in."""
    league = load_league(write_league(bots=["a", "b", "c", "d", "e"], deals_per_match=2))
    return [replace(match_spec(league, match), log_dir=None) for match in league_schedule(league, KEY)]


def expected_games(specs: list[MatchSpec]) -> Counter[tuple[str, int]]:
    return Counter((spec.match_id, game.index) for spec in specs for game in spec.games)


def acknowledging(folder: Path, received: list[GameRecord]):
    def on_game(record: GameRecord) -> None:
        received.append(record)
        ack_path(folder, record).touch()

    return on_game


@pytest.mark.parametrize("concurrency", [1, 3])
def test_local_pool_hands_over_each_game_while_its_match_runs(specs, tmp_path: Path, concurrency: int) -> None:
    paced = [replace(spec, log_dir=str(tmp_path)) for spec in specs]
    received: list[GameRecord] = []
    LocalExecutor(concurrency, runner=scripted_runner).run(paced, acknowledging(tmp_path, received))
    assert Counter((record.match_id, record.index) for record in received) == expected_games(specs)
    assert not multiprocessing.active_children()


def test_a_failing_match_is_reported_and_the_workers_stop(specs) -> None:
    failing = [*specs[:3], replace(specs[3], match_id="will-fail"), *specs[4:]]
    with pytest.raises(ExecutorError, match="will-fail.*ScriptedFailure: scripted failure"):
        LocalExecutor(2, runner=scripted_runner).run(failing, lambda record: None)
    assert not multiprocessing.active_children()


def test_interrupt_in_the_caller_stops_every_worker(specs, tmp_path: Path) -> None:
    paced = [replace(spec, log_dir=str(tmp_path)) for spec in specs]

    def interrupt(record: GameRecord) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        LocalExecutor(2, runner=scripted_runner).run(paced, interrupt)
    assert not multiprocessing.active_children()


def test_a_stop_signal_that_lands_in_a_fork_hook_still_stops_the_worker(specs, tmp_path: Path, capfd) -> None:
    """Python swallows an exception raised in a hook around a fork (as when a bot starts), and the worker,
    ignoring its stop signal from then on, would play on until it was killed, printing the swallowed exit."""

    def interrupt_in_the_hook(record: GameRecord) -> None:
        _wait_for_file(tmp_path / IN_FORK_HOOK)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        LocalExecutor(1, runner=fork_hook_runner).run([replace(specs[0], log_dir=str(tmp_path))], interrupt_in_the_hook)
    assert not multiprocessing.active_children()
    assert not (tmp_path / PLAYED_ON).exists(), "the worker played on after its stop signal"
    assert "Exception ignored" not in capfd.readouterr().err


def _wait_for_file(path: Path) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.01)


def test_local_pool_plays_real_matches(write_league) -> None:
    league = load_league(write_league(bots=["a", "b", "c", "d"], command="random"))
    specs = [match_spec(league, match) for match in league_schedule(league, KEY)]
    received: list[GameRecord] = []
    LocalExecutor(2).run(specs, received.append)
    assert Counter((record.match_id, record.index) for record in received) == expected_games(specs)
    assert all(sorted(record.ranks)[0] == 1 and not record.faults for record in received)


def test_missing_dask_is_a_clear_error(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(DaskUnavailable, match=r"pip install 'card-referee\[dask\]'"):
        import_distributed()


def worker_placements(folder: Path) -> list[dict]:
    return [json.loads(path.read_text()) for path in sorted(folder.glob("*.cpus.json"))]


@pytest.mark.skipif(len(usable_cpus()) < 2, reason="placement needs at least 2 usable CPUs")
def test_pinned_workers_keep_to_disjoint_cpu_shares_and_their_bots_inherit_them(specs, tmp_path: Path) -> None:
    logged = [replace(spec, log_dir=str(tmp_path)) for spec in specs]
    LocalExecutor(2, runner=placement_runner).run(logged, lambda record: None)
    placements = worker_placements(tmp_path)
    assert len(placements) == len(specs)
    cpus_by_worker = {placement["worker"]: tuple(placement["cpus"]) for placement in placements}
    assert len(cpus_by_worker) == 2
    first, second = cpus_by_worker.values()
    assert first and second and not set(first) & set(second)
    assert all(placement["child"] == placement["cpus"] for placement in placements)


def test_unpinned_workers_may_use_every_cpu(specs, tmp_path: Path) -> None:
    logged = [replace(spec, log_dir=str(tmp_path)) for spec in specs]
    LocalExecutor(2, runner=placement_runner, pinned=False).run(logged, lambda record: None)
    assert {tuple(placement["cpus"]) for placement in worker_placements(tmp_path)} == {tuple(usable_cpus())}


def test_a_worker_that_cannot_start_is_a_clear_error_and_leaves_nothing_behind(specs) -> None:
    def unpicklable_runner(spec: MatchSpec, on_game=None) -> None:
        raise AssertionError("never runs: a local function cannot reach a spawned worker")

    with pytest.raises(ExecutorError, match="cannot start a worker process"):
        LocalExecutor(2, runner=unpicklable_runner).run(specs, lambda record: None)
    assert not multiprocessing.active_children()

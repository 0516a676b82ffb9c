"""Executors: every game reaches the caller once and while its match still runs; failures and stops are clean."""

from __future__ import annotations

import json
import multiprocessing
import sys
import time
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import hostile_dask
import pytest
from click.testing import CliRunner
from fake_runner import (
    IN_FORK_HOOK,
    PLAYED_ON,
    ack_path,
    fork_hook_runner,
    placement_runner,
    record_for,
    scripted_runner,
)

from referee.deals import DealKey
from referee.isolation.sandbox import Isolation
from referee.match import run_match
from referee.records import GameRecord, MatchSpec
from tournaments.cli import main
from tournaments.league.dask_tls import cluster_security, write_certificates
from tournaments.league.executors import (
    DaskExecutor,
    DaskUnavailable,
    ExecutorError,
    InsecureScheduler,
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


@dataclass(frozen=True)
class TlsCluster:
    address: str
    security: Any
    """The organiser's: tournaments.league.dask_tls.cluster_security of the folder `dask-certs` made."""
    worker: str
    folder: Path


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory):
    """A LocalCluster on TLS with the certificates `referee tournament dask-certs` makes (the documented way)."""
    distributed = pytest.importorskip("distributed")
    folder = tmp_path_factory.mktemp("dask") / "tls"
    made = CliRunner().invoke(main, ["tournament", "dask-certs", str(folder)])
    assert made.exit_code == 0, made.output
    files = {name: str(folder / name) for name in ("ca.pem", "cert.pem", "key.pem")}
    assert (folder / "key.pem").stat().st_mode & 0o077 == 0, "the key is its owner's alone"
    roles = distributed.security.Security(
        tls_ca_file=files["ca.pem"],
        **{f"tls_{role}_{part}": files[f"{'cert' if part == 'cert' else 'key'}.pem"]
           for role in ("client", "scheduler", "worker") for part in ("cert", "key")},
        require_encryption=True,
    )  # fmt: skip
    with distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=2,
        processes=False,
        dashboard_address=None,
        protocol="tls://",
        host="127.0.0.1",
        security=roles,
    ) as cluster:
        (worker,) = [worker.address for worker in cluster.workers.values()]
        yield TlsCluster(cluster.scheduler_address, cluster_security(folder), worker, folder)


def dask_executor(cluster: TlsCluster, **options: Any) -> DaskExecutor:
    return DaskExecutor(cluster.address, security=cluster.security, **options)


def test_dask_hands_over_each_game_while_its_match_runs(dask_cluster, specs, tmp_path: Path) -> None:
    paced = [replace(spec, log_dir=str(tmp_path)) for spec in specs]
    received: list[GameRecord] = []
    dask_executor(dask_cluster, runner=scripted_runner).run(paced, acknowledging(tmp_path, received))
    assert Counter((record.match_id, record.index) for record in received) == expected_games(specs)
    made = {(spec.match_id, game.index): record_for(spec, game) for spec in paced for game in spec.games}
    assert all(record == made[record.match_id, record.index] for record in received), "records come back whole"


def test_dask_reports_a_failing_match(dask_cluster, specs) -> None:
    failing = [replace(specs[0], match_id="will-fail")]
    received: list[GameRecord] = []
    with pytest.raises(ExecutorError, match="will-fail"):
        dask_executor(dask_cluster, runner=scripted_runner).run(failing, received.append)
    assert [record.index for record in received] == [0], "the game finished before the failure is kept"


def test_dask_plays_real_matches(dask_cluster, write_league) -> None:
    league = load_league(write_league(bots=["a", "b", "c"], command="random", deals_per_match=2))
    specs = [match_spec(league, match) for match in league_schedule(league, KEY)]
    received: list[GameRecord] = []
    dask_executor(dask_cluster, runner=run_match).run(specs, received.append)
    assert Counter((record.match_id, record.index) for record in received) == expected_games(specs)


@pytest.mark.parametrize(
    ("task", "says"),
    [
        (hostile_dask.junk_task, "sent junk instead of a message: bytes that are not plain msgpack"),
        (
            hostile_dask.wrong_shape_task,
            "sent junk instead of a message: a game message that does not hold one: a rank",
        ),
        (hostile_dask.stranger_task, "sent a record of game 0 of match 'a-match-nobody-asked-for'"),
        (hostile_dask.pickled_task, "sent something that is not plain data"),
    ],
)
def test_a_worker_sending_junk_is_an_error_naming_it_and_nothing_is_unpickled(
    dask_cluster, specs, tmp_path: Path, task, says: str
) -> None:
    received: list[GameRecord] = []
    hostile = [replace(specs[0], log_dir=str(tmp_path))]
    with pytest.raises(ExecutorError) as raised:
        dask_executor(dask_cluster, runner=scripted_runner, task=task).run(hostile, received.append)
    assert f"Dask worker {dask_cluster.worker} " in str(raised.value) and says in str(raised.value)
    assert not received
    assert not (tmp_path / hostile_dask.UNPICKLED).exists(), "the organiser unpickled what a worker sent"


def test_a_pickle_from_a_worker_would_run_code_in_a_client_that_accepts_pickles(dask_cluster, specs, tmp_path):
    """What the test above guards against: the same payload, read by a client with distributed's default
    deserializers, runs the worker's code in the reader's process."""
    distributed = pytest.importorskip("distributed")
    with distributed.Client(dask_cluster.address, security=dask_cluster.security) as client:
        queue = distributed.Queue(name="open-door", client=client)
        spec = replace(specs[0], log_dir=str(tmp_path))
        future = client.submit(
            hostile_dask.pickled_task, spec, {dask_cluster.worker: "open-door"}, scripted_runner, pure=False
        )
        distributed.wait(future)
        queue.get(batch=True)
    assert (tmp_path / hostile_dask.UNPICKLED).exists()


@pytest.mark.parametrize(
    ("prober", "required", "level"),
    [
        (hostile_dask.partial_prober, Isolation.FULL, "partial"),
        (hostile_dask.unsandboxed_prober, Isolation.FULL, "none"),
        (hostile_dask.unsandboxed_prober, Isolation.PARTIAL, "none"),
    ],
)
def test_a_worker_below_the_required_isolation_is_refused_before_any_match(
    dask_cluster, specs, prober, required: Isolation, level: str
) -> None:
    played: list[GameRecord] = []
    with pytest.raises(ExecutorError) as raised:
        dask_executor(dask_cluster, runner=scripted_runner, prober=prober, required=required).run(specs, played.append)
    assert str(raised.value).startswith(
        f"refused Dask worker(s) below the {required.value} isolation this league requires: "
        f"{dask_cluster.worker} ({level})"
    )
    assert not played


def test_a_worker_at_the_required_isolation_plays(dask_cluster, specs) -> None:
    played: list[GameRecord] = []
    executor = dask_executor(
        dask_cluster, runner=scripted_runner, prober=hostile_dask.full_prober, required=Isolation.FULL
    )
    executor.run(specs[:2], played.append)
    assert Counter((record.match_id, record.index) for record in played) == expected_games(specs[:2])


def test_games_below_the_required_isolation_are_refused_whatever_the_probe_said(dask_cluster, specs) -> None:
    executor = dask_executor(
        dask_cluster, task=hostile_dask.weaker_task, prober=hostile_dask.full_prober, required=Isolation.FULL
    )
    with pytest.raises(ExecutorError, match=f"Dask worker {dask_cluster.worker} played a game of .* at none isolation"):
        executor.run(specs[:1], lambda record: None)


def test_a_probe_that_is_no_isolation_level_is_junk(dask_cluster, specs) -> None:
    with pytest.raises(ExecutorError, match=f"Dask worker {dask_cluster.worker} sent junk.*a probe message"):
        dask_executor(dask_cluster, prober=hostile_dask.boasting_prober).run(specs[:1], lambda record: None)


def test_a_scheduler_without_tls_is_refused(specs) -> None:
    with pytest.raises(InsecureScheduler, match="not a tls:// address"):
        DaskExecutor("tcp://127.0.0.1:8786")
    with pytest.raises(InsecureScheduler, match="needs the cluster's certificates: --scheduler-tls FOLDER"):
        DaskExecutor("tls://127.0.0.1:8786")


def test_other_certificates_cannot_reach_the_scheduler(dask_cluster, specs, tmp_path: Path) -> None:
    other = write_certificates(tmp_path / "other")
    executor = DaskExecutor(dask_cluster.address, security=cluster_security(other), connect_timeout_s=3)
    with pytest.raises(ExecutorError, match=f"cannot reach the Dask scheduler at {dask_cluster.address}"):
        executor.run(specs[:1], lambda record: None)


def test_unreachable_scheduler_is_an_executor_error(dask_cluster, specs) -> None:
    executor = DaskExecutor(
        "tls://127.0.0.1:9", runner=scripted_runner, security=dask_cluster.security, connect_timeout_s=0.5
    )
    with pytest.raises(ExecutorError, match="cannot reach the Dask scheduler at tls://127.0.0.1:9"):
        executor.run(specs, lambda record: None)


def test_a_league_runs_on_the_cluster_from_the_command_line(dask_cluster, write_league) -> None:
    path = write_league(bots=["a", "b", "c"], command="random", deals_per_match=2)
    run = CliRunner().invoke(
        main,
        ["tournament", "run", str(path), "--scheduler", dask_cluster.address, "--scheduler-tls",
         str(dask_cluster.folder), "--require-isolation", "none", "--bootstrap", "0", "--json"],
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    assert json.loads(run.stdout)["games"] == 6
    refused = CliRunner().invoke(main, ["tournament", "run", str(path), "--scheduler", "tcp://127.0.0.1:8786"])
    assert refused.exit_code == 1 and "is not a tls:// address" in refused.output


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


def test_the_dask_options_need_a_scheduler_and_a_sandbox(write_league, tmp_path: Path) -> None:
    path = write_league(bots=["a", "b", "c"], command="random", deals_per_match=2)
    alone = CliRunner().invoke(main, ["tournament", "run", str(path), "--require-isolation", "full"])
    assert alone.exit_code == 2 and "--scheduler-tls and --require-isolation are for a Dask cluster" in alone.output
    folder = write_certificates(tmp_path / "tls")
    unsandboxed = CliRunner().invoke(
        main,
        ["tournament", "run", str(path), "--scheduler", "tls://127.0.0.1:9", "--scheduler-tls", str(folder),
         "--require-isolation", "full", "--no-sandbox"],
    )  # fmt: skip
    assert unsandboxed.exit_code == 2 and "--no-sandbox plays at no isolation" in unsandboxed.output
    (folder / "key.pem").unlink()
    keyless = CliRunner().invoke(
        main, ["tournament", "run", str(path), "--scheduler", "tls://127.0.0.1:9", "--scheduler-tls", str(folder)]
    )
    assert keyless.exit_code == 1 and "has no key.pem: make them with `referee tournament dask-certs" in keyless.output

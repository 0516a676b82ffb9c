"""The Dask executor on a real TLS cluster: games come back as checked data, a worker that sends junk (or a
pickle, or an exception) is an error naming it with nothing unpickled here, and a worker below the required
isolation is refused before any match."""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import hostile_dask
import pytest
from click.testing import CliRunner
from fake_runner import ack_path, record_for, scripted_runner

from referee.deals import DealKey
from referee.isolation.sandbox import Isolation
from referee.match import run_match
from referee.records import GameRecord, MatchSpec
from tournaments.cli import main
from tournaments.league.dask_tls import cluster_security, write_certificates
from tournaments.league.executors import DaskExecutor, ExecutorError, InsecureScheduler
from tournaments.league.league_file import load_league
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


@dataclass(frozen=True)
class TlsCluster:
    address: str
    security: Any
    """The organiser's: tournaments.league.dask_tls.cluster_security of the folder `dask-certs` made."""
    worker: str
    folder: Path
    roles: Any
    """The scheduler's and workers' Security, from the same files."""


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
        yield TlsCluster(cluster.scheduler_address, cluster_security(folder), worker, folder, roles)


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


@pytest.fixture(scope="module")
def dask_process_cluster(dask_cluster):
    """The same certificates, a worker in a process of its own: what it unpickles is not this process's doing."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",
        worker_dashboard_address=None,
        protocol="tls://",
        host="127.0.0.1",
        security=dask_cluster.roles,
    ) as cluster:
        (worker,) = [worker.worker_address for worker in cluster.workers.values()]
        yield replace(dask_cluster, address=cluster.scheduler_address, worker=worker)


def unpickled_here(folder: Path) -> bool:
    marker = folder / hostile_dask.UNPICKLED
    return marker.exists() and marker.read_text() == f"unpickled in process {os.getpid()}\n"


@pytest.mark.parametrize(
    ("task", "says"),
    [
        (hostile_dask.junk_task, "sent junk instead of a message: bytes that are not plain msgpack"),
        (hostile_dask.wrong_shape_task, "sent junk instead of a message: a game message that does not hold one"),
        (hostile_dask.stranger_task, "sent a record of game 0 of match 'a-match-nobody-asked-for'"),
        (hostile_dask.pickled_task, "sent something that is not plain data"),
    ],
)
def test_a_worker_sending_junk_is_an_error_naming_it_and_nothing_is_unpickled(
    dask_process_cluster, specs, tmp_path: Path, task, says: str
) -> None:
    received: list[GameRecord] = []
    hostile = [replace(specs[0], log_dir=str(tmp_path))]
    with pytest.raises(ExecutorError) as raised:
        dask_executor(dask_process_cluster, runner=scripted_runner, task=task).run(hostile, received.append)
    assert f"Dask worker {dask_process_cluster.worker} " in str(raised.value) and says in str(raised.value)
    assert not received
    assert not unpickled_here(tmp_path), "the organiser unpickled what a worker sent"


def test_a_task_raising_on_a_worker_is_an_error_and_its_exception_is_not_unpickled(
    dask_process_cluster, specs, tmp_path: Path
) -> None:
    hostile = [replace(specs[0], log_dir=str(tmp_path))]
    executor = dask_executor(dask_process_cluster, task=hostile_dask.raising_task)
    with pytest.raises(ExecutorError, match=f"the task of match {hostile[0].match_id} ended \\(error\\)"):
        executor.run(hostile, lambda record: None)
    assert (tmp_path / hostile_dask.UNPICKLED).exists(), "the worker checks its exception can be sent"
    assert not unpickled_here(tmp_path), "the organiser unpickled a worker's exception"


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


def test_a_worker_whose_probe_fails_is_named_at_once(dask_cluster, specs) -> None:
    played: list[GameRecord] = []
    executor = dask_executor(dask_cluster, prober=hostile_dask.failing_prober, probe_timeout_s=120)
    with pytest.raises(ExecutorError, match=f"Dask worker {dask_cluster.worker} could not report its isolation"):
        executor.run(specs[:1], played.append)
    assert not played

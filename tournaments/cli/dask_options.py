"""The Dask options of `tournament run` (--scheduler-tls, --require-isolation) and `tournament dask-certs`, which
makes the certificates (tournaments.league.dask_tls)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from referee.isolation.sandbox import STRENGTH, Isolation

from ..league.dask_tls import CA_FILE, CERT_FILE, KEY_FILE, cluster_security, write_certificates
from ..league.executors import DaskExecutor, import_distributed
from .output import echo

F = TypeVar("F", bound=Callable[..., Any])


def dask_options(function: F) -> F:
    """--scheduler-tls FOLDER and --require-isolation LEVEL, handed on as `scheduler_tls`, `require_isolation`."""
    function = click.option(
        "--require-isolation",
        type=click.Choice([level.value for level in STRENGTH if level is not Isolation.REMOTE]),
        default=None,
        help="With --scheduler: refuse the run if a worker's bots would get less isolation than this (each worker "
        "reports what `referee doctor` would say there before any match).  [default: none, every worker accepted]",
    )(function)
    return click.option(
        "--scheduler-tls",
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        default=None,
        help=f"With --scheduler tls://...: the folder of the cluster's {CA_FILE}, {CERT_FILE} and {KEY_FILE}, made "
        "by `referee tournament dask-certs FOLDER` (the scheduler and workers start with the same files).",
    )(function)


def dask_executor(
    scheduler: str, scheduler_tls: Path | None, require_isolation: str | None, sandbox: bool, runner: Any
) -> DaskExecutor:
    import_distributed()
    required = Isolation(require_isolation or Isolation.NONE.value)
    if not sandbox and required is not Isolation.NONE:
        raise click.UsageError(f"--no-sandbox plays at no isolation: it cannot meet --require-isolation {required}")
    security = cluster_security(scheduler_tls) if scheduler_tls is not None else None
    return DaskExecutor(scheduler, runner=runner, security=security, required=required)


def check_dask_usage(scheduler: str | None, scheduler_tls: Path | None, require_isolation: str | None) -> None:
    if scheduler is None and (scheduler_tls is not None or require_isolation is not None):
        raise click.UsageError("--scheduler-tls and --require-isolation are for a Dask cluster: give --scheduler")


@click.command("dask-certs")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
def dask_certs_command(folder: Path) -> None:
    """Make the TLS key and certificate of a Dask cluster in FOLDER: ca.pem, cert.pem and key.pem (readable by
    you only). Copy the folder to the scheduler's and every worker's machine and start them with
    `dask scheduler --tls-ca-file ca.pem --tls-cert cert.pem --tls-key key.pem` and `dask worker tls://HOST:8786`
    with the same three options; then `referee tournament run LEAGUE --scheduler tls://HOST:8786
    --scheduler-tls FOLDER`. Only holders of key.pem can reach the scheduler or pose as a worker."""
    write_certificates(folder)
    echo(f"wrote {folder / CA_FILE}, {folder / CERT_FILE} and {folder / KEY_FILE} (keep {KEY_FILE} secret)")

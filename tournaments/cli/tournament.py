"""`referee tournament ...`: leagues from TOML files, their tables, and ratings of results from elsewhere."""

from __future__ import annotations

import click

from .copies import copies_command
from .dask_options import dask_certs_command
from .league import run_command, table_command
from .rate import rate_command
from .report import report_command
from .sprt import sprt_command
from .store_commands import export_command, forget_command


@click.group()
def tournament() -> None:
    """Run leagues, print their tables and reports, rate results, test a new bot against a base bot (SPRT),
    forget a bot's games, export a league's games as rows."""


tournament.add_command(run_command)
tournament.add_command(table_command)
tournament.add_command(rate_command)
tournament.add_command(sprt_command)
tournament.add_command(forget_command)
tournament.add_command(export_command)
tournament.add_command(report_command)
tournament.add_command(copies_command)
tournament.add_command(dask_certs_command)

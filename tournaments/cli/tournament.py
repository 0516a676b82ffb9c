"""`referee tournament ...`: leagues from TOML files, their tables, and ratings of results from elsewhere."""

from __future__ import annotations

import click

from .league import run_command, table_command
from .rate import rate_command
from .report import report_command
from .sprt import sprt_command


@click.group()
def tournament() -> None:
    """Run leagues, print their tables and reports, rate results, test a new bot against a base bot (SPRT)."""


tournament.add_command(run_command)
tournament.add_command(table_command)
tournament.add_command(rate_command)
tournament.add_command(sprt_command)
tournament.add_command(report_command)

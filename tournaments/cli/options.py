"""Option decorators shared by commands, so that every command spells them the same way."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

import click
import tabulate as tabulate_module

F = TypeVar("F", bound=Callable[..., Any])

TABLE_FORMATS = sorted(tabulate_module.tabulate_formats)


def json_option(function: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts instead of a table.")(
        function
    )


def tablefmt_option(function: F) -> F:
    return click.option(
        "--tablefmt",
        type=click.Choice(TABLE_FORMATS),
        default="simple",
        show_default=True,
        help="Table format, passed to tabulate.",
    )(function)


def echo_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, sort_keys=False))

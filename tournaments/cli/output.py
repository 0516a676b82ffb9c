"""The one way the command line writes text for people: every control character a bot or a folder name could
have put in it is shown escaped (protocol.safe_text), newlines and tabs kept.

Each command formats its lines as it likes and writes them with `echo` or `write`; single-line fields (names,
one-line details) are escaped where they are formatted, with `one_line`, so that they also keep to their line.
tests/tournaments/test_safe_output.py checks that no command writes around these.
"""

from __future__ import annotations

import sys
from typing import IO, Any

import click

from protocol.safe_text import escape_control


def echo(message: Any = None, *, err: bool = False, nl: bool = True) -> None:
    """click.echo, with controls escaped."""
    click.echo(None if message is None else escape_control(str(message), multiline=True), err=err, nl=nl)


def write(text: str, stream: IO[str] | None = None) -> None:
    """`text` to `stream` (standard output by default), controls escaped and flushed."""
    out = sys.stdout if stream is None else stream
    out.write(escape_control(text, multiline=True))
    out.flush()


def safe_exception(error: click.ClickException) -> click.ClickException:
    """`error`, or one like it whose message has its controls escaped (click prints it on stderr as `Error:
    MESSAGE`, a usage error with its command's usage)."""
    shown = escape_control(error.message, multiline=True)
    if shown == error.message:
        return error
    safe = click.UsageError(shown, error.ctx) if isinstance(error, click.UsageError) else click.ClickException(shown)
    return safe

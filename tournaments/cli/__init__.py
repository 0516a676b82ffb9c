"""The `referee` command line. Commands only parse options and format output; the work is in the library.

Library errors (protocol.errors.RefereeError and its kinds) are turned into click.ClickException (a one-line
message, exit status 1) once, at this edge; Ctrl-C and SIGTERM stop a command the one way signals.py describes.
"""

from __future__ import annotations

from typing import Any

import click

from protocol.errors import RefereeError
from referee import __version__
from referee.wire.open_files import raise_open_files_limit

from .bench import bench
from .check_bot import check_bot_command
from .connect import connect
from .doctor import doctor
from .games import games
from .keys import keys
from .ladder import ladder
from .new_bot import new_bot_command
from .output import safe_exception
from .play import play
from .replay import replay
from .serve import serve
from .signals import stops_cleanly
from .submit import submit
from .tournament import tournament
from .worker import worker


class _CommandGroup(click.Group):
    """Runs every command within stops_cleanly(), so that Ctrl-C and SIGTERM stop any of them the same way, and
    translates the library's errors into one-line messages, and shows the controls of any error message escaped
    (a message may quote a bot's name or a folder's)."""

    def invoke(self, ctx: click.Context) -> Any:
        with stops_cleanly():
            try:
                return super().invoke(ctx)
            except RefereeError as error:
                raise safe_exception(click.ClickException(str(error))) from error
            except click.ClickException as error:
                safe = safe_exception(error)
                if safe is error:
                    raise
                raise safe from error


@click.group(cls=_CommandGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="referee")
def main() -> None:
    """Referee and league harness for bots playing SCOUT and Scauver.

    Bots are separate programs in any language that talk protocol v1 (ZeroMQ + msgpack, see
    protocol/PROTOCOL.md). Start with `referee games`, then `referee play GAME BOT BOT ...`.

    Exit status: 0 when the command did its work, 1 on an error (a one-line message) or a failed check, 2 on a
    usage error, 130 after Ctrl-C and 143 after SIGTERM (the bots are stopped first, and a command that plays
    says what it got done).
    """
    raise_open_files_limit()


main.add_command(games)
main.add_command(play)
main.add_command(replay)
main.add_command(bench)
main.add_command(tournament)
main.add_command(check_bot_command)
main.add_command(new_bot_command)
main.add_command(doctor)
main.add_command(serve)
main.add_command(submit)
main.add_command(worker)
main.add_command(ladder)
main.add_command(keys)
main.add_command(connect)

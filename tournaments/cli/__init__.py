"""The `referee` command line. Commands only parse options and format output; the work is in the library.

Library errors are turned into click.ClickException (a one-line message, exit status 1) at this edge.
"""

from __future__ import annotations

import click

from referee import __version__

from .bench import bench
from .games import games
from .play import play
from .replay import replay
from .tournament import tournament


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="referee")
def main() -> None:
    """Referee and league harness for bots playing SCOUT and Scauver.

    Bots are separate programs in any language that talk protocol v1 (ZeroMQ + msgpack, see
    protocol/PROTOCOL.md). Start with `referee games`, then `referee play GAME BOT BOT ...`.
    """


main.add_command(games)
main.add_command(play)
main.add_command(replay)
main.add_command(bench)
main.add_command(tournament)

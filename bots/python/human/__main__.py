"""`python -m bots.python.human --tty TERMINAL`: the human seat (see the package's docstring)."""

from __future__ import annotations

import argparse
import sys

from protocol.sdk import run_bot

from .seat import HumanSeat
from .terminal import LeftTheGame, Terminal, TerminalUnavailable


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bots.python.human", description=__doc__)
    parser.add_argument("--tty", required=True, help="The terminal the person plays at (a device path).")
    parser.add_argument("--name", default="human", help="The name to say in hello.")
    arguments = parser.parse_args(argv)
    try:
        terminal = Terminal(arguments.tty)
    except TerminalUnavailable as error:
        print(f"human seat: {error}; play from a terminal with `referee play GAME human ...`", file=sys.stderr)
        return 1
    try:
        return int(run_bot(HumanSeat(terminal), name=arguments.name, version="1"))
    except LeftTheGame:
        terminal.show(["", "End of input: you left the seat (the referee plays it for you from here)."])
        print("human seat: the person closed the input", file=sys.stderr)
        return 0
    finally:
        terminal.close()


if __name__ == "__main__":
    raise SystemExit(main())

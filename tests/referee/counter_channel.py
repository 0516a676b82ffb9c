"""Measure the inode-counter channel from one bot to a later one at an isolation level (not a test: its figures
are rates on a loaded machine, which no test asserts; docs/results.md quotes them).

    .venv/bin/python tests/referee/counter_channel.py [full|kernel] [SYMBOLS]

Pipes, sockets, memfds and shared anonymous memory take their inode numbers from counters of the whole kernel
(handed to each CPU in batches of 1024). Each symbol: a bot reads its first pipe inode number, a sender bot
started after it makes and closes SYMBOL x 4096 pipes (a random 4-bit symbol), and a receiver started after the
sender has gone (as the next rotation's process would be) reads its own first pipe inode number and decodes the
symbol from the distance. Prints the symbols right (1 in 16 is chance) and the time a symbol took.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
import tempfile
import time
from pathlib import Path

from referee.isolation.process import BotProcess
from referee.isolation.sandbox import SandboxRequest

COUNTER = str(Path(__file__).resolve().parents[1] / "fixtures" / "bots" / "inode_counter.py")
STEP = 4096
SYMBOL_BITS = 4


def _run(kernel: bool, args: list[str], log: Path) -> dict[str, int]:
    request = SandboxRequest(None, kernel=kernel)
    process = BotProcess.start([sys.executable, COUNTER, *args], {"PATH": os.defpath}, log, 1 << 20, sandbox=request)
    deadline = time.monotonic() + 120
    while not process.exited() and time.monotonic() < deadline:
        time.sleep(0.02)
    process.kill()
    return dict(json.loads(log.read_text().splitlines()[-1]))


def symbol_right(kernel: bool, folder: Path) -> bool:
    symbol = secrets.randbelow(1 << SYMBOL_BITS)
    before = _run(kernel, ["read"], folder / "before.log")["pipe"]
    _run(kernel, ["move", str(symbol * STEP)], folder / "sender.log")
    after = _run(kernel, ["read"], folder / "receiver.log")["pipe"]
    return round((after - before) / STEP) == symbol


def main() -> None:
    level = sys.argv[1] if len(sys.argv) > 1 else "full"
    symbols = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as folder:
        right = sum(symbol_right(level == "kernel", Path(folder)) for _ in range(symbols))
    seconds = (time.monotonic() - started) / symbols
    print(f"{level}: {right} of {symbols} {SYMBOL_BITS}-bit symbols right, {seconds:.2f} s a symbol")


if __name__ == "__main__":
    main()

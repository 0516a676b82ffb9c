"""Measure the page-cache channel between two bots at an isolation level (not a test: its figures are timings,
which no test asserts; docs/results.md quotes them).

    .venv/bin/python tests/referee/page_cache_channel.py [full|kernel] [ROUNDS] [warm|together]

Each round: a file of 97 MiB (random bytes, written by this script into a folder of /var/tmp that both bots'
commands name, so that both are shown it) is dropped from the host's page cache (by this script, outside any
sandbox); a sender bot reads one byte of the pages that stand for the 1 bits of a random 96-bit message (pages
1 MiB apart, so that the readahead around one never reaches the next); a second bot, started after the sender
has gone (as the next rotation's process would be), times its first read of every page and decodes the bits
by splitting its timings in two (Otsu's threshold on their logarithms). Prints the bits it got right per round
(48 of 96 is chance).

With `together`, the receiver is started first and reads once the sender, started after it, has gone: two
bots alive at once, as two seats of one table.

With `warm`, the script reads the whole file (outside any sandbox) just before it starts each bot, as a referee
that made every page a bot can read resident before each start would: what pre-warming would leave of the
channel, on this machine's page cache.
"""

from __future__ import annotations

import json
import math
import os
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

from referee.isolation.process import BotProcess
from referee.isolation.sandbox import SandboxRequest

CHANNELS = str(Path(__file__).resolve().parents[1] / "fixtures" / "bots" / "kernel_channels.py")
BITS = 96
STRIDE_PAGES = 256


SHARED_PARENT = "/var/tmp"
"""Where the shared file's folder is made: not under /tmp, which is each bot's private tmpfs."""


def shared_file(folder: Path) -> str:
    """A file of (BITS + 1) MiB of random bytes in `folder` (made readable by every bot's uid), on the host's
    disk: a file both bots are shown when their commands name it, as every bot was shown /usr."""
    folder.chmod(0o755)
    path = folder / "shared.bin"
    with open(path, "wb") as file:
        for _ in range(BITS + 1):
            file.write(os.urandom(STRIDE_PAGES * 4096))
        file.flush()
        os.fsync(file.fileno())
    path.chmod(0o644)
    return str(path)


def _warm(path: str) -> None:
    with open(path, "rb", buffering=0) as file:
        while file.read(1 << 20):
            pass


def _start(kernel: bool, args: list[str], log: Path, warm: str | None = None) -> BotProcess:
    if warm is not None:
        _warm(warm)
    command = [sys.executable, CHANNELS, *args]
    return BotProcess.start(command, {"PATH": os.defpath}, log, 1 << 22, sandbox=SandboxRequest(None, kernel=kernel))


def _finish(process: BotProcess, log: Path) -> dict[str, object]:
    deadline = time.monotonic() + 180
    while not process.exited() and time.monotonic() < deadline:
        time.sleep(0.02)
    process.kill()
    return json.loads(log.read_text().splitlines()[-1])


def _run(kernel: bool, args: list[str], log: Path, warm: str | None = None) -> dict[str, object]:
    return _finish(_start(kernel, args, log, warm), log)


def _decode(times: list[int]) -> list[bool]:
    """1 for a fast read: split the timings' logarithms in two where the classes differ most (Otsu's threshold)."""
    logs = sorted(math.log(max(time_ns, 1)) for time_ns in times)

    def between(split: int) -> float:
        low, high = logs[:split], logs[split:]
        return len(low) * len(high) * (statistics.fmean(high) - statistics.fmean(low)) ** 2

    split = max(range(1, len(logs)), key=between)
    threshold = math.exp((logs[split - 1] + logs[split]) / 2)
    return [time_ns < threshold for time_ns in times]


RECEIVER_WAITS_S = 20.0
"""How long a receiver started before its sender waits before it reads (the sender's start and read fit in it)."""


def round_bits_right(kernel: bool, path: str, folder: Path, warm: bool = False, together: bool = False) -> int | None:
    """The bits of a random message the receiver got right (None: a `together` round whose sender outlived the
    receiver's wait, so that nothing was measured)."""
    message = [bool(secrets.randbits(1)) for _ in range(BITS)]
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
    sent = [str(bit * STRIDE_PAGES) for bit in range(BITS) if message[bit]]
    slots = [str(bit * STRIDE_PAGES) for bit in range(BITS)]
    receiver_log = folder / "receiver.log"
    if together:
        receiver = _start(kernel, ["pages-after", str(RECEIVER_WAITS_S), path, *slots], receiver_log)
        _run(kernel, ["pages", path, *sent], folder / "sender.log")
        sender_gone = time.time()
        found = _finish(receiver, receiver_log)
        began = found["began"]
        assert isinstance(began, float)
        if began < sender_gone:
            return None
    else:
        _run(kernel, ["pages", path, *sent], folder / "sender.log", path if warm else None)
        found = _run(kernel, ["pages", path, *slots], receiver_log, path if warm else None)
    times = found["ns"]
    assert isinstance(times, list)
    return sum(got == bit for got, bit in zip(_decode(times), message, strict=True))


def main() -> None:
    level = sys.argv[1] if len(sys.argv) > 1 else "kernel"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    how = sys.argv[3] if len(sys.argv) > 3 else ""
    with tempfile.TemporaryDirectory(dir=SHARED_PARENT) as shared, tempfile.TemporaryDirectory() as folder:
        path = shared_file(Path(shared))
        right = [
            round_bits_right(level == "kernel", path, Path(folder), how == "warm", how == "together")
            for _ in range(rounds)
        ]
    print(f"{level}{' ' + how if how else ''}: bits right of {BITS} per round: {right}")


if __name__ == "__main__":
    main()

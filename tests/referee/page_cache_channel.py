"""Measure the page-cache channel between two bots at an isolation level (not a test: its figures are timings,
which no test asserts; docs/results.md quotes them).

    .venv/bin/python tests/referee/page_cache_channel.py [full|kernel] [ROUNDS] [warm]

Each round: a large file every bot may read is dropped from the host's page cache (by this script, outside
any sandbox); a sender bot reads one byte of the pages that stand for the 1 bits of a random 96-bit message
(pages 1 MiB apart, so that the readahead around one never reaches the next); a second bot, started after the
sender has gone (as the next rotation's process would be), times its first read of every page and decodes
the bits by splitting its timings in two (Otsu's threshold on their logarithms). Prints the bits it got right
per round (48 of 96 is chance).

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


def _mapped_files() -> set[str]:
    """Files some process maps (their pages cannot be dropped from the page cache)."""
    mapped = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/maps") as maps:
                mapped |= {line.split(maxsplit=5)[5].strip() for line in maps if len(line.split(maxsplit=5)) == 6}
        except OSError:
            continue
    return mapped


def _shared_file() -> str:
    """The largest file under /usr/lib that no process maps: every bot sees /usr."""
    mapped = _mapped_files()
    sizes = []
    for folder, _, names in os.walk("/usr/lib"):
        for name in names:
            path = os.path.join(folder, name)
            if not os.path.islink(path) and os.path.isfile(path) and path not in mapped:
                sizes.append((os.path.getsize(path), path))
    size, best = max(sizes)
    if size < BITS * STRIDE_PAGES * 4096:
        raise SystemExit(f"no unmapped file under /usr/lib holds {BITS} MiB ({best}: {size} bytes)")
    return best


def _warm(path: str) -> None:
    with open(path, "rb", buffering=0) as file:
        while file.read(1 << 20):
            pass


def _run(kernel: bool, args: list[str], log: Path, warm: str | None = None) -> dict[str, object]:
    if warm is not None:
        _warm(warm)
    command = [sys.executable, CHANNELS, *args]
    process = BotProcess.start(command, {"PATH": os.defpath}, log, 1 << 22, sandbox=SandboxRequest(None, kernel=kernel))
    deadline = time.monotonic() + 120
    while not process.exited() and time.monotonic() < deadline:
        time.sleep(0.02)
    process.kill()
    return json.loads(log.read_text().splitlines()[-1])


def _decode(times: list[int]) -> list[bool]:
    """1 for a fast read: split the timings' logarithms in two where the classes differ most (Otsu's threshold)."""
    logs = sorted(math.log(max(time_ns, 1)) for time_ns in times)

    def between(split: int) -> float:
        low, high = logs[:split], logs[split:]
        return len(low) * len(high) * (statistics.fmean(high) - statistics.fmean(low)) ** 2

    split = max(range(1, len(logs)), key=between)
    threshold = math.exp((logs[split - 1] + logs[split]) / 2)
    return [time_ns < threshold for time_ns in times]


def round_bits_right(kernel: bool, path: str, folder: Path, warm: bool = False) -> int:
    message = [bool(secrets.randbits(1)) for _ in range(BITS)]
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
    sent = [str(bit * STRIDE_PAGES) for bit in range(BITS) if message[bit]]
    _run(kernel, ["pages", path, *sent], folder / "sender.log", path if warm else None)
    slots = [str(bit * STRIDE_PAGES) for bit in range(BITS)]
    times = _run(kernel, ["pages", path, *slots], folder / "receiver.log", path if warm else None)["ns"]
    assert isinstance(times, list)
    return sum(got == bit for got, bit in zip(_decode(times), message, strict=True))


def main() -> None:
    level = sys.argv[1] if len(sys.argv) > 1 else "kernel"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    warm = sys.argv[3:] == ["warm"]
    path = _shared_file()
    with tempfile.TemporaryDirectory() as folder:
        right = [round_bits_right(level == "kernel", path, Path(folder), warm) for _ in range(rounds)]
    print(f"{level}{' warm' if warm else ''}: {path}, bits right of {BITS} per round: {right}")


if __name__ == "__main__":
    main()

"""Caps on what a job sends back: the server stores it and shows it to a student."""

from __future__ import annotations

from pathlib import Path

TEXT_CAP_BYTES = 64 * 1024
"""A log or build output kept per seat or version: its last this many bytes."""


def capped_text(path: Path, cap: int = TEXT_CAP_BYTES) -> str:
    """The file's last `cap` bytes as text (marked where cut)."""
    data = path.read_bytes()
    if len(data) <= cap:
        return data.decode("utf-8", errors="replace")
    return "[... earlier output cut]\n" + data[-cap:].decode("utf-8", errors="replace")

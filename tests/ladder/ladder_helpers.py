"""What the ladder's tests share besides fixtures."""

from __future__ import annotations

from pathlib import Path

from tournaments.ladder import Ladder, LadderCreated


class Made:
    def __init__(self, folder: Path, created: LadderCreated, ladder: Ladder, db_url: str | None) -> None:
        self.db_url = db_url
        self.folder = folder
        self.created = created
        self.ladder = ladder

"""What the `served` fixture gives: a real ladder, the app over it in a test client, and the ladder's tokens."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi.testclient import TestClient

from tournaments.ladder import Ladder


@dataclass
class Served:
    ladder: Ladder
    client: TestClient
    admin: str
    worker: str
    students: dict[str, str]

"""What the ladder's tests share besides fixtures."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from tournaments.ladder import Job, JobKind, JobResult, Ladder, LadderCreated, Principal


class Made:
    def __init__(self, folder: Path, created: LadderCreated, ladder: Ladder, db_url: str | None) -> None:
        self.db_url = db_url
        self.folder = folder
        self.created = created
        self.ladder = ladder


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "class"
"""Tiny submission folders: first_move conforms, crash_at_start does not."""


def worker(made: Made) -> Principal:
    return made.ladder.authenticate(made.created.worker_token)


def students(made: Made, *names: str) -> dict[str, Principal]:
    tokens = made.ladder.invite(list(names))
    return {name: made.ladder.authenticate(token) for name, token in tokens.items()}


def bot_folder(root: Path, name: str, move: int = 0) -> Path:
    """A conforming bot of its own content (`move` picks which legal action it plays)."""
    folder = root / name
    folder.mkdir(parents=True)
    source = (
        (FIXTURES / "first_move" / "bot.py")
        .read_text()
        .replace("legal_actions[0]", f"legal_actions[{move} % len(legal_actions)]")
    )
    (folder / "bot.py").write_text(source)
    return folder


def pass_checks(made: Made) -> int:
    """Claim every queued job, report each check passed as a worker would (no bot run) and queue the matches
    claimed on the way again; how many checks."""
    done = 0
    while (job := made.ladder.claim(worker(made), "checker")) is not None:
        if job.kind is JobKind.CHECK:
            made.ladder.report(worker(made), job.id, JobResult(JobKind.CHECK, {"passed": True, "verdict": "ok"}))
            done += 1
    made.ladder.reissue_expired(datetime.now(UTC) + timedelta(days=1))
    return done


def played(job: Job, winner: str | None = None) -> JobResult:
    """A match job's result as a worker would post it: every game of the job, `winner` (else the first seat)
    ranked first and the others in seat order."""
    names = [entrant["name"] for entrant in job.payload["entrants"]]
    games = []
    for game in job.payload["games"]:
        seats = [names[index] for index in game["seating"]]
        order = sorted(seats, key=lambda name: (name != winner, seats.index(name)))
        ranks = [order.index(name) + 1 for name in seats]
        games.append(
            {
                "index": game["index"],
                "seed": game["seed"],
                "seats": seats,
                "ranks": ranks,
                "scores": [10 - rank for rank in ranks],
                "faults": [],
                "forfeited": [False] * len(seats),
                "isolation": "full",
                "replay": {"game": job.payload["game"]},
            }
        )
    return JobResult(JobKind.MATCH, {"games": games, "logs": {name: f"log of {name}" for name in names}})


def claim_match(made: Made, name: str = "w") -> Job:
    job = made.ladder.claim(worker(made), name)
    assert job is not None and job.kind is JobKind.MATCH, job
    return job

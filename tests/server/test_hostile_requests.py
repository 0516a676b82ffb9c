"""Red team (issue 31): requests a hostile student or a worker token used wrongly sends, each of which once made
the server answer 500 or count a game twice. Each is answered as a refusal now, and changes nothing."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from typing import Any

import pytest
from served import Served, bearer, submit
from sqlalchemy import select

from tournaments.ladder.schema import jobs


def honest_result(payload: dict[str, Any]) -> dict[str, Any]:
    names = [entrant["name"] for entrant in payload["entrants"]]
    games = [
        {"index": game["index"], "seed": game["seed"], "seats": [names[i] for i in game["seating"]]}
        | {"ranks": list(range(1, len(names) + 1)), "scores": [0] * len(names), "faults": [], "isolation": "full"}
        for game in payload["games"]
    ]
    return {"kind": "match", "data": {"games": games, "logs": {}}}


def claimed_match(served: Served) -> dict[str, Any]:
    """Both students' versions checked (passed) over HTTP as a worker would, then the first match claimed."""
    submit(served, "ann", 0), submit(served, "bob", 1)
    worker = bearer(served.worker)
    for _ in range(20):
        job = served.client.post("/api/jobs/claim", json={"worker": "w"}, headers=worker).json()
        if job["kind"] == "match":
            return dict(job)
        result = {"kind": "check", "data": {"passed": True, "verdict": "ok"}}
        assert served.client.post(f"/api/jobs/{job['id']}/result", json=result, headers=worker).status_code == 200
    raise AssertionError("no match queued after 20 jobs")


def test_a_log_of_a_huge_seat_number_is_refused_as_a_missing_one(served: Served) -> None:
    """SQLite holds 64-bit integers: a seat past them once raised OverflowError (500)."""
    ann = bearer(served.students["ann"])
    missing = served.client.get("/api/games/nogame:0/logs/0", headers=ann)
    for seat in ("99999999999999999999999", str(2**63), "-1", str(-(2**70))):
        answer = served.client.get(f"/api/games/nogame:0/logs/{seat}", headers=ann)
        assert (answer.status_code, answer.content) == (403, missing.content), seat


def test_a_tar_gz_of_chained_long_name_headers_is_refused_not_a_server_error(served: Served) -> None:
    """tarfile reads GNU long-name headers by recursion: thousands in a row once raised RecursionError (500)."""
    raw = io.BytesIO()
    for _ in range(3000):
        header = tarfile.TarInfo("././@LongLink")
        header.type, header.size = tarfile.GNUTYPE_LONGNAME, 10
        raw.write(header.tobuf(format=tarfile.GNU_FORMAT) + b"a" * 10 + b"\0" * (tarfile.BLOCKSIZE - 10))
    raw.write(b"\0" * 2 * tarfile.BLOCKSIZE)
    answer = served.client.post(
        "/api/submissions",
        files={"files": ("bot.tar.gz", gzip.compress(raw.getvalue()))},
        headers=bearer(served.students["ann"]),
    )
    assert answer.status_code == 422, answer.text
    assert answer.json()["cause"] == "not-an-archive"
    assert served.client.get("/api/students/ann/versions", headers=bearer(served.students["ann"])).json() == []


@pytest.mark.parametrize(
    "result",
    [{}, {"kind": "zzz", "data": {}}, {"kind": "match"}, {"kind": "match", "data": [1]}, {"kind": "check", "data": 7}],
)
def test_a_result_that_is_no_result_is_a_bad_request(served: Served, result: dict[str, Any]) -> None:
    answer = served.client.post("/api/jobs/nojob/result", json=result, headers=bearer(served.worker))
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"] == "bad-input"


def _bent(game: dict[str, Any], how: str) -> list[dict[str, Any]]:
    """The games a hostile worker posts instead of `game`."""
    bent = {
        "index-true": [game, {**game, "index": True}, {**game, "index": float(game["index"])}],
        "index-text": [{**game, "index": str(game["index"])}],
        "other-seed": [{**game, "seed": game["seed"] + 1}],
        "rank-text": [{**game, "ranks": ["1"] * len(game["seats"])}],
        "rank-huge": [{**game, "ranks": [2**70] * len(game["seats"])}],
        "score-nan": [{**game, "scores": [float("inf")] * len(game["seats"])}],
        "seat-twice": [{**game, "seats": [game["seats"][0]] * len(game["seats"])}],
        "seat-other": [{**game, "seats": [*game["seats"][:-1], "someone-else"]}],
        "fault-nowhere": [{**game, "faults": [{"seat": 99, "cause": "exited"}]}],
        "fault-no-cause": [{**game, "faults": [{"seat": 0}]}],
        "not-a-game": [[1, 2, 3]],  # type: ignore[list-item]
        "forfeit-short": [{**game, "forfeited": [True]}],
    }
    return bent[how]


@pytest.mark.parametrize(
    "how",
    [
        "index-true",
        "index-text",
        "other-seed",
        "rank-text",
        "rank-huge",
        "score-nan",
        "seat-twice",
        "seat-other",
        "fault-nowhere",
        "fault-no-cause",
        "not-a-game",
        "forfeit-short",
    ],
)
def test_a_match_result_bent_by_a_worker_is_refused_and_the_honest_one_then_counts_once(
    served: Served, how: str
) -> None:
    """A result naming a game twice (index 0, True, 0.0 were three ids), another game's seed, ranks or scores
    that are no numbers, seats of entrants not in the match, faults of no seat: refused with 400, nothing of it
    stored, the job still open; the honest result then stores each game once."""
    job = claimed_match(served)
    worker = bearer(served.worker)
    honest = honest_result(job["payload"])
    games = honest["data"]["games"]
    hostile = {"kind": "match", "data": {"games": [*_bent(games[0], how), *games[1:]], "logs": {}}}
    sent = json.dumps(hostile)  # Infinity too, which Python's json reads back
    answer = served.client.post(
        f"/api/jobs/{job['id']}/result", content=sent, headers=worker | {"Content-Type": "application/json"}
    )
    assert answer.status_code == 400, answer.text
    assert served.client.get("/api/table").json()["games"] == 0
    assert served.client.post(f"/api/jobs/{job['id']}/result", json=honest, headers=worker).status_code == 200
    assert served.client.get("/api/table").json()["games"] == len(games)


def test_a_stranger_s_or_a_student_s_result_body_is_refused_unread(served: Served) -> None:
    """FastAPI parsed a declared JSON body before the endpoint asked for a token: four strangers posting 33 MB of
    `[{},{},...]` each held the event loop for 12 s and the server at 2 GB. Now the body is read only for a
    worker's token: a stranger gets 401 and a student 403, whatever the body holds."""
    unreadable = b"[" * 100_000
    headers = {"Content-Type": "application/json"}
    stranger = served.client.post("/api/jobs/nojob/result", content=unreadable, headers=headers)
    assert stranger.status_code == 401 and stranger.json()["error"] == "unauthorised"
    student = served.client.post(
        "/api/jobs/nojob/result", content=unreadable, headers=headers | bearer(served.students["ann"])
    )
    assert student.status_code == 403 and student.json()["error"] == "forbidden"
    worker = served.client.post("/api/jobs/nojob/result", content=unreadable, headers=headers | bearer(served.worker))
    assert worker.status_code == 400 and worker.json()["error"] == "bad-input", "a worker's is read, and refused"


def test_a_large_json_body_to_another_route_is_refused_before_it_is_read(served: Served) -> None:
    """A 1 MB JSON list to /api/jobs/claim was parsed, then echoed back whole in the 422's detail."""
    bomb = b"[" + b"{}," * 350_000 + b"{}]"
    answer = served.client.post("/api/jobs/claim", content=bomb, headers={"Content-Type": "application/json"})
    assert answer.status_code == 413 and answer.json()["error"] == "too-large"
    assert len(answer.content) < 1000


def test_a_request_that_does_not_fit_its_fields_is_not_echoed_back(served: Served) -> None:
    sent = {"worker": ["<script>marker-of-what-was-sent</script>"] * 50}
    answer = served.client.post("/api/jobs/claim", json=sent, headers=bearer(served.worker))
    assert answer.status_code == 422
    assert answer.json()["detail"][0]["loc"] == ["body", "worker"]
    assert "marker-of-what-was-sent" not in answer.text


def test_a_result_for_a_job_no_worker_claimed_is_refused(served: Served) -> None:
    """A worker token could accept a version by posting its check's result while the check was still queued, run
    by nobody. Now only a claimed job (or one claimed and reissued since) takes a result."""
    version = submit(served, "ann", 0)
    worker = bearer(served.worker)
    with served.ladder.engine.connect() as connection:
        queued = connection.execute(select(jobs.c.id).where(jobs.c.version_id == version)).scalar_one()
    passed = {"kind": "check", "data": {"passed": True, "verdict": "ok"}}
    answer = served.client.post(f"/api/jobs/{queued}/result", json=passed, headers=worker)
    assert answer.status_code == 400 and answer.json()["error"] == "bad-input"
    ann = bearer(served.students["ann"])
    assert served.client.get(f"/api/submissions/{version}", headers=ann).json()["version"]["status"] == "checking"
    claimed = served.client.post("/api/jobs/claim", json={"worker": "w"}, headers=worker).json()
    assert claimed["id"] == queued
    assert served.client.post(f"/api/jobs/{queued}/result", json=passed, headers=worker).status_code == 200
    assert served.client.get(f"/api/submissions/{version}", headers=ann).json()["version"]["status"] == "accepted"

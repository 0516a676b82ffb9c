"""Through the HTTP API, with another student's token: a version, a log or a replay that is not yours answers
exactly as one that does not exist (403, the same body), and a replay you sat in names the others by pseudonym."""

from __future__ import annotations

import json
from typing import Any

from served import Served, bearer, submit

SECRET_OUTPUT = "bob's private stack trace"


def match_result(payload: dict[str, Any], victim: str) -> dict[str, Any]:
    """Every game of the match, seat order as ranks, each with a replay naming seats by entrant and a fault of
    `victim`'s carrying its output (as a worker would post it)."""
    names = [entrant["name"] for entrant in payload["entrants"]]
    games = []
    for game in payload["games"]:
        seats = [names[index] for index in game["seating"]]
        faults = [
            {"seat": seats.index(victim), "bot": victim, "kind": "crash", "cause": "exited"}
            | {"facts": {"exit_status": 1, "output": [SECRET_OUTPUT]}, "detail": SECRET_OUTPUT}
        ]
        replay = {"game": "scout", "seats": [{"seat": i, "bot": n, "command": [n]} for i, n in enumerate(seats)]}
        games.append(
            {"index": game["index"], "seed": game["seed"], "seats": seats, "ranks": list(range(1, len(seats) + 1))}
            | {"scores": [0] * len(seats), "faults": [], "forfeited": [False] * len(seats), "isolation": "full"}
            | {"replay": replay | {"faults": faults}}
        )
    return {"kind": "match", "data": {"games": games, "logs": {name: f"log of {name}" for name in names}}}


def shared_game(served: Served, ann: str, bob: str) -> str:
    """Work the queue as a worker over HTTP (checks pass) until a match seats both versions; that game's id."""
    worker = bearer(served.worker)
    for _ in range(40):
        claimed = served.client.post("/api/jobs/claim", json={"worker": "w"}, headers=worker)
        assert claimed.status_code == 200, claimed.text
        job = claimed.json()
        if job["kind"] == "check":
            result: dict[str, Any] = {"kind": "check", "data": {"passed": True, "verdict": "ok"}}
        else:
            result = match_result(job["payload"], victim=bob)
        answer = served.client.post(f"/api/jobs/{job['id']}/result", json=result, headers=worker)
        assert answer.status_code == 200, answer.text
        if job["kind"] == "match" and {ann, bob} <= {entrant["name"] for entrant in job["payload"]["entrants"]}:
            return f"{job['id']}:{job['payload']['games'][0]['index']}"
    raise AssertionError("no match seated both students in 40 jobs")


def test_another_students_items_are_403_as_missing_ones_and_replays_show_pseudonyms(served: Served) -> None:
    ann_v, bob_v = submit(served, "ann", 0), submit(served, "bob", 1)
    game = shared_game(served, ann_v, bob_v)
    ann, bob = bearer(served.students["ann"]), bearer(served.students["bob"])
    ann_seat = next(g["my_seat"] for g in served.client.get("/api/students/ann/games", headers=ann).json())

    pairs = (
        (f"/api/submissions/{ann_v}", "/api/submissions/v000000000000000"),
        (f"/api/games/{game}/logs/{ann_seat}", "/api/games/nogame:0/logs/0"),
        (f"/versions/{ann_v}", "/versions/v000000000000000"),
    )
    for theirs, missing in pairs:
        answers = [served.client.get(path, headers=bob) for path in (theirs, missing)]
        assert [answer.status_code for answer in answers] == [403, 403], theirs
        assert answers[0].content == answers[1].content, theirs
        assert ann_v not in answers[0].text
    assert served.client.get(f"/api/submissions/{ann_v}", headers=ann).status_code == 200

    seen = served.client.get(f"/api/games/{game}/replay", headers=ann)
    assert seen.status_code == 200
    text = json.dumps(seen.json())
    rows = served.client.get("/api/table", headers=ann).json()["rows"]
    [bobs_pseudonym] = [row["name"] for row in rows if not row["mine"] and not row["baseline"]]
    shown = {seat["bot"] for seat in seen.json()["seats"]}
    assert shown == {"ann", bobs_pseudonym, "heuristic"}, "ann sees herself, bob and the baseline as the table does"
    assert bob_v not in text and '"bob"' not in text and SECRET_OUTPUT not in text
    as_staff = served.client.get(f"/api/games/{game}/replay", headers=bearer(served.admin)).json()
    assert {"ann", "bob"} <= {seat["bot"] for seat in as_staff["seats"]}


def test_a_match_being_played_shows_nothing_of_its_deals_even_to_its_own_students(served: Served) -> None:
    """A claimed match's games (their deals, so every hidden card) reach only the worker playing it: until its
    result is posted, the students seated in it get what a game that does not exist gets, and no job."""
    ann_v, bob_v = submit(served, "ann", 0), submit(served, "bob", 1)
    worker = bearer(served.worker)
    for _ in range(40):
        job = served.client.post("/api/jobs/claim", json={"worker": "w"}, headers=worker).json()
        if job["kind"] == "match" and {ann_v, bob_v} <= {entrant["name"] for entrant in job["payload"]["entrants"]}:
            break
        result = {"kind": "check", "data": {"passed": True, "verdict": "ok"}}
        if job["kind"] == "match":
            result = match_result(job["payload"], victim=bob_v)
        assert served.client.post(f"/api/jobs/{job['id']}/result", json=result, headers=worker).status_code == 200
    else:
        raise AssertionError("no match seated both students in 40 jobs")
    game = f"{job['id']}:{job['payload']['games'][0]['index']}"

    for student in ("ann", "bob"):
        token = bearer(served.students[student])
        for path, missing in (
            (f"/api/games/{game}/replay", "/api/games/nogame:0/replay"),
            (f"/api/games/{game}/logs/0", "/api/games/nogame:0/logs/0"),
            (f"/games/{game}", "/games/nogame:0"),
        ):
            answers = [served.client.get(where, headers=token) for where in (path, missing)]
            assert [answer.status_code for answer in answers] == [403, 403], (student, path)
            assert answers[0].content == answers[1].content, (student, path)
        games = served.client.get(f"/api/students/{student}/games", headers=token).json()
        assert not [entry for entry in games if entry["id"].startswith(job["id"])]
        refused = served.client.post("/api/jobs/claim", json={"worker": student}, headers=token)
        assert refused.status_code == 403
        assert set(refused.json()) == {"error", "message"}, "a refusal, and nothing of the job"

    posted = match_result(job["payload"], victim=bob_v)
    assert served.client.post(f"/api/jobs/{job['id']}/result", json=posted, headers=worker).status_code == 200
    assert served.client.get(f"/api/games/{game}/replay", headers=bearer(served.students["ann"])).status_code == 200

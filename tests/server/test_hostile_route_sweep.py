"""Red team (issue 31): every route the app has, the API's and the pages', asked with another student's token, a
worker's token and no token, for bob's items: none answers 200 with anything of bob's, and none answers 500. The
routes are read from the app itself, so a route added later is swept too."""

from __future__ import annotations

from typing import Any

from served import Served, bearer

from tournaments.ladder import Principal, Role

SECRET = "bob-secret-source-marker"
STAFF_ONLY = {"/staff", "/staff/{export}", "/api/copies"}
SHARED_GAME = {"/api/games/{game_id}/replay", "/games/{game_id}"}
"""Ann sat in the game too: its replay is hers to see (bob's seat in it without his output: test_server_item_access)."""


def bobs_items(served: Served) -> dict[str, str]:
    """Bob's version (a check passed), a game of his with ann (worked as a worker over HTTP) and his seat."""
    mine = served.client.post(
        "/api/submissions", files={"files": ("bot.py", b"MOVE = 0\n")}, headers=bearer(served.students["ann"])
    )
    assert mine.status_code == 201, mine.text
    answer = served.client.post(
        "/api/submissions",
        files={"files": ("bot.py", f"# {SECRET}\nMOVE = 1\n".encode())},
        headers=bearer(served.students["bob"]),
    )
    assert answer.status_code == 201, answer.text
    version = answer.json()
    worker = bearer(served.worker)
    for _ in range(20):
        job = served.client.post("/api/jobs/claim", json={"worker": "w"}, headers=worker)
        if job.status_code == 204:
            break
        body = job.json()
        if body["kind"] == "check":
            result: dict[str, Any] = {"kind": "check", "data": {"passed": True, "verdict": SECRET, "build_log": SECRET}}
        else:
            names = [entrant["name"] for entrant in body["payload"]["entrants"]]
            games = [
                {"index": g["index"], "seed": g["seed"], "seats": [names[i] for i in g["seating"]]}
                | {"ranks": list(range(1, len(names) + 1)), "scores": [0] * len(names), "faults": []}
                | {"replay": {"game": "scout", "seats": [], "faults": []}}
                for g in body["payload"]["games"]
            ]
            result = {"kind": "match", "data": {"games": games, "logs": {name: SECRET for name in names}}}
        assert served.client.post(f"/api/jobs/{body['id']}/result", json=result, headers=worker).status_code == 200
    staff = Principal(Role.STAFF, "admin")
    games = served.ladder.student_games(staff, "bob")
    assert games, "bob played no game"
    return {
        "student": "bob",
        "version_id": version["id"],
        "digest": version["digest"],
        "game_id": games[0].id,
        "seat": str(games[0].my_seat),
        "export": "marks.csv",
        "job_id": "nojob",
    }


def every_route(routes: list[Any]) -> list[Any]:
    """The app's routes, those of included routers too (a router may be wrapped as its `original_router`)."""
    found = []
    for route in routes:
        inner = getattr(route, "original_router", None)
        if inner is not None:
            found += every_route(list(inner.routes))
        else:
            found.append(route)
    return found


def test_no_route_gives_another_student_s_items_to_ann_a_worker_or_a_stranger(served: Served) -> None:
    items = bobs_items(served)
    served.ladder.deadline_snapshot()
    askers = {"ann": bearer(served.students["ann"]), "worker": bearer(served.worker), "stranger": {}}
    swept = 0
    for route in every_route(served.client.app.routes):  # type: ignore[attr-defined]
        path = getattr(route, "path", "")
        methods = getattr(route, "methods", None) or set()
        if path.startswith(("/static", "/api/openapi", "/api/docs", "/docs")) or path == "/api/events" or not methods:
            continue
        url = path.format(**items)
        for method in methods - {"HEAD"}:
            for who, headers in askers.items():
                if who == "worker" and path == "/api/versions/{digest}/archive":
                    continue  # the worker's own job: fetching a version to play it
                answer = served.client.request(
                    method, url, headers=headers, json={} if method in {"POST", "PUT"} else None
                )
                swept += 1
                assert answer.status_code < 500, (method, url, who, answer.status_code)
                assert SECRET not in answer.text, (method, url, who)
                shared = who == "ann" and path in SHARED_GAME
                if path in STAFF_ONLY or ("{" in path and not shared and path != "/api/jobs/{job_id}/result"):
                    assert answer.status_code in (401, 403, 404, 422), (method, url, who, answer.status_code)
    assert swept > 60

"""The app over a real ladder: tokens and cookies, the one access rule at every route, CSRF, rate limits, the
OpenAPI description. What the ladder library answers beyond who may ask is its own tests' business."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from served import Served, bearer

from tournaments.ladder import Job, JobKind, do_job
from tournaments.server.sessions import LOGIN_COOKIE, TOKEN_COOKIE
from tournaments.server.uploads import Part, unpack_upload


def test_health_needs_no_token(served: Served) -> None:
    answer = served.client.get("/api/health")
    assert answer.status_code == 200
    assert answer.json()["status"] == "ok"


def test_a_wrong_token_is_401_with_nothing_else(served: Served) -> None:
    answer = served.client.get("/api/students/ann/versions", headers=bearer("crl_nope_nope"))
    assert answer.status_code == 401
    assert answer.headers["www-authenticate"] == "Bearer"
    assert set(answer.json()) == {"error", "message"}


def test_no_token_is_401_where_one_is_needed(served: Served) -> None:
    for method, path in (
        ("GET", "/api/students/ann/versions"),
        ("GET", "/api/submissions/v1"),
        ("GET", "/api/games/g1/logs/0"),
        ("POST", "/api/jobs/claim"),
        ("GET", "/api/versions/tree:00/archive"),
    ):
        answer = served.client.request(method, path, json={"worker": "w"} if method == "POST" else None)
        assert answer.status_code == 401, path


def test_another_students_pages_are_403_and_nothing(served: Served) -> None:
    bob = bearer(served.students["bob"])
    for path in ("/api/students/ann/versions", "/api/students/ann/games", "/students/ann"):
        answer = served.client.get(path, headers=bob)
        assert answer.status_code == 403, path
        assert "ann" not in answer.text.replace("/students/ann", ""), path


def test_a_student_may_not_take_jobs_fetch_versions_or_see_the_staff_page(served: Served) -> None:
    ann = bearer(served.students["ann"])
    assert served.client.post("/api/jobs/claim", json={"worker": "x"}, headers=ann).status_code == 403
    assert served.client.post("/api/jobs/j1/result", json={"kind": "check", "data": {}}, headers=ann).status_code == 403
    assert served.client.get("/api/versions/tree:00/archive", headers=ann).status_code == 403
    assert served.client.get("/staff", headers=ann).status_code == 403


def test_a_worker_may_not_submit_or_read_a_students_page(served: Served) -> None:
    worker = bearer(served.worker)
    assert served.client.get("/api/students/ann/versions", headers=worker).status_code == 403
    files = {"files": ("bot.py", b"print()\n")}
    assert served.client.post("/api/submissions", files=files, headers=worker).status_code == 403


def login(served: Served, token: str) -> None:
    form = served.client.get("/login")
    nonce = re.search(r'name="csrf" value="([^"]+)"', form.text)
    assert nonce is not None
    answer = served.client.post("/login", data={"token": token, "csrf": nonce.group(1)}, follow_redirects=False)
    assert answer.status_code == 303, answer.text


def test_login_sets_an_http_only_strict_cookie(served: Served) -> None:
    form = served.client.get("/login")
    assert "httponly" in form.headers["set-cookie"].lower()
    nonce = re.search(r'name="csrf" value="([^"]+)"', form.text)
    assert nonce is not None
    answer = served.client.post(
        "/login", data={"token": served.students["ann"], "csrf": nonce.group(1)}, follow_redirects=False
    )
    assert answer.status_code == 303
    assert answer.headers["location"] == "/students/ann"
    cookie = next(header for header in answer.headers.get_list("set-cookie") if header.startswith(TOKEN_COOKIE))
    assert "httponly" in cookie.lower()
    assert "samesite=strict" in cookie.lower()


def test_a_login_without_its_form_nonce_is_refused(served: Served) -> None:
    served.client.get("/login")
    answer = served.client.post(
        "/login", data={"token": served.students["ann"], "csrf": "forged"}, follow_redirects=False
    )
    assert answer.status_code == 403
    assert TOKEN_COOKIE not in answer.headers.get("set-cookie", "")
    served.client.cookies.delete(LOGIN_COOKIE)
    answer = served.client.post("/login", data={"token": served.students["ann"]}, follow_redirects=False)
    assert answer.status_code in (403, 422)


def test_a_cookie_session_posts_only_with_its_csrf_token(served: Served) -> None:
    login(served, served.students["ann"])
    page = served.client.get("/students/ann")
    assert page.status_code == 200
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert csrf is not None
    files = {"files": ("notes.txt", b"no bot here\n")}
    forged = served.client.post("/students/ann/versions", files=files, data={"csrf": "0" * 64}, follow_redirects=False)
    assert forged.status_code == 403
    missing = served.client.post("/api/submissions", files=files)
    assert missing.status_code == 403
    assert missing.json()["error"] == "csrf"
    honest = served.client.post(
        "/students/ann/versions", files=files, data={"csrf": csrf.group(1)}, follow_redirects=False
    )
    assert honest.status_code == 422, "past CSRF, the upload itself is judged (and refused: no bot)"
    assert "no bot.toml" in honest.text


def test_logins_are_rate_limited_per_address(served: Served) -> None:
    statuses = []
    for _ in range(12):
        form = served.client.get("/login")
        nonce = re.search(r'name="csrf" value="([^"]+)"', form.text)
        assert nonce is not None
        answer = served.client.post(
            "/login", data={"token": "crl_bad_guess", "csrf": nonce.group(1)}, follow_redirects=False
        )
        statuses.append(answer.status_code)
    assert statuses[:5] == [401] * 5
    assert 429 in statuses
    assert "retry-after" in served.client.post("/login", data={"token": "x", "csrf": "y"}).headers


def test_uploads_are_rate_limited_per_token(served: Served) -> None:
    ann = bearer(served.students["ann"])
    statuses = [
        served.client.post("/api/submissions", files={"files": ("notes.txt", b"x")}, headers=ann).status_code
        for _ in range(11)
    ]
    assert statuses[:10] == [422] * 10
    assert statuses[10] == 429
    bob = bearer(served.students["bob"])
    assert served.client.post("/api/submissions", files={"files": ("n.txt", b"x")}, headers=bob).status_code == 422


def test_an_upload_refusal_names_its_cause(served: Served) -> None:
    ann = bearer(served.students["ann"])
    answer = served.client.post("/api/submissions", files={"files": ("../evil.py", b"x")}, headers=ann)
    assert answer.status_code == 422
    assert answer.json()["cause"] == "traversal"


def test_a_body_over_the_cap_is_refused_before_it_is_read(served: Served) -> None:
    cap = served.client.app.state.edge.settings.limits.upload_bytes  # type: ignore[attr-defined]
    answer = served.client.post(
        "/api/submissions",
        content=b"x",
        headers={
            **bearer(served.students["ann"]),
            "Content-Length": str(cap * 2),
            "Content-Type": "multipart/form-data",
        },
    )
    assert answer.status_code == 413


def test_the_api_is_described_by_openapi(served: Served) -> None:
    paths = served.client.get("/api/openapi.json").json()["paths"]
    for path in (
        "/api/health",
        "/api/table",
        "/api/submissions",
        "/api/submissions/{version_id}",
        "/api/jobs/claim",
        "/api/jobs/{job_id}/result",
        "/api/versions/{digest}/archive",
    ):
        assert path in paths
    assert not any(not path.startswith("/api/") for path in paths), "pages are not part of the API"


def test_the_staff_page_lists_the_roster_and_freezes_with_its_csrf_token(served: Served) -> None:
    login(served, served.admin)
    staff = served.client.get("/staff")
    assert staff.status_code == 200
    assert "/students/ann" in staff.text and "/students/bob" in staff.text
    csrf = re.search(r'id="freeze">\s*<input type="hidden" name="csrf" value="([^"]+)"', staff.text)
    assert csrf is not None
    assert served.client.post("/staff/freeze", data={"csrf": "forged"}, follow_redirects=False).status_code == 403
    assert not served.client.get("/api/table").json()["frozen"]
    frozen = served.client.post("/staff/freeze", data={"csrf": csrf.group(1)}, follow_redirects=False)
    assert frozen.status_code == 303
    assert served.client.get("/api/table").json()["frozen"]
    assert "marks.csv" in served.client.get("/staff").text
    marks = served.client.get("/staff/marks.csv")
    assert marks.status_code == 200 and marks.headers["content-type"].startswith("text/csv")


def test_a_name_is_escaped_on_every_page(served: Served) -> None:
    served.ladder.invite(["<script>alert(1)</script>"])
    login(served, served.admin)
    page = served.client.get("/staff")
    assert "<script>alert(1)</script>" not in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]


FIRST_MOVE = Path(__file__).resolve().parents[1] / "fixtures" / "class" / "first_move"


def test_a_version_checked_through_the_worker_api_joins_the_table_before_it_has_played(
    served: Served, tmp_path: Path
) -> None:
    ann, worker = bearer(served.students["ann"]), bearer(served.worker)
    files = [("files", (path.name, path.read_bytes())) for path in sorted(FIRST_MOVE.iterdir())]
    version = served.client.post("/api/submissions", files=files, headers=ann)
    assert version.status_code == 201, version.text
    assert version.json()["status"] == "checking"

    claimed = served.client.post("/api/jobs/claim", json={"worker": "in-test"}, headers=worker)
    assert claimed.status_code == 200
    job = Job.from_dict(claimed.json())
    assert job.kind is JobKind.CHECK

    def fetch(digest: str) -> Path:
        archive = served.client.get(f"/api/versions/{digest}/archive", headers=worker)
        assert archive.status_code == 200
        return unpack_upload([Part("v.tar.gz", io.BytesIO(archive.content))], tmp_path / digest)

    result = do_job(job, fetch)
    for _ in range(2):
        answer = served.client.post(f"/api/jobs/{job.id}/result", json=result.to_dict(), headers=worker)
        assert answer.status_code == 200, "a result posted twice is taken twice and counted once"
    detail = served.client.get(f"/api/submissions/{version.json()['id']}", headers=ann).json()
    assert detail["version"]["status"] == "accepted", detail["verdict"]

    rows = served.client.get("/api/table").json()["rows"]
    assert [(row["games"], row["elo"]) for row in rows if not row["baseline"]] == [(0, None)]
    page = served.client.get("/")
    assert page.status_code == 200, "a bot with no rating yet is drawn"
    mine = served.client.get("/", headers=ann)
    assert 'class="mine"' in mine.text


PUBLIC_BY_DESIGN = {"/api/openapi.json", "/api/docs", "/docs/oauth2-redirect", "/static"}
"""FastAPI's own description of the API and the pages' static files: the same for everyone, and no data."""


def test_every_route_asks_the_one_rule(served: Served) -> None:
    """A forged token is refused (401) by every route: each one asks edge.allow, which authenticates first, so a
    route that answered without asking the rule would answer this one."""
    forged = bearer("crl_0000_forged")
    bodies: dict[str, dict[str, Any]] = {
        "/api/submissions": {"files": {"files": ("bot.py", b"x")}},
        "/students/{student}/versions": {"files": {"files": ("bot.py", b"x")}},
        "/api/jobs/claim": {"json": {"worker": "w"}},
        "/api/key": {"json": {"public_key": "k"}},
        "/api/students/{student}/key": {"json": {"public_key": "k"}},
        "/students/{student}/key": {"data": {"public_key": "k"}},
        "/api/jobs/{job_id}/result": {"json": {"kind": "check", "data": {}}},
        "/login": {"data": {"token": "crl_0000_forged", "csrf": "x"}},
    }
    asked = 0
    edge = served.client.app.state.edge  # type: ignore[attr-defined]
    for route in routes(served.client.app.routes):  # type: ignore[attr-defined]
        path = getattr(route, "path", "")
        if path in PUBLIC_BY_DESIGN:
            continue
        filled = re.sub(r"\{[^}]+\}", "1", path)
        for method in sorted(getattr(route, "methods", ()) or ()):
            if method == "HEAD":
                continue
            edge.logins.events.clear()  # failed token checks are rate-limited per address: each route afresh
            answer = served.client.request(
                method, filled, headers=forged, follow_redirects=False, **bodies.get(path, {})
            )
            assert answer.status_code == 401, (method, path, answer.status_code, answer.text[:200])
            asked += 1
    assert asked >= 20


def routes(found: list[Any]) -> Iterator[Any]:
    """Every route of the app, through the routers it includes."""
    for route in found:
        inner = getattr(route, "original_router", None)
        yield from routes(inner.routes) if inner is not None else [route]


def test_a_stale_login_cookie_makes_a_spectator_who_may_log_in_again(served: Served) -> None:
    login(served, served.students["ann"])
    served.students.update(served.ladder.invite(["ann"]))  # a new invitation revokes the old token
    assert served.client.get("/students/ann").status_code == 401, "the old cookie opens nothing"
    assert served.client.get("/").status_code == 200, "the leaderboard, as a spectator"
    assert served.client.get("/login").status_code == 200
    login(served, served.students["ann"])
    assert served.client.get("/students/ann").status_code == 200

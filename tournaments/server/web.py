"""The pages: leaderboard (live), login, a student's own page and upload form, a version, the staff page, the
replay pages. Jinja2 escapes every value; forms carry the session's CSRF token; the login cookie is HttpOnly
and SameSite=Strict."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, File, Form, Request, UploadFile
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from starlette.concurrency import run_in_threadpool

from tournaments.ladder import Division, Principal, Role, UnknownItem
from tournaments.pages.replay_page import render_replay_page

from .access import Action, decide, decide_item
from .edge import Edge, address
from .sessions import LOGIN_COOKIE, TOKEN_COOKIE, Csrf, credentials
from .uploads import Part

TEMPLATES = Jinja2Templates(directory=Path(__file__).parent / "templates")
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}
"""Our own pages load nothing from elsewhere and run no inline script; a replay page is self-contained (its
scripts inline), so it gets `REPLAY_HEADERS` instead."""
REPLAY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data:; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
}
SEE_OTHER = 303
MARKS_CSV = "marks.csv"
GRADESCOPE_JSON = "gradescope.json"


def page(
    edge: Edge, request: Request, name: str, title: str, who: Principal | None, status: int = 200, **values: Any
) -> HTMLResponse:
    token = credentials(None, request.cookies.get(TOKEN_COOKIE)).token
    csrf = edge.csrf.token(token) if who is not None and token else ""
    context = {"title": title, "who": who, "csrf": csrf, **values}
    return TEMPLATES.TemplateResponse(request, name, context, status_code=status, headers=PAGE_HEADERS)


def web_routes(edge: Edge) -> APIRouter:
    router = APIRouter(include_in_schema=False)
    ladder = edge.ladder

    @router.get("/", response_class=HTMLResponse)
    async def leaderboard(request: Request) -> HTMLResponse:
        who = await edge.allow(request, Action.VIEW_TABLE)
        table = await run_in_threadpool(ladder.table, who)
        return page(edge, request, "table.html", "Leaderboard", who, table=table, live="/api/events")

    @router.get("/open", response_class=HTMLResponse)
    async def open_table(request: Request) -> HTMLResponse:
        who = await edge.allow(request, Action.VIEW_TABLE)
        table = await run_in_threadpool(ladder.table, who, Division.OPEN)
        live = "/api/events?division=open"
        return page(edge, request, "table.html", "Open division (remote bots, not marked)", who, table=table, live=live)

    @router.get("/login", response_class=HTMLResponse)
    async def login_form(request: Request) -> HTMLResponse:
        await edge.allow(request, Action.LOGIN)
        nonce = Csrf.new_login_nonce()
        response = page(edge, request, "login.html", "Log in", None, login_nonce=nonce)
        response.set_cookie(LOGIN_COOKIE, nonce, httponly=True, samesite="strict", secure=edge.settings.secure_cookies)
        response.delete_cookie(TOKEN_COOKIE)
        return response

    @router.post("/login")
    async def login(request: Request, token: str = Form(...), csrf: str = Form("")) -> Response:
        edge.logins.hit(address(request))
        await edge.allow(request, Action.LOGIN)
        Csrf.check_login(request.cookies.get(LOGIN_COOKIE), csrf)
        who = await run_in_threadpool(ladder.authenticate, token)
        response = RedirectResponse(home(who), status_code=SEE_OTHER)
        response.set_cookie(
            TOKEN_COOKIE, token.strip(), httponly=True, samesite="strict", secure=edge.settings.secure_cookies
        )
        response.delete_cookie(LOGIN_COOKIE)
        return response

    @router.post("/logout")
    async def logout(request: Request) -> Response:
        await edge.allow(request, Action.VIEW_TABLE)
        response = RedirectResponse("/", status_code=SEE_OTHER)
        response.delete_cookie(TOKEN_COOKIE)
        return response

    @router.get("/me")
    async def me(request: Request) -> Response:
        who = await edge.allow(request, Action.LOGIN)
        return RedirectResponse(home(who) if who else "/login", status_code=SEE_OTHER)

    @router.get("/students/{student}", response_class=HTMLResponse)
    async def student_page(request: Request, student: str) -> HTMLResponse:
        who = await edge.allow(request, Action.VIEW_STUDENT, student)
        assert who is not None
        versions = await run_in_threadpool(ladder.versions, who, student)
        games = await run_in_threadpool(ladder.student_games, who, student)
        seat = await run_in_threadpool(ladder.remote_seat, who, student)
        return page(
            edge, request, "student.html", student, who, student=student, versions=versions, games=games, seat=seat
        )

    @router.post("/students/{student}/key")
    async def web_register_key(request: Request, student: str, public_key: str = Form(..., max_length=200)) -> Response:
        who = await edge.allow(request, Action.REGISTER_KEY, student)
        assert who is not None
        await run_in_threadpool(edge.register_key, who, public_key)
        return RedirectResponse(f"/students/{quote(student, safe='')}", status_code=SEE_OTHER)

    @router.post("/students/{student}/versions")
    async def web_submit(request: Request, student: str, files: list[UploadFile] = File(...)) -> Response:  # noqa: B008
        who = await edge.allow(request, Action.SUBMIT)
        assert who is not None
        decide(who, Action.VIEW_STUDENT, student)
        parts = [Part(upload.filename or "upload", upload.file) for upload in files]  # type: ignore[arg-type]
        version = await run_in_threadpool(edge.submit, who, parts)
        return RedirectResponse(f"/versions/{quote(version.id, safe='')}", status_code=SEE_OTHER)

    @router.get("/versions/{version_id}", response_class=HTMLResponse)
    async def version_page(request: Request, version_id: str) -> HTMLResponse:
        who = await edge.allow(request, Action.VIEW_VERSION)
        assert who is not None
        detail = await run_in_threadpool(ladder.version, who, version_id)
        decide_item(who, Action.VIEW_VERSION, detail.version.student)
        return page(edge, request, "version.html", f"Version {version_id}", who, detail=detail)

    @router.get("/games/{game_id}", response_class=HTMLResponse)
    async def replay_page(request: Request, game_id: str) -> HTMLResponse:
        who = await edge.allow(request, Action.VIEW_REPLAY)
        assert who is not None
        replay = await run_in_threadpool(ladder.replay, who, game_id)
        try:
            html = await run_in_threadpool(render_replay_page, replay)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            # a worker posted a replay the page cannot draw: the game's record stands, its page does not
            raise UnknownItem(
                "this game's replay is not one the page can draw (GET /api/games/ID/replay gives its record)"
            ) from None
        return HTMLResponse(html, headers=REPLAY_HEADERS)

    @router.get("/staff", response_class=HTMLResponse)
    async def staff_page(request: Request) -> HTMLResponse:
        who = await edge.allow(request, Action.STAFF)
        table = await run_in_threadpool(ladder.table, who)
        roster = await run_in_threadpool(ladder.roster, who)
        marks = await run_in_threadpool(ladder.marks, who) if table.frozen else None
        copies = await run_in_threadpool(ladder.copies, who)
        return page(edge, request, "staff.html", "Staff", who, table=table, roster=roster, marks=marks, copies=copies)

    @router.post("/staff/freeze")
    async def freeze(request: Request) -> Response:
        who = await edge.allow(request, Action.STAFF)
        await run_in_threadpool(ladder.deadline_snapshot, who)
        return RedirectResponse("/staff", status_code=SEE_OTHER)

    @router.get("/staff/{export}")
    async def marks_export(request: Request, export: str) -> Response:
        who = await edge.allow(request, Action.STAFF)
        kinds = {MARKS_CSV: "text/csv; charset=utf-8", GRADESCOPE_JSON: "application/json"}
        if export not in kinds:
            raise UnknownItem(f"no export {export!r} (there are {', '.join(kinds)})")
        with tempfile.TemporaryDirectory(dir=edge.settings.scratch) as scratch:
            paths = await run_in_threadpool(ladder.export_marks, Path(scratch), who)
            content = next(path for path in paths if path.name == export).read_bytes()
        disposition = {"Content-Disposition": f'attachment; filename="{export}"'}
        return Response(content, media_type=kinds[export], headers=disposition)

    return router


def home(who: Principal) -> str:
    if who.role is Role.STAFF:
        return "/staff"
    if who.role is Role.STUDENT:
        return f"/students/{quote(who.name, safe='')}"
    return "/"

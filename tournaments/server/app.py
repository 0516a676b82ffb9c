"""The ASGI app: `create_app(ladder)` serves the API (described by OpenAPI at /api/openapi.json, browsable at
/api/docs), the pages and their static files over one ladder.

Errors become statuses by their class (edge.STATUSES): the API answers them as JSON, the pages as a page; a
refused request's body holds the error and nothing of what was asked for. A request body larger than an
upload's cap (plus a margin for the form's own fields) is refused before it is read; any other body (JSON, a
form's fields) larger than `JSON_CAP`, but a job's result, which is read only once its worker is known. A request
that does not fit its route's fields is told which (FastAPI's `detail`) without what it sent: a hostile body is
never echoed back.
"""

from __future__ import annotations

import re
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from protocol.errors import RefereeError
from tournaments.ladder import Ladder

from .api import api_routes
from .edge import Edge, Settings, json_error, retry_headers, status_of
from .web import page, web_routes

FORM_MARGIN = 2**20
JSON_CAP = 256 * 2**10
"""A body that is not an upload: a claim, a key, a login form's token (a job's result has the upload's cap)."""
TITLE = "card-referee ladder"
RESULT_PATH = re.compile(r"/api/jobs/[^/]+/result")
MAX_DETAILS = 20


def create_app(ladder: Ladder, settings: Settings | None = None) -> FastAPI:
    edge = Edge(ladder, settings or Settings())
    app = FastAPI(
        title=TITLE,
        summary="A class ladder for card-game bots: submissions, the live table, and the workers' job queue.",
        version="1",
        openapi_url="/api/openapi.json",
        docs_url="/api/docs",
        redoc_url=None,
    )
    app.include_router(api_routes(edge))
    app.include_router(web_routes(edge))
    app.mount("/static", StaticFiles(directory=Path(__file__).parent / "static"), name="static")

    @app.exception_handler(RefereeError)
    async def refused(request: Request, error: RefereeError) -> Response:
        if request.url.path.startswith("/api/"):
            return json_error(error)
        status, _ = status_of(error)
        try:
            who = edge.principal(request)
        except RefereeError:
            who = None
        response = page(edge, request, "error.html", "Not possible", who, status=status, message=str(error))
        response.headers.update(retry_headers(error))
        return response

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> Response:
        shown = [{key: item[key] for key in ("type", "loc", "msg") if key in item} for item in error.errors()]
        return JSONResponse({"detail": shown[:MAX_DETAILS]}, status_code=422)

    app.add_middleware(BodyCap, cap=edge.settings.limits.upload_bytes + FORM_MARGIN)
    app.state.edge = edge
    return app


class BodyCap:
    """Refuses (413) a request whose Content-Length is over its cap, and (411) a body without one: `cap` for an
    upload (multipart) or a job's result, JSON_CAP for any other body."""

    def __init__(self, app: ASGIApp, cap: int) -> None:
        self.app = app
        self.cap = cap

    def cap_of(self, scope: Scope, headers: dict[bytes, bytes]) -> int:
        upload = headers.get(b"content-type", b"").startswith(b"multipart/form-data")
        return self.cap if upload or RESULT_PATH.fullmatch(scope["path"]) else min(JSON_CAP, self.cap)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in ("POST", "PUT", "PATCH"):
            headers = dict(scope["headers"])
            length = headers.get(b"content-length")
            if length is None and headers.get(b"transfer-encoding"):
                await _answer(scope, receive, send, 411, "a request body needs a Content-Length")
                return
            cap = self.cap_of(scope, headers)
            if length is not None and (not length.isdigit() or int(length) > cap):
                await _answer(scope, receive, send, 413, f"a request body here may be at most {cap} bytes")
                return
        await self.app(scope, receive, send)


async def _answer(scope: Scope, receive: Receive, send: Send, status: int, message: str) -> None:
    error = "too-large" if status == 413 else "length-required"
    await JSONResponse({"error": error, "message": message}, status_code=status)(scope, receive, send)

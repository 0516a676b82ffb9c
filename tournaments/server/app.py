"""The ASGI app: `create_app(ladder)` serves the API (described by OpenAPI at /api/openapi.json, browsable at
/api/docs), the pages and their static files over one ladder.

Errors become statuses by their class (edge.STATUSES): the API answers them as JSON, the pages as a page; a
refused request's body holds the error and nothing of what was asked for. A request body larger than an
upload's cap (plus a margin for the form's own fields) is refused before it is read.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from protocol.errors import RefereeError
from tournaments.ladder import Ladder

from .api import api_routes
from .edge import Edge, Settings, json_error, retry_headers, status_of
from .web import page, web_routes

FORM_MARGIN = 2**20
TITLE = "card-referee ladder"


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

    app.add_middleware(BodyCap, cap=edge.settings.limits.upload_bytes + FORM_MARGIN)
    app.state.edge = edge
    return app


class BodyCap:
    """Refuses (413) a request whose Content-Length is over `cap`, and (411) a body without one."""

    def __init__(self, app: ASGIApp, cap: int) -> None:
        self.app = app
        self.cap = cap

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in ("POST", "PUT", "PATCH"):
            headers = dict(scope["headers"])
            length = headers.get(b"content-length")
            if length is None and headers.get(b"transfer-encoding"):
                await _answer(scope, receive, send, 411, "a request body needs a Content-Length")
                return
            if length is not None and (not length.isdigit() or int(length) > self.cap):
                await _answer(scope, receive, send, 413, f"a request body may be at most {self.cap} bytes")
                return
        await self.app(scope, receive, send)


async def _answer(scope: Scope, receive: Receive, send: Send, status: int, message: str) -> None:
    error = "too-large" if status == 413 else "length-required"
    await JSONResponse({"error": error, "message": message}, status_code=status)(scope, receive, send)

"""The JSON API: each route parses its request, asks the edge who may, calls the ladder, presents the answer."""

from __future__ import annotations

import io
import json
import tarfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Body, File, Request, UploadFile
from fastapi.responses import JSONResponse, Response, StreamingResponse
from starlette.concurrency import run_in_threadpool

from tournaments.ladder import BadResult, Division, JobResult

from .access import Action, decide_item
from .edge import Edge
from .events import table_events
from .present import plain
from .uploads import Part

ARCHIVE_TYPE = "application/gzip"
RESULT_BODY = {
    "required": True,
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "required": ["kind", "data"],
                "properties": {"kind": {"type": "string", "enum": ["check", "match"]}, "data": {"type": "object"}},
            }
        }
    },
}
KEY_TEXT_MAX = 200
"""A public key is 40 characters; a longer text is refused (422) before the ladder sees it."""


def api_routes(edge: Edge) -> APIRouter:
    router = APIRouter(prefix="/api")
    ladder = edge.ladder

    @router.get("/health", summary="Is the server up (no token needed)")
    async def health(request: Request) -> dict[str, Any]:
        await edge.allow(request, Action.HEALTH)
        return {"status": "ok", "changes": await run_in_threadpool(ladder.changes)}

    @router.get("/table", summary="A division's table as the asker may see it (names to staff, else pseudonyms)")
    async def table(request: Request, division: Division = Division.GRADED) -> dict[str, Any]:
        who = await edge.allow(request, Action.VIEW_TABLE)
        return plain(await run_in_threadpool(ladder.table, who, division))  # type: ignore[no-any-return]

    @router.get("/events", summary="Server-sent events: `table` whenever the division's table changes")
    async def events(request: Request, division: Division = Division.GRADED) -> StreamingResponse:
        who = await edge.allow(request, Action.VIEW_TABLE)
        await run_in_threadpool(ladder.table, who, division)
        key = edge.stream_key(request, who)

        async def leaving() -> bool:
            return edge.closing.is_set() or await request.is_disconnected()

        async def stream() -> AsyncIterator[str]:
            with edge.stream_open(key):
                async for event in table_events(
                    edge.watch,
                    (who, division),
                    lambda: plain(ladder.table(who, division)),
                    leaving,
                    edge.settings.keepalive_seconds,
                ):
                    yield event

        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)

    @router.post("/submissions", status_code=201, summary="Upload a version: one zip or tar.gz, or several files")
    async def submit(request: Request, files: list[UploadFile] = File(...)) -> dict[str, Any]:  # noqa: B008
        who = await edge.allow(request, Action.SUBMIT)
        assert who is not None
        parts = [Part(upload.filename or "upload", upload.file) for upload in files]  # type: ignore[arg-type]
        return plain(await run_in_threadpool(edge.submit, who, parts))  # type: ignore[no-any-return]

    @router.get("/submissions/{version_id}", summary="A version: its verdict, check report and build log")
    async def version(request: Request, version_id: str) -> dict[str, Any]:
        who = await edge.allow(request, Action.VIEW_VERSION)
        assert who is not None
        detail = await run_in_threadpool(ladder.version, who, version_id)
        decide_item(who, Action.VIEW_VERSION, detail.version.student)
        return plain(detail)  # type: ignore[no-any-return]

    @router.get("/students/{student}/versions", summary="A student's versions (their own, or staff)")
    async def versions(request: Request, student: str) -> list[Any]:
        who = await edge.allow(request, Action.VIEW_STUDENT, student)
        assert who is not None
        return plain(await run_in_threadpool(ladder.versions, who, student))  # type: ignore[no-any-return]

    @router.get("/key", summary="Your remote bot: your registered public key and where to connect (students)")
    async def own_key(request: Request) -> dict[str, Any]:
        who = await edge.allow(request, Action.OWN_KEY)
        assert who is not None
        return plain(await run_in_threadpool(ladder.remote_seat, who, who.name))  # type: ignore[no-any-return]

    @router.put("/key", summary="Register or replace your CURVE public key, your remote bot (students)")
    async def register_own_key(
        request: Request,
        public_key: str = Body(..., embed=True, max_length=KEY_TEXT_MAX),  # noqa: B008
    ) -> dict[str, Any]:
        who = await edge.allow(request, Action.OWN_KEY)
        assert who is not None
        return plain(await run_in_threadpool(edge.register_key, who, public_key))  # type: ignore[no-any-return]

    @router.get("/students/{student}/key", summary="A student's remote bot: key and where to connect (own, or staff)")
    async def student_key(request: Request, student: str) -> dict[str, Any]:
        who = await edge.allow(request, Action.VIEW_STUDENT, student)
        assert who is not None
        return plain(await run_in_threadpool(ladder.remote_seat, who, student))  # type: ignore[no-any-return]

    @router.put("/students/{student}/key", summary="Register or replace the student's public key (themself only)")
    async def register_student_key(
        request: Request,
        student: str,
        public_key: str = Body(..., embed=True, max_length=KEY_TEXT_MAX),  # noqa: B008
    ) -> dict[str, Any]:
        who = await edge.allow(request, Action.REGISTER_KEY, student)
        assert who is not None
        return plain(await run_in_threadpool(edge.register_key, who, public_key))  # type: ignore[no-any-return]

    @router.get("/copies", summary="Possible copies among the students' current versions, from their code (staff)")
    async def copies(request: Request) -> dict[str, Any]:
        who = await edge.allow(request, Action.STAFF)
        return plain(await run_in_threadpool(ladder.copies, who))  # type: ignore[no-any-return]

    @router.get("/students/{student}/games", summary="A student's games (their own, or staff)")
    async def games(request: Request, student: str) -> list[Any]:
        who = await edge.allow(request, Action.VIEW_STUDENT, student)
        assert who is not None
        return plain(await run_in_threadpool(ladder.student_games, who, student))  # type: ignore[no-any-return]

    @router.get("/games/{game_id}/logs/{seat}", summary="One seat's log of a game (that seat's student, or staff)")
    async def game_log(request: Request, game_id: str, seat: int) -> Response:
        who = await edge.allow(request, Action.READ_LOG)
        assert who is not None
        log = await run_in_threadpool(ladder.game_log, who, game_id, seat)
        return Response(log, media_type="text/plain; charset=utf-8")

    @router.get("/games/{game_id}/replay", summary="A game's replay, as much of it as the asker may see")
    async def replay(request: Request, game_id: str) -> dict[str, Any]:
        who = await edge.allow(request, Action.VIEW_REPLAY)
        assert who is not None
        return await run_in_threadpool(ladder.replay, who, game_id)

    @router.post("/jobs/claim", summary="A worker claims the next job (204: none waiting)")
    async def claim(
        request: Request,
        worker: str = Body(..., embed=True),  # noqa: B008
        hosts_remote: bool = Body(False, embed=True),  # noqa: B008
    ) -> Response:
        who = await edge.allow(request, Action.CLAIM_JOB)
        assert who is not None
        job = await run_in_threadpool(ladder.claim, who, worker, hosts_remote)
        if job is None:
            return Response(status_code=204)
        return JSONResponse(job.to_dict())

    @router.post(
        "/jobs/{job_id}/result",
        summary="A worker reports a job's result (a second report counts once)",
        openapi_extra={"requestBody": RESULT_BODY},
    )
    async def report(request: Request, job_id: str) -> dict[str, str]:
        """The body is read only once the token is a worker's (or staff's), and parsed off the event loop: a
        stranger's or a student's large body is refused unread."""
        who = await edge.allow(request, Action.REPORT_JOB)
        assert who is not None
        result = await run_in_threadpool(parse_result, await request.body())
        await run_in_threadpool(ladder.report, who, job_id, result)
        return {"status": "recorded"}

    @router.get("/versions/{digest}/archive", summary="A version's folder as tar.gz, by content hash (workers)")
    async def archive(request: Request, digest: str) -> Response:
        await edge.allow(request, Action.FETCH_VERSION)
        folder = await run_in_threadpool(ladder.fetch_version, digest)
        return Response(await run_in_threadpool(pack_folder, folder), media_type=ARCHIVE_TYPE)

    return router


def parse_result(body: bytes) -> JobResult:
    """A job's result from its JSON body; BadResult for a body that is no JSON object (or nests past Python's
    recursion limit)."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        raise BadResult("a job's result is a JSON object: `kind` and `data`") from None
    if not isinstance(data, dict):
        raise BadResult("a job's result is a JSON object: `kind` and `data`")
    return JobResult.from_dict(data)


def pack_folder(folder: Path) -> bytes:
    """`folder` as a tar.gz of its regular files and folders, named relative to it."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_symlink() or not (path.is_file() or path.is_dir()):
                continue
            archive.add(path, arcname=path.relative_to(folder).as_posix(), recursive=False)
    return buffer.getvalue()

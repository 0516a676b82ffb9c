"""The server's edge: every request's principal found, checked against the one rule (access.decide), CSRF checked
for cookie sessions, rate limits counted; and the ladder's errors turned into HTTP statuses by their class.
"""

from __future__ import annotations

import contextlib
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from fastapi import Request
from fastapi.responses import JSONResponse

from protocol.errors import BadInput, RefereeError
from tournaments.ladder import (
    Forbidden,
    Ladder,
    LadderFrozen,
    Principal,
    QuotaExceeded,
    RemoteSeat,
    Unauthorised,
    UnknownItem,
    Version,
)

from .access import Action, decide
from .events import TableWatch
from .ratelimit import Rate, RateLimited, RateLimiter
from .sessions import CSRF_FIELD, CSRF_HEADER, TOKEN_COOKIE, Csrf, CsrfRefused, credentials
from .uploads import DEFAULT_LIMITS, Limits, Part, UploadRefused, submission_root, unpack_upload

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
STREAM_RETRY_SECONDS = 5


@dataclass(frozen=True)
class Settings:
    """How one server runs: cookies marked Secure (behind TLS), upload caps, rate limits, the live poll."""

    secure_cookies: bool = False
    limits: Limits = DEFAULT_LIMITS
    upload_rate: Rate = Rate(10, 60)
    """Uploads per token (the ladder's quota is the real limit; this one stops a loop gone wrong)."""
    login_rate: Rate = Rate(10, 60)
    """Login attempts and failed token checks per address."""
    poll_seconds: float = 0.5
    keepalive_seconds: float = 15.0
    streams_per_token: int = 20
    """Live streams open at once per token: a browser's few tabs, not a flood."""
    streams_per_address: int = 200
    """Live streams open at once per address without a token (a classroom behind one NAT address has many)."""
    scratch: Path | None = None
    """Where uploads are unpacked before the ladder copies them (default: the system's temporary folder)."""


@dataclass
class Edge:
    ladder: Ladder
    settings: Settings = field(default_factory=Settings)
    csrf: Csrf = field(default_factory=Csrf)

    def __post_init__(self) -> None:
        self.closing = threading.Event()
        """Set when the server shuts down: the live streams end then, rather than being cut."""
        self.uploads = RateLimiter("uploads", self.settings.upload_rate)
        self.logins = RateLimiter("login attempts", self.settings.login_rate)
        self.watch = TableWatch(self.ladder, self.settings.poll_seconds)
        self.streams: dict[str, int] = {}

    def stream_key(self, request: Request, who: Principal | None) -> str:
        """Whose live stream this is (their token, or their address without one); RateLimited when they have
        as many open as the settings allow. The stream counts itself once it runs (`stream_open`), so one that
        never starts holds no place."""
        key = f"token:{who.role.value}:{who.name}" if who is not None else address(request)
        cap = self.settings.streams_per_token if who is not None else self.settings.streams_per_address
        if self.streams.get(key, 0) >= cap:
            raise RateLimited(f"live streams open at once (at most {cap})", STREAM_RETRY_SECONDS)
        return key

    @contextlib.contextmanager
    def stream_open(self, key: str) -> Iterator[None]:
        self.streams[key] = self.streams.get(key, 0) + 1
        try:
            yield
        finally:
            self.streams[key] -= 1
            if not self.streams[key]:
                del self.streams[key]

    def principal(self, request: Request) -> Principal | None:
        """Who sent `request` (None: nobody, a spectator); Unauthorised for a Bearer token that is not valid. A
        login cookie that is no longer valid makes a spectator, so the browser can reach the login page again."""
        found = credentials(request.headers.get("authorization"), request.cookies.get(TOKEN_COOKIE))
        if found.token is None:
            return None
        try:
            return self.ladder.authenticate(found.token)
        except Unauthorised:
            self.logins.hit(address(request))
            if found.from_cookie:
                return None  # a stale login (a token revoked by a new invitation): a spectator, who may log in
            raise

    async def allow(self, request: Request, action: Action, student: str | None = None) -> Principal | None:
        """The principal of `request` if the rule lets them do `action`; checks CSRF on a cookie session's
        unsafe request (the form field or the X-CSRF-Token header)."""
        who = decide(self.principal(request), action, student)
        found = credentials(request.headers.get("authorization"), request.cookies.get(TOKEN_COOKIE))
        if request.method in UNSAFE_METHODS and found.from_cookie and found.token:
            given = request.headers.get(CSRF_HEADER)
            if given is None and _is_form(request):
                given = str((await request.form()).get(CSRF_FIELD) or "")
            self.csrf.check(found.token, given)
        return who

    def register_key(self, who: Principal, public_key: str) -> RemoteSeat:
        """Register `who`'s public key (counted as an upload against a loop gone wrong); their remote seat then."""
        self.uploads.hit(f"token:{who.role.value}:{who.name}")
        self.ladder.register_key(who, public_key)
        return self.ladder.remote_seat(who, who.name)

    def submit(self, who: Principal, parts: Sequence[Part]) -> Version:
        """Unpack, check and hand an upload to the ladder: its Version, or UploadRefused / the ladder's refusal."""
        self.uploads.hit(f"token:{who.role.value}:{who.name}")
        with tempfile.TemporaryDirectory(dir=self.settings.scratch, prefix="upload-") as scratch:
            folder = unpack_upload(parts, Path(scratch) / "upload", self.settings.limits)
            root = submission_root(folder)
            return self.ladder.submit(who, root)


def _is_form(request: Request) -> bool:
    kind = request.headers.get("content-type", "")
    return kind.startswith(("application/x-www-form-urlencoded", "multipart/form-data"))


def address(request: Request) -> str:
    return f"ip:{request.client.host if request.client else 'unknown'}"


STATUSES: tuple[tuple[type[RefereeError], int, str], ...] = (
    (Unauthorised, 401, "unauthorised"),
    (Forbidden, 403, "forbidden"),
    (CsrfRefused, 403, "csrf"),
    (UnknownItem, 404, "not-found"),
    (LadderFrozen, 409, "frozen"),
    (QuotaExceeded, 429, "quota"),
    (RateLimited, 429, "rate-limited"),
    (UploadRefused, 422, "upload-refused"),
    (BadInput, 400, "bad-input"),
)
"""Each error class, most specific first, with its HTTP status and the `error` word the API answers."""


def status_of(error: RefereeError) -> tuple[int, str]:
    return next(((status, word) for kind, status, word in STATUSES if isinstance(error, kind)), (500, "server"))


def error_body(error: RefereeError) -> dict[str, object]:
    """What a client is told: the error's word and message, an upload's cause, a quota's next slot; no data."""
    body: dict[str, object] = {"error": status_of(error)[1], "message": str(error)}
    if isinstance(error, UploadRefused):
        body["cause"] = error.cause.value
    if isinstance(error, QuotaExceeded):
        body["next_slot"] = error.next_slot.isoformat()
    return body


def retry_headers(error: RefereeError) -> dict[str, str]:
    if isinstance(error, RateLimited):
        return {"Retry-After": str(error.retry_after)}
    if isinstance(error, QuotaExceeded):
        seconds = max(1, int((error.next_slot - datetime.now(error.next_slot.tzinfo)).total_seconds()))
        return {"Retry-After": str(seconds)}
    return {}


def json_error(error: RefereeError) -> JSONResponse:
    status, _ = status_of(error)
    headers = retry_headers(error)
    if status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    return JSONResponse(error_body(error), status_code=status, headers=headers)

"""Who is asking: a Bearer token (API clients, workers) or the login cookie (browsers), and CSRF for the latter.

Logging in puts the token in an HttpOnly, SameSite=Strict cookie (Secure behind TLS), so page scripts never read
it and other sites' pages never send it. A form that changes something carries a CSRF token derived from the
session's token by an HMAC with a secret of this server run (`csrf_token`): another site cannot read it, and a
restart only makes open forms stale. The login form itself, before any session, uses a double-submit cookie.
A request with an Authorization header is not a browser's ambient credential and needs no CSRF token.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

from protocol.errors import BadInput

TOKEN_COOKIE = "referee_token"
LOGIN_COOKIE = "referee_login"
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-csrf-token"


class CsrfRefused(BadInput):
    """A form or a cookie-authenticated request without the CSRF token of its session."""


@dataclass(frozen=True)
class Credentials:
    """The token a request carries and where it came from."""

    token: str | None
    from_cookie: bool


def credentials(authorization: str | None, cookie: str | None) -> Credentials:
    """The Bearer token of the Authorization header, else the login cookie's, else none."""
    if authorization:
        scheme, _, token = authorization.partition(" ")
        return Credentials(token.strip() if scheme.lower() == "bearer" else "", from_cookie=False)
    return Credentials(cookie or None, from_cookie=True)


class Csrf:
    """CSRF tokens of this server run."""

    def __init__(self, secret: bytes | None = None) -> None:
        self.secret = secret or secrets.token_bytes(32)

    def token(self, session_token: str) -> str:
        return hmac.new(self.secret, session_token.encode(), hashlib.sha256).hexdigest()

    def check(self, session_token: str, given: str | None) -> None:
        if not given or not hmac.compare_digest(self.token(session_token), given):
            raise CsrfRefused("this form is stale or not from this site: reload the page and try again")

    @staticmethod
    def new_login_nonce() -> str:
        return secrets.token_urlsafe(24)

    @staticmethod
    def check_login(cookie: str | None, given: str | None) -> None:
        if not cookie or not given or not hmac.compare_digest(cookie, given):
            raise CsrfRefused("this login form is stale or not from this site: reload the page and try again")

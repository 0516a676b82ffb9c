"""What the public table calls a student: a keyed hash of the name, stable for the ladder and unguessable
without its secret (so the name cannot be tried against it)."""

from __future__ import annotations

import base64
import hashlib
import hmac


def pseudonym(secret: str, name: str) -> str:
    digest = hmac.new(secret.encode(), name.encode(), hashlib.sha256).digest()
    return "bot-" + base64.b32encode(digest[:5]).decode().lower()

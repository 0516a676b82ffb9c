"""Tokens: shown once, stored as an argon2id hash. A token is `crl_ID_SECRET`: ID finds its row, the hash
checks the whole token.

The hash is cheap (one pass, 8 MiB): a token carries 192 random bits, so its hash need not slow a guesser the
way a person's password must; what it must do is keep a stolen database from holding usable tokens, and keep
inviting 300 students and checking every request quick."""

from __future__ import annotations

import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

PREFIX = "crl"
_HASHER = PasswordHasher(time_cost=1, memory_cost=8192, parallelism=1)


def new_token() -> tuple[str, str, str]:
    """(token, its id, its hash)."""
    token_id = secrets.token_hex(8)
    token = f"{PREFIX}_{token_id}_{secrets.token_urlsafe(24)}"
    return token, token_id, _HASHER.hash(token)


def token_id(token: str) -> str | None:
    """The id part of a well-formed token, else None."""
    parts = token.strip().split("_", 2)
    if len(parts) != 3 or parts[0] != PREFIX or not parts[1] or not parts[2]:
        return None
    return parts[1]


def matches(token: str, hashed: str) -> bool:
    try:
        return _HASHER.verify(hashed, token.strip())
    except (VerificationError, InvalidHashError):
        return False

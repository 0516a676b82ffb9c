"""A CURVE public key as the ladder takes it: Z85 text of 40 characters that decodes to 32 bytes (the form
pyzmq's zmq.auth writes in a NAME.key file, `public-key = "..."`). Nothing else is accepted, so a key stored is
one ZeroMQ's handshake can use, and a malformed one is a clear refusal."""

from __future__ import annotations

from zmq.utils import z85

Z85_LENGTH = 40
KEY_BYTES = 32


def valid_public_key(text: object) -> str | None:
    """`text` stripped, if it is a Z85 CURVE public key; None if not."""
    if not isinstance(text, str):
        return None
    key = text.strip()
    if len(key) != Z85_LENGTH or not key.isascii():
        return None
    try:
        decoded = z85.decode(key)
    except (ValueError, KeyError, TypeError):
        return None
    return key if len(decoded) == KEY_BYTES else None

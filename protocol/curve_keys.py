"""CURVE key pairs for remote seats, in the files pyzmq's own tools write and read (zmq.auth): NAME.key holds
the public key, NAME.key_secret the pair. No cryptography of our own: these are ZeroMQ's CURVE keys, checked by
ZeroMQ's handshake and by a ZAP authenticator (referee.wire.remote).

An organiser's keys folder holds the referee's own pair (referee.key, referee.key_secret) and the public key of
every author allowed to play, under the name of the seat it takes (alice.key for `remote:alice`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import zmq.auth

from protocol.errors import BadInput

REFEREE_KEY = "referee"
"""The name of the referee's own pair in a keys folder."""
PUBLIC_SUFFIX = ".key"
SECRET_SUFFIX = ".key_secret"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class KeyFileError(BadInput, ValueError):
    """A key file that is missing, unreadable or not a CURVE key file, or one that would be overwritten."""


@dataclass(frozen=True, slots=True)
class KeyPair:
    public: bytes
    """Z85 text, 40 characters."""
    secret: bytes


def check_name(name: str) -> str:
    """`name` if it can name a key (and a seat): letters, digits, `.`, `_` and `-`, at most 64."""
    if not _NAME.fullmatch(name) or name.endswith(PUBLIC_SUFFIX):
        raise KeyFileError(f"{name!r} cannot name a key: use letters, digits, '.', '_' and '-' (at most 64)")
    return name


def key_files(folder: Path, name: str) -> tuple[Path, Path]:
    """The public and the secret key file of `name` in `folder`."""
    return folder / f"{name}{PUBLIC_SUFFIX}", folder / f"{name}{SECRET_SUFFIX}"


def new_key_pair(name: str, folder: Path, *, force: bool = False) -> tuple[Path, Path]:
    """Write a fresh pair for `name` into `folder` (made if missing): (public file, secret file). An existing file
    is never overwritten unless `force`."""
    check_name(name)
    public, secret = key_files(folder, name)
    existing = [str(path) for path in (public, secret) if path.exists()]
    if existing and not force:
        raise KeyFileError(f"{' and '.join(existing)} already exist(s): keep them, or pass --force to replace them")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for path in (public, secret):
            path.unlink(missing_ok=True)
        written = zmq.auth.create_certificates(folder, name)
    except OSError as error:
        raise KeyFileError(f"cannot write keys into {folder}: {error.strerror or error}") from error
    Path(written[1]).chmod(0o600)
    return Path(written[0]), Path(written[1])


def _load(path: Path) -> tuple[bytes | None, bytes | None]:
    if not path.is_file():
        raise KeyFileError(f"no key file {str(path)!r}")
    try:
        public, secret = zmq.auth.load_certificate(path)
    except (OSError, ValueError, UnicodeDecodeError) as error:
        raise KeyFileError(f"{str(path)!r} is not a CURVE key file (referee keys new makes them): {error}") from None
    if public is None or len(public) != 40 or (secret is not None and len(secret) != 40):
        raise KeyFileError(f"{str(path)!r} is not a CURVE key file (referee keys new makes them)")
    return public, secret


def load_public(path: Path) -> bytes:
    """The public key in a NAME.key (or NAME.key_secret) file."""
    public, _ = _load(path)
    assert public is not None
    return public


def load_pair(path: Path) -> KeyPair:
    """The pair in a NAME.key_secret file."""
    public, secret = _load(path)
    if secret is None or public is None:
        raise KeyFileError(f"{str(path)!r} holds no secret key: give the {SECRET_SUFFIX} file")
    return KeyPair(public, secret)


def allow_list(folder: Path) -> dict[bytes, str]:
    """The public keys in `folder` (NAME.key files, the referee's own left out): key -> seat name."""
    if not folder.is_dir():
        raise KeyFileError(f"no keys folder {str(folder)!r}")
    allowed: dict[bytes, str] = {}
    for path in sorted(folder.glob(f"*{PUBLIC_SUFFIX}")):
        name = path.name.removesuffix(PUBLIC_SUFFIX)
        if name == REFEREE_KEY:
            continue
        key = load_public(path)
        if key in allowed:
            raise KeyFileError(f"{path.name} and {allowed[key]}{PUBLIC_SUFFIX} hold the same key: one key, one seat")
        allowed[key] = name
    return allowed

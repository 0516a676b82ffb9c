"""TLS for a Dask cluster that plays a league: the certificates, and distributed's Security made from them.

    write_certificates(Path("dask-tls"))        # `referee tournament dask-certs dask-tls`
    security = cluster_security(Path("dask-tls"))

One self-signed certificate that is its own authority (as distributed's Security.temporary makes, but on disk
so that every machine can have it): the scheduler, the workers and the organiser all present it and accept
only peers that present it, so nobody without key.pem can connect to the scheduler, submit work to the
workers or pose as one. The folder holds ca.pem (the authority: the certificate), cert.pem (the same
certificate) and key.pem (its private key, readable by its owner only). Start the cluster with

    dask scheduler --tls-ca-file ca.pem --tls-cert cert.pem --tls-key key.pem
    dask worker tls://HOST:8786 --tls-ca-file ca.pem --tls-cert cert.pem --tls-key key.pem

and play with `referee tournament run LEAGUE --scheduler tls://HOST:8786 --scheduler-tls FOLDER`.
"""

from __future__ import annotations

import datetime
import os
from pathlib import Path
from typing import Any

from protocol.errors import BadInput

CA_FILE = "ca.pem"
CERT_FILE = "cert.pem"
KEY_FILE = "key.pem"
COMMON_NAME = "card-referee-dask"
DAYS = 365


class TlsFilesMissing(BadInput, FileNotFoundError):
    """--scheduler-tls names a folder without the certificate files."""


def write_certificates(folder: Path, days: int = DAYS) -> Path:
    """Make the key and self-signed certificate in `folder` (created if need be); returns the folder."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, COMMON_NAME)])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    folder.mkdir(parents=True, exist_ok=True)
    pem = certificate.public_bytes(serialization.Encoding.PEM)
    (folder / CA_FILE).write_bytes(pem)
    (folder / CERT_FILE).write_bytes(pem)
    secret = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    descriptor = os.open(folder / KEY_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as file:
        file.write(secret)
    return folder


def cluster_security(folder: Path) -> Any:
    """distributed's Security for the organiser's client, from a folder write_certificates made: TLS required,
    the peer's certificate checked against ca.pem."""
    from distributed.security import Security

    missing = [name for name in (CA_FILE, CERT_FILE, KEY_FILE) if not (folder / name).is_file()]
    if missing:
        raise TlsFilesMissing(
            f"{folder} has no {', '.join(missing)}: make them with `referee tournament dask-certs {folder}`"
        )
    return Security(
        tls_ca_file=str(folder / CA_FILE),
        tls_client_cert=str(folder / CERT_FILE),
        tls_client_key=str(folder / KEY_FILE),
        require_encryption=True,
    )

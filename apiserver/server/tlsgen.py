"""Serving certificates for ``gangplane serve --tls``: a fresh CA and a server certificate signed by it.

Like kubeadm's ``certs`` phase in miniature: the CA goes into the kubeconfig
(``certificate-authority-data``), the serving certificate names every address a client may use
(the listen address, ``localhost``, ``127.0.0.1``, ``::1``), so kubectl verifies the server and
stays quiet. Keys are ECDSA P-256; the files are written with mode 0600.

As kubeadm uses the certificates it finds in its PKI directory, :func:`serving_files` keeps the
ones of an earlier start (same directory, same names, more than a day of validity left, recorded
in ``pki.json``), so a restart neither generates keys nor imports ``cryptography`` (about
100 ms of start-up); :func:`generate` always makes fresh ones.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

if TYPE_CHECKING:
    from cryptography import x509

#: what :func:`serving_files` checks before reusing a directory's certificates
MANIFEST = "pki.json"
#: certificates expiring sooner than this are made again
RENEW_BEFORE = 86400.0


@dataclass(frozen=True)
class ServingFiles:
    """Where the CA certificate, the serving certificate and its key are on disk."""

    ca_cert: Path
    cert: Path
    key: Path

    def ca_pem(self) -> bytes:
        return self.ca_cert.read_bytes()


def _write(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def _san(hosts: list[str]) -> x509.SubjectAlternativeName:
    from cryptography import x509

    names: list[x509.GeneralName] = []
    for h in dict.fromkeys(hosts):
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(h)))
        except ValueError:
            names.append(x509.DNSName(h))
    return x509.SubjectAlternativeName(names)


def _hosts(host: str) -> list[str]:
    if host in ("0.0.0.0", "::"):
        return ["localhost", "127.0.0.1", "::1"]
    return [host, "localhost", "127.0.0.1", "::1"]


def _files(directory: Path) -> ServingFiles:
    return ServingFiles(directory / "ca.crt", directory / "apiserver.crt", directory / "apiserver.key")


def serving_files(directory: Path, host: str, valid_days: int = 365) -> ServingFiles:
    """The certificates of an earlier start under ``directory`` when they still fit ``host``, else new ones."""
    files = _files(directory)
    try:
        manifest = orjson.loads((directory / MANIFEST).read_bytes())
        fits = (
            manifest.get("hosts") == _hosts(host)
            and float(manifest.get("notAfter", 0)) - time.time() > RENEW_BEFORE
            and all(p.is_file() for p in (files.ca_cert, files.cert, files.key))
        )
    except (OSError, ValueError, TypeError, AttributeError):
        fits = False
    return files if fits else generate(directory, host, valid_days)


def generate(directory: Path, host: str, valid_days: int = 365) -> ServingFiles:
    """A CA and a serving certificate for ``host`` (plus the loopback names) under ``directory``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "gangplane-ca")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=valid_days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    hosts = _hosts(host)
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=valid_days))
        .add_extension(_san(hosts), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    files = _files(directory)
    (directory / MANIFEST).unlink(missing_ok=True)  # until every file below is written
    _write(files.ca_cert, ca.public_bytes(serialization.Encoding.PEM))
    _write(files.cert, cert.public_bytes(serialization.Encoding.PEM))
    _write(
        files.key,
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ),
    )
    not_after = now + datetime.timedelta(days=valid_days)
    _write(directory / MANIFEST, orjson.dumps({"hosts": hosts, "notAfter": not_after.timestamp()}))
    return files

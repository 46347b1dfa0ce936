"""Serving certificates: kept across starts while they fit, made again when they do not."""

from __future__ import annotations

import ssl
from pathlib import Path

import orjson

from apiserver.server import tlsgen


def test_a_restart_keeps_the_certificates_that_still_fit(tmp_path: Path) -> None:
    first = tlsgen.serving_files(tmp_path / "pki", "127.0.0.1")
    ca = first.ca_cert.read_bytes()
    again = tlsgen.serving_files(tmp_path / "pki", "127.0.0.1")
    assert again == first and again.ca_cert.read_bytes() == ca
    # the files make a server context that a client verifies with the CA
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(str(again.cert), str(again.key))
    ssl.create_default_context(cadata=ca.decode())
    assert (again.key.stat().st_mode & 0o777) == 0o600


def test_other_hosts_or_expiring_certificates_are_made_again(tmp_path: Path) -> None:
    d = tmp_path / "pki"
    ca = tlsgen.serving_files(d, "127.0.0.1").ca_cert.read_bytes()
    assert tlsgen.serving_files(d, "0.0.0.0").ca_cert.read_bytes() != ca  # other names
    manifest = orjson.loads((d / tlsgen.MANIFEST).read_bytes())
    assert manifest["hosts"] == ["localhost", "127.0.0.1", "::1"]
    ca = d.joinpath("ca.crt").read_bytes()
    manifest["notAfter"] = 0
    (d / tlsgen.MANIFEST).write_bytes(orjson.dumps(manifest))
    assert tlsgen.serving_files(d, "0.0.0.0").ca_cert.read_bytes() != ca  # expired
    ca = d.joinpath("ca.crt").read_bytes()
    (d / "apiserver.key").unlink()
    assert tlsgen.serving_files(d, "0.0.0.0").ca_cert.read_bytes() != ca  # a file missing

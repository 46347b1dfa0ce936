"""Where an API server is and how to authenticate to it: client-go's ``rest.Config`` from a kubeconfig.

:func:`load_kubeconfig` reads the current (or a named) context of a kubeconfig file the way
``clientcmd`` does for the fields gangplane's HTTP client speaks: the server URL, the CA
(``certificate-authority-data`` or a ``certificate-authority`` file, relative to the
kubeconfig), ``insecure-skip-tls-verify``, a bearer ``token`` or ``tokenFile``, and a client
certificate (``client-certificate[-data]`` + ``client-key[-data]``, what kind and kubeadm
write). Authentication it cannot perform (``exec`` plugins, ``auth-provider``, basic auth)
is an error naming the field, never a silent anonymous client.
"""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


class KubeconfigError(ValueError):
    """The kubeconfig cannot be used: missing, malformed, or naming what gangplane cannot do."""


@dataclass(frozen=True)
class RESTConfig:
    """One API server and the credentials to reach it."""

    server: str
    token: str = ""
    ca_pem: bytes = b""
    insecure_skip_tls_verify: bool = False
    client_cert_pem: bytes = b""
    client_key_pem: bytes = b""
    #: the context's namespace (``default`` when the context names none)
    namespace: str = "default"
    #: ``tls-server-name``: the name the serving certificate is checked against, if not the URL's host
    tls_server_name: str = ""

    def ssl_context(self) -> ssl.SSLContext | bool:
        """What the transport verifies the server with (False only with ``insecure-skip-tls-verify``)."""
        if not self.server.startswith("https://"):
            return True
        if self.insecure_skip_tls_verify:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        elif self.ca_pem:
            ctx = ssl.create_default_context(cadata=self.ca_pem.decode())
        else:
            ctx = ssl.create_default_context()
        if self.client_cert_pem:
            _load_client_cert(ctx, self.client_cert_pem, self.client_key_pem)
        return ctx


def _load_client_cert(ctx: ssl.SSLContext, cert: bytes, key: bytes) -> None:
    # ssl only loads a certificate chain from files: write both to a private temporary dir,
    # load them, and remove them at once (the context keeps them in memory).
    with tempfile.TemporaryDirectory(prefix="gangplane-cert-") as d:
        os.chmod(d, 0o700)
        cert_file, key_file = Path(d) / "tls.crt", Path(d) / "tls.key"
        cert_file.write_bytes(cert)
        fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(key)
        try:
            ctx.load_cert_chain(cert_file, key_file)
        except ssl.SSLError as e:
            raise KubeconfigError(f"client-certificate / client-key cannot be loaded: {e}") from None


def _named(items: Any, name: str, what: str, path: Path) -> dict[str, Any]:
    for item in items or []:
        if isinstance(item, dict) and item.get("name") == name:
            body = item.get(what)
            if not isinstance(body, dict):
                raise KubeconfigError(f"{path}: {what} {name!r} has no {what} map")
            return body
    raise KubeconfigError(f'{path}: no {what} named "{name}"')


def _data_or_file(entry: dict[str, Any], key: str, base: Path, path: Path) -> bytes:
    data = entry.get(f"{key}-data")
    if data:
        try:
            return base64.b64decode(str(data), validate=True)
        except ValueError:
            raise KubeconfigError(f"{path}: {key}-data is not base64") from None
    file = entry.get(key)
    if file:
        target = Path(str(file)).expanduser()
        if not target.is_absolute():
            target = base / target
        try:
            return target.read_bytes()
        except OSError as e:
            raise KubeconfigError(f"{path}: {key} {target}: {e.strerror}") from None
    return b""


def load_kubeconfig(path: str | os.PathLike[str], context: str = "") -> RESTConfig:
    """The :class:`RESTConfig` of ``context`` (default: ``current-context``) in the kubeconfig at ``path``."""
    p = Path(path).expanduser()
    try:
        doc = yaml.safe_load(p.read_text())
    except OSError as e:
        raise KubeconfigError(f"{p}: {e.strerror}") from None
    except yaml.YAMLError as e:
        raise KubeconfigError(f"{p}: not YAML: {e}") from None
    if not isinstance(doc, dict):
        raise KubeconfigError(f"{p}: not a kubeconfig (want a Config map)")
    name = context or str(doc.get("current-context") or "")
    if not name:
        raise KubeconfigError(f"{p}: no current-context and no context given")
    ctx = _named(doc.get("contexts"), name, "context", p)
    cluster = _named(doc.get("clusters"), str(ctx.get("cluster") or ""), "cluster", p)
    user: dict[str, Any] = {}
    if ctx.get("user"):
        user = _named(doc.get("users"), str(ctx["user"]), "user", p)
    server = str(cluster.get("server") or "").rstrip("/")
    if not server.startswith(("http://", "https://")):
        raise KubeconfigError(f"{p}: cluster {ctx.get('cluster')!r}: server {server!r} is not an http(s) URL")
    for unsupported in ("exec", "auth-provider", "username", "password"):
        if user.get(unsupported):
            raise KubeconfigError(
                f"{p}: user {ctx.get('user')!r}: {unsupported} is not supported by gangplane's client "
                "(use a token, tokenFile or a client certificate)"
            )
    base = p.parent
    token = str(user.get("token") or "")
    if not token and user.get("tokenFile"):
        token_file = Path(str(user["tokenFile"])).expanduser()
        if not token_file.is_absolute():
            token_file = base / token_file
        try:
            token = token_file.read_text().strip()
        except OSError as e:
            raise KubeconfigError(f"{p}: tokenFile {token_file}: {e.strerror}") from None
    cert = _data_or_file(user, "client-certificate", base, p)
    key = _data_or_file(user, "client-key", base, p)
    if bool(cert) != bool(key):
        raise KubeconfigError(f"{p}: user {ctx.get('user')!r}: client-certificate needs client-key")
    return RESTConfig(
        server=server,
        token=token,
        ca_pem=_data_or_file(cluster, "certificate-authority", base, p),
        insecure_skip_tls_verify=bool(cluster.get("insecure-skip-tls-verify")),
        client_cert_pem=cert,
        client_key_pem=key,
        namespace=str(ctx.get("namespace") or "default"),
        tls_server_name=str(cluster.get("tls-server-name") or ""),
    )

"""The little HTTP client the product's commands (``explain``, ``import``) use: a kubeconfig's server and credentials.

kubectl's rules, the part gangplane's own kubeconfigs and ordinary ones need: ``--kubeconfig``,
else the first file of ``$KUBECONFIG``, else ``./gangplane.kubeconfig``; the current context's
cluster (server, CA data or file, ``insecure-skip-tls-verify``) and user (bearer token, client
certificate and key).
"""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
from pathlib import Path
from typing import Any

import yaml


def read_kubeconfig(path: str) -> tuple[str, dict[str, Any], str]:
    """(server URL, ``httpx`` client options, the context's namespace)."""
    path = path or os.environ.get("KUBECONFIG", "").split(os.pathsep)[0] or "gangplane.kubeconfig"
    cfg = yaml.safe_load(Path(path).read_text()) or {}
    current = cfg.get("current-context", "")
    ctx: dict[str, Any] = (
        next((c["context"] for c in cfg.get("contexts") or [] if c.get("name") == current), {}) or {}
    )
    cluster: dict[str, Any] = (
        next((c["cluster"] for c in cfg.get("clusters") or [] if c.get("name") == ctx.get("cluster")), {})
        or {}
    )
    user: dict[str, Any] = (
        next((u["user"] for u in cfg.get("users") or [] if u.get("name") == ctx.get("user")), {}) or {}
    )
    opts: dict[str, Any] = {"timeout": 60}
    if user.get("token"):
        opts["headers"] = {"Authorization": f"Bearer {user['token']}"}
    verify: Any = True
    if cluster.get("certificate-authority-data"):
        verify = ssl.create_default_context(
            cadata=base64.b64decode(cluster["certificate-authority-data"]).decode()
        )
    elif cluster.get("certificate-authority"):
        verify = ssl.create_default_context(cafile=cluster["certificate-authority"])
    elif cluster.get("insecure-skip-tls-verify"):
        verify = False
    cert = _client_cert(user)
    if cert is not None and isinstance(verify, ssl.SSLContext):
        verify.load_cert_chain(*cert)
    elif cert is not None:
        ctx_ssl = ssl.create_default_context()
        if verify is False:
            ctx_ssl.check_hostname = False
            ctx_ssl.verify_mode = ssl.CERT_NONE
        ctx_ssl.load_cert_chain(*cert)
        verify = ctx_ssl
    opts["verify"] = verify
    return cluster.get("server", ""), opts, ctx.get("namespace", "")


def _client_cert(user: dict[str, Any]) -> tuple[str, str] | None:
    """(certificate file, key file) of a client-certificate user; inline data goes to private temp files."""
    if user.get("client-certificate") and user.get("client-key"):
        return user["client-certificate"], user["client-key"]
    if user.get("client-certificate-data") and user.get("client-key-data"):
        d = tempfile.mkdtemp(prefix="gangplane-kubeconfig-")
        cert, key = Path(d) / "cert.pem", Path(d) / "key.pem"
        for f, data in ((cert, user["client-certificate-data"]), (key, user["client-key-data"])):
            fd = os.open(f, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(base64.b64decode(data))
        return str(cert), str(key)
    return None

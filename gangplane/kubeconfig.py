"""The kubeconfig ``gangplane serve`` writes so kubectl and clients find the server, its token and its CA.

It is the product face's (not the API server's): the server only serves; who gets told where it
listens, and with what credential, is the command's and the pytest plugin's business.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path


def write_kubeconfig(path: Path, url: str, token: str = "", ca_pem: bytes = b"") -> None:
    """A kubeconfig naming the server, its bearer token and CA; mode 0600 (it holds a credential)."""
    cluster: dict[str, str] = {"server": url}
    if ca_pem:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    user: dict[str, str] = {"token": token} if token else {}
    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "gangplane", "cluster": cluster}],
        "users": [{"name": "gangplane", "user": user}],
        "contexts": [
            {
                "name": "gangplane",
                "context": {"cluster": "gangplane", "user": "gangplane", "namespace": "default"},
            }
        ],
        "current-context": "gangplane",
        "preferences": {},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    import yaml

    with os.fdopen(fd, "w") as f:
        f.write(yaml.safe_dump(cfg, sort_keys=False))
    os.chmod(tmp, 0o600)  # an existing file keeps its old mode through O_CREAT
    os.replace(tmp, path)

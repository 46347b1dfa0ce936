"""``gangplane explain pod/NAME|podgroup/NAME``: print a scheduling record as tables.

Reads the ``SchedulingRecord`` (gangplane's API group ``scheduling.gangplane.dev``) through the
API with the kubeconfig kubectl would use (``--kubeconfig``, ``$KUBECONFIG``, else
``./gangplane.kubeconfig``): its server, bearer token and CA.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import ssl
import sys
from pathlib import Path
from typing import Any

import httpx
import yaml

from scheduler.records.api import SCHEDULINGRECORDS, record_name
from scheduler.records.explain import render

KINDS = {
    "pod": "Pod",
    "pods": "Pod",
    "po": "Pod",
    "podgroup": "PodGroup",
    "podgroups": "PodGroup",
    "pg": "PodGroup",
}


def _kubeconfig(path: str) -> tuple[str, dict[str, Any], str]:
    """(server URL, httpx client options, context namespace) from a kubeconfig's current context."""
    path = path or os.environ.get("KUBECONFIG", "").split(os.pathsep)[0] or "gangplane.kubeconfig"
    cfg = yaml.safe_load(Path(path).read_text()) or {}
    current = cfg.get("current-context", "")
    ctx = next((c["context"] for c in cfg.get("contexts") or [] if c.get("name") == current), {})
    cluster = next(
        (c["cluster"] for c in cfg.get("clusters") or [] if c.get("name") == ctx.get("cluster")), {}
    )
    user = next((u["user"] for u in cfg.get("users") or [] if u.get("name") == ctx.get("user")), {}) or {}
    opts: dict[str, Any] = {"timeout": 30}
    if user.get("token"):
        opts["headers"] = {"Authorization": f"Bearer {user['token']}"}
    if cluster.get("certificate-authority-data"):
        opts["verify"] = ssl.create_default_context(
            cadata=base64.b64decode(cluster["certificate-authority-data"]).decode()
        )
    elif cluster.get("certificate-authority"):
        opts["verify"] = ssl.create_default_context(cafile=cluster["certificate-authority"])
    elif cluster.get("insecure-skip-tls-verify"):
        opts["verify"] = False
    return cluster.get("server", ""), opts, ctx.get("namespace", "")


def main(args: argparse.Namespace) -> int:
    kind_text, _, name = args.target.partition("/")
    kind = KINDS.get(kind_text.lower())
    if kind is None or not name:
        print(f'gangplane explain: expected pod/NAME or podgroup/NAME, got "{args.target}"', file=sys.stderr)
        return 2
    try:
        server, opts, ctx_ns = _kubeconfig(args.kubeconfig)
    except (OSError, yaml.YAMLError) as e:
        print(f"gangplane explain: cannot read the kubeconfig: {e}", file=sys.stderr)
        return 2
    ns = args.namespace or ctx_ns or "default"
    g = SCHEDULINGRECORDS
    url = f"{server}/apis/{g.group}/{g.version}/namespaces/{ns}/{g.resource}/{record_name(kind, name)}"
    try:
        r = httpx.get(url, **opts)
    except httpx.HTTPError as e:
        print(f"gangplane explain: cannot reach {server}: {e}", file=sys.stderr)
        return 1
    if r.status_code == 404:
        print(
            f"gangplane explain: no scheduling record for {kind_text.lower()}/{name} in namespace {ns} "
            "(not attempted yet, or the server runs with --no-scheduling-records)",
            file=sys.stderr,
        )
        return 1
    if r.status_code != 200:
        print(f"gangplane explain: {r.status_code}: {r.text.strip()}", file=sys.stderr)
        return 1
    record = r.json()
    if args.output == "json":
        print(json.dumps(record, indent=2))
    elif args.output == "yaml":
        print(yaml.safe_dump(record, sort_keys=False), end="")
    else:
        print(render(record), end="")
    return 0

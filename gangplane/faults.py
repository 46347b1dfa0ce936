"""``gangplane cluster fail|recover``: inject node failures into a running server, as a client.

It reads the kubeconfig (``--kubeconfig``, else ``$KUBECONFIG``, else ``./gangplane.kubeconfig``,
the file ``gangplane serve`` writes), picks nodes by name, rack or zone (the fleet's
``topology.kubernetes.io/rack`` / ``zone`` labels) and sets or removes gangplane's
``gangplane.dev/fault`` node annotation, which the node agent obeys (see
:mod:`controllers.nodeagent.node_annotations`). ``--mode deleted`` deletes the Node objects
instead (a machine that is gone for good). Everything goes through the API, so the same can be
done with ``kubectl annotate node … gangplane.dev/fault=unreachable``.
"""

from __future__ import annotations

import argparse
import base64
import os
import ssl
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

# Imported by ``gangplane``'s parser on every start: the node agent's and the fleet's modules
# (which hold the same names) are only imported when the command runs.
FAULT = "gangplane.dev/fault"
RACK_LABEL = "topology.kubernetes.io/rack"
ZONE_LABEL = "topology.kubernetes.io/zone"
DELETED = "deleted"
MODES = ("unreachable", "not-ready", DELETED)


def add_parser(sub: Any) -> None:
    """Register ``cluster fail`` and ``cluster recover`` on the top-level subparsers."""
    cluster = sub.add_parser(
        "cluster", help="make nodes of a running server fail or recover (gangplane cluster fail --rack R)"
    )
    csub = cluster.add_subparsers(dest="cluster_command", required=True)
    for name, text in (
        ("fail", "fail nodes: their kubelet stops (unreachable), reports NotReady, or the Node is deleted"),
        ("recover", "remove the injected fault: the kubelets post a healthy status again"),
    ):
        c = csub.add_parser(name, help=text)
        what = c.add_mutually_exclusive_group(required=True)
        what.add_argument("--node", action="append", metavar="NAME", help="a node (repeatable)")
        what.add_argument("--rack", metavar="RACK", help=f"every node labelled {RACK_LABEL}=RACK")
        what.add_argument("--zone", metavar="ZONE", help=f"every node labelled {ZONE_LABEL}=ZONE")
        if name == "fail":
            c.add_argument(
                "--mode",
                choices=MODES,
                default=MODES[0],
                help="unreachable (default): no heartbeat, Ready=Unknown after the grace period; "
                "not-ready: the kubelet posts Ready=False and still stops pods; deleted: delete the Node",
            )
        else:
            what.add_argument("--all", action="store_true", help="every node carrying a fault")
        c.add_argument("--kubeconfig", default="", help="default: $KUBECONFIG, else ./gangplane.kubeconfig")


class ClusterError(Exception):
    """What the command reports before exiting 1."""


def _kubeconfig(path: str) -> tuple[str, dict[str, str], ssl.SSLContext | bool]:
    import yaml

    file = Path(path or os.environ.get("KUBECONFIG", "").split(os.pathsep)[0] or "gangplane.kubeconfig")
    try:
        cfg = yaml.safe_load(file.read_text()) or {}
    except OSError as e:
        raise ClusterError(f"cannot read kubeconfig {file}: {e.strerror}") from None
    contexts = {c.get("name"): c.get("context") or {} for c in cfg.get("contexts") or []}
    ctx = contexts.get(cfg.get("current-context")) or {}
    clusters = {c.get("name"): c.get("cluster") or {} for c in cfg.get("clusters") or []}
    users = {u.get("name"): u.get("user") or {} for u in cfg.get("users") or []}
    cluster = clusters.get(ctx.get("cluster")) or {}
    user = users.get(ctx.get("user")) or {}
    server = str(cluster.get("server") or "")
    if not server:
        raise ClusterError(f"kubeconfig {file} names no server for its current context")
    headers = {"Authorization": f"Bearer {user['token']}"} if user.get("token") else {}
    verify: ssl.SSLContext | bool = True
    if cluster.get("certificate-authority-data"):
        verify = ssl.create_default_context(
            cadata=base64.b64decode(cluster["certificate-authority-data"]).decode()
        )
    elif cluster.get("insecure-skip-tls-verify"):
        verify = False
    return server, headers, verify


def _check(r: httpx.Response) -> Any:
    if r.status_code >= 400:
        try:
            msg = r.json().get("message") or r.text
        except ValueError:
            msg = r.text
        raise ClusterError(f"Error from server ({r.status_code}): {msg}")
    return r.json()


def _select(http: httpx.Client, args: argparse.Namespace) -> list[dict[str, Any]]:
    if args.node:
        return [_check(http.get(f"/api/v1/nodes/{n}")) for n in args.node]
    if args.rack or args.zone:
        selector = f"{RACK_LABEL}={args.rack}" if args.rack else f"{ZONE_LABEL}={args.zone}"
        nodes = _check(http.get("/api/v1/nodes", params={"labelSelector": selector}))["items"]
        if not nodes:
            raise ClusterError(f"no nodes match {selector}")
        return list(nodes)
    items = _check(http.get("/api/v1/nodes"))["items"]  # recover --all
    return [n for n in items if FAULT in ((n.get("metadata") or {}).get("annotations") or {})]


def run(args: argparse.Namespace) -> int:
    """``gangplane cluster …``; prints one line per node, like kubectl."""
    import httpx  # the server's command does not pay for the client's import

    try:
        server, headers, verify = _kubeconfig(args.kubeconfig)
        with httpx.Client(base_url=server, headers=headers, verify=verify, timeout=30.0) as http:
            for node in _select(http, args):
                name = node["metadata"]["name"]
                if args.cluster_command == "fail" and args.mode == DELETED:
                    _check(http.delete(f"/api/v1/nodes/{name}"))
                    print(f"node/{name} deleted")
                    continue
                value = args.mode if args.cluster_command == "fail" else None
                patch = {"metadata": {"annotations": {FAULT: value}}}
                _check(
                    http.patch(
                        f"/api/v1/nodes/{name}",
                        json=patch,
                        headers={"Content-Type": "application/merge-patch+json"},
                    )
                )
                print(f"node/{name} failed ({value})" if value else f"node/{name} recovered")
    except ClusterError as e:
        print(f"gangplane: {e}", file=sys.stderr)
        return 1
    except httpx.HTTPError as e:
        print(f"gangplane: cannot reach the server: {e}", file=sys.stderr)
        return 1
    return 0


__all__ = ["MODES", "add_parser", "run"]

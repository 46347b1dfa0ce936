"""``gangplane explain pod/NAME|podgroup/NAME``: print a scheduling record as tables.

Reads the ``SchedulingRecord`` (gangplane's API group ``scheduling.gangplane.dev``) through the
API with the kubeconfig kubectl would use (``--kubeconfig``, ``$KUBECONFIG``, else
``./gangplane.kubeconfig``): its server, bearer token and CA.
"""

from __future__ import annotations

import argparse
import json
import sys

import httpx
import yaml

from gangplane.kubeclient import read_kubeconfig
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


def main(args: argparse.Namespace) -> int:
    kind_text, _, name = args.target.partition("/")
    kind = KINDS.get(kind_text.lower())
    if kind is None or not name:
        print(f'gangplane explain: expected pod/NAME or podgroup/NAME, got "{args.target}"', file=sys.stderr)
        return 2
    try:
        server, opts, ctx_ns = read_kubeconfig(args.kubeconfig)
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

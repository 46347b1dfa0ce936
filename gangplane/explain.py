"""``gangplane explain pod/NAME|podgroup/NAME``: print a scheduling record as tables.

Reads the ``SchedulingRecord`` (gangplane's API group ``scheduling.gangplane.dev``) through the
API with the kubeconfig kubectl would use (``--kubeconfig``, ``$KUBECONFIG``, else
``./gangplane.kubeconfig``): its server, bearer token and CA.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import httpx
import yaml

from gangplane.kubeclient import read_kubeconfig
from scheduler.records.api import CONFIGZ_SECTION, SCHEDULINGRECORDS, record_name
from scheduler.records.explain import render
from scheduler.records.recorder import MAX_DEFER
from scheduler.records.summary import RecordLimits

#: where a subject lives, to tell "never attempted" from "no longer kept"
SUBJECT_PATHS = {
    "Pod": "/api/v1/namespaces/{ns}/pods/{name}",
    "PodGroup": "/apis/scheduling.k8s.io/v1beta1/namespaces/{ns}/podgroups/{name}",
}

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
            f"gangplane explain: {_why_absent(server, opts, kind, kind_text.lower(), name, ns)}",
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


def _why_absent(server: str, opts: dict[str, Any], kind: str, kind_text: str, name: str, ns: str) -> str:
    """Why there is no record: the subject was never attempted (or records are off), or the
    scheduler no longer keeps it (records are a bounded window of the newest subjects)."""
    plain = (
        f"no scheduling record for {kind_text}/{name} in namespace {ns} "
        "(not attempted yet, or the server runs with --no-scheduling-records)"
    )
    try:
        r = httpx.get(server + SUBJECT_PATHS[kind].format(ns=ns, name=name), **opts)
    except httpx.HTTPError:
        return plain
    if r.status_code != 200 or not _attempted(kind, r.json()):
        return plain
    limit = _max_subjects(server, opts)
    kept = (
        f"the newest {limit} subjects (--scheduling-records-max-subjects)"
        if limit is not None
        else "the newest subjects, as many as its --scheduling-records-max-subjects "
        f"({RecordLimits().subjects} by default)"
    )
    return (
        f"no SchedulingRecord for {kind_text}/{name} in namespace {ns}: the scheduler keeps {kept} "
        "and this one is no longer among them, "
        f"or its record is not written yet (a first-try success is written once no pod waits, "
        f"within {MAX_DEFER:g} s)"
    )


def _attempted(kind: str, obj: dict[str, Any]) -> bool:
    """Whether the scheduler has tried the subject: a pod is bound or has its ``PodScheduled``
    condition, a PodGroup has a condition the scheduler set."""
    status = obj.get("status") or {}
    conditions = status.get("conditions") or []
    if kind == "Pod":
        return bool((obj.get("spec") or {}).get("nodeName")) or any(
            c.get("type") == "PodScheduled" for c in conditions
        )
    return bool(conditions)


def _max_subjects(server: str, opts: dict[str, Any]) -> int | None:
    """The scheduler's window, as the server's ``/configz`` says (gangplane's section, served by a
    ``gangplane serve`` that runs the scheduler); None when it does not say (a scheduler in its
    own process serves no ``/configz``)."""
    try:
        r = httpx.get(server + "/configz", **opts)
        if r.status_code == 200:
            section = r.json().get(CONFIGZ_SECTION) or {}
            if isinstance(section.get("maxSubjects"), int):
                return int(section["maxSubjects"])
    except (httpx.HTTPError, ValueError, AttributeError):
        pass
    return None

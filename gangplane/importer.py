"""``gangplane import``: bring your own cluster's shape into a gangplane server, to schedule against it.

Sources: ``kubectl get … -o yaml`` dumps (``kind: List`` or documents, any number of files) or a
live cluster's kubeconfig (``--from-kubeconfig``, read-only: GETs only). What is imported, in
this order, into the gangplane server the target kubeconfig names:

* **Namespaces** (the pods' and the dump's; the four system ones already exist);
* **PriorityClasses** (``system-*`` already exist);
* **Nodes**: name, labels, taints, ``unschedulable``, capacity and allocatable. The node agent
  then simulates them (Ready, leases), as it does the fleet's;
* with ``--workloads``, **Deployments, ReplicaSets, StatefulSets and DaemonSets** (labels, spec),
  created before their dependents so that each ReplicaSet's and pod's owner references are
  re-linked to the new owners' UIDs (the controllers then adopt what is already there);
* **Pods bound to an imported node** and not finished, created bound where they run, trimmed to
  what scheduling reads: containers' names, images, resources and ports; node selector,
  affinity, tolerations, topology spread constraints, priority class, scheduler name, host
  network, labels. Volumes, env, service accounts, security contexts and (without
  ``--workloads``) owner references are left out, so nothing a pod needs (Secrets, ConfigMaps,
  volumes) has to exist.

Everything else (Secrets, ConfigMaps, Services, Events, workloads, …) is left out and counted.
Objects that exist already are left alone. A report lists what was imported and what was
skipped, and why; the exit code is 1 when some create failed.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml

from gangplane.kubeclient import read_kubeconfig

Obj = dict[str, Any]

#: kind -> (collection path of the target, namespaced)
PATHS = {
    "Namespace": ("/api/v1/namespaces", False),
    "PriorityClass": ("/apis/scheduling.k8s.io/v1/priorityclasses", False),
    "Node": ("/api/v1/nodes", False),
    "Deployment": ("/apis/apps/v1/namespaces/{ns}/deployments", True),
    "ReplicaSet": ("/apis/apps/v1/namespaces/{ns}/replicasets", True),
    "StatefulSet": ("/apis/apps/v1/namespaces/{ns}/statefulsets", True),
    "DaemonSet": ("/apis/apps/v1/namespaces/{ns}/daemonsets", True),
    "Pod": ("/api/v1/namespaces/{ns}/pods", True),
}
#: pods before the workloads that own them: a controller meeting its pods already there adopts
#: them instead of creating new ones; owners (Deployments) before their dependents (ReplicaSets)
ORDER = ("Namespace", "PriorityClass", "Node", "Pod", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet")
#: how long the importer lets the target's controllers adopt the imported dependents before it
#: writes the owner references itself
ADOPTION_WAIT = 10.0
WORKLOADS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet")
#: where a dependent keeps the owner references it had, until the owners exist in the target
OWNERS = "__owners"
SYSTEM_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
#: a live cluster's collections, read with GET (paged)
LIVE: tuple[tuple[str, str, dict[str, str]], ...] = (
    ("Namespace", "/api/v1/namespaces", {}),
    ("PriorityClass", "/apis/scheduling.k8s.io/v1/priorityclasses", {}),
    ("Node", "/api/v1/nodes", {}),
    ("Pod", "/api/v1/pods", {"fieldSelector": "status.phase!=Succeeded,status.phase!=Failed"}),
)
_CONTAINER_KEYS = ("name", "image", "resources", "ports", "restartPolicy")
_POD_SPEC_KEYS = (
    "nodeName",
    "nodeSelector",
    "affinity",
    "tolerations",
    "topologySpreadConstraints",
    "priorityClassName",
    "schedulerName",
    "hostNetwork",
    "restartPolicy",
    "terminationGracePeriodSeconds",
)


@dataclass
class Plan:
    """What to create, in order, and what was left out (kind -> reason -> names)."""

    create: list[Obj] = field(default_factory=list)
    skipped: dict[str, dict[str, list[str]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list))
    )

    def skip(self, obj: Obj, reason: str) -> None:
        self.skipped[obj.get("kind") or "?"][reason].append(_ref(obj))


def _ref(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace")
    return f"{ns}/{meta.get('name', '')}" if ns else meta.get("name", "")


def read_dumps(paths: Iterable[str]) -> list[Obj]:
    """Every object of the YAML/JSON files; ``kind: List`` (and ``*List``) unwrapped."""
    out: list[Obj] = []
    for p in paths:
        for doc in yaml.safe_load_all(Path(p).read_text()):
            out.extend(_unwrap(doc))
    return out


def _unwrap(doc: Any) -> list[Obj]:
    if not isinstance(doc, dict):
        return []
    if isinstance(doc.get("items"), list) and str(doc.get("kind", "")).endswith("List"):
        kind = str(doc.get("kind", ""))[: -len("List")]
        out = []
        for item in doc["items"]:
            if isinstance(item, dict):
                if not item.get("kind") and kind:  # a typed list's items carry no kind
                    item = {**item, "kind": kind}
                out.extend(_unwrap(item))
        return out
    return [doc]


def read_live(kubeconfig: str) -> list[Obj]:
    """Namespaces, PriorityClasses, Nodes and unfinished Pods of a live cluster (GET only)."""
    server, opts, _ = read_kubeconfig(kubeconfig)
    out: list[Obj] = []
    with httpx.Client(**opts) as client:
        for kind, path, params in LIVE:
            cont = ""
            while True:
                q = {**params, "limit": "500", **({"continue": cont} if cont else {})}
                r = client.get(server + path, params=q)
                r.raise_for_status()
                body = r.json()
                out.extend({**i, "kind": kind} for i in body.get("items") or [])
                cont = (body.get("metadata") or {}).get("continue") or ""
                if not cont:
                    break
    return out


def plan_import(objects: list[Obj], workloads: bool = False) -> Plan:
    """Decide, per object, to import it (cleaned) or why not; ``workloads`` imports Deployments,
    ReplicaSets, StatefulSets and DaemonSets too, their pods' owner references re-linked."""
    plan = Plan()
    by_kind: dict[str, list[Obj]] = defaultdict(list)
    for o in objects:
        kind = o.get("kind") or ""
        if kind in WORKLOADS and not workloads:
            plan.skip(o, "a workload (--workloads imports it)")
        elif kind in PATHS:
            by_kind[kind].append(o)
        elif kind == "Secret":
            plan.skip(o, "secrets are never imported")
        else:
            plan.skip(o, "not needed for scheduling")
    nodes = {(n.get("metadata") or {}).get("name") for n in by_kind["Node"]}
    namespaces: dict[str, Obj] = {}
    for ns in by_kind["Namespace"]:
        namespaces[(ns.get("metadata") or {}).get("name", "")] = ns
    pods: list[Obj] = []
    for p in by_kind["Pod"]:
        spec, status = p.get("spec") or {}, p.get("status") or {}
        if not spec.get("nodeName"):
            plan.skip(p, "not bound to a node")
        elif status.get("phase") in ("Succeeded", "Failed"):
            plan.skip(p, "finished")
        elif spec["nodeName"] not in nodes:
            plan.skip(p, "its node is not imported")
        elif (p.get("metadata") or {}).get("deletionTimestamp"):
            plan.skip(p, "being deleted")
        else:
            pods.append(p)
    for p in pods + [w for k in WORKLOADS for w in by_kind[k]]:
        ns_name = (p.get("metadata") or {}).get("namespace") or "default"
        namespaces.setdefault(ns_name, {"kind": "Namespace", "metadata": {"name": ns_name}})
    for name, ns in sorted(namespaces.items()):
        if name in SYSTEM_NAMESPACES:
            plan.skip(ns, "exists in every cluster")
        else:
            plan.create.append(_namespace(ns))
    for pc in by_kind["PriorityClass"]:
        if ((pc.get("metadata") or {}).get("name") or "").startswith("system-"):
            plan.skip(pc, "exists in every cluster")
        else:
            plan.create.append(_priority_class(pc))
    plan.create += [_node(n) for n in by_kind["Node"]]
    plan.create += [_pod(p, keep_owners=workloads) for p in pods]
    for kind in WORKLOADS:
        plan.create += [_workload(w) for w in by_kind[kind]]
    return plan


def _meta(o: Obj, *, namespaced: bool = False, labels: bool = True) -> Obj:
    meta = o.get("metadata") or {}
    out: Obj = {"name": meta.get("name", "")}
    if namespaced:
        out["namespace"] = meta.get("namespace") or "default"
    if labels and meta.get("labels"):
        out["labels"] = dict(meta["labels"])
    return out


def _namespace(o: Obj) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(o)}


def _priority_class(o: Obj) -> Obj:
    out: Obj = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": _meta(o)}
    for k in ("value", "globalDefault", "preemptionPolicy", "description"):
        if k in o:
            out[k] = o[k]
    return out


def _node(o: Obj) -> Obj:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    meta = _meta(o)
    annotations = {
        k: v
        for k, v in ((o.get("metadata") or {}).get("annotations") or {}).items()
        if k.startswith("gangplane.dev/")
    }
    if annotations:
        meta["annotations"] = annotations
    out_spec: Obj = {}
    if spec.get("taints"):
        out_spec["taints"] = [{k: t[k] for k in ("key", "value", "effect") if k in t} for t in spec["taints"]]
    if spec.get("unschedulable"):
        out_spec["unschedulable"] = True
    out_status: Obj = {}
    for k in ("capacity", "allocatable"):
        if status.get(k):
            out_status[k] = dict(status[k])
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": out_spec, "status": out_status}


def _container(c: Obj) -> Obj:
    out = {k: c[k] for k in _CONTAINER_KEYS if k in c}
    if "ports" in out:
        out["ports"] = [
            {k: p[k] for k in ("containerPort", "hostPort", "protocol", "hostIP", "name") if k in p}
            for p in out["ports"]
        ]
    return out


def _owner_refs(o: Obj) -> list[Obj]:
    return [dict(r) for r in (o.get("metadata") or {}).get("ownerReferences") or []]


def _workload(o: Obj) -> Obj:
    """A workload as its owner would create it: labels, annotations (``kubectl.kubernetes.io/``
    ones dropped) and spec; status and server-set metadata left out; owner references re-linked."""
    meta = _meta(o, namespaced=True)
    annotations = {
        k: v
        for k, v in ((o.get("metadata") or {}).get("annotations") or {}).items()
        if not k.startswith("kubectl.kubernetes.io/")
    }
    if annotations:
        meta["annotations"] = annotations
    out: Obj = {
        "apiVersion": "apps/v1",
        "kind": o["kind"],
        "metadata": meta,
        "spec": dict(o.get("spec") or {}),
    }
    out[OWNERS] = _owner_refs(o)
    return out


def _pod(o: Obj, keep_owners: bool = False) -> Obj:
    spec = o.get("spec") or {}
    meta = _meta(o, namespaced=True)
    annotations = {
        k: v
        for k, v in ((o.get("metadata") or {}).get("annotations") or {}).items()
        if k.startswith("gangplane.dev/")
    }
    if annotations:
        meta["annotations"] = annotations
    out_spec: Obj = {k: spec[k] for k in _POD_SPEC_KEYS if k in spec}
    out_spec["containers"] = [_container(c) for c in spec.get("containers") or []]
    if spec.get("initContainers"):
        out_spec["initContainers"] = [_container(c) for c in spec["initContainers"]]
    out_spec["automountServiceAccountToken"] = False
    out: Obj = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": out_spec}
    if keep_owners:
        out[OWNERS] = _owner_refs(o)
    return out


@dataclass
class Report:
    imported: Counter[str] = field(default_factory=Counter)
    #: owner references dropped because their owner was not imported
    unlinked: int = 0
    #: dependents the target's controllers adopted, and those the importer re-linked itself
    adopted: int = 0
    relinked: int = 0
    exists: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    failed: list[tuple[str, str]] = field(default_factory=list)


def apply_plan(plan: Plan, kubeconfig: str) -> Report:
    """Create the planned objects in the target server, in order; existing ones are left alone.

    Owner references are re-linked after the owners exist: dependents are created without them
    (the target has no such UIDs yet), the target's controllers adopt them by selector as they
    would any orphan, and whatever is still orphaned after :data:`ADOPTION_WAIT` gets its
    reference written by the importer, pointing at the owner's new UID.
    """
    server, opts, _ = read_kubeconfig(kubeconfig)
    report = Report()
    #: (kind, namespace, name) -> the UID the target gave the imported owner
    uids: dict[tuple[str, str, str], str] = {}
    #: (collection path, name, namespace, the owner references it had in the source)
    dependents: list[tuple[str, str, str, list[Obj]]] = []
    with httpx.Client(**opts) as client:
        for planned in plan.create:
            obj = dict(planned)
            owners = obj.pop(OWNERS, None) or []
            kind = obj["kind"]
            ns = obj["metadata"].get("namespace", "")
            path, namespaced = PATHS[kind]
            if namespaced:
                path = path.format(ns=ns)
            name = obj["metadata"]["name"]
            r = client.post(server + path, json=obj)
            if r.status_code in (200, 201):
                report.imported[kind] += 1
                uids[(kind, ns, name)] = (r.json().get("metadata") or {}).get("uid", "")
            elif r.status_code == 409:
                report.exists[kind].append(_ref(obj))
                got = client.get(f"{server}{path}/{name}")
                if got.status_code == 200:  # e.g. the ReplicaSet a Deployment controller made at once
                    uids[(kind, ns, name)] = (got.json().get("metadata") or {}).get("uid", "")
            else:
                try:
                    msg = r.json().get("message") or r.text
                except ValueError:
                    msg = r.text
                report.failed.append((f"{kind} {_ref(obj)}", f"{r.status_code}: {msg}"))
                continue
            if owners:
                dependents.append((path, name, ns, owners))
        if dependents:
            _relink(client, server, dependents, uids, report)
    return report


def _relink(
    client: httpx.Client,
    server: str,
    dependents: list[tuple[str, str, str, list[Obj]]],
    uids: dict[tuple[str, str, str], str],
    report: Report,
) -> None:
    """Point each dependent at its owners' new UIDs: adopted by a controller, or patched here."""
    wanted: dict[tuple[str, str], list[Obj]] = {}
    for path, name, ns, owners in dependents:
        refs = []
        for ref in owners:
            uid = uids.get((ref.get("kind", ""), ns, ref.get("name", "")))
            if uid:
                refs.append({**ref, "uid": uid})
            else:
                report.unlinked += 1
        if refs:
            wanted[(path, name)] = refs
    deadline = time.monotonic() + ADOPTION_WAIT
    pending = dict(wanted)
    while pending and time.monotonic() < deadline:
        for key in list(pending):
            path, name = key
            got = client.get(f"{server}{path}/{name}")
            if got.status_code != 200:
                continue
            have = {ref.get("uid") for ref in (got.json().get("metadata") or {}).get("ownerReferences") or []}
            if all(ref["uid"] in have for ref in pending[key]):
                report.adopted += 1
                del pending[key]
        if pending:
            time.sleep(0.2)
    for (path, name), refs in pending.items():
        r = client.patch(
            f"{server}{path}/{name}",
            json={"metadata": {"ownerReferences": refs}},
            headers={"Content-Type": "application/merge-patch+json"},
        )
        if r.status_code == 200:
            report.relinked += 1
        else:
            report.failed.append((f"owner references of {path}/{name}", f"{r.status_code}: {r.text.strip()}"))


def render_report(source: str, plan: Plan, report: Report) -> str:
    lines = [f"gangplane import from {source}:"]
    kinds = sorted(set(report.imported) | set(plan.skipped) | set(report.exists), key=_kind_order)
    rows = []
    for kind in kinds:
        why = [f"{len(v)} {r}" for r, v in sorted(plan.skipped.get(kind, {}).items())]
        if report.exists.get(kind):
            why.append(f"{len(report.exists[kind])} already there")
        rows.append([kind, str(report.imported.get(kind, 0)), "; ".join(why) or "-"])
    widths = [max(len(r[i]) for r in [["KIND", "IMPORTED", "SKIPPED"], *rows]) for i in range(3)]
    for r in [["KIND", "IMPORTED", "SKIPPED"], *rows]:
        lines.append("  " + "   ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    if report.adopted or report.relinked:
        lines.append(
            f"  owner references re-linked: {report.adopted} adopted by the controllers, "
            f"{report.relinked} written by the importer"
        )
    if report.unlinked:
        lines.append(f"  {report.unlinked} owner reference(s) dropped: their owner was not imported")
    for what, msg in report.failed:
        lines.append(f"  failed: {what}: {msg}")
    return "\n".join(lines) + "\n"


def _kind_order(kind: str) -> tuple[int, str]:
    return (ORDER.index(kind) if kind in ORDER else len(ORDER), kind)


def main(args: argparse.Namespace) -> int:
    if not args.files and not args.from_kubeconfig:
        print(
            "gangplane import: give dump files (kubectl get ... -o yaml) or --from-kubeconfig",
            file=sys.stderr,
        )
        return 2
    try:
        objects = read_dumps(args.files) if args.files else []
        if args.from_kubeconfig:
            objects += read_live(args.from_kubeconfig)
    except (OSError, yaml.YAMLError, httpx.HTTPError) as e:
        print(f"gangplane import: cannot read the source: {e}", file=sys.stderr)
        return 2
    plan = plan_import(objects, workloads=args.workloads)
    source = ", ".join(
        [*args.files, *([f"cluster of {args.from_kubeconfig}"] if args.from_kubeconfig else [])]
    )
    if args.dry_run:
        report = Report()
        for o in plan.create:
            report.imported[o["kind"]] += 1
        print(render_report(source + " (dry run: nothing created)", plan, report), end="")
        return 0
    try:
        report = apply_plan(plan, args.kubeconfig)
    except (OSError, yaml.YAMLError, httpx.HTTPError) as e:
        print(f"gangplane import: cannot reach the target server: {e}", file=sys.stderr)
        return 1
    print(render_report(source, plan, report), end="")
    return 1 if report.failed else 0

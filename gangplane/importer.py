"""``gangplane import``: bring your own cluster's shape into a gangplane server, to schedule against it.

Sources: ``kubectl get … -o yaml`` dumps (``kind: List`` or documents, any number of files) or a
live cluster's kubeconfig (``--from-kubeconfig``, read-only: GETs only). What is imported, in
this order, into the gangplane server the target kubeconfig names:

* **Namespaces** (the pods' and the dump's; the four system ones already exist);
* **PriorityClasses** (``system-*`` already exist);
* **Nodes**: name, labels, taints, ``unschedulable``, capacity and allocatable. The node agent
  then simulates them (Ready, leases), as it does the fleet's;
* with ``--workloads``, **Deployments, ReplicaSets, StatefulSets, DaemonSets, CronJobs and
  unfinished Jobs** (labels, spec), created before their dependents so that each ReplicaSet's,
  Job's and pod's owner references are re-linked to the new owners' UIDs (the controllers then
  adopt what is already there). A Job keeps the selector kube generated for it in the source
  only when it has pods to take over (see :func:`_job`);
* **Pods bound to an imported node** and not finished, created bound where they run, and
  **pending pods** (unbound, not finished, not being deleted), created unbound so that the
  target's scheduler places them; both trimmed to what scheduling reads: containers' names,
  images, resources and ports; node selector, affinity, tolerations, topology spread
  constraints, scheduling gates, priority class, scheduler name, host network, labels. Volumes,
  env, service accounts, security contexts and (without ``--workloads``) owner references are
  left out, so nothing a pod needs (Secrets, ConfigMaps, volumes) has to exist. With
  ``--workloads``, a pending pod whose controller is imported too is left to that controller,
  which creates its like from the template (importing it as well would make one pod too many
  until the controller deleted the surplus).

Everything else (Secrets, ConfigMaps, Services, Events, workloads, …) is left out and counted.
Objects that exist already are left alone. A report lists what was imported and what was
skipped, and why; the exit code is 1 when some create failed.
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson
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
    "CronJob": ("/apis/batch/v1/namespaces/{ns}/cronjobs", True),
    "Job": ("/apis/batch/v1/namespaces/{ns}/jobs", True),
    "Pod": ("/api/v1/namespaces/{ns}/pods", True),
}
#: pods before the workloads that own them: a controller meeting its pods already there adopts
#: them instead of creating new ones; owners (Deployments) before their dependents (ReplicaSets)
ORDER = (
    "Namespace",
    "PriorityClass",
    "Node",
    "Pod",
    "Deployment",
    "ReplicaSet",
    "StatefulSet",
    "DaemonSet",
    "CronJob",
    "Job",
)
#: how long the importer lets the target's controllers adopt the imported dependents before it
#: writes the owner references itself
ADOPTION_WAIT = 10.0
WORKLOADS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "CronJob", "Job")
API_VERSIONS = {"CronJob": "batch/v1", "Job": "batch/v1"}
#: owners whose controller adopts orphans matching its selector; a CronJob has no selector and
#: adopts nothing (kube's neither), so the importer links its Jobs at once
ADOPTING = frozenset({"ReplicaSet", "StatefulSet", "DaemonSet", "Deployment", "Job"})
#: where a dependent keeps the owner references it had, until the owners exist in the target
OWNERS = "__owners"
#: finalizers a dependent had, written back once it is linked to its owner (see _pod)
FINALIZERS = "__finalizers"
SYSTEM_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
#: a live cluster's collections, read with GET (paged)
LIVE: tuple[tuple[str, str, dict[str, str]], ...] = (
    ("Namespace", "/api/v1/namespaces", {}),
    ("PriorityClass", "/apis/scheduling.k8s.io/v1/priorityclasses", {}),
    ("Node", "/api/v1/nodes", {}),
    ("Pod", "/api/v1/pods", {"fieldSelector": "status.phase!=Succeeded,status.phase!=Failed"}),
)
#: and, for ``--workloads``, its workloads
LIVE_WORKLOADS: tuple[tuple[str, str, dict[str, str]], ...] = (
    ("Deployment", "/apis/apps/v1/deployments", {}),
    ("ReplicaSet", "/apis/apps/v1/replicasets", {}),
    ("StatefulSet", "/apis/apps/v1/statefulsets", {}),
    ("DaemonSet", "/apis/apps/v1/daemonsets", {}),
    ("CronJob", "/apis/batch/v1/cronjobs", {}),
    ("Job", "/apis/batch/v1/jobs", {}),
)
#: the labels kube's Job strategy generates from the Job's name and UID (``generateSelector``)
JOB_UID_LABELS = ("batch.kubernetes.io/controller-uid", "controller-uid")
JOB_NAME_LABELS = ("batch.kubernetes.io/job-name", "job-name")
#: pod annotations/finalizers a controller reads back (the rest are dropped)
JOB_POD_ANNOTATIONS = ("batch.kubernetes.io/job-completion-index",)
JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
_CONTAINER_KEYS = ("name", "image", "resources", "ports", "restartPolicy")
_POD_SPEC_KEYS = (
    "nodeName",
    "nodeSelector",
    "affinity",
    "tolerations",
    "topologySpreadConstraints",
    "schedulingGates",
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
    #: the pods among ``create`` that are pending: created unbound, for the scheduler to place
    pending: list[str] = field(default_factory=list)
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


def read_live(kubeconfig: str, workloads: bool = False) -> list[Obj]:
    """Namespaces, PriorityClasses, Nodes and unfinished Pods of a live cluster (GET only), and
    its workloads when ``workloads``."""
    server, opts, _ = read_kubeconfig(kubeconfig)
    out: list[Obj] = []
    with httpx.Client(**opts) as client:
        for kind, path, params in LIVE + (LIVE_WORKLOADS if workloads else ()):
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
    ReplicaSets, StatefulSets, DaemonSets, CronJobs and unfinished Jobs too, their dependents'
    owner references re-linked."""
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
    owners: list[Obj] = []
    for kind in WORKLOADS:
        for w in by_kind[kind]:
            if kind == "Job" and _job_finished(w):
                plan.skip(w, "finished (created anew, it would run again)")
            else:
                owners.append(w)
    imported_owners = {_key(w) for w in owners}
    nodes = {(n.get("metadata") or {}).get("name") for n in by_kind["Node"]}
    namespaces: dict[str, Obj] = {}
    for ns in by_kind["Namespace"]:
        namespaces[(ns.get("metadata") or {}).get("name", "")] = ns
    pods: list[Obj] = []
    for p in by_kind["Pod"]:
        spec, status = p.get("spec") or {}, p.get("status") or {}
        owner = _controller_key(p)
        if status.get("phase") in ("Succeeded", "Failed"):
            plan.skip(p, "finished")
        elif (p.get("metadata") or {}).get("deletionTimestamp"):
            plan.skip(p, "being deleted")
        elif not spec.get("nodeName"):
            if workloads and owner in imported_owners:
                plan.skip(p, f"pending, left to its imported {owner[0]}'s controller")
            else:
                pods.append(p)
                plan.pending.append(_ref(p))
        elif spec["nodeName"] not in nodes:
            plan.skip(p, "its node is not imported")
        else:
            pods.append(p)
    for p in pods + owners:
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
    #: Jobs whose running pods are imported too: they take them over (see _job)
    taking_over = {k for k in map(_controller_key, pods) if k and k[0] == "Job"} & imported_owners
    plan.create += [
        _pod(p, keep_owners=workloads, job_owned=workloads and _controller_key(p) in taking_over)
        for p in pods
    ]
    for w in owners:
        plan.create.append(_job(w, _key(w) in taking_over) if w["kind"] == "Job" else _workload(w))
    return plan


def _key(o: Obj) -> tuple[str, str, str]:
    meta = o.get("metadata") or {}
    return (o.get("kind") or "", meta.get("namespace") or "default", meta.get("name") or "")


def _controller_key(o: Obj) -> tuple[str, str, str] | None:
    """(kind, namespace, name) of the object's controller (the owner reference marked so)."""
    meta = o.get("metadata") or {}
    for ref in meta.get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller") is True:
            return (ref.get("kind") or "", meta.get("namespace") or "default", ref.get("name") or "")
    return None


def _job_finished(job: Obj) -> bool:
    """A Job with a true ``Complete`` or ``Failed`` condition (as kube's ``IsJobFinished``)."""
    conditions = (job.get("status") or {}).get("conditions") or []
    return any(
        isinstance(c, dict) and c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
        for c in conditions
    )


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
        "apiVersion": API_VERSIONS.get(o["kind"], "apps/v1"),
        "kind": o["kind"],
        "metadata": meta,
        "spec": copy.deepcopy(o.get("spec") or {}),
    }
    out[OWNERS] = _owner_refs(o)
    return out


def _job(o: Obj, takes_over_pods: bool) -> Obj:
    """A Job whose selector the target's API server accepts and whose controller neither
    duplicates nor adopts the wrong pods.

    kube generates a Job's selector (``batch.kubernetes.io/controller-uid=<its UID>``) and the
    template's ``controller-uid``/``job-name`` labels at create, and rejects a Job whose labels
    name another UID unless ``manualSelector: true``. So:

    * a Job that selects its pods itself (``manualSelector: true``) is imported as it is;
    * a Job whose running pods are imported keeps the source's generated selector and template
      labels and is created with ``manualSelector: true``: kube's documented way of handing a
      Job's running pods to a new Job ("Specifying your own Pod selector"). The pods, created
      first with their labels, are adopted by the new Job, which counts them as active and
      creates only what is missing, and pods it creates later carry the same labels;
    * any other Job drops the generated selector and labels, and the target generates them from
      the new Job's UID, as it would for a Job created there.
    """
    out = _workload(o)
    spec = out["spec"]
    if spec.get("manualSelector") is True:
        return out
    if takes_over_pods:
        spec["manualSelector"] = True
        return out
    spec.pop("selector", None)
    template_meta = (spec.get("template") or {}).get("metadata") or {}
    for labels in (template_meta.get("labels"), out["metadata"].get("labels")):
        if isinstance(labels, dict):
            for key in JOB_UID_LABELS + JOB_NAME_LABELS:
                labels.pop(key, None)
    if not out["metadata"].get("labels"):
        out["metadata"].pop("labels", None)  # the server copies the template's, as kube defaults
    return out


def _pod(o: Obj, keep_owners: bool = False, job_owned: bool = False) -> Obj:
    """A pod trimmed to what scheduling reads; ``job_owned`` (an imported Job takes it over)
    keeps what the Job controller reads back: the completion index, and the tracking finalizer
    that lets it count the pod when it finishes. The finalizer is written only once the Job owns
    the pod: on an orphan, the Job controller removes it at once (kube's ``syncOrphanPod``)."""
    spec = o.get("spec") or {}
    src_meta = o.get("metadata") or {}
    meta = _meta(o, namespaced=True)
    annotations = {
        k: v
        for k, v in (src_meta.get("annotations") or {}).items()
        if k.startswith("gangplane.dev/") or (job_owned and k in JOB_POD_ANNOTATIONS)
    }
    if annotations:
        meta["annotations"] = annotations
    if job_owned and JOB_TRACKING_FINALIZER in (src_meta.get("finalizers") or []):
        out_finalizers = [JOB_TRACKING_FINALIZER]
    else:
        out_finalizers = []
    out_spec: Obj = {k: spec[k] for k in _POD_SPEC_KEYS if k in spec}
    if not out_spec.get("nodeName"):
        out_spec.pop("nodeName", None)  # pending: the target's scheduler binds it
    out_spec["containers"] = [_container(c) for c in spec.get("containers") or []]
    if spec.get("initContainers"):
        out_spec["initContainers"] = [_container(c) for c in spec["initContainers"]]
    out_spec["automountServiceAccountToken"] = False
    out: Obj = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": out_spec}
    if keep_owners:
        out[OWNERS] = _owner_refs(o)
    if out_finalizers:
        out[FINALIZERS] = out_finalizers
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
    #: (collection path, name) -> finalizers to write once the dependent is linked
    restore: dict[tuple[str, str], list[str]] = {}
    with httpx.Client(**opts) as client:
        for planned in plan.create:
            obj = dict(planned)
            owners = obj.pop(OWNERS, None) or []
            finalizers = obj.pop(FINALIZERS, None) or []
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
            if finalizers:
                restore[(path, name)] = finalizers
        if dependents:
            linked = _relink(client, server, dependents, uids, report)
            for key in linked & restore.keys():
                _add_finalizers(client, server, key, restore[key], report)
    return report


def _relink(
    client: httpx.Client,
    server: str,
    dependents: list[tuple[str, str, str, list[Obj]]],
    uids: dict[tuple[str, str, str], str],
    report: Report,
) -> set[tuple[str, str]]:
    """Point each dependent at its owners' new UIDs: adopted by a controller, or patched here.
    Returns the (collection path, name) of those now linked."""
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
    # a dependent of an owner that adopts nothing (a CronJob's Job) is linked at once
    pending = {k: refs for k, refs in wanted.items() if all(r.get("kind") in ADOPTING for r in refs)}
    linked: set[tuple[str, str]] = set()
    for key, refs in wanted.items():
        if key not in pending and _write_owners(client, server, key, refs, report):
            linked.add(key)
    deadline = time.monotonic() + ADOPTION_WAIT
    for key in _await_adoption(client, server, pending, deadline):
        report.adopted += 1
        linked.add(key)
        del pending[key]
    for key, refs in pending.items():
        if _write_owners(client, server, key, refs, report):
            linked.add(key)
    return linked


def _adopted(obj: Obj, refs: list[Obj]) -> bool:
    have = {ref.get("uid") for ref in (obj.get("metadata") or {}).get("ownerReferences") or []}
    return all(ref["uid"] in have for ref in refs)


def _await_adoption(
    client: httpx.Client, server: str, pending: dict[tuple[str, str], list[Obj]], deadline: float
) -> list[tuple[str, str]]:
    """The pending dependents a controller adopted before ``deadline``, as a client-go user
    would wait: per collection, one LIST, then a WATCH from its resourceVersion that ends when
    the last of that collection's dependents carries its new owners (or at the deadline).

    A collection's dependents are adopted by controllers running in the target meanwhile, so
    the collections are awaited one after another against the one deadline: adoption of the
    later ones goes on while the earlier ones are watched.
    """
    by_path: dict[str, dict[str, list[Obj]]] = defaultdict(dict)
    for (path, name), refs in pending.items():
        by_path[path][name] = refs
    adopted: list[tuple[str, str]] = []
    for path, names in by_path.items():
        got = client.get(f"{server}{path}")
        if got.status_code != 200:
            continue
        listing = got.json()
        for item in listing.get("items") or []:
            name = (item.get("metadata") or {}).get("name", "")
            if name in names and _adopted(item, names[name]):
                adopted.append((path, name))
                del names[name]
        rv = (listing.get("metadata") or {}).get("resourceVersion", "")
        left = deadline - time.monotonic()
        if not names or left <= 0:
            continue
        params = {"watch": "1", "resourceVersion": rv, "timeoutSeconds": str(max(1, int(left + 0.999)))}
        try:
            with client.stream("GET", f"{server}{path}", params=params, timeout=left + 5) as stream:
                for line in stream.iter_lines():
                    if not line:
                        continue
                    event = orjson.loads(line)
                    obj = event.get("object") or {}
                    name = (obj.get("metadata") or {}).get("name", "")
                    adopted_now = name in names and _adopted(obj, names[name])
                    if event.get("type") in ("ADDED", "MODIFIED") and adopted_now:
                        adopted.append((path, name))
                        del names[name]
                    if not names or time.monotonic() >= deadline:
                        break
        except httpx.TimeoutException:
            pass  # the deadline passed with no event: the rest are written by the importer
    return adopted


def _write_owners(
    client: httpx.Client, server: str, key: tuple[str, str], refs: list[Obj], report: Report
) -> bool:
    path, name = key
    r = client.patch(
        f"{server}{path}/{name}",
        json={"metadata": {"ownerReferences": refs}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    if r.status_code == 200:
        report.relinked += 1
        return True
    report.failed.append((f"owner references of {path}/{name}", f"{r.status_code}: {r.text.strip()}"))
    return False


def _add_finalizers(
    client: httpx.Client, server: str, key: tuple[str, str], finalizers: list[str], report: Report
) -> None:
    """Add ``finalizers`` to those the dependent has (a strategic merge: kube merges the list)."""
    path, name = key
    r = client.patch(
        f"{server}{path}/{name}",
        json={"metadata": {"finalizers": finalizers}},
        headers={"Content-Type": "application/strategic-merge-patch+json"},
    )
    if r.status_code != 200:
        report.failed.append((f"finalizers of {path}/{name}", f"{r.status_code}: {r.text.strip()}"))


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
    if plan.pending:
        lines.append(
            f"  {len(plan.pending)} of the pods are pending: created unbound, for the scheduler to place"
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
            objects += read_live(args.from_kubeconfig, workloads=args.workloads)
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

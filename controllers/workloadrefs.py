"""Pure helpers shared by the controllers that compile a Workload and a PodGroup for their pods.

The StatefulSet integration (KEP-6277, :mod:`controllers.statefulset.workload`) and the Job
integration (KEP-5547, :mod:`controllers.job.workload`) discover their objects the same way and
write the same few fields, so those decisions live here once:

* discovery *by reference*, never by recomputing a name: a Workload through its
  ``spec.controllerRef`` (``namespace/group/kind/name``), a PodGroup through
  ``spec.workloadRef.workloadName``;
* the Workload's PodGroupTemplates (and whether a leaf integration supports them), the gang ``minCount`` of a template or PodGroup, and the
  patches that change only that ``minCount`` (Workload first, then PodGroup);
* the pod decoration: ``spec.schedulingGroup.podGroupName`` plus a non-controller ownerReference
  to the PodGroup.

No I/O and no caches: each function decides from object contents alone.
"""

from __future__ import annotations

from apiserver.api.types import Obj
from apiserver.meta import name_of, namespace_of, uid_of
from apiserver.workloadbuilder.builder import POD_GROUP_API_VERSION, WORKLOAD_API_VERSION, parse_group

#: informer index names
WORKLOAD_BY_CONTROLLER = "workload-by-controller-ref"
POD_GROUP_BY_WORKLOAD = "podgroup-by-workload"

#: KEP-6089 downward mapping: the parent's PodGroupTemplate a child instantiates
GROUP_TEMPLATE_NAME_ANNOTATION = "scheduling.k8s.io/group-template-name"
#: KEP-6089 downward mapping: the parent CompositePodGroup the PodGroup attaches to (decisions.md spelling)
PARENT_COMPOSITE_POD_GROUP_ANNOTATION = "scheduling.k8s.io/parent-compositepodgroup"


def reference_key(namespace: str, group: str, kind: str, name: str) -> str:
    """``namespace/group/kind/name``: what a Workload's ``spec.controllerRef`` points at."""
    return f"{namespace}/{group}/{kind}/{name}"


def workload_controller_index(wl: Obj) -> list[str]:
    """Index a Workload by its ``spec.controllerRef`` (the only discovery handle)."""
    ref = (wl.get("spec") or {}).get("controllerRef")
    if not isinstance(ref, dict) or not ref.get("kind") or not ref.get("name"):
        return []
    return [
        reference_key(namespace_of(wl), str(ref.get("apiGroup") or ""), str(ref["kind"]), str(ref["name"]))
    ]


def pod_group_workload_index(pg: Obj) -> list[str]:
    """Index a PodGroup by ``namespace/spec.workloadRef.workloadName``."""
    ref = (pg.get("spec") or {}).get("workloadRef")
    if not isinstance(ref, dict) or not ref.get("workloadName"):
        return []
    return [f"{namespace_of(pg)}/{ref['workloadName']}"]


def owner_group(ref: Obj) -> str:
    """The API group of an ownerReference's ``apiVersion`` (``""`` when malformed)."""
    try:
        return parse_group(str(ref.get("apiVersion") or ""))
    except ValueError:
        return ""


def workload_owner_ref(wl: Obj, *, block_owner_deletion: bool) -> Obj:
    """PodGroup → Workload: a non-controller reference (the StatefulSet KEP blocks deletion, Jobs do not)."""
    ref: Obj = {
        "apiVersion": WORKLOAD_API_VERSION,
        "kind": "Workload",
        "name": name_of(wl),
        "uid": uid_of(wl),
    }
    if block_owner_deletion:
        ref["blockOwnerDeletion"] = True
    return ref


def pod_group_owner_ref(pg: Obj) -> Obj:
    """Pod → PodGroup: non-controller, ``blockOwnerDeletion`` unset (decisions.md)."""
    return {"apiVersion": POD_GROUP_API_VERSION, "kind": "PodGroup", "name": name_of(pg), "uid": uid_of(pg)}


def pod_group_templates(wl: Obj) -> list[Obj]:
    """The Workload's top-level PodGroupTemplates (a leaf integration needs exactly one)."""
    return [t for t in (wl.get("spec") or {}).get("podGroupTemplates") or [] if isinstance(t, dict)]


def unsupported_structure(wl: Obj) -> str | None:
    """Why a leaf integration cannot use ``wl``, or None when it can.

    The StatefulSet and Job controllers each need a Workload of exactly one top-level
    PodGroupTemplate and no composite templates; anything else is reported (the start of their
    ``UnsupportedWorkloadStructure`` event message) and the pods fall back to scheduling without
    a PodGroup. Both ask here so they accept and refuse the same Workloads.
    """
    templates = pod_group_templates(wl)
    if len(templates) != 1 or (wl.get("spec") or {}).get("compositePodGroupTemplates"):
        return f"Workload {name_of(wl)} has {len(templates)} PodGroupTemplates (expected 1)"
    return None


def find_leaf_template(wl: Obj, name: str) -> Obj | None:
    """The PodGroupTemplate ``name`` anywhere in the Workload's tree (a parent may nest it)."""

    def walk(node: Obj) -> Obj | None:
        for t in node.get("podGroupTemplates") or []:
            if isinstance(t, dict) and t.get("name") == name:
                return t
        for c in node.get("compositePodGroupTemplates") or []:
            if isinstance(c, dict):
                found = walk(c)
                if found is not None:
                    return found
        return None

    return walk(wl.get("spec") or {})


def gang_min_count(holder: Obj | None) -> int | None:
    """``schedulingPolicy.gang.minCount`` of a template or a PodGroup spec; None unless gang."""
    policy = (holder or {}).get("schedulingPolicy")
    gang = policy.get("gang") if isinstance(policy, dict) else None
    if not isinstance(gang, dict):
        return None
    value = gang.get("minCount")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def workload_min_count_patch(index: int, template_name: str, min_count: int) -> list[Obj]:
    """JSON patch of one template's ``gang.minCount``: nothing else of the Workload is sent.

    The ``test`` op makes the patch fail (and the sync retry) if the template moved, instead of
    writing into the wrong template.
    """
    base = f"/spec/podGroupTemplates/{index}"
    return [
        {"op": "test", "path": f"{base}/name", "value": template_name},
        {"op": "replace", "path": f"{base}/schedulingPolicy/gang/minCount", "value": min_count},
    ]


def pod_group_min_count_patch(min_count: int) -> Obj:
    """Merge patch of the PodGroup's ``spec.schedulingPolicy.gang.minCount`` only."""
    return {"spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}}}


def decorate_pod(pod: Obj, pg: Obj) -> None:
    """Point a pod about to be created at its PodGroup.

    Sets ``spec.schedulingGroup.podGroupName`` and adds the non-controller ownerReference to the
    PodGroup next to the owner's controller reference; nothing else of the pod changes.
    """
    pod.setdefault("spec", {})["schedulingGroup"] = {"podGroupName": name_of(pg)}
    refs = pod.setdefault("metadata", {}).setdefault("ownerReferences", [])
    if not any(r.get("uid") == uid_of(pg) for r in refs):
        refs.append(pod_group_owner_ref(pg))

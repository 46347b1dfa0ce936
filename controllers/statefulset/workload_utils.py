"""Pure helpers for the KEP-6277 Workload/PodGroup integration (no I/O, no caches).

Everything the hook in :mod:`controllers.statefulset.workload` decides from object contents alone
lives here, so it can be read (and unit-tested) without a control plane:

* the informer index keys used for discovery *by reference* (KEP-6277 "Workload and PodGroup
  Discovery"): a Workload is found through ``spec.controllerRef``, a PodGroup through
  ``spec.workloadRef`` — never by recomputing a name;
* "created by this controller" (decisions.md): the managed-by annotation **and** a controller
  ownerReference to the StatefulSet with the same UID;
* the delegation decision of "Composition by Higher-Level Controllers";
* the ownerReferences and minCount patches the controller writes ("OwnerReferences
  Relationship", "Scale Lifecycle").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from apiserver.meta import annotations_of, controller_ref, is_being_deleted, name_of, namespace_of, uid_of
from apiserver.workloadbuilder.builder import POD_GROUP_API_VERSION, WORKLOAD_API_VERSION, parse_group

Obj = dict[str, Any]

#: KEP-6277: marks the Workload and PodGroup this controller creates
MANAGED_BY_ANNOTATION = "scheduling.k8s.io/managed-by"
MANAGED_BY_VALUE = "statefulset-controller"
#: KEP-6089 downward mapping: the parent's PodGroupTemplate the StatefulSet instantiates
GROUP_TEMPLATE_NAME_ANNOTATION = "scheduling.k8s.io/group-template-name"
#: KEP-6089 downward mapping: the parent CompositePodGroup the PodGroup attaches to (decisions.md spelling)
PARENT_COMPOSITE_POD_GROUP_ANNOTATION = "scheduling.k8s.io/parent-compositepodgroup"

STATEFULSET_GROUP = "apps"
STATEFULSET_KIND = "StatefulSet"

#: informer index names
WORKLOAD_BY_CONTROLLER = "workload-by-controller-ref"
POD_GROUP_BY_WORKLOAD = "podgroup-by-workload"
STATEFULSET_BY_PARENT = "statefulset-by-delegating-parent"

# Event reasons (KEP-6277 "Monitoring Requirements" plus decisions.md's additions).
WORKLOAD_CREATED = "WorkloadCreated"
POD_GROUP_CREATED = "PodGroupCreated"
WORKLOAD_CREATION_FAILED = "WorkloadCreationFailed"
FAILED_WORKLOAD_COMPILATION = "FailedWorkloadCompilation"
AMBIGUOUS_WORKLOAD = "AmbiguousWorkload"
UNSUPPORTED_WORKLOAD_STRUCTURE = "UnsupportedWorkloadStructure"
AMBIGUOUS_POD_GROUP = "AmbiguousPodGroup"
PARENT_WORKLOAD_UNRESOLVED = "ParentWorkloadUnresolved"
INVALID_DELEGATION = "InvalidWorkloadDelegation"
FAILED_MIN_COUNT_SYNC = "FailedMinCountSync"


# -- index keys ----------------------------------------------------------------------------


def reference_key(namespace: str, group: str, kind: str, name: str) -> str:
    """``namespace/group/kind/name``: what a Workload's ``spec.controllerRef`` points at."""
    return f"{namespace}/{group}/{kind}/{name}"


def workload_controller_index(wl: Obj) -> list[str]:
    """Index a Workload by its ``spec.controllerRef`` (the only discovery handle, KEP-6277)."""
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


def statefulset_key(sts: Obj) -> str:
    return reference_key(namespace_of(sts), STATEFULSET_GROUP, STATEFULSET_KIND, name_of(sts))


def owner_group(ref: Obj) -> str:
    """The API group of an ownerReference's ``apiVersion`` (``""`` when malformed)."""
    try:
        return parse_group(str(ref.get("apiVersion") or ""))
    except ValueError:
        return ""


def delegating_parent_index(sts: Obj) -> list[str]:
    """Index a StatefulSet that delegates to its parent by the parent's reference key.

    A parent's Workload event must reach the child StatefulSets that instantiate one of its
    templates; this index turns the Workload's ``controllerRef`` into those children.
    """
    parent = delegation(sts).parent
    if parent is None:
        return []
    return [
        reference_key(
            namespace_of(sts),
            owner_group(parent),
            str(parent.get("kind") or ""),
            str(parent.get("name") or ""),
        )
    ]


# -- ownership -----------------------------------------------------------------------------


def controls(obj: Obj, sts: Obj) -> bool:
    """``obj`` has a controller ownerReference to this very StatefulSet (same UID)."""
    ref = controller_ref(obj)
    return (
        ref is not None
        and ref.get("kind") == STATEFULSET_KIND
        and owner_group(ref) == STATEFULSET_GROUP
        and ref.get("uid") == uid_of(sts)
    )


def created_by_controller(obj: Obj, sts: Obj) -> bool:
    """decisions.md: the managed-by annotation *and* a controller ownerReference to ``sts``."""
    return annotations_of(obj).get(MANAGED_BY_ANNOTATION) == MANAGED_BY_VALUE and controls(obj, sts)


def left_over_from_other_statefulset(obj: Obj, sts: Obj) -> bool:
    """Controlled by a StatefulSet of another UID: a previous incarnation's object awaiting GC.

    KEP-6277 "OwnerReferences Relationship": the UID check keeps a recreated StatefulSet of the
    same name from taking over its predecessor's objects, which the garbage collector is about
    to delete.
    """
    ref = controller_ref(obj)
    return (
        ref is not None
        and ref.get("kind") == STATEFULSET_KIND
        and owner_group(ref) == STATEFULSET_GROUP
        and ref.get("uid") != uid_of(sts)
    )


def usable(obj: Obj, sts: Obj) -> bool:
    """Discovery ignores objects that are going away or belong to another StatefulSet UID."""
    return not is_being_deleted(obj) and not left_over_from_other_statefulset(obj, sts)


def workload_owner_ref(wl: Obj) -> Obj:
    """PodGroup → Workload (StatefulSet-managed path only): non-controller, blocks deletion (decisions.md)."""
    return {
        "apiVersion": WORKLOAD_API_VERSION,
        "kind": "Workload",
        "name": name_of(wl),
        "uid": uid_of(wl),
        "blockOwnerDeletion": True,
    }


def pod_group_owner_ref(pg: Obj) -> Obj:
    """Pod → PodGroup: non-controller, ``blockOwnerDeletion`` unset (decisions.md)."""
    return {"apiVersion": POD_GROUP_API_VERSION, "kind": "PodGroup", "name": name_of(pg), "uid": uid_of(pg)}


def mark_managed(obj: Obj) -> Obj:
    """Stamp the managed-by annotation on an object about to be created."""
    md = obj.setdefault("metadata", {})
    md.setdefault("annotations", {})[MANAGED_BY_ANNOTATION] = MANAGED_BY_VALUE
    return obj


# -- composition ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Delegation:
    """What "Composition by Higher-Level Controllers" decides for one StatefulSet.

    ``parent`` is set only for real delegation (a controller ownerReference *and* the
    group-template-name annotation); ``orphan_annotation`` flags the annotation without a parent
    controller, which keeps the StatefulSet-managed path and is worth an event.
    """

    parent: Obj | None = None
    template_name: str = ""
    parent_composite: str = ""
    orphan_annotation: bool = False


def delegation(sts: Obj) -> Delegation:
    ann = annotations_of(sts)
    template = ann.get(GROUP_TEMPLATE_NAME_ANNOTATION) or ""
    parent = controller_ref(sts)
    if not template:
        return Delegation()
    if parent is None:
        return Delegation(template_name=template, orphan_annotation=True)
    return Delegation(
        parent=parent,
        template_name=template,
        parent_composite=ann.get(PARENT_COMPOSITE_POD_GROUP_ANNOTATION) or "",
    )


# -- templates and minCount ----------------------------------------------------------------


def pod_group_templates(wl: Obj) -> list[Obj]:
    """The Workload's top-level PodGroupTemplates (a leaf StatefulSet needs exactly one)."""
    return [t for t in (wl.get("spec") or {}).get("podGroupTemplates") or [] if isinstance(t, dict)]


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

    The ``test`` ops make the patch fail (and the sync retry) if the template moved or stopped
    being a gang, instead of writing into the wrong template.
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
    """Point a pod about to be created at its PodGroup (KEP-6277 "Field Mapping").

    Sets ``spec.schedulingGroup.podGroupName`` and adds the non-controller ownerReference to the
    PodGroup next to the StatefulSet's controller reference. The pod template itself is never
    touched: claims and everything else come from the template as they always did.
    """
    pod.setdefault("spec", {})["schedulingGroup"] = {"podGroupName": name_of(pg)}
    refs = pod.setdefault("metadata", {}).setdefault("ownerReferences", [])
    if not any(r.get("uid") == uid_of(pg) for r in refs):
        refs.append(pod_group_owner_ref(pg))

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

from apiserver.api.types import Obj
from apiserver.api.wellknown import STATEFULSET_CONTROLLER_MANAGER, WORKLOAD_MANAGED_BY_ANNOTATION
from apiserver.meta import annotations_of, controller_ref, is_being_deleted, name_of, namespace_of, uid_of

# Shared with the Job integration (KEP-5547); re-exported so this module stays the StatefulSet's one stop.
from controllers.workloadrefs import (  # noqa: F401
    GROUP_TEMPLATE_NAME_ANNOTATION,
    PARENT_COMPOSITE_POD_GROUP_ANNOTATION,
    POD_GROUP_BY_WORKLOAD,
    WORKLOAD_BY_CONTROLLER,
    decorate_pod,
    find_leaf_template,
    gang_min_count,
    owner_group,
    pod_group_min_count_patch,
    pod_group_owner_ref,
    pod_group_templates,
    pod_group_workload_index,
    reference_key,
    unsupported_structure,
    workload_controller_index,
    workload_min_count_patch,
)
from controllers.workloadrefs import workload_owner_ref as shared_workload_owner_ref

#: KEP-6277: marks the Workload and PodGroup this controller creates
MANAGED_BY_ANNOTATION = WORKLOAD_MANAGED_BY_ANNOTATION
MANAGED_BY_VALUE = STATEFULSET_CONTROLLER_MANAGER

STATEFULSET_GROUP = "apps"
STATEFULSET_KIND = "StatefulSet"

#: informer index names
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


def statefulset_key(sts: Obj) -> str:
    return reference_key(namespace_of(sts), STATEFULSET_GROUP, STATEFULSET_KIND, name_of(sts))


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
    return shared_workload_owner_ref(wl, block_owner_deletion=True)


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

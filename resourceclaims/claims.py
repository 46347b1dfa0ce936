"""Pure helpers about ResourceClaims shared by the claim controller, the scheduler and the node agent.

They answer, without I/O, the questions kube's ``k8s.io/dynamic-resource-allocation/resourceclaim``
package answers:

* which ResourceClaim a pod's ``spec.resourceClaims[i]`` stands for (:func:`claim_name_for`):
  ``resourceClaimName`` names it directly; a ``resourceClaimTemplateName`` entry is resolved
  through ``pod.status.resourceClaimStatuses`` (written by the claim controller) — or, with
  ``DRAWorkloadResourceClaims``, through the PodGroup's ``status.resourceClaimStatuses`` when
  the pod's entry matches one of the group's claims *exactly* (KEP-5729: name, claim name and
  template name all equal);
* what a generated claim is called (``<owner>-<claim>-`` + 5 random characters, both parts cut
  proportionally past 57 characters) and how it is marked
  (``resource.kubernetes.io/pod-claim-name``);
* who a claim is reserved for, and whether another consumer may be added (256 entries).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from apiserver.api.types import Obj
from apiserver.client.informer import index_reads

POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
#: kube-scheduler's finalizer on an allocated claim, removed by the claim controller on deallocation.
DELETE_PROTECTION_FINALIZER = "resource.kubernetes.io/delete-protection"
RESERVED_FOR_MAX = 256
GENERATE_NAME_MAX = 57

SCHEDULING_GROUP = "scheduling.k8s.io"
PODGROUPS_RESOURCE = "podgroups"


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def generate_name(owner_name: str, claim_name: str) -> str:
    """kube's generated-claim ``generateName``: ``<owner>-<claim>-``, both cut proportionally."""
    prefix = f"{owner_name}-{claim_name}-"
    if len(prefix) > GENERATE_NAME_MAX:
        total = len(prefix)
        prefix = (
            owner_name[: len(owner_name) * GENERATE_NAME_MAX // total]
            + "-"
            + claim_name[: len(claim_name) * GENERATE_NAME_MAX // total]
        )
    return prefix


def claim_source(entry: Obj) -> tuple[str, str, str]:
    """``(name, resourceClaimName, resourceClaimTemplateName)`` — the KEP-5729 match key."""
    return (
        entry.get("name") or "",
        entry.get("resourceClaimName") or "",
        entry.get("resourceClaimTemplateName") or "",
    )


def pod_group_name(pod: Obj) -> str:
    return ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName") or ""


def group_claim_entry(pod_entry: Obj, pod_group: Obj | None) -> Obj | None:
    """The PodGroup claim a pod claim shares, if all three fields match one exactly."""
    if pod_group is None:
        return None
    key = claim_source(pod_entry)
    for entry in (pod_group.get("spec") or {}).get("resourceClaims") or []:
        if claim_source(entry) == key:
            return entry
    return None


def status_claim_name(statuses: Any, name: str) -> tuple[bool, str]:
    """Look ``name`` up in a ``resourceClaimStatuses`` list: ``(found, resourceClaimName)``."""
    for st in statuses or []:
        if st.get("name") == name:
            return True, st.get("resourceClaimName") or ""
    return False, ""


@dataclass(frozen=True)
class ClaimRef:
    """What one pod claim entry resolves to.

    ``name``: the ResourceClaim's name ("" when not known yet or not needed); ``shared``: it is a
    PodGroup claim (reserved for the group, not the pod); ``known``: the answer is final (a
    template claim whose status entry is missing is not known yet); ``needed``: False when the
    status says no claim is needed (``resourceClaimName`` unset in the status entry).
    """

    pod_claim: str
    name: str
    shared: bool
    known: bool
    needed: bool = True


def claim_name_for(pod: Obj, entry: Obj, pod_group: Obj | None, group_claims_enabled: bool) -> ClaimRef:
    """Resolve one ``pod.spec.resourceClaims`` entry (see the module docstring).

    The pod's own ``status.resourceClaimStatuses`` wins when it names a different claim than the
    PodGroup's: that is a claim generated per pod (a claim controller without
    ``DRAWorkloadResourceClaims``), which is the pod's alone.
    """
    pod_claim = entry.get("name") or ""
    group_entry = (
        group_claim_entry(entry, pod_group) if group_claims_enabled and pod_group_name(pod) else None
    )
    if entry.get("resourceClaimName"):
        return ClaimRef(pod_claim, entry["resourceClaimName"], group_entry is not None, True)
    found_p, name_p = status_claim_name((pod.get("status") or {}).get("resourceClaimStatuses"), pod_claim)
    if group_entry is not None:
        found_g, name_g = status_claim_name(
            (pod_group.get("status") or {}).get("resourceClaimStatuses"), pod_claim
        )  # type: ignore[union-attr]
        if found_g and (not found_p or name_p == name_g):
            return ClaimRef(pod_claim, name_g, True, True, needed=bool(name_g))
        if not found_p:
            return ClaimRef(pod_claim, "", True, False)
    return ClaimRef(pod_claim, name_p, False, found_p, needed=not found_p or bool(name_p))


def pod_consumer(pod: Obj) -> Obj:
    md = _meta(pod)
    return {"resource": "pods", "name": md.get("name", ""), "uid": md.get("uid", "")}


def pod_group_consumer(pg: Obj) -> Obj:
    md = _meta(pg)
    return {
        "apiGroup": SCHEDULING_GROUP,
        "resource": PODGROUPS_RESOURCE,
        "name": md.get("name", ""),
        "uid": md.get("uid", ""),
    }


def is_reserved_for(claim: Obj, consumer_uid: str) -> bool:
    return any(r.get("uid") == consumer_uid for r in (claim.get("status") or {}).get("reservedFor") or [])


def reserved_for_group_named(claim: Obj, group: str) -> bool:
    """KEP-5729: a pod may use a claim reserved for the PodGroup it names."""
    return any(
        r.get("resource") == PODGROUPS_RESOURCE
        and (r.get("apiGroup") or "") == SCHEDULING_GROUP
        and r.get("name") == group
        for r in (claim.get("status") or {}).get("reservedFor") or []
    )


def can_be_reserved(claim: Obj) -> bool:
    """kube's ``CanBeReserved``: fewer than 256 consumers."""
    return len((claim.get("status") or {}).get("reservedFor") or []) < RESERVED_FOR_MAX


def is_allocated(claim: Obj) -> bool:
    return (claim.get("status") or {}).get("allocation") is not None


def is_usable_by(claim: Obj, pod: Obj, *, group_claims: bool = True) -> bool:
    """Allocated and reserved for the pod itself or (``group_claims``) for the PodGroup the pod names.

    This is kubelet's check before it prepares the devices; without ``DRAWorkloadResourceClaims``
    only a reservation for the pod itself counts.
    """
    if not is_allocated(claim):
        return False
    uid = _meta(pod).get("uid", "")
    if is_reserved_for(claim, uid):
        return True
    group = pod_group_name(pod)
    return group_claims and bool(group) and reserved_for_group_named(claim, group)


def owned_by(obj: Obj, uid: str) -> bool:
    return any(r.get("controller") and r.get("uid") == uid for r in _meta(obj).get("ownerReferences") or [])


def pod_claim_names(pod: Obj) -> tuple[bool, list[str]]:
    """``(complete, names)``: the claims a pod uses as recorded on the pod itself.

    ``complete`` is False while a template claim has no ``status.resourceClaimStatuses`` entry yet
    (the claim controller has not generated or linked it).
    """
    statuses = (pod.get("status") or {}).get("resourceClaimStatuses")
    names: list[str] = []
    complete = True
    for entry in (pod.get("spec") or {}).get("resourceClaims") or []:
        if entry.get("resourceClaimName"):
            names.append(entry["resourceClaimName"])
            continue
        found, name = status_claim_name(statuses, entry.get("name") or "")
        if not found:
            complete = False
        elif name:
            names.append(name)
    return complete, names


@index_reads("spec.resourceClaims", "status.resourceClaimStatuses")
def pod_claim_keys(pod: Obj) -> list[str]:
    """``namespace/name`` of every claim the pod records (an informer index function)."""
    ns = _meta(pod).get("namespace", "")
    return [f"{ns}/{n}" for n in pod_claim_names(pod)[1]]

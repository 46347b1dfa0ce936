"""Pod status writes the scheduler makes: conditions and ``status.nominatedNodeName``.

kube's ``util.PatchPodStatus`` sends a strategic-merge patch of the status subresource, and
``UpdatePodCondition`` decides whether anything changed (an unchanged condition keeps its
``lastTransitionTime`` and is not written again), so a pod that keeps failing with the same
message does not cause a write per attempt.
"""

from __future__ import annotations

from typing import Any

from apiserver.api.types import Obj
from apiserver.client.interface import PODS

POD_SCHEDULED = "PodScheduled"
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"
DISRUPTION_TARGET = "DisruptionTarget"
REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
_KEEP = object()


def new_condition(
    ctype: str, status: str, reason: str, message: str, now: str, observed_generation: int | None = None
) -> Obj:
    c: Obj = {"type": ctype, "status": status, "lastProbeTime": None, "lastTransitionTime": now}
    if reason:
        c["reason"] = reason
    if message:
        c["message"] = message
    if observed_generation:
        c["observedGeneration"] = observed_generation
    return c


def update_pod_condition(status: Obj, condition: Obj) -> bool:
    """``podutil.UpdatePodCondition`` on a status dict (mutated). Returns whether it changed."""
    conds: list[Obj] = status.setdefault("conditions", [])
    for i, old in enumerate(conds):
        if old.get("type") != condition.get("type"):
            continue
        merged = dict(condition)
        if old.get("status") == condition.get("status"):
            merged["lastTransitionTime"] = old.get("lastTransitionTime")
        same = all(
            (old.get(k) or None) == (merged.get(k) or None)
            for k in (
                "status",
                "reason",
                "message",
                "lastProbeTime",
                "lastTransitionTime",
                "observedGeneration",
            )
        )
        conds[i] = merged
        return not same
    conds.append(dict(condition))
    return True


async def patch_pod_status(
    client: Any,
    pod: Obj,
    condition: Obj | None = None,
    nominated_node_name: Any = _KEEP,
) -> Obj | None:
    """Patch the pod's status if the condition or nomination actually changes; returns the new pod or None."""
    meta = pod.get("metadata") or {}
    old_status = pod.get("status") or {}
    patch_status: Obj = {}
    if condition is not None:
        new_status = {"conditions": [dict(c) for c in old_status.get("conditions") or []]}
        if update_pod_condition(new_status, condition):
            changed = next(c for c in new_status["conditions"] if c.get("type") == condition.get("type"))
            patch_status["conditions"] = [changed]
    if nominated_node_name is not _KEEP:
        want = nominated_node_name or None
        if (old_status.get("nominatedNodeName") or None) != want:
            patch_status["nominatedNodeName"] = want
    if not patch_status:
        return None
    return await client.patch(
        PODS,
        meta.get("name", ""),
        {"status": patch_status},
        meta.get("namespace", ""),
        patch_type=STRATEGIC_MERGE_PATCH,
        subresource="status",
        # the answer is only read (no caller modifies it; most drop it): an in-process
        # client need not copy the stored object for it
        read_only=True,
    )

"""Actuating preemption through the API: ``DisruptionTarget`` on victims, then their deletion.

kube's preemption executor marks every victim pod ``DisruptionTarget=True`` (reason
``PreemptionByScheduler``) with a status patch, then deletes it gracefully; a victim already gone
(NotFound) is not an error. The message names what the room is for:
``<scheduler>: preempting to accommodate a higher priority pod`` for a pod preemptor and
``… pod group`` for a PodGroup preemptor. A PodGroup evicted as a whole (``disruptionMode: all``)
also gets ``DisruptionTarget`` on its own status (``PodGroupReasonPreemptionByScheduler``), so
``kubectl describe podgroup`` says why every member went at once.
"""

from __future__ import annotations

from typing import Any

from apiserver.api.types import Obj
from apiserver.client.interface import PODGROUPS, PODS
from apiserver.errors import is_not_found
from apiserver.meta import rfc3339
from scheduler.nodeinfo import PodInfo
from scheduler.podstatus import (
    DISRUPTION_TARGET,
    REASON_PREEMPTION_BY_SCHEDULER,
    STRATEGIC_MERGE_PATCH,
    new_condition,
    patch_pod_status,
)


def preemption_message(scheduler_name: str, group_preemptor: bool) -> str:
    what = "pod group" if group_preemptor else "pod"
    return f"{scheduler_name}: preempting to accommodate a higher priority {what}"


async def disrupt_pod(client: Any, victim: PodInfo, message: str, now: float) -> None:
    """Mark the victim ``DisruptionTarget`` and delete it gracefully (NotFound: already gone)."""
    cond = new_condition(
        DISRUPTION_TARGET,
        "True",
        REASON_PREEMPTION_BY_SCHEDULER,
        message,
        rfc3339(now),
        ((victim.pod.get("metadata") or {}).get("generation")),
    )
    try:
        await patch_pod_status(client, victim.pod, condition=cond)
    except Exception as e:
        if is_not_found(e):
            return
        raise
    try:
        await client.delete(PODS, victim.name, victim.namespace)
    except Exception as e:
        if not is_not_found(e):
            raise


async def disrupt_pod_group(client: Any, pod_group: Obj, message: str, now: float) -> None:
    """``DisruptionTarget=True`` (``PreemptionByScheduler``) on a PodGroup evicted as a whole.

    A strategic-merge patch of the status subresource keyed by condition ``type``, so the
    scheduler's ``PodGroupInitiallyScheduled`` condition stays; an unchanged condition is not
    written again. ``observedGeneration`` is the PodGroup's generation, as for its other
    conditions.
    """
    meta = pod_group.get("metadata") or {}
    conds = ((pod_group.get("status") or {}).get("conditions")) or []
    old = next((c for c in conds if c.get("type") == DISRUPTION_TARGET), None)
    if (
        old is not None
        and old.get("status") == "True"
        and old.get("reason") == REASON_PREEMPTION_BY_SCHEDULER
        and old.get("message") == message
    ):
        return
    cond: Obj = {
        "type": DISRUPTION_TARGET,
        "status": "True",
        "reason": REASON_PREEMPTION_BY_SCHEDULER,
        "message": message,
        "lastTransitionTime": rfc3339(now),
    }
    if meta.get("generation"):
        cond["observedGeneration"] = meta["generation"]
    try:
        await client.patch(
            PODGROUPS,
            meta.get("name", ""),
            {"status": {"conditions": [cond]}},
            meta.get("namespace", ""),
            patch_type=STRATEGIC_MERGE_PATCH,
            subresource="status",
        )
    except Exception as e:
        if not is_not_found(e):
            raise


def terminating_by_preemption(p: PodInfo) -> bool:
    """Being deleted after the scheduler marked it ``DisruptionTarget`` (an earlier preemption in flight)."""
    if not p.terminating:
        return False
    for c in (p.pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == DISRUPTION_TARGET:
            return c.get("status") == "True" and c.get("reason") == REASON_PREEMPTION_BY_SCHEDULER
    return False

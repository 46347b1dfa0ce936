"""The PodGroup status the scheduler writes: the ``PodGroupInitiallyScheduled`` condition.

kube's ``updatePodGroupCondition``: read the newest PodGroup, never replace a True condition
(it is terminal), set ``observedGeneration`` to the group's generation, keep
``lastTransitionTime`` when the status does not change (``apimeta.SetStatusCondition``), and
write nothing when nothing changed - a gang that keeps failing with the same message costs no
write per attempt. The write is a merge patch of ``/status`` carrying the resourceVersion read,
so a concurrent writer of another condition (preemption's ``DisruptionTarget``) is never
overwritten: a conflict re-reads and retries.
"""

from __future__ import annotations

import logging
from typing import Any

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.interface import PODGROUPS
from featuregates import POD_GROUP_REPLACEMENTS_SCHEDULE_FREELY

log = logging.getLogger("gangplane.scheduler")

POD_GROUP_INITIALLY_SCHEDULED = "PodGroupInitiallyScheduled"
REASON_SCHEDULED = "Scheduled"
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"
MERGE_PATCH = "application/merge-patch+json"
_ATTEMPTS = 3


def set_status_condition(conditions: list[Obj], new: Obj, now: str) -> bool:
    """``apimeta.SetStatusCondition`` on a list (mutated); returns whether anything changed."""
    for i, old in enumerate(conditions):
        if old.get("type") != new["type"]:
            continue
        merged = {**old, **new}
        merged["lastTransitionTime"] = old.get("lastTransitionTime") or now
        if old.get("status") != new["status"]:
            merged["lastTransitionTime"] = now
        if merged == old:
            return False
        conditions[i] = merged
        return True
    conditions.append({**new, "lastTransitionTime": now})
    return True


def condition_of(pod_group: Obj | None, ctype: str = POD_GROUP_INITIALLY_SCHEDULED) -> Obj | None:
    for c in ((pod_group or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return c
    return None


def replacements_schedule_freely(gates: Any, pod_group: Obj | None) -> bool:
    """gangplane's ``PodGroupReplacementsScheduleFreely`` (kubernetes#136334): on, a gang whose
    ``PodGroupInitiallyScheduled`` is True places new members one by one, without the minCount
    checks; off (1.37), replacements must reach minCount again together with the bound members."""
    if gates is None or not gates.enabled(POD_GROUP_REPLACEMENTS_SCHEDULE_FREELY):
        return False
    cond = condition_of(pod_group)
    return cond is not None and cond.get("status") == "True"


def desired_conditions(pod_group: Obj, status: str, reason: str, message: str, now: str) -> list[Obj] | None:
    """The group's conditions with ours set, or ``None`` when no write is needed."""
    current = condition_of(pod_group)
    if current is not None and current.get("status") == "True" and status != "True":
        return None  # terminal: once scheduled, a later failing cycle never reverts it
    cond: Obj = {
        "type": POD_GROUP_INITIALLY_SCHEDULED,
        "status": status,
        "reason": reason,
        "message": message,
        "observedGeneration": int((pod_group.get("metadata") or {}).get("generation") or 0),
    }
    conditions = [dict(c) for c in ((pod_group.get("status") or {}).get("conditions") or [])]
    if not set_status_condition(conditions, cond, now):
        return None
    return conditions


async def update_pod_group_condition(
    client: Any, pod_group: Obj, status: str, reason: str, message: str, now: str
) -> Obj | None:
    """Write the condition if it changes; returns the updated PodGroup or ``None``."""
    meta = pod_group.get("metadata") or {}
    ns, name = meta.get("namespace", ""), meta.get("name", "")
    current = pod_group
    for _ in range(_ATTEMPTS):
        conditions = desired_conditions(current, status, reason, message, now)
        if conditions is None:
            return None
        patch = {
            "metadata": {"resourceVersion": (current.get("metadata") or {}).get("resourceVersion")},
            "status": {"conditions": conditions},
        }
        try:
            return await client.patch(
                PODGROUPS, name, patch, ns, patch_type=MERGE_PATCH, subresource="status"
            )
        except errors.StatusError as e:
            if e.code == 404:
                return None
            if e.code != 409:
                log.warning("could not update PodGroup %s/%s status: %s", ns, name, e.message)
                return None
        try:
            current = await client.get(PODGROUPS, name, ns)
        except errors.StatusError:
            return None
    return None

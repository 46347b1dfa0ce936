"""The PodGroup status the scheduler writes: the ``PodGroupInitiallyScheduled`` condition.

kube's ``updatePodGroupCondition``: read the newest PodGroup, never replace a True condition
(it is terminal), set ``observedGeneration`` to the group's generation, keep
``lastTransitionTime`` when the status does not change (``apimeta.SetStatusCondition``), and
write nothing when nothing changed - a gang that keeps failing with the same message costs no
write per attempt.

The write is upstream's ``util.PatchPodGroupStatus``: a two-way *strategic* merge patch of
``/status`` from the status the scheduler read to the one it wants, with no resourceVersion.
``conditions`` merge by ``type``, so the patch carries only our condition (the fields that
changed, plus its ``type``) and a ``$setElementOrder/conditions`` directive; a concurrent writer
of another condition (preemption's ``DisruptionTarget``) is never overwritten, so no
precondition and no re-read are needed. (Before session 14 gangplane sent a JSON merge patch of
the whole list with the resourceVersion read as a precondition: the same stored result, another
request.)
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
MERGE_PATCH = "application/merge-patch+json"  # KEP-6413's PodGroupSatisfied writer
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
#: upstream retries the patch with ``retry.DefaultBackoff`` (4 steps) on a conflict
_ATTEMPTS = 4


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
    }
    generation = int((pod_group.get("metadata") or {}).get("generation") or 0)
    if generation:  # ``observedGeneration,omitempty``: a Go client never sends a zero
        cond["observedGeneration"] = generation
    conditions = [dict(c) for c in ((pod_group.get("status") or {}).get("conditions") or [])]
    if not set_status_condition(conditions, cond, now):
        return None
    return conditions


def _diff_maps(old: Obj, new: Obj) -> Obj:
    """strategicpatch's ``diffMaps`` of two flat objects (a condition): what changed or was
    added, and ``null`` for what is gone."""
    out: Obj = {k: v for k, v in new.items() if k not in old or old[k] != v}
    for k in old:
        if k not in new:
            out[k] = None
    return out


def status_patch(old_status: Obj | None, conditions: list[Obj]) -> Obj | None:
    """``CreateTwoWayMergePatch`` of ``{"status": old_status}`` to the same status with
    ``conditions`` (a list merged by ``type``), or ``None`` when it is empty (``{}``).

    With no condition read (Go omits an empty list) the list is sent whole, as ``diffMaps``
    sends any key the original lacks. Otherwise, per item in the new order: a new type is sent
    whole, a changed one as its changed fields plus ``type``; a type no longer present becomes a
    ``$patch: delete`` item, after the rest.
    ``$setElementOrder/conditions`` (every new item's ``type``, in order) comes with any change
    or reordering, as upstream's ``SetElementOrder`` option does.
    """
    old_list = [c for c in ((old_status or {}).get("conditions") or []) if isinstance(c, dict)]
    if not old_list:
        return {"status": {"conditions": conditions}} if conditions else None
    before = {c.get("type"): c for c in old_list}
    after_types = {c.get("type") for c in conditions}
    items: list[Obj] = []
    for c in conditions:
        prev = before.get(c.get("type"))
        if prev is None:
            items.append(c)
            continue
        changed = _diff_maps(prev, c)
        if changed:
            changed["type"] = c.get("type")
            items.append(changed)
    items += [{"$patch": "delete", "type": t} for t in before if t not in after_types]
    same_order = [t for t in before if t in after_types] == [
        c.get("type") for c in conditions if c.get("type") in before
    ]
    if not items and same_order:
        return None
    status: Obj = {"$setElementOrder/conditions": [{"type": c.get("type")} for c in conditions]}
    if items:
        status["conditions"] = items
    return {"status": status}


async def update_pod_group_condition(
    client: Any, pod_group: Obj, status: str, reason: str, message: str, now: str
) -> Obj | None:
    """Write the condition if it changes; returns the updated PodGroup (read-only: it may be the
    stored object's shared dict) or ``None``."""
    meta = pod_group.get("metadata") or {}
    ns, name = meta.get("namespace", ""), meta.get("name", "")
    conditions = desired_conditions(pod_group, status, reason, message, now)
    if conditions is None:
        return None
    patch = status_patch(pod_group.get("status"), conditions)
    if patch is None:
        return None
    for _ in range(_ATTEMPTS):
        try:
            # read_only: the answer goes to the scheduler's cache, which only reads it (as it
            # reads its informer's objects), so an in-process client need not copy it
            return await client.patch(
                PODGROUPS,
                name,
                patch,
                ns,
                patch_type=STRATEGIC_MERGE_PATCH,
                subresource="status",
                read_only=True,
            )
        except errors.StatusError as e:
            if e.code == 404:
                return None
            if e.code != 409:
                log.warning("could not update PodGroup %s/%s status: %s", ns, name, e.message)
                return None
    return None

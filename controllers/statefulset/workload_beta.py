"""gangplane's KEP-6277 Beta proposals on the controller side (docs/kep-6277-beta.md).

* **StatefulSet condition** (``StatefulSetWorkloadStatusCondition``). The KEP adds no condition
  in Alpha ("worth considering for Beta, once there is feedback on whether following the
  ownership chain to the PodGroup is too indirect"). gangplane proposes one, ``PodGroupScheduled``,
  that mirrors the set's PodGroup so ``kubectl get sts -o yaml`` / ``kubectl wait
  --for=condition=PodGroupScheduled`` answer without following references: its status and
  reason are those of the PodGroup's runtime ``PodGroupSatisfied`` (KEP-6413) when the scheduler
  writes it, else of ``PodGroupInitiallyScheduled``; ``Unknown``/``PodGroupPending`` before the
  scheduler has said anything. The message names the PodGroup.
* **Gang rolling updates** (``StatefulSetWorkloadGangRollingUpdate``). A replacement of the new
  revision rejoins the placed group (its scheduled members count, KEP-4671); one that does not fit
  stays Pending and the rollout waits on it (the KEP's "rollout can stall"). Upstream reports
  that only on the pod; with the gate the StatefulSet gets a Warning ``ReplacementUnschedulable``
  event naming the pod, its revision, the PodGroup and the scheduler's message, so ``kubectl
  describe sts`` shows why the rollout does not progress. Reverting the template (``kubectl
  rollout undo``) recovers: the stuck pod is not of the update revision any more, so it is
  replaced by one of the old revision, which fits where the old one ran (no deadlock).
"""

from __future__ import annotations

from apiserver.api.types import Obj
from apiserver.meta import name_of, rfc3339
from controllers.statefulset.utils import REVISION_LABEL

POD_GROUP_SCHEDULED = "PodGroupScheduled"
REASON_POD_GROUP_PENDING = "PodGroupPending"
REPLACEMENT_UNSCHEDULABLE = "ReplacementUnschedulable"
#: the PodGroup conditions mirrored, the runtime one first (KEP-6413, then KEP-4671)
MIRRORED = ("PodGroupSatisfied", "PodGroupInitiallyScheduled")


def _conditions(obj: Obj | None) -> list[Obj]:
    return [c for c in ((obj or {}).get("status") or {}).get("conditions") or [] if isinstance(c, dict)]


def statefulset_condition(sts: Obj, pod_group: Obj, now: float) -> Obj:
    """The ``PodGroupScheduled`` condition ``sts`` should carry for ``pod_group``.

    ``lastTransitionTime`` is kept while the status does not change (``SetStatusCondition``).
    """
    by_type = {c.get("type"): c for c in _conditions(pod_group)}
    source = next((by_type[t] for t in MIRRORED if t in by_type), None)
    pg = name_of(pod_group)
    if source is None:
        status, reason, message = (
            "Unknown",
            REASON_POD_GROUP_PENDING,
            f"PodGroup {pg} has not been scheduled yet",
        )
    else:
        status = str(source.get("status") or "Unknown")
        reason = str(source.get("reason") or "")
        detail = str(source.get("message") or "")
        message = f"PodGroup {pg}: {source.get('type')}={status}" + (f": {detail}" if detail else "")
    old = next((c for c in _conditions(sts) if c.get("type") == POD_GROUP_SCHEDULED), None)
    since = old.get("lastTransitionTime") if old is not None and old.get("status") == status else None
    return {
        "type": POD_GROUP_SCHEDULED,
        "status": status,
        "lastTransitionTime": since or rfc3339(now),
        "reason": reason,
        "message": message,
    }


def _unschedulable_message(pod: Obj) -> str | None:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if (
            c.get("type") == "PodScheduled"
            and c.get("status") == "False"
            and c.get("reason") == "Unschedulable"
        ):
            return str(c.get("message") or "")
    return None


def unfit_replacements(sts: Obj, pods: list[Obj]) -> list[tuple[Obj, str]]:
    """Pods of an in-progress rollout's update revision the scheduler could not place."""
    status = sts.get("status") or {}
    update, current = status.get("updateRevision"), status.get("currentRevision")
    if not update or update == current:
        return []
    out = []
    for pod in pods:
        if ((pod.get("metadata") or {}).get("labels") or {}).get(REVISION_LABEL) != update:
            continue
        if (pod.get("spec") or {}).get("nodeName") or (pod.get("metadata") or {}).get("deletionTimestamp"):
            continue
        message = _unschedulable_message(pod)
        if message is not None:
            out.append((pod, message))
    return out


def replacement_message(sts: Obj, pod: Obj, pod_group: Obj, scheduler_message: str) -> str:
    revision = ((pod.get("metadata") or {}).get("labels") or {}).get(REVISION_LABEL, "")
    return (
        f"Pod {name_of(pod)} of revision {revision} cannot join PodGroup {name_of(pod_group)}: "
        f"{scheduler_message}; the rolling update of StatefulSet {name_of(sts)} waits for it "
        "(revert the template to roll back)"
    )

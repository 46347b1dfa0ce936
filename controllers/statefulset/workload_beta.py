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
* **Beta metrics** (``StatefulSetWorkloadBetaMetrics``): :class:`BetaMetrics`.
"""

from __future__ import annotations

import weakref

from prometheus_client import CollectorRegistry, Gauge, Histogram

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
        f"{scheduler_message.rstrip('.')}; the rolling update of StatefulSet {name_of(sts)} waits for it "
        "(revert the template to roll back)"
    )


# ---------------------------------------------------------------------------------- Beta metrics
class BetaMetrics:
    """The two metrics KEP-6277 proposes for Beta (PRR "missing metrics"), in kube's naming style.

    * ``statefulset_workload_creation_duration_seconds`` (histogram): from the StatefulSet becoming
      eligible — the first time the controller observes it with ``spec.scheduling`` (its informer
      event, before any queueing) — until its Workload and PodGroup both exist. Observed once per
      StatefulSet, when the controller creates the PodGroup after having created the Workload
      itself (a create retried on a later sync included); sets whose objects already existed or
      whose Workload predates a controller restart, and delegated sets, are not observed.
    * ``statefulset_workload_update_duration_seconds`` (histogram): the Beta criterion's "update
      latency": from the controller observing a new spec generation (a scale, a user minCount
      change) to the PodGroup — after the Workload template — carrying the minCount it compiles
      to. Observed when that write happens; a change that needs no write is not observed.
    * ``statefulset_workloads`` (gauge, label ``policy`` = ``gang`` | ``basic``): the Workloads the
      StatefulSet controller manages, by the policy their template resolved to.
    """

    def __init__(self, registry: CollectorRegistry) -> None:
        self.creation_duration = Histogram(
            "statefulset_workload_creation_duration_seconds",
            "Latency from a StatefulSet becoming eligible (observed with spec.scheduling) to its "
            "Workload and PodGroup existing.",
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
            registry=registry,
        )
        self.update_duration = Histogram(
            "statefulset_workload_update_duration_seconds",
            "Latency from a StatefulSet spec change to its Workload template and PodGroup carrying "
            "the gang minCount it compiles to.",
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
            registry=registry,
        )
        self.workloads = Gauge(
            "statefulset_workloads",
            "Number of Workloads managed by the StatefulSet controller, by resolved scheduling policy.",
            ["policy"],
            registry=registry,
        )
        for policy in ("gang", "basic"):
            self.workloads.labels(policy=policy).set(0)
        #: Workload UID -> policy, for the gauge (kept by the active hook's informer handlers)
        self.policies: dict[str, str] = {}

    def track(self, uid: str, policy: str | None) -> None:
        """Record (``policy``) or forget (``None``) one managed Workload and refresh the gauge."""
        if policy is None:
            self.policies.pop(uid, None)
        else:
            self.policies[uid] = policy
        for p in ("gang", "basic"):
            self.workloads.labels(policy=p).set(sum(1 for v in self.policies.values() if v == p))


_BETA_METRICS: weakref.WeakKeyDictionary[CollectorRegistry, BetaMetrics] = weakref.WeakKeyDictionary()


def beta_metrics(registry: CollectorRegistry | None) -> BetaMetrics | None:
    """The registry's :class:`BetaMetrics`, registered once (a restarted controller reuses it)."""
    if registry is None:
        return None
    m = _BETA_METRICS.get(registry)
    if m is None:
        m = _BETA_METRICS[registry] = BetaMetrics(registry)
    return m


def resolved_policy(workload: Obj) -> str:
    """``gang`` when the (single) template has a gang policy, else ``basic``."""
    templates = (workload.get("spec") or {}).get("podGroupTemplates") or []
    first = templates[0] if templates and isinstance(templates[0], dict) else {}
    return "gang" if (first.get("schedulingPolicy") or {}).get("gang") is not None else "basic"

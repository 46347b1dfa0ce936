"""The StatefulSet's KEP-6277 mapping onto the workloadbuilder: pure, shared by both sides.

The API server's StatefulSet strategy validates ``spec.scheduling`` by compiling the *same*
:class:`WorkloadItem` the StatefulSet controller compiles to create its Workload and PodGroup
(KEP-6277 "Field Mapping"), so both import it from here: a pure module with no I/O, below the
registry and the components alike.
"""

from __future__ import annotations

from apiserver.api.types import Obj
from apiserver.meta import new_controller_ref
from apiserver.workloadbuilder.integration import (
    SCHEDULING_PATH,
    leaf_workload_item,
    owned_build_options,
    scheduling_of,
    spec_of,
)
from apiserver.workloadbuilder.types import (
    BuildOptions,
    DisruptionModeOption,
    SchedulingConfig,
    SchedulingConfigFunc,
    SchedulingPolicyOption,
    WorkloadItem,
)
from featuregates import DRA_WORKLOAD_RESOURCE_CLAIMS, STATEFULSET_WORKLOAD_USER_MIN_COUNT, FeatureGate

STATEFULSET_API_VERSION = "apps/v1"
STATEFULSET_KIND = "StatefulSet"


def pod_spec_of(sts: Obj) -> Obj:
    template = spec_of(sts).get("template")
    pod_spec = template.get("spec") if isinstance(template, dict) else None
    return pod_spec if isinstance(pod_spec, dict) else {}


def replicas_of(sts: Obj) -> int:
    """``spec.replicas`` with the apps/v1 default of 1."""
    replicas = spec_of(sts).get("replicas")
    return replicas if isinstance(replicas, int) and not isinstance(replicas, bool) else 1


# -- the WorkloadItem shared with the controller ------------------------------------------


def min_count_from_replicas(replicas: int, *, keep_user_value: bool = False) -> SchedulingConfigFunc:
    """KEP-6277 ``defaultMinCountForStatefulSet``: a resolved gang gets ``max(replicas, 1)``.

    The clamp keeps a scaled-to-zero StatefulSet's PodGroup valid (minCount must be positive).
    The value lives only in the resolved config and is never written back to the StatefulSet.
    With ``keep_user_value`` (gangplane's ``StatefulSetWorkloadUserMinCount``, the KEP's Beta
    plan) the callback becomes a default: a user-supplied ``gang.minCount`` is kept as it is, so
    scaling never changes it, and only an omitted one is derived.
    """

    def callback(cfg: SchedulingConfig) -> None:
        if cfg.policy is not None and cfg.policy.gang is not None:
            if keep_user_value and cfg.policy.gang.min_count is not None:
                return
            cfg.policy.gang.min_count = max(replicas, 1)

    return callback


def statefulset_workload_item(sts: Obj, gates: FeatureGate) -> WorkloadItem:
    """The single leaf WorkloadItem a StatefulSet compiles to (KEP-6277 "Field Mapping").

    Template name = StatefulSet name; default policy Basic; shared claims only while
    ``DRAWorkloadResourceClaims`` is on; the pod template's ``priorityClassName`` is copied so the
    PodGroup's priority matches its pods (decisions.md); a user's ``gang.minCount`` is honoured
    only while ``StatefulSetWorkloadUserMinCount`` is on in ``gates`` (else derived, as Alpha).
    """
    meta = sts.get("metadata") or {}
    return leaf_workload_item(
        str(meta.get("name") or ""),
        SCHEDULING_PATH,
        scheduling_of(sts),
        pod_spec_of(sts),
        include_resource_claims=gates.enabled(DRA_WORKLOAD_RESOURCE_CLAIMS),
        min_count_default=min_count_from_replicas(
            replicas_of(sts), keep_user_value=gates.enabled(STATEFULSET_WORKLOAD_USER_MIN_COUNT)
        ),
    )


def user_min_count(sts: Obj | None) -> int | None:
    """``spec.scheduling.schedulingPolicy.gang.minCount`` as stored, ``None`` when unset or not an int."""
    sched = scheduling_of(sts)
    policy = sched.get("schedulingPolicy") if isinstance(sched, dict) else None
    gang = policy.get("gang") if isinstance(policy, dict) else None
    count = gang.get("minCount") if isinstance(gang, dict) else None
    return count if isinstance(count, int) and not isinstance(count, bool) else None


def statefulset_controller_ref(sts: Obj) -> Obj:
    """``metav1.NewControllerRef(sts)``: controller and blockOwnerDeletion both true."""
    return new_controller_ref(sts, STATEFULSET_API_VERSION, STATEFULSET_KIND)


def statefulset_build_options(sts: Obj) -> BuildOptions:
    """Workload identity (``<sts>-<hash(uid)>`` in the StatefulSet's namespace), the controller
    ownerReference, and both policies / both disruption modes allowed."""
    return owned_build_options(
        sts,
        statefulset_controller_ref(sts),
        (SchedulingPolicyOption.BASIC, SchedulingPolicyOption.GANG),
        (DisruptionModeOption.SINGLE, DisruptionModeOption.ALL),
    )

"""gangplane's KEP-6277 Beta proposals for StatefulSet ``spec.scheduling`` admission.

Each rule here applies only while its gangplane gate is on in the API server's view; with the
gates off :mod:`apiserver.registry.strategies.statefulset_scheduling` keeps the KEP's Alpha rules
word for word (docs/kep-6277-beta.md).

* ``StatefulSetWorkloadUserMinCount`` — the KEP's Beta plan: ``gang.minCount`` may be set by the
  user (``1 <= minCount <= spec.replicas``; ``spec.replicas: 0`` stays allowed, scale-to-zero
  being a normal operation) and changed or removed in flight. The whole-field ``+k8s:immutable``
  marker "moves down to the sub-fields": adding or removing ``spec.scheduling``, switching
  between basic and gang, and changing ``schedulingConstraints``, ``disruptionMode`` or
  ``resourceClaims`` stay forbidden (the KEP's Non-Goals, for Alpha, Beta and GA alike).
* ``StatefulSetWorkloadPartition`` — ``rollingUpdate.partition > 0`` is admitted with
  ``spec.scheduling``: the set keeps its one PodGroup across revisions (the KEP's single-PodGroup
  model; pods never change group).
"""

from __future__ import annotations

import copy
from typing import Any

from apiserver import field
from apiserver.api.types import Obj
from apiserver.field import ErrorList
from apiserver.workloadbuilder.statefulset import SCHEDULING_PATH, replicas_of, user_min_count
from featuregates import STATEFULSET_WORKLOAD_PARTITION, STATEFULSET_WORKLOAD_USER_MIN_COUNT, FeatureGate

POLICY_PATH = SCHEDULING_PATH.child("schedulingPolicy")
MIN_COUNT_PATH = POLICY_PATH.child("gang", "minCount")
IMMUTABLE = "field is immutable"
POLICY_FROZEN = "may not change between basic and gang after creation; only gang.minCount may be changed"
#: the sub-fields that keep the Alpha immutability once minCount is mutable
IMMUTABLE_SUBFIELDS = ("schedulingConstraints", "disruptionMode", "resourceClaims")


def user_min_count_enabled(gates: FeatureGate) -> bool:
    return gates.enabled(STATEFULSET_WORKLOAD_USER_MIN_COUNT)


def partition_enabled(gates: FeatureGate) -> bool:
    return gates.enabled(STATEFULSET_WORKLOAD_PARTITION)


def min_count_errors(sts: Obj) -> ErrorList:
    """A user minCount larger than a non-zero ``spec.replicas`` could never be satisfied."""
    count = user_min_count(sts)
    replicas = replicas_of(sts)
    if count is None or replicas == 0 or count <= replicas:
        return []
    return [field.invalid(MIN_COUNT_PATH, count, f"must be less than or equal to spec.replicas ({replicas})")]


def _variant(policy: Any) -> str:
    """``gang`` or ``basic``; an omitted policy resolves to basic (KEP-6277 "Field Mapping")."""
    return "gang" if isinstance(policy, dict) and policy.get("gang") is not None else "basic"


def _without_min_count(sched: Any) -> Any:
    out = copy.deepcopy(sched)
    policy = out.get("schedulingPolicy") if isinstance(out, dict) else None
    gang = policy.get("gang") if isinstance(policy, dict) else None
    if isinstance(gang, dict):
        gang.pop("minCount", None)
    return out


def update_rules(new_sched: Any, old_sched: Any) -> ErrorList:
    """Sub-field immutability once ``gang.minCount`` is mutable: only minCount may change."""
    if (
        new_sched is None
        or old_sched is None
        or not isinstance(new_sched, dict)
        or not isinstance(old_sched, dict)
    ):
        return [field.invalid(SCHEDULING_PATH, None, IMMUTABLE)]
    new, old = _without_min_count(new_sched), _without_min_count(old_sched)
    if new == old:
        return []
    errs: ErrorList = []
    if new.get("schedulingPolicy") != old.get("schedulingPolicy"):
        if _variant(new.get("schedulingPolicy")) != _variant(old.get("schedulingPolicy")):
            errs.append(field.invalid(POLICY_PATH, None, POLICY_FROZEN))
        else:
            errs.append(field.invalid(POLICY_PATH, None, IMMUTABLE))
    for key in IMMUTABLE_SUBFIELDS:
        if new.get(key) != old.get(key):
            errs.append(field.invalid(SCHEDULING_PATH.child(key), None, IMMUTABLE))
    other = sorted(k for k in {*new, *old} if k not in ("schedulingPolicy", *IMMUTABLE_SUBFIELDS))
    errs.extend(
        field.invalid(SCHEDULING_PATH.child(k), None, IMMUTABLE) for k in other if new.get(k) != old.get(k)
    )
    return errs

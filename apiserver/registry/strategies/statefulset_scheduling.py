"""KEP-6277 admission for StatefulSet ``spec.scheduling``, called by the StatefulSet strategy.

The StatefulSet strategy wires these in (KEP-6277 "Admission Validation")::

    prepare_for_create / prepare_for_update -> drop_disabled_scheduling_fields(ctx, new, old)
    validate        -> validate_scheduling(ctx, sts)
    validate_update -> validate_scheduling_update(ctx, new, old)
    warnings_on_*   -> scheduling_warnings(ctx, sts)

Validation has the KEP's three layers: structural rules of the embedded v1alpha3 building blocks
(declarative-validation equivalents), the StatefulSet cross-field rules (gang needs Parallel, no
user ``gang.minCount``, no partitioned rollouts, the whole field immutable), and the
workloadbuilder semantic layer run on the *same* WorkloadItem the controller compiles —
:func:`statefulset_workload_item` and :func:`statefulset_build_options` live in the pure
:mod:`apiserver.workloadbuilder.statefulset` module, shared with the StatefulSet controller for
exactly that reason.

Gated sub-fields (decided here, KEP-6277 Notes 5): the API server *clears* a disabled field
before storing instead of rejecting it, as StatefulSet does for its other gated fields, and keeps
a value the stored object already had. That applies to ``spec.scheduling`` itself
(``WorkloadWithStatefulSet``), to ``resourceClaims`` (``DRAWorkloadResourceClaims``) and to
``schedulingConstraints`` (``TopologyAwareWorkloadScheduling``). Clearing rather than forbidding
``schedulingConstraints`` keeps a StatefulSet admissible on a cluster without topology-aware
scheduling, and means the controller never compiles constraints the PodGroup API (which forbids
them while the gate is off) would refuse.
"""

from __future__ import annotations

from typing import Any

from apiserver import field
from apiserver.api.types import Obj
from apiserver.field import ErrorList, Path
from apiserver.registry.strategies import statefulset_scheduling_beta as beta
from apiserver.registry.strategies.scheduling import drop_disabled_embedded_scheduling
from apiserver.rest.strategy import StrategyContext
from apiserver.workloadbuilder import (
    BuildOptions,
    DisruptionModeOption,
    SchedulingPolicyOption,
    ValidationInput,
    new_builder,
)
from apiserver.workloadbuilder import validation as dv
from apiserver.workloadbuilder.statefulset import (
    SCHEDULING_PATH,
    min_count_from_replicas,
    statefulset_build_options,
    statefulset_controller_ref,
    statefulset_workload_item,
)
from apiserver.workloadbuilder.statefulset import pod_spec_of as _pod_spec
from apiserver.workloadbuilder.statefulset import scheduling_of as _scheduling
from apiserver.workloadbuilder.statefulset import spec_of as _spec
from featuregates import WORKLOAD_WITH_STATEFULSET

__all__ = [
    "drop_disabled_scheduling_fields",
    "min_count_from_replicas",
    "scheduling_warnings",
    "statefulset_build_options",
    "statefulset_controller_ref",
    "statefulset_workload_item",
    "validate_scheduling",
    "validate_scheduling_update",
]

POLICY_PATH = SCHEDULING_PATH.child("schedulingPolicy")
GANG_PATH = POLICY_PATH.child("gang")
MIN_COUNT_PATH = GANG_PATH.child("minCount")
PARTITION_PATH = Path("spec").child("updateStrategy", "rollingUpdate", "partition")

GANG_REQUIRES_PARALLEL = (
    "gang scheduling requires podManagementPolicy: Parallel; OrderedReady creates pods sequentially, "
    "which can never satisfy a gang"
)
PARTITION_NOT_SUPPORTED = "partitioned rollouts are not supported for StatefulSets with spec.scheduling set"
MIN_COUNT_NOT_ALLOWED = (
    "gang minCount is derived from spec.replicas and may not be set "
    "(a user-configurable minCount is planned for Beta)"
)
IMMUTABLE = "field is immutable"
PARALLEL = "Parallel"
ORDERED_READY = "OrderedReady"


# -- gated fields --------------------------------------------------------------------------


def drop_disabled_scheduling_fields(ctx: StrategyContext, new: Obj, old: Obj | None) -> None:
    """Clear gated parts of ``new.spec.scheduling`` unless ``old`` already used them (see module doc)."""
    spec = new.get("spec")
    if not isinstance(spec, dict):
        return
    drop_disabled_embedded_scheduling(ctx.gates, WORKLOAD_WITH_STATEFULSET, spec, _scheduling(old))


# -- validation ----------------------------------------------------------------------------


def _structural(sched: Any, old_sched: Any) -> ErrorList:
    """Layer 1: the building blocks' own rules (ratcheted: unchanged blocks are not re-checked)."""
    return dv.validate_embedded_scheduling(sched, SCHEDULING_PATH, old_sched)


def _cross_field(ctx: StrategyContext, sts: Obj, sched: Any) -> ErrorList:
    """Layer 2: gang needs Parallel (OrderedReady is the default), and no user-set minCount
    (gangplane's ``StatefulSetWorkloadUserMinCount``: a minCount within ``spec.replicas``)."""
    policy = sched.get("schedulingPolicy") if isinstance(sched, dict) else None
    gang = policy.get("gang") if isinstance(policy, dict) else None
    if gang is None:
        return []
    errs: ErrorList = []
    if (_spec(sts).get("podManagementPolicy") or ORDERED_READY) != PARALLEL:
        errs.append(field.forbidden(GANG_PATH, GANG_REQUIRES_PARALLEL))
    if isinstance(gang, dict) and gang.get("minCount") is not None:
        if beta.user_min_count_enabled(ctx.gates):
            errs.extend(beta.min_count_errors(sts))
        else:
            errs.append(field.forbidden(MIN_COUNT_PATH, MIN_COUNT_NOT_ALLOWED))
    return errs


def _partition(ctx: StrategyContext, sts: Obj) -> ErrorList:
    """Alpha: a positive partition cannot coexist with spec.scheduling (create and update);
    gangplane's ``StatefulSetWorkloadPartition`` admits it (one PodGroup across revisions)."""
    if beta.partition_enabled(ctx.gates):
        return []
    strategy = _spec(sts).get("updateStrategy")
    rolling = strategy.get("rollingUpdate") if isinstance(strategy, dict) else None
    partition = rolling.get("partition") if isinstance(rolling, dict) else None
    if isinstance(partition, int) and not isinstance(partition, bool) and partition > 0:
        return [field.forbidden(PARTITION_PATH, PARTITION_NOT_SUPPORTED)]
    return []


def _semantic(ctx: StrategyContext, sts: Obj, old: Obj | None) -> ErrorList:
    """Layer 3: workloadbuilder on the controller's own item (DV already ran in layer 1)."""
    opts = BuildOptions(
        allowed_policies=(SchedulingPolicyOption.BASIC, SchedulingPolicyOption.GANG),
        allowed_disruption_modes=(DisruptionModeOption.SINGLE, DisruptionModeOption.ALL),
        disable_declarative_validation=True,
    )
    item = statefulset_workload_item(sts, ctx.gates)
    if not item.name:
        return []  # metadata validation reports the missing name; the tree would only add noise
    old_root = statefulset_workload_item(old, ctx.gates) if old is not None else None
    return new_builder(item, opts).validate(ValidationInput(old_root=old_root))


def validate_scheduling(ctx: StrategyContext, sts: Obj) -> ErrorList:
    """Create-time validation of ``spec.scheduling``; nothing to check when it is unset."""
    sched = _scheduling(sts)
    if sched is None:
        return []
    errs = _structural(sched, None)
    if not isinstance(sched, dict):
        return errs
    return [*errs, *_cross_field(ctx, sts, sched), *_partition(ctx, sts), *_semantic(ctx, sts, None)]


def validate_scheduling_update(ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
    """Update-time validation: the whole field is immutable in Alpha (add, remove, any change).

    A changed value is also checked in full, so the user sees what else is wrong with it; an
    unchanged one is not re-validated (ratcheting). The partition rule always runs, because the
    error belongs to the update that sets the partition. With gangplane's
    ``StatefulSetWorkloadUserMinCount`` only ``gang.minCount`` may change, and it is checked
    against ``spec.replicas`` on every update (a scale too).
    """
    new_sched, old_sched = _scheduling(new), _scheduling(old)
    user_min_count = beta.user_min_count_enabled(ctx.gates)
    errs: ErrorList = []
    if new_sched != old_sched:
        if user_min_count:
            errs.extend(beta.update_rules(new_sched, old_sched))
        else:
            errs.append(field.invalid(SCHEDULING_PATH, None, IMMUTABLE))
    if new_sched is None:
        return errs
    if new_sched != old_sched:
        errs.extend(_structural(new_sched, old_sched))
        if isinstance(new_sched, dict):
            errs.extend(_cross_field(ctx, new, new_sched))
            old_for_builder = old if isinstance(old_sched, dict) and _same_name(new, old) else None
            errs.extend(_semantic(ctx, new, old_for_builder))
    elif user_min_count:
        errs.extend(beta.min_count_errors(new))
    errs.extend(_partition(ctx, new))
    return errs


def _same_name(a: Obj, b: Obj) -> bool:
    return (a.get("metadata") or {}).get("name") == (b.get("metadata") or {}).get("name")


# -- warnings ------------------------------------------------------------------------------


def _claim_source(claim: Obj) -> tuple[Any, Any, Any]:
    return (claim.get("name"), claim.get("resourceClaimName"), claim.get("resourceClaimTemplateName"))


def scheduling_warnings(ctx: StrategyContext, sts: Obj) -> list[str]:
    """Warn (never reject) for each shared claim the pod template does not declare identically.

    KEP-5729: a pod uses a PodGroup claim only if its own ``resourceClaims`` entry has the same
    name and the same source; otherwise it gets a per-pod claim and the shared one sits unused.
    """
    sched = _scheduling(sts)
    claims = sched.get("resourceClaims") if isinstance(sched, dict) else None
    if not isinstance(claims, list):
        return []
    pod_claims = [c for c in _pod_spec(sts).get("resourceClaims") or [] if isinstance(c, dict)]
    pod_sources = [_claim_source(c) for c in pod_claims]
    warnings: list[str] = []
    for i, claim in enumerate(claims):
        if not isinstance(claim, dict) or _claim_source(claim) in pod_sources:
            continue
        warnings.append(
            f"spec.scheduling.resourceClaims[{i}]: spec.template.spec.resourceClaims has no entry with "
            f'name "{claim.get("name", "")}" and the same resourceClaimName/resourceClaimTemplateName; '
            "pods will not use this PodGroup-level shared claim"
        )
    return warnings

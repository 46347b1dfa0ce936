"""Resolution: defaults, then the user's input, then callbacks — on a private copy.

``resolve_scheduling_config`` is the one place where a WorkloadItem's effective scheduling
intent is decided, and both ``Builder.build_workload`` and ``Builder.validate`` use it, which is
what keeps admission and the controller in agreement.

Rules (upstream ``resolveSchedulingConfig``): start from a deep copy of ``default_config``
(or an empty config); an input block whose union has no member set means "not specified"; a
specified policy / constraints / disruption mode replaces the default field-by-field; resource
claims replace the default only when non-empty; callbacks then run in order on the resolved
copy. Mapping copies every value, so nothing the callbacks do reaches the caller's dicts.
"""

from __future__ import annotations

from typing import Any

from apiserver.api.types import Obj
from apiserver.workloadbuilder.types import (
    BasicSchedulingPolicy,
    DisruptionMode,
    GangSchedulingPolicy,
    ResourceClaim,
    SchedulingConfig,
    SchedulingConstraints,
    SchedulingPolicy,
    TopologyConstraint,
    WorkloadInput,
    WorkloadItem,
)


def _member(block: Any, key: str) -> Any:
    return block.get(key) if isinstance(block, dict) else None


def map_scheduling_policy(data: Obj | None, count_key: str = "minCount") -> SchedulingPolicy | None:
    """Basic wins when both are set (the union error is reported by validation, not here)."""
    if _member(data, "basic") is not None:
        return SchedulingPolicy(basic=BasicSchedulingPolicy())
    gang = _member(data, "gang")
    if gang is not None:
        count = _member(gang, count_key)
        return SchedulingPolicy(
            gang=GangSchedulingPolicy(min_count=count if isinstance(count, int) else None)
        )
    return None


def map_constraints(data: Obj | None) -> SchedulingConstraints | None:
    topology = _member(data, "topology")
    if not isinstance(topology, list) or not topology:
        return None
    return SchedulingConstraints(
        topology=[TopologyConstraint(key=str(_member(t, "key") or "")) for t in topology]
    )


def map_disruption_mode(data: Obj | None) -> DisruptionMode | None:
    if _member(data, "single") is not None:
        return DisruptionMode(single=True)
    if _member(data, "all") is not None:
        return DisruptionMode(all=True)
    return None


def map_resource_claims(data: list[Obj] | None) -> list[ResourceClaim]:
    return [
        ResourceClaim(
            name=str(c.get("name") or ""),
            resource_claim_name=c.get("resourceClaimName"),
            resource_claim_template_name=c.get("resourceClaimTemplateName"),
        )
        for c in (data or [])
        if isinstance(c, dict)
    ]


def map_leaf_input(inp: WorkloadInput) -> SchedulingConfig:
    return SchedulingConfig(
        policy=map_scheduling_policy(inp.policy.pod_group_data),
        constraints=map_constraints(inp.constraints.pod_group_data),
        disruption_mode=map_disruption_mode(inp.disruption_mode.pod_group_data),
        resource_claims=map_resource_claims(inp.resource_claims.pod_group_data),
    )


def map_composite_input(inp: WorkloadInput) -> SchedulingConfig:
    """The composite gang's ``minGroupCount`` travels in ``GangSchedulingPolicy.min_count``."""
    return SchedulingConfig(
        policy=map_scheduling_policy(inp.policy.composite_pod_group_data, count_key="minGroupCount"),
        constraints=map_constraints(inp.constraints.composite_pod_group_data),
        disruption_mode=map_disruption_mode(inp.disruption_mode.composite_pod_group_data),
    )


def resolve_scheduling_config(item: WorkloadItem) -> SchedulingConfig:
    resolved = item.default_config.deep_copy() if item.default_config is not None else SchedulingConfig()
    user = map_composite_input(item.input) if item.is_composite else map_leaf_input(item.input)
    if user.policy is not None:
        resolved.policy = user.policy
    if user.constraints is not None:
        resolved.constraints = user.constraints
    if user.disruption_mode is not None:
        resolved.disruption_mode = user.disruption_mode
    if user.resource_claims:
        resolved.resource_claims = user.resource_claims
    for callback in item.callbacks:
        if callback is not None:
            callback(resolved)
    return resolved

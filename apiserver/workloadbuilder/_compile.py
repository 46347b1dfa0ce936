"""Compile: a resolved SchedulingConfig becomes a v1beta1 (Composite)PodGroupTemplate dict.

Compile rules (upstream ``buildLeafTemplate`` / ``compileSchedulingPolicy``): a missing or empty
policy becomes ``basic: {}``; a gang must carry a resolved minCount (its ``>= 1`` bound is left to
validation); an empty topology list emits no ``schedulingConstraints``; a disruption mode with
neither member emits nothing; resource claims only when non-empty; ``priorityClassName`` and
``priority`` only when set. Tree checks run first so a malformed tree never compiles.
"""

from __future__ import annotations

from apiserver.api.types import Obj
from apiserver.workloadbuilder._resolve import resolve_scheduling_config
from apiserver.workloadbuilder.types import (
    BuildError,
    DisruptionMode,
    SchedulingConfig,
    SchedulingPolicy,
    WorkloadItem,
)


def check_item_tree(root: WorkloadItem | None) -> None:
    """Raise :class:`BuildError` for a nil/unnamed item, duplicate names, or a leaf/composite mix-up."""
    seen: set[str] = set()

    def visit(item: WorkloadItem | None) -> None:
        if item is None:
            raise BuildError("workload item cannot be nil")
        if not item.name:
            raise BuildError("workload item name cannot be empty")
        if item.name in seen:
            raise BuildError(
                f'duplicate workload item name "{item.name}": template names must be unique across the Workload'
            )
        seen.add(item.name)
        _check_input_union(item)
        for child in item.children:
            visit(child)

    visit(root)


def _check_input_union(item: WorkloadItem) -> None:
    inp = item.input
    if item.is_composite:
        for label, data in (
            ("policy", inp.policy.pod_group_data),
            ("constraints", inp.constraints.pod_group_data),
            ("disruptionMode", inp.disruption_mode.pod_group_data),
        ):
            if data is not None:
                raise BuildError(f'composite workload item "{item.name}" sets leaf building block: {label}')
        if inp.resource_claims.pod_group_data:
            raise BuildError(
                f'composite workload item "{item.name}" sets leaf building block: resourceClaims'
            )
        return
    for label, data in (
        ("policy", inp.policy.composite_pod_group_data),
        ("constraints", inp.constraints.composite_pod_group_data),
        ("disruptionMode", inp.disruption_mode.composite_pod_group_data),
    ):
        if data is not None:
            raise BuildError(f'leaf workload item "{item.name}" sets composite building block: {label}')


def _compile_policy(policy: SchedulingPolicy | None, *, composite: bool) -> Obj:
    if policy is None or policy.gang is None:
        return {"basic": {}}
    if policy.gang.min_count is None:
        if composite:
            raise BuildError("composite gang scheduling requires minGroupCount to be set after resolution")
        raise BuildError("gang scheduling requires minCount to be set after resolution")
    key = "minGroupCount" if composite else "minCount"
    return {"gang": {key: policy.gang.min_count}}


def _compile_disruption_mode(mode: DisruptionMode | None) -> Obj | None:
    if mode is None:
        return None
    if mode.all:
        return {"all": {}}
    if mode.single:
        return {"single": {}}
    return None


def _compile_common(name: str, cfg: SchedulingConfig, *, composite: bool) -> Obj:
    tmpl: Obj = {"name": name, "schedulingPolicy": _compile_policy(cfg.policy, composite=composite)}
    if cfg.constraints is not None and cfg.constraints.topology:
        tmpl["schedulingConstraints"] = {"topology": [{"key": t.key} for t in cfg.constraints.topology]}
    mode = _compile_disruption_mode(cfg.disruption_mode)
    if mode is not None:
        tmpl["disruptionMode"] = mode
    if cfg.priority_class_name:
        tmpl["priorityClassName"] = cfg.priority_class_name
    if cfg.priority is not None:
        tmpl["priority"] = cfg.priority
    return tmpl


def compile_pod_group_template(item: WorkloadItem) -> Obj:
    cfg = resolve_scheduling_config(item)
    tmpl = _compile_common(item.name, cfg, composite=False)
    if cfg.resource_claims:
        claims = []
        for c in cfg.resource_claims:
            claim: Obj = {"name": c.name}
            if c.resource_claim_name is not None:
                claim["resourceClaimName"] = c.resource_claim_name
            if c.resource_claim_template_name is not None:
                claim["resourceClaimTemplateName"] = c.resource_claim_template_name
            claims.append(claim)
        tmpl["resourceClaims"] = claims
    return tmpl


def compile_composite_template(item: WorkloadItem) -> Obj:
    cfg = resolve_scheduling_config(item)
    tmpl = _compile_common(item.name, cfg, composite=True)
    for child in item.children:
        if child.is_composite:
            tmpl.setdefault("compositePodGroupTemplates", []).append(compile_composite_template(child))
        else:
            tmpl.setdefault("podGroupTemplates", []).append(compile_pod_group_template(child))
    return tmpl


def compile_workload_spec(root: WorkloadItem | None) -> Obj:
    """One root ⇒ exactly one top-level template (leaf or composite)."""
    check_item_tree(root)
    assert root is not None  # check_item_tree rejects None
    if root.is_composite:
        return {"compositePodGroupTemplates": [compile_composite_template(root)]}
    return {"podGroupTemplates": [compile_pod_group_template(root)]}

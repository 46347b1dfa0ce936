"""Nodes (``pkg/registry/core/node``): taints, resources and the update rules."""

from __future__ import annotations

import copy
from typing import Any

from apiserver import field
from apiserver.field import ErrorList, Path
from apiserver.registry.strategies import podspec
from apiserver.registry.strategies.core.common import (
    UntrackedGenerationStrategy,
    _canonical_status_lists,
    _str,
    is_valid_cidr,
)
from apiserver.registry.strategies.podspec import (
    as_dict,
    as_list,
    fmt_errors,
    validate_quantity_value,
)
from apiserver.rest.strategy import Obj, StrategyContext
from apiserver.validation import names


def validate_node_taints(taints: Any, path: Path) -> ErrorList:
    """``validateNodeTaints``: key, value, effect; unique per (key, effect)."""
    errs: ErrorList = []
    seen: set[tuple[str, str]] = set()
    for i, t in enumerate(as_list(taints)):
        t = as_dict(t)
        p = path.index(i)
        key, value, effect = _str(t.get("key")), _str(t.get("value")), _str(t.get("effect"))
        errs.extend(fmt_errors(key, p.child("key"), names.is_qualified_name))
        msgs = names.is_valid_label_value(value)
        if msgs:
            errs.append(field.invalid(p.child("value"), value, ";".join(msgs)))
        errs.extend(podspec.validate_taint_effect(effect, False, p.child("effect")))
        if (key, effect) in seen:
            errs.append(
                field.FieldError(
                    field.ErrorType.DUPLICATE, str(p), t, "taints must be unique by key and effect pair"
                )
            )
            continue
        seen.add((key, effect))
    return errs


def _validate_node_resources(node: Obj) -> ErrorList:
    errs: ErrorList = []
    status = as_dict(node.get("status"))
    for kind in ("capacity", "allocatable"):
        for name, raw in as_dict(status.get(kind)).items():
            errs.extend(validate_quantity_value(name, raw, Path("status", kind, name))[1])
    return errs


def _validate_node_common(node: Obj) -> ErrorList:
    spec = as_dict(node.get("spec"))
    # kube validates taints under "metadata" (the path variable it had at hand); kept verbatim.
    errs = validate_node_taints(spec.get("taints"), Path("metadata", "taints"))
    errs.extend(_validate_node_resources(node))
    cidrs = as_list(spec.get("podCIDRs"))
    p = Path("spec", "podCIDRs")
    for i, c in enumerate(cidrs):
        errs.extend(fmt_errors(_str(c), p.index(i), is_valid_cidr))
    seen: set[str] = set()
    for i, c in enumerate(cidrs):
        if c in seen:
            errs.append(field.duplicate(p.index(i), c))
        seen.add(c)
    return errs


class NodeStrategy(UntrackedGenerationStrategy):
    """Nodes: kubelets register with a status, so create keeps it; updates keep the old one."""

    has_status = True

    def default(self, obj: Obj) -> None:
        status = obj.get("status")
        if isinstance(status, dict):
            if status.get("allocatable") is None and isinstance(status.get("capacity"), dict):
                status["allocatable"] = copy.deepcopy(status["capacity"])
            _canonical_status_lists(obj, "capacity", "allocatable")

    def prepare_for_create(self, ctx: StrategyContext, obj: Obj) -> None:
        """Unlike most resources the status given on create is kept (``kubelet`` registration)."""

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return _validate_node_common(obj)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_node_update(new, old)

    def validate_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_node_update(new, old)


def validate_node_update(new: Obj, old: Obj) -> ErrorList:
    """``ValidateNodeUpdate``: podCIDRs and providerID are set once; addresses unique."""
    errs = _validate_node_common(new)
    spec, old_spec = as_dict(new.get("spec")), as_dict(old.get("spec"))
    seen: list[Any] = []
    for i, addr in enumerate(as_list(as_dict(new.get("status")).get("addresses"))):
        if addr in seen:
            errs.append(field.duplicate(Path("status", "addresses").index(i), addr))
        seen.append(addr)
    old_cidrs = as_list(old_spec.get("podCIDRs"))
    if old_cidrs and old_cidrs != as_list(spec.get("podCIDRs")):
        errs.append(
            field.forbidden(
                Path("spec", "podCIDRs"), 'node updates may not change podCIDR except from "" to valid'
            )
        )
    old_pid = _str(old_spec.get("providerID"))
    if old_pid and old_pid != _str(spec.get("providerID")):
        errs.append(
            field.forbidden(
                Path("spec", "providerID"), 'node updates may not change providerID except from "" to valid'
            )
        )
    if spec.get("externalID") != old_spec.get("externalID"):
        errs.append(field.forbidden(Path("spec", "externalID"), "may not be updated"))
    return errs

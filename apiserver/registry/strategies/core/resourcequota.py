"""ResourceQuotas (``pkg/registry/core/resourcequota``)."""

from __future__ import annotations

from typing import Any

from apiserver import field
from apiserver.field import ErrorList, Path
from apiserver.registry.strategies import podspec
from apiserver.registry.strategies.core.common import UntrackedGenerationStrategy, _canonical_status_lists
from apiserver.registry.strategies.podspec import (
    as_dict,
    as_list,
    canonical_resource_list,
    fmt_errors,
    validate_quantity_value,
)
from apiserver.rest.strategy import Obj, StrategyContext
from apiserver.validation import names

_QUOTA_RESOURCES = frozenset(
    {
        "pods",
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
        "requests.cpu",
        "requests.memory",
        "requests.storage",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "cpu",
        "memory",
        "storage",
        "ephemeral-storage",
    }
)


_QUOTA_SCOPES = (
    "Terminating",
    "NotTerminating",
    "BestEffort",
    "NotBestEffort",
    "PriorityClass",
    "CrossNamespacePodAffinity",
    "VolumeAttributesClass",
)


def _validate_quota_resources(rl: Any, path: Path) -> ErrorList:
    errs: ErrorList = []
    for name, raw in as_dict(rl).items():
        rp = path.key(name)
        name_errs = fmt_errors(name, rp, names.is_qualified_name)
        if not name_errs and "/" not in name:
            if not podspec.is_standard_resource(name):
                name_errs.append(
                    field.invalid(rp, name, "must be a standard resource type or fully qualified")
                )
            elif name not in _QUOTA_RESOURCES and not name.startswith("requests.hugepages-"):
                name_errs.append(field.invalid(rp, name, "must be a standard resource for quota"))
        errs.extend(name_errs)
        errs.extend(validate_quantity_value(name, raw, rp)[1])
    return errs


class ResourceQuotaStrategy(UntrackedGenerationStrategy):
    """ResourceQuotas: quota resource names and quantities; status is the controller's."""

    has_status = True

    def default(self, obj: Obj) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict) and isinstance(spec.get("hard"), dict):
            spec["hard"] = canonical_resource_list(spec["hard"])
        _canonical_status_lists(obj, "hard", "used")

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_resource_quota_spec(as_dict(obj.get("spec")))

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_resource_quota_spec(as_dict(new.get("spec")))

    def validate_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        status = as_dict(new.get("status"))
        return _validate_quota_resources(
            status.get("hard"), Path("status", "hard")
        ) + _validate_quota_resources(status.get("used"), Path("status", "used"))


def validate_resource_quota_spec(spec: Obj) -> ErrorList:
    errs = _validate_quota_resources(spec.get("hard"), Path("spec", "hard"))
    scopes = as_list(spec.get("scopes"))
    for s in scopes:
        if s not in _QUOTA_SCOPES:
            errs.append(field.invalid(Path("spec", "scopes"), scopes, "unsupported scope"))
    if {"BestEffort", "NotBestEffort"} <= set(scopes) or {"Terminating", "NotTerminating"} <= set(scopes):
        errs.append(field.invalid(Path("spec", "scopes"), scopes, "conflicting scopes"))
    return errs

"""Declarative-validation equivalents for the ``scheduling.k8s.io/v1alpha3`` building blocks.

These reproduce what the generated ``Validate_WorkloadPodGroup*`` functions report, with
apimachinery's rendering, so the same rules hold whether a block arrives embedded in a
StatefulSet, in a Job, or is checked by ``Builder.validate``. Inputs are wire dicts; every
function takes the block's field path and, on update, the previous value.

Update ratcheting follows declarative validation: an unchanged value is not re-validated, so
tightening a rule never breaks an object that is already stored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from apiserver import field
from apiserver.api.types import Obj
from apiserver.field import ErrorList, Path
from apiserver.workloadbuilder import _names

MAX_RESOURCE_CLAIMS = 4
MAX_TOPOLOGY_CONSTRAINTS = 1
MINIMUM_COUNT = 1


def _is_set(obj: Obj, key: str) -> bool:
    return obj.get(key) is not None


def _unchanged(value: Any, old: Any) -> bool:
    return old is not None and value == old


def _format_errors(value: str, path: Path, check: Callable[[str], list[str]]) -> ErrorList:
    return [field.invalid(path, value, msg) for msg in check(value)]


def validate_dns_label(value: str, path: Path) -> ErrorList:
    """``+k8s:format=k8s-short-name``."""
    return _format_errors(value, path, _names.is_dns1123_label)


def validate_dns_subdomain(value: str, path: Path) -> ErrorList:
    """``+k8s:format=k8s-long-name``."""
    return _format_errors(value, path, _names.is_dns1123_subdomain)


def validate_label_key(value: str, path: Path) -> ErrorList:
    """``+k8s:format=k8s-label-key``: the topology key of a TopologyConstraint."""
    return _format_errors(value, path, _names.is_qualified_name)


def validate_path_segment_name(value: str, path: Path) -> ErrorList:
    """``+k8s:format=k8s-path-segment-name``: kind/name in a TypedLocalObjectReference."""
    return _format_errors(value, path, _names.is_path_segment_name)


def union(
    path: Path,
    obj: Obj,
    members: Sequence[str],
    old: Obj | None = None,
    is_set: Callable[[Obj, str], bool] = _is_set,
) -> ErrorList:
    """``validate.Union``: exactly one member set; skipped on update when membership is unchanged."""
    specified = [m for m in members if is_set(obj, m)]
    if old is not None and specified == [m for m in members if is_set(old, m)]:
        return []
    all_fields = ", ".join(f"`{m}`" for m in members)
    if len(specified) > 1:
        # apimachinery lists the specified members without backticks in the bad value.
        return [
            field.invalid(
                path, "{" + ", ".join(specified) + "}", f"must specify exactly one of: {all_fields}"
            )
        ]
    if not specified:
        return [field.invalid(path, "", f"must specify one of: {all_fields}")]
    return []


def _expect_object(value: Any, path: Path) -> ErrorList:
    if isinstance(value, dict):
        return []
    return [field.type_invalid(path, value, "expected an object")]


def validate_minimum(value: Any, path: Path, minimum: int = MINIMUM_COUNT) -> ErrorList:
    """``+k8s:minimum``; ``bool`` is not an integer here even though Python says it is."""
    if isinstance(value, bool) or not isinstance(value, int):
        return [field.type_invalid(path, value, "expected an integer")]
    if value < minimum:
        return [field.invalid(path, value, f"must be greater than or equal to {minimum}")]
    return []


def validate_scheduling_policy(policy: Obj | None, path: Path, old: Obj | None = None) -> ErrorList:
    """``WorkloadPodGroupSchedulingPolicy``: exactly one of basic/gang; optional gang.minCount >= 1."""
    if policy is None or _unchanged(policy, old):
        return []
    if errs := _expect_object(policy, path):
        return errs
    errs = union(path, policy, ("basic", "gang"), old if isinstance(old, dict) else None)
    gang = policy.get("gang")
    if gang is not None:
        errs.extend(_expect_object(gang, path.child("gang")))
        if isinstance(gang, dict) and gang.get("minCount") is not None:
            errs.extend(validate_minimum(gang["minCount"], path.child("gang", "minCount")))
    return errs


def validate_composite_scheduling_policy(policy: Obj | None, path: Path, old: Obj | None = None) -> ErrorList:
    """``WorkloadCompositePodGroupSchedulingPolicy``: basic/gang with optional minGroupCount >= 1."""
    if policy is None or _unchanged(policy, old):
        return []
    if errs := _expect_object(policy, path):
        return errs
    errs = union(path, policy, ("basic", "gang"), old if isinstance(old, dict) else None)
    gang = policy.get("gang")
    if isinstance(gang, dict) and gang.get("minGroupCount") is not None:
        errs.extend(validate_minimum(gang["minGroupCount"], path.child("gang", "minGroupCount")))
    return errs


def validate_topology(topology: Any, path: Path) -> ErrorList:
    """An atomic list of at most one ``{key}``; each key required and in label-key format."""
    if topology is None:
        return []
    if not isinstance(topology, list):
        return [field.type_invalid(path, topology, "expected a list")]
    errs: ErrorList = []
    if len(topology) > MAX_TOPOLOGY_CONSTRAINTS:
        errs.append(field.too_many(path, len(topology), MAX_TOPOLOGY_CONSTRAINTS))
    for i, tc in enumerate(topology):
        key_path = path.index(i).child("key")
        key = tc.get("key") if isinstance(tc, dict) else None
        if not key:
            errs.append(field.required(key_path))
        else:
            errs.extend(validate_label_key(key, key_path))
    return errs


def validate_scheduling_constraints(constraints: Obj | None, path: Path, old: Obj | None = None) -> ErrorList:
    """``WorkloadPodGroupSchedulingConstraints`` (the composite form has the same rules)."""
    if constraints is None or _unchanged(constraints, old):
        return []
    if errs := _expect_object(constraints, path):
        return errs
    return validate_topology(constraints.get("topology"), path.child("topology"))


def validate_disruption_mode(mode: Obj | None, path: Path, old: Obj | None = None) -> ErrorList:
    """``WorkloadPodGroupDisruptionMode``: exactly one of single/all (composite form identical)."""
    if mode is None or _unchanged(mode, old):
        return []
    if errs := _expect_object(mode, path):
        return errs
    return union(path, mode, ("single", "all"), old if isinstance(old, dict) else None)


validate_composite_scheduling_constraints = validate_scheduling_constraints
validate_composite_disruption_mode = validate_disruption_mode


def validate_resource_claim(claim: Obj, path: Path, old: Obj | None = None) -> ErrorList:
    """``WorkloadPodGroupResourceClaim``: DNS-label name; exactly one subdomain-named source."""
    if _unchanged(claim, old):
        return []
    if errs := _expect_object(claim, path):
        return errs
    errs: ErrorList = []
    name = claim.get("name")
    if not name:
        errs.append(field.required(path.child("name")))
    else:
        errs.extend(validate_dns_label(name, path.child("name")))
    errs.extend(
        union(
            path,
            claim,
            ("resourceClaimName", "resourceClaimTemplateName"),
            old if isinstance(old, dict) else None,
        )
    )
    for key in ("resourceClaimName", "resourceClaimTemplateName"):
        value = claim.get(key)
        if value is not None:
            errs.extend(validate_dns_subdomain(value, path.child(key)))
    return errs


def validate_resource_claims(claims: list[Obj] | None, path: Path, old: list[Obj] | None = None) -> ErrorList:
    """The embedding list: ``listType=map`` keyed by name, ``maxItems=4``, each claim validated.

    Old claims are correlated with new ones by name, as the list is a map.
    """
    if not claims or _unchanged(claims, old):
        return []
    if not isinstance(claims, list):
        return [field.type_invalid(path, claims, "expected a list")]
    errs: ErrorList = []
    if len(claims) > MAX_RESOURCE_CLAIMS:
        errs.append(field.too_many(path, len(claims), MAX_RESOURCE_CLAIMS))
    errs.extend(unique_by_name(claims, path))
    old_by_name = {c.get("name"): c for c in (old or []) if isinstance(c, dict)}
    for i, claim in enumerate(claims):
        old_claim = old_by_name.get(claim.get("name")) if isinstance(claim, dict) else None
        errs.extend(validate_resource_claim(claim, path.index(i), old_claim))
    return errs


def validate_embedded_scheduling(sched: Any, path: Path, old: Any = None) -> ErrorList:
    """An embedded ``spec.scheduling`` (Job, StatefulSet): an object whose four blocks each follow
    their own rules above, ratcheted block by block on update.

    The Job and StatefulSet strategies both embed the same v1alpha3 blocks, so both call this.
    """
    if not isinstance(sched, dict):
        return [field.type_invalid(path, sched, "expected an object")]
    before = old if isinstance(old, dict) else {}
    return [
        *validate_scheduling_policy(
            sched.get("schedulingPolicy"), path.child("schedulingPolicy"), before.get("schedulingPolicy")
        ),
        *validate_scheduling_constraints(
            sched.get("schedulingConstraints"),
            path.child("schedulingConstraints"),
            before.get("schedulingConstraints"),
        ),
        *validate_disruption_mode(
            sched.get("disruptionMode"), path.child("disruptionMode"), before.get("disruptionMode")
        ),
        *validate_resource_claims(
            sched.get("resourceClaims"), path.child("resourceClaims"), before.get("resourceClaims")
        ),
    ]


def unique_by_name(items: list[Any], path: Path, key: str = "name") -> ErrorList:
    """``listType=map`` uniqueness: every later duplicate is reported with the whole item."""
    seen: set[Any] = set()
    errs: ErrorList = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        k = item.get(key)
        if not isinstance(k, str):
            continue
        if k in seen:
            errs.append(field.duplicate(path.index(i), item))
        seen.add(k)
    return errs

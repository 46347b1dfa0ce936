"""Pod update validation (kube's ``ValidatePodSpecUpdate``): what may change on a live Pod.

Only images, ``activeDeadlineSeconds``, added tolerations, scheduling-gate removals and a few
gated node-selector/affinity additions may change; anything else is ``Forbidden`` with kube's
spec diff in the message.
"""

from __future__ import annotations

import copy
from typing import Any

from apiserver import field
from apiserver.api.podresources import pod_qos_class
from apiserver.api.types import Obj, as_dict, as_list
from apiserver.api.types import as_int as _int
from apiserver.api.types import as_str as _str
from apiserver.field import ErrorList, Path
from apiserver.registry.strategies.pod_validation import MAX_INT32, validate_tolerations
from apiserver.validation import names

UPDATABLE_POD_SPEC_FIELDS = [
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
]


def _diff_lines(old: Any, new: Any, path: str, out: list[str]) -> None:
    if old == new:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for k in sorted(set(old) | set(new)):
            _diff_lines(old.get(k), new.get(k), f"{path}.{k}" if path else k, out)
        return
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            _diff_lines(a, b, f"{path}[{i}]", out)
        return
    if old is not None:
        out.append(f"- \t{path}: {field.render_value(old)}")
    if new is not None:
        out.append(f"+ \t{path}: {field.render_value(new)}")


def spec_diff(old: Any, new: Any, type_name: str = "core.PodSpec") -> str:
    """A short ``cmp.Diff``-like rendering of what changed (paths, ``-`` old, ``+`` new)."""
    lines: list[str] = []
    _diff_lines(old, new, "", lines)
    return "\n".join([f"  {type_name}{{", *lines, "  }"]) + "\n"


def _only_added_tolerations(new: list[Any], old: list[Any], path: Path) -> ErrorList:
    for o in old:
        o = as_dict(o)
        found = False
        for n in new:
            n = as_dict(n)
            clone = dict(o)
            if "tolerationSeconds" in n:
                clone["tolerationSeconds"] = n["tolerationSeconds"]
            else:
                clone.pop("tolerationSeconds", None)
            if clone == n:
                found = True
                break
        if not found:
            return [
                field.forbidden(path, "existing toleration can not be modified except its tolerationSeconds")
            ]
    return validate_tolerations(new, path)


def _only_deleted_gates(new: list[Any], old: list[Any], path: Path) -> ErrorList:
    old_names = {_str(as_dict(g).get("name")) for g in old}
    errs: ErrorList = []
    for i, g in enumerate(new):
        name = _str(as_dict(g).get("name"))
        if name not in old_names:
            errs.append(
                field.forbidden(
                    path.index(i).child("name"),
                    f"only deletion is allowed, but found new scheduling gate '{name}'",
                )
            )
    return errs


def validate_pod_spec_update(new_pod: Obj, old_pod: Obj) -> ErrorList:
    """``ValidatePodUpdate``'s spec rules: only images, deadlines, tolerations and gates change.

    Everything else (``nodeName`` included: binding sets it) must stay as it was; the
    ``Forbidden`` message lists what may change, like kube's, followed by a diff.
    """
    new_spec, old_spec = as_dict(new_pod.get("spec")), as_dict(old_pod.get("spec"))
    sp = Path("spec")
    errs: ErrorList = []
    for key in ("containers", "initContainers"):
        new_c, old_c = as_list(new_spec.get(key)), as_list(old_spec.get(key))
        if len(new_c) != len(old_c):
            errs.append(field.forbidden(sp.child(key), "pod updates may not add or remove containers"))
            return errs
        for i, c in enumerate(new_c):
            image = _str(as_dict(c).get("image"))
            if not image:
                errs.append(field.required(sp.child(key).index(i).child("image")))
            if image.strip() != image:
                errs.append(
                    field.invalid(
                        sp.child(key).index(i).child("image"),
                        image,
                        "must not have leading or trailing whitespace",
                    )
                )
    new_ads, old_ads = new_spec.get("activeDeadlineSeconds"), old_spec.get("activeDeadlineSeconds")
    if new_ads is not None:
        v = _int(new_ads)
        if v is None or v < 0 or v > MAX_INT32:
            errs.append(
                field.invalid(
                    sp.child("activeDeadlineSeconds"), new_ads, names.inclusive_range_error(0, MAX_INT32)
                )
            )
            return errs
        if old_ads is not None and (_int(old_ads) or 0) < v:
            errs.append(
                field.invalid(
                    sp.child("activeDeadlineSeconds"), v, "must be less than or equal to previous value"
                )
            )
            return errs
    elif old_ads is not None:
        errs.append(
            field.invalid(
                sp.child("activeDeadlineSeconds"),
                None,
                "must not update from a positive integer to nil value",
            )
        )
    errs.extend(
        _only_added_tolerations(
            as_list(new_spec.get("tolerations")),
            as_list(old_spec.get("tolerations")),
            sp.child("tolerations"),
        )
    )
    errs.extend(
        _only_deleted_gates(
            as_list(new_spec.get("schedulingGates")),
            as_list(old_spec.get("schedulingGates")),
            sp.child("schedulingGates"),
        )
    )
    if new_spec == old_spec:
        return errs
    old_qos = as_dict(old_pod.get("status")).get("qosClass") or pod_qos_class(old_pod)
    if old_qos != pod_qos_class(new_pod):
        errs.append(
            field.invalid(
                "metadata", as_dict(new_pod.get("status")).get("qosClass") or "", "Pod QoS is immutable"
            )
        )
    if new_spec.get("schedulingGroup") != old_spec.get("schedulingGroup"):
        errs.append(
            field.invalid(sp.child("schedulingGroup"), new_spec.get("schedulingGroup"), "field is immutable")
        )
    munged = copy.deepcopy(new_spec)
    for key in ("containers", "initContainers"):
        for c, oc in zip(as_list(munged.get(key)), as_list(old_spec.get(key)), strict=False):
            if isinstance(c, dict):
                _set_or_pop(c, "image", as_dict(oc).get("image"))
    for key in ("activeDeadlineSeconds", "schedulingGates", "tolerations", "schedulingGroup"):
        _set_or_pop(munged, key, old_spec.get(key))
    old_tgps, new_tgps = (
        _int(old_spec.get("terminationGracePeriodSeconds")),
        _int(munged.get("terminationGracePeriodSeconds")),
    )
    if old_tgps is not None and old_tgps < 0 and new_tgps == 1:
        munged["terminationGracePeriodSeconds"] = old_tgps
    if as_list(old_spec.get("schedulingGates")):
        errs.extend(_gated_node_selector_mutation(munged, old_spec, sp))
    if munged != old_spec:
        errs.append(
            field.forbidden(
                sp,
                "pod updates may not change fields other than "
                + ",".join(UPDATABLE_POD_SPEC_FIELDS)
                + "\n"
                + spec_diff(old_spec, munged),
            )
        )
    return errs


def _gated_node_selector_mutation(munged: Obj, old_spec: Obj, sp: Path) -> ErrorList:
    """Gated pods may gain nodeSelector entries (never lose or change them)."""
    new_ns, old_ns = as_dict(munged.get("nodeSelector")), as_dict(old_spec.get("nodeSelector"))
    if new_ns == old_ns:
        return []
    errs: ErrorList = []
    for k, v in old_ns.items():
        if new_ns.get(k) != v:
            errs.append(
                field.invalid(
                    sp.child("nodeSelector"),
                    new_ns,
                    "only additions to spec.nodeSelector are allowed (no mutations or deletions)",
                )
            )
            break
    _set_or_pop(munged, "nodeSelector", old_spec.get("nodeSelector"))
    return errs


def _set_or_pop(d: Obj, key: str, value: Any) -> None:
    if value is None:
        d.pop(key, None)
    else:
        d[key] = copy.deepcopy(value)

"""LimitRanges (``pkg/registry/core/limitrange``)."""

from __future__ import annotations

from typing import Any

from apiserver import field
from apiserver.field import ErrorList, Path
from apiserver.registry.strategies import podspec
from apiserver.registry.strategies.core.common import UntrackedGenerationStrategy, _str
from apiserver.registry.strategies.podspec import (
    as_dict,
    as_list,
    canonical_resource_list,
    fmt_errors,
    quantity_or_none,
    quantity_text,
)
from apiserver.rest.strategy import Obj, StrategyContext
from apiserver.validation import names

LIMIT_TYPES = frozenset({"Pod", "Container", "PersistentVolumeClaim"})


class LimitRangeStrategy(UntrackedGenerationStrategy):
    """LimitRanges: container defaults derived from max/default/min; relational checks."""

    def default(self, obj: Obj) -> None:
        for item in as_list(as_dict(obj.get("spec")).get("limits")):
            if not isinstance(item, dict):
                continue
            for key in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio"):
                if isinstance(item.get(key), dict):
                    item[key] = canonical_resource_list(item[key])
            if item.get("type") != "Container":
                continue
            default = item.setdefault("default", {})
            default_req = item.setdefault("defaultRequest", {})
            for k, v in as_dict(item.get("max")).items():
                default.setdefault(k, v)
            for k, v in default.items():
                default_req.setdefault(k, v)
            for k, v in as_dict(item.get("min")).items():
                default_req.setdefault(k, v)

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_limit_range(obj)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_limit_range(new)


def validate_limit_range(obj: Obj) -> ErrorList:
    """``ValidateLimitRange`` (type names, resource names, min <= default(Request) <= max)."""
    errs: ErrorList = []
    lp = Path("spec", "limits")
    seen_types: set[str] = set()
    for i, item in enumerate(as_list(as_dict(obj.get("spec")).get("limits"))):
        item = as_dict(item)
        p = lp.index(i)
        ltype = _str(item.get("type"))
        type_errs = fmt_errors(ltype, p.child("type"), names.is_qualified_name)
        if not type_errs and "/" not in ltype and ltype not in LIMIT_TYPES:
            type_errs.append(
                field.invalid(p.child("type"), ltype, "must be a standard limit type or fully qualified")
            )
        errs.extend(type_errs)
        if ltype in seen_types:
            errs.append(field.duplicate(p.child("type"), ltype))
        seen_types.add(ltype)
        values: dict[str, dict[str, Any]] = {}
        kinds = (
            ["max", "min"]
            + (["default", "defaultRequest"] if ltype != "Pod" else [])
            + ["maxLimitRequestRatio"]
        )
        if ltype == "Pod":
            for key in ("default", "defaultRequest"):
                if as_dict(item.get(key)):
                    errs.append(field.forbidden(p.child(key), "may not be specified when `type` is 'Pod'"))
        for kind in kinds:
            for name, raw in as_dict(item.get(kind)).items():
                rp = p.child(kind).key(name)
                if ltype in ("Pod", "Container"):
                    errs.extend(podspec.validate_container_resource_name(name, rp))
                else:
                    errs.extend(podspec.validate_resource_name(name, rp))
                q = quantity_or_none(raw)
                if q is not None:
                    values.setdefault(name, {})[kind] = (q, quantity_text(raw))
        if (
            ltype == "PersistentVolumeClaim"
            and "storage" not in as_dict(item.get("min"))
            and "storage" not in as_dict(item.get("max"))
        ):
            errs.append(
                field.required(
                    p.child("limits"),
                    "either minimum or maximum storage value is required, but neither was provided",
                )
            )
        for name, v in values.items():
            mn, mx, df, dr = v.get("min"), v.get("max"), v.get("default"), v.get("defaultRequest")
            if mn and mx and mn[0] > mx[0]:
                errs.append(
                    field.invalid(
                        p.child("min").key(name),
                        mn[1],
                        f"min value {mn[1]} is greater than max value {mx[1]}",
                    )
                )
            if dr and mn and mn[0] > dr[0]:
                errs.append(
                    field.invalid(
                        p.child("defaultRequest").key(name),
                        dr[1],
                        f"min value {mn[1]} is greater than default request value {dr[1]}",
                    )
                )
            if dr and mx and dr[0] > mx[0]:
                errs.append(
                    field.invalid(
                        p.child("defaultRequest").key(name),
                        dr[1],
                        f"default request value {dr[1]} is greater than max value {mx[1]}",
                    )
                )
            if dr and df and dr[0] > df[0]:
                errs.append(
                    field.invalid(
                        p.child("defaultRequest").key(name),
                        dr[1],
                        f"default request value {dr[1]} is greater than default limit value {df[1]}",
                    )
                )
            if df and mn and mn[0] > df[0]:
                errs.append(
                    field.invalid(
                        p.child("default").key(name),
                        mn[1],
                        f"min value {mn[1]} is greater than default value {df[1]}",
                    )
                )
            if df and mx and df[0] > mx[0]:
                errs.append(
                    field.invalid(
                        p.child("default").key(name),
                        mx[1],
                        f"default value {df[1]} is greater than max value {mx[1]}",
                    )
                )
            ratio = v.get("maxLimitRequestRatio")
            if ratio and ratio[0] < 1:
                errs.append(
                    field.invalid(
                        p.child("maxLimitRequestRatio").key(name),
                        ratio[1],
                        f"ratio {ratio[1]} is less than 1",
                    )
                )
    return errs

"""Strategy of autoscaling/v2 HorizontalPodAutoscaler (kube's ``pkg/registry/autoscaling``).

Defaults follow ``autoscaling/v2``'s ``SetDefaults_HorizontalPodAutoscaler``: ``minReplicas`` 1,
a CPU target of 80 % average utilization when no metric is given, and the default scale-up /
scale-down rules filled into a ``behavior`` that is present. Validation covers the target
reference, the replica bounds, each metric source and target, and the behavior policies.
The ``horizontal-pod-autoscaler-controller`` (``controllers/podautoscaler``) acts on them with the
Resource metrics gangplane's ``metrics.k8s.io`` computes for the simulated pods.
"""

from __future__ import annotations

from typing import Any

from apiserver import field
from apiserver.api.types import as_int as _int
from apiserver.field import ErrorList, Path
from apiserver.rest.strategy import Obj, Strategy, StrategyContext
from apiserver.validation import names

GROUP = "autoscaling"
METRIC_TYPES = ["ContainerResource", "External", "Object", "Pods", "Resource"]
TARGET_TYPES = ["AverageValue", "Utilization", "Value"]
SELECT_POLICIES = ["Disabled", "Max", "Min"]
POLICY_TYPES = ["Percent", "Pods"]
MAX_PERIOD_SECONDS = 1800
MAX_STABILIZATION_SECONDS = 3600
_SOURCE_KEYS = {
    "Resource": "resource",
    "ContainerResource": "containerResource",
    "Pods": "pods",
    "Object": "object",
    "External": "external",
}


def _dict(v: Any) -> Obj:
    return v if isinstance(v, dict) else {}


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def scale_up_defaults() -> Obj:
    return {
        "stabilizationWindowSeconds": 0,
        "selectPolicy": "Max",
        "policies": [
            {"type": "Pods", "value": 4, "periodSeconds": 15},
            {"type": "Percent", "value": 100, "periodSeconds": 15},
        ],
    }


def scale_down_defaults() -> Obj:
    return {"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}


def _fill_rules(rules: Any, defaults: Obj) -> Obj:
    """``GenerateHPAScale{Up,Down}Rules``: unset fields of a given rule take the defaults."""
    if not isinstance(rules, dict):
        return defaults
    out = dict(rules)
    for k, v in defaults.items():
        if out.get(k) is None:
            out[k] = v
    return out


def default_hpa(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1
    if not spec.get("metrics"):
        spec["metrics"] = [
            {
                "type": "Resource",
                "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}},
            }
        ]
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        behavior["scaleUp"] = _fill_rules(behavior.get("scaleUp"), scale_up_defaults())
        behavior["scaleDown"] = _fill_rules(behavior.get("scaleDown"), scale_down_defaults())


def _validate_target(target: Any, path: Path) -> ErrorList:
    t = _dict(target)
    ttype = t.get("type")
    errs: ErrorList = []
    if not ttype:
        errs.append(field.required(path.child("type"), "must specify a metric target type"))
    elif ttype not in TARGET_TYPES:
        errs.append(field.not_supported(path.child("type"), ttype, TARGET_TYPES))
    if ttype == "Utilization" and t.get("averageUtilization") is None:
        errs.append(
            field.required(path.child("averageUtilization"), "must set either a target value or averageValue")
        )
    if ttype == "Value" and t.get("value") is None:
        errs.append(
            field.required(
                path.child("value"), "must set either a target value for metric or a per-pod target"
            )
        )
    if ttype == "AverageValue" and t.get("averageValue") is None:
        errs.append(
            field.required(
                path.child("averageValue"), "must set either a target value for metric or a per-pod target"
            )
        )
    util = _int(t.get("averageUtilization"))
    if util is not None and util < 1:
        errs.append(field.invalid(path.child("averageUtilization"), util, "must be greater than 0"))
    return errs


def _validate_metric(metric: Any, path: Path) -> ErrorList:
    m = _dict(metric)
    mtype = m.get("type")
    if not mtype:
        return [field.required(path.child("type"), "must specify a metric source type")]
    if mtype not in METRIC_TYPES:
        return [field.not_supported(path.child("type"), mtype, METRIC_TYPES)]
    key = _SOURCE_KEYS[mtype]
    errs: ErrorList = []
    for other_type, other_key in _SOURCE_KEYS.items():
        if other_key != key and m.get(other_key) is not None:
            errs.append(
                field.forbidden(
                    path.child(other_key),
                    f"must populate the given metric source only ({other_type} is not {mtype})",
                )
            )
    src = m.get(key)
    sp = path.child(key)
    if src is None:
        errs.append(
            field.required(sp, f"must populate information for the given metric source (type {mtype})")
        )
        return errs
    src = _dict(src)
    if mtype in ("Resource", "ContainerResource"):
        if not _str(src.get("name")):
            errs.append(field.required(sp.child("name"), "must specify a resource name"))
        if mtype == "ContainerResource":
            container = _str(src.get("container"))
            if not container:
                errs.append(field.required(sp.child("container"), "must specify a container"))
            else:
                errs.extend(
                    field.invalid(sp.child("container"), container, msg)
                    for msg in names.is_dns1123_label(container)
                )
    else:
        mp = sp.child("metric")
        if not _str(_dict(src.get("metric")).get("name")):
            errs.append(field.required(mp.child("name"), "must specify a metric name"))
        if mtype == "Object":
            ref = _dict(src.get("describedObject"))
            rp = sp.child("describedObject")
            if not _str(ref.get("kind")):
                errs.append(field.required(rp.child("kind")))
            if not _str(ref.get("name")):
                errs.append(field.required(rp.child("name")))
    errs.extend(_validate_target(src.get("target"), sp.child("target")))
    return errs


def _validate_rules(rules: Any, path: Path) -> ErrorList:
    if rules is None:
        return []
    r = _dict(rules)
    errs: ErrorList = []
    win = _int(r.get("stabilizationWindowSeconds"))
    if win is not None and not 0 <= win <= MAX_STABILIZATION_SECONDS:
        errs.append(
            field.invalid(
                path.child("stabilizationWindowSeconds"),
                win,
                f"must be less than or equal to {MAX_STABILIZATION_SECONDS}"
                if win > 0
                else "must be greater than or equal to zero",
            )
        )
    sel = r.get("selectPolicy")
    if sel is not None and sel not in SELECT_POLICIES:
        errs.append(field.not_supported(path.child("selectPolicy"), sel, SELECT_POLICIES))
    policies = _list(r.get("policies"))
    if not policies and sel != "Disabled":
        errs.append(field.required(path.child("policies"), "must specify at least one Policy"))
    for i, pol in enumerate(policies):
        pp = path.child("policies").index(i)
        p = _dict(pol)
        if p.get("type") not in POLICY_TYPES:
            errs.append(field.not_supported(pp.child("type"), p.get("type"), POLICY_TYPES))
        value = _int(p.get("value"))
        if value is None or value <= 0:
            errs.append(field.invalid(pp.child("value"), p.get("value"), "must be greater than zero"))
        period = _int(p.get("periodSeconds"))
        if period is None or period <= 0:
            errs.append(
                field.invalid(pp.child("periodSeconds"), p.get("periodSeconds"), "must be greater than zero")
            )
        elif period > MAX_PERIOD_SECONDS:
            errs.append(
                field.invalid(
                    pp.child("periodSeconds"), period, f"must be less than or equal to {MAX_PERIOD_SECONDS}"
                )
            )
    return errs


def validate_hpa_spec(spec: Obj) -> ErrorList:
    sp = Path("spec")
    errs: ErrorList = []
    min_r = _int(spec.get("minReplicas"))
    max_r = _int(spec.get("maxReplicas")) or 0
    if min_r is not None and min_r < 1:
        errs.append(field.invalid(sp.child("minReplicas"), min_r, "must be greater than or equal to 1"))
    if max_r < 1:
        errs.append(field.invalid(sp.child("maxReplicas"), max_r, "must be greater than 0"))
    if min_r is not None and max_r < min_r:
        errs.append(
            field.invalid(sp.child("maxReplicas"), max_r, "must be greater than or equal to `minReplicas`")
        )
    ref = _dict(spec.get("scaleTargetRef"))
    rp = sp.child("scaleTargetRef")
    kind, name = _str(ref.get("kind")), _str(ref.get("name"))
    if not kind:
        errs.append(field.required(rp.child("kind")))
    else:
        errs.extend(field.invalid(rp.child("kind"), kind, m) for m in names.is_valid_path_segment_name(kind))
    if not name:
        errs.append(field.required(rp.child("name")))
    else:
        errs.extend(field.invalid(rp.child("name"), name, m) for m in names.is_valid_path_segment_name(name))
    for i, m in enumerate(_list(spec.get("metrics"))):
        errs.extend(_validate_metric(m, sp.child("metrics").index(i)))
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        bp = sp.child("behavior")
        errs.extend(_validate_rules(behavior.get("scaleUp"), bp.child("scaleUp")))
        errs.extend(_validate_rules(behavior.get("scaleDown"), bp.child("scaleDown")))
    return errs


def validate_hpa_status(status: Obj) -> ErrorList:
    errs: ErrorList = []
    for key in ("currentReplicas", "desiredReplicas"):
        v = _int(status.get(key))
        if v is not None and v < 0:
            errs.append(field.invalid(Path("status", key), v, "must be greater than or equal to 0"))
    return errs


class HorizontalPodAutoscalerStrategy(Strategy):
    has_status = True

    def default(self, obj: Obj) -> None:
        default_hpa(obj)

    def prepare_for_create(self, ctx: StrategyContext, obj: Obj) -> None:
        obj["status"] = {"desiredReplicas": 0}

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_hpa_spec(_dict(obj.get("spec")))

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_hpa_spec(_dict(new.get("spec")))

    def validate_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_hpa_status(_dict(new.get("status")))


STRATEGIES: dict[tuple[str, str], Strategy] = {
    (GROUP, "horizontalpodautoscalers"): HorizontalPodAutoscalerStrategy(),
}

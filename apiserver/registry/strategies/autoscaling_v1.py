"""autoscaling/v1 HorizontalPodAutoscaler as a view of the stored autoscaling/v2 object.

kube stores one HPA and serves it in both versions; ``pkg/apis/autoscaling/v1/conversion.go`` maps
what v1 can express (the target, bounds and ``targetCPUUtilizationPercentage``) onto fields and
carries the rest — other metrics, ``behavior``, status conditions and other current metrics — in
``autoscaling.alpha.kubernetes.io/*`` annotations, in v1's own metric shape, so nothing is lost
on a v2 → v1 → v2 round trip. :func:`hpa_v2_to_v1` renders a stored object for v1 readers and
:func:`hpa_v1_to_v2` turns a v1 body into the stored shape before the (v2) strategy runs.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from apiserver.api.types import Obj

METRICS = "autoscaling.alpha.kubernetes.io/metrics"
CURRENT_METRICS = "autoscaling.alpha.kubernetes.io/current-metrics"
CONDITIONS = "autoscaling.alpha.kubernetes.io/conditions"
BEHAVIOR = "autoscaling.alpha.kubernetes.io/behavior"
_ANNOTATIONS = (METRICS, CURRENT_METRICS, CONDITIONS, BEHAVIOR)


def _dict(v: Any) -> Obj:
    return v if isinstance(v, dict) else {}


def _compact(d: Obj) -> Obj:
    return {k: v for k, v in d.items() if v is not None}


def _is_cpu_utilization(metric: Obj) -> bool:
    res = _dict(metric.get("resource"))
    target = _dict(res.get("target"))
    return (
        metric.get("type") == "Resource"
        and res.get("name") == "cpu"
        and target.get("type") == "Utilization"
        and target.get("averageUtilization") is not None
    )


# ------------------------------------------------------------------------------ metric specs


def _spec_v2_to_v1(m: Obj) -> Obj:
    mtype = m.get("type")
    out: Obj = {"type": mtype}
    if mtype in ("Resource", "ContainerResource"):
        key = "resource" if mtype == "Resource" else "containerResource"
        src = _dict(m.get(key))
        target = _dict(src.get("target"))
        out[key] = _compact(
            {
                "name": src.get("name"),
                "container": src.get("container"),
                "targetAverageUtilization": target.get("averageUtilization"),
                "targetAverageValue": target.get("averageValue"),
            }
        )
    elif mtype == "Pods":
        src = _dict(m.get("pods"))
        metric, target = _dict(src.get("metric")), _dict(src.get("target"))
        out["pods"] = _compact(
            {
                "metricName": metric.get("name"),
                "targetAverageValue": target.get("averageValue"),
                "selector": metric.get("selector"),
            }
        )
    elif mtype == "Object":
        src = _dict(m.get("object"))
        metric, target = _dict(src.get("metric")), _dict(src.get("target"))
        out["object"] = _compact(
            {
                "target": src.get("describedObject"),
                "metricName": metric.get("name"),
                "targetValue": target.get("value"),
                "selector": metric.get("selector"),
                "averageValue": target.get("averageValue"),
            }
        )
    elif mtype == "External":
        src = _dict(m.get("external"))
        metric, target = _dict(src.get("metric")), _dict(src.get("target"))
        out["external"] = _compact(
            {
                "metricName": metric.get("name"),
                "metricSelector": metric.get("selector"),
                "targetValue": target.get("value"),
                "targetAverageValue": target.get("averageValue"),
            }
        )
    return out


def _target(value: Any = None, average_value: Any = None, utilization: Any = None) -> Obj:
    if utilization is not None:
        return {"type": "Utilization", "averageUtilization": utilization}
    if average_value is not None:
        return {"type": "AverageValue", "averageValue": average_value}
    return _compact({"type": "Value", "value": value})


def _spec_v1_to_v2(m: Obj) -> Obj:
    mtype = m.get("type")
    out: Obj = {"type": mtype}
    if mtype in ("Resource", "ContainerResource"):
        key = "resource" if mtype == "Resource" else "containerResource"
        src = _dict(m.get(key))
        out[key] = _compact(
            {
                "name": src.get("name"),
                "container": src.get("container"),
                "target": _target(
                    average_value=src.get("targetAverageValue"),
                    utilization=src.get("targetAverageUtilization"),
                ),
            }
        )
    elif mtype == "Pods":
        src = _dict(m.get("pods"))
        out["pods"] = {
            "metric": _compact({"name": src.get("metricName"), "selector": src.get("selector")}),
            "target": _target(average_value=src.get("targetAverageValue")),
        }
    elif mtype == "Object":
        src = _dict(m.get("object"))
        out["object"] = {
            "describedObject": src.get("target"),
            "metric": _compact({"name": src.get("metricName"), "selector": src.get("selector")}),
            "target": _target(value=src.get("targetValue"), average_value=src.get("averageValue")),
        }
    elif mtype == "External":
        src = _dict(m.get("external"))
        out["external"] = {
            "metric": _compact({"name": src.get("metricName"), "selector": src.get("metricSelector")}),
            "target": _target(value=src.get("targetValue"), average_value=src.get("targetAverageValue")),
        }
    return out


# ------------------------------------------------------------------------------ metric statuses


def _status_v2_to_v1(m: Obj) -> Obj:
    mtype = m.get("type")
    out: Obj = {"type": mtype}
    if mtype in ("Resource", "ContainerResource"):
        key = "resource" if mtype == "Resource" else "containerResource"
        src = _dict(m.get(key))
        cur = _dict(src.get("current"))
        out[key] = _compact(
            {
                "name": src.get("name"),
                "container": src.get("container"),
                "currentAverageUtilization": cur.get("averageUtilization"),
                "currentAverageValue": cur.get("averageValue"),
            }
        )
    elif mtype in ("Pods", "Object", "External"):
        key = mtype.lower()
        src = _dict(m.get(key))
        metric, cur = _dict(src.get("metric")), _dict(src.get("current"))
        name_key = "metricName"
        body: Obj = {name_key: metric.get("name")}
        if mtype == "Pods":
            body.update(currentAverageValue=cur.get("averageValue"), selector=metric.get("selector"))
        elif mtype == "Object":
            body.update(
                target=src.get("describedObject"),
                currentValue=cur.get("value"),
                selector=metric.get("selector"),
                averageValue=cur.get("averageValue"),
            )
        else:
            body.update(
                metricSelector=metric.get("selector"),
                currentValue=cur.get("value"),
                currentAverageValue=cur.get("averageValue"),
            )
        out[key] = _compact(body)
    return out


def _status_v1_to_v2(m: Obj) -> Obj:
    mtype = m.get("type")
    out: Obj = {"type": mtype}
    if mtype in ("Resource", "ContainerResource"):
        key = "resource" if mtype == "Resource" else "containerResource"
        src = _dict(m.get(key))
        out[key] = _compact(
            {
                "name": src.get("name"),
                "container": src.get("container"),
                "current": _compact(
                    {
                        "averageUtilization": src.get("currentAverageUtilization"),
                        "averageValue": src.get("currentAverageValue"),
                    }
                ),
            }
        )
    elif mtype in ("Pods", "Object", "External"):
        key = mtype.lower()
        src = _dict(m.get(key))
        selector = src.get("metricSelector") if mtype == "External" else src.get("selector")
        body: Obj = {"metric": _compact({"name": src.get("metricName"), "selector": selector})}
        if mtype == "Pods":
            body["current"] = _compact({"averageValue": src.get("currentAverageValue")})
        elif mtype == "Object":
            body["describedObject"] = src.get("target")
            body["current"] = _compact(
                {"value": src.get("currentValue"), "averageValue": src.get("averageValue")}
            )
        else:
            body["current"] = _compact(
                {"value": src.get("currentValue"), "averageValue": src.get("currentAverageValue")}
            )
        out[key] = body
    return out


# ------------------------------------------------------------------------------ objects


def hpa_v2_to_v1(stored: Obj) -> Obj:
    """The autoscaling/v1 rendering of a stored (v2) HPA."""
    out = copy.deepcopy(stored)
    out["apiVersion"] = "autoscaling/v1"
    spec = _dict(out.get("spec"))
    status = _dict(out.get("status")) if isinstance(out.get("status"), dict) else None
    md = out.setdefault("metadata", {})
    annotations = dict(_dict(md.get("annotations")))
    metrics = spec.pop("metrics", None) or []
    other = []
    for m in metrics:
        if _is_cpu_utilization(m) and "targetCPUUtilizationPercentage" not in spec:
            spec["targetCPUUtilizationPercentage"] = m["resource"]["target"]["averageUtilization"]
        else:
            other.append(_spec_v2_to_v1(m))
    if other:
        annotations[METRICS] = json.dumps(other, separators=(",", ":"))
    behavior = spec.pop("behavior", None)
    if behavior is not None:
        annotations[BEHAVIOR] = json.dumps(behavior, separators=(",", ":"))
    if status is not None:
        current = status.pop("currentMetrics", None) or []
        other_current = []
        for m in current:
            res = _dict(m.get("resource"))
            util = _dict(res.get("current")).get("averageUtilization")
            if m.get("type") == "Resource" and res.get("name") == "cpu" and util is not None:
                status["currentCPUUtilizationPercentage"] = util
            else:
                other_current.append(_status_v2_to_v1(m))
        if other_current:
            annotations[CURRENT_METRICS] = json.dumps(other_current, separators=(",", ":"))
        conditions = status.pop("conditions", None)
        if conditions:
            annotations[CONDITIONS] = json.dumps(conditions, separators=(",", ":"))
    if annotations:
        md["annotations"] = annotations
    return out


def hpa_v1_to_v2(obj: Obj) -> Obj:
    """A v1 body in the stored (v2) shape; the ``autoscaling.alpha`` annotations become fields."""
    out = copy.deepcopy(obj)
    out["apiVersion"] = "autoscaling/v2"
    md = out.get("metadata") if isinstance(out.get("metadata"), dict) else {}
    annotations = dict(_dict(md.get("annotations")))
    spec = out.get("spec")
    if isinstance(spec, dict):
        metrics: list[Obj] = []
        cpu = spec.pop("targetCPUUtilizationPercentage", None)
        if cpu is not None:
            metrics.append(
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": cpu}},
                }
            )
        metrics.extend(_spec_v1_to_v2(m) for m in _loads(annotations.get(METRICS)) if isinstance(m, dict))
        if metrics:
            spec["metrics"] = metrics
        behavior = _loads(annotations.get(BEHAVIOR), None)
        if isinstance(behavior, dict):
            spec["behavior"] = behavior
    status = out.get("status")
    if isinstance(status, dict):
        current: list[Obj] = []
        cpu_now = status.pop("currentCPUUtilizationPercentage", None)
        if cpu_now is not None:
            current.append(
                {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": cpu_now}}}
            )
        current.extend(
            _status_v1_to_v2(m) for m in _loads(annotations.get(CURRENT_METRICS)) if isinstance(m, dict)
        )
        if current:
            status["currentMetrics"] = current
        conditions = _loads(annotations.get(CONDITIONS))
        if conditions:
            status["conditions"] = conditions
    for key in _ANNOTATIONS:
        annotations.pop(key, None)
    if isinstance(out.get("metadata"), dict):
        if annotations:
            out["metadata"]["annotations"] = annotations
        else:
            out["metadata"].pop("annotations", None)
    return out


def _loads(text: Any, default: Any = ()) -> Any:
    if not isinstance(text, str):
        return list(default) if isinstance(default, tuple) else default
    try:
        return json.loads(text)
    except ValueError:
        return list(default) if isinstance(default, tuple) else default

"""kube's HPA ``behavior``: stabilization windows and scaling policies, pure.

``normalize`` is ``normalizeDesiredReplicasWithBehaviors``: the recommendation is first
stabilized (scale-up: the lowest recommendation within ``scaleUp.stabilizationWindowSeconds``;
scale-down: the highest within ``scaleDown.stabilizationWindowSeconds``, 300 s by default), then
limited by the policies' rate over the scale events of each policy's period, then by
``minReplicas``/``maxReplicas``. It returns the replicas and the ``ScalingLimited`` reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from apiserver.api.types import Obj, as_dict, as_list

DEFAULT_DOWNSCALE_STABILIZATION = 300


@dataclass(frozen=True)
class Recommendation:
    at: float
    replicas: int


@dataclass(frozen=True)
class ScaleEvent:
    at: float
    change: int  # replicas added (> 0) or removed (< 0)


def _window(rules: Obj, default: int) -> int:
    value = rules.get("stabilizationWindowSeconds")
    return default if value is None else int(value)


def stabilize(
    current: int, proposed: int, history: list[Recommendation], now: float, up: Obj, down: Obj
) -> tuple[int, str]:
    up_window = _window(up, 0)
    down_window = _window(down, DEFAULT_DOWNSCALE_STABILIZATION)
    up_rec = down_rec = proposed
    for rec in history:
        if rec.at > now - up_window:
            up_rec = min(up_rec, rec.replicas)
        if rec.at > now - down_window:
            down_rec = max(down_rec, rec.replicas)
    value = current
    if value < up_rec:
        value = up_rec
    if value > down_rec:
        value = down_rec
    if value == proposed:
        return value, ""
    return value, "ScaleUpStabilized" if value < proposed else "ScaleDownStabilized"


def _period_change(events: list[ScaleEvent], now: float, period: int, sign: int) -> int:
    return sum(abs(e.change) for e in events if e.at > now - period and (e.change > 0) == (sign > 0))


def scale_up_limit(current: int, events: list[ScaleEvent], now: float, rules: Obj) -> int:
    select = rules.get("selectPolicy") or "Max"
    if select == "Disabled":
        return current
    best = -1 if select == "Max" else math.inf
    for p in as_list(rules.get("policies")):
        p = as_dict(p)
        period = int(p.get("periodSeconds") or 15)
        start = current - _period_change(events, now, period, 1) + _period_change(events, now, period, -1)
        value = int(p.get("value") or 0)
        proposed = start + value if p.get("type") == "Pods" else math.ceil(start * (1 + value / 100))
        best = max(best, proposed) if select == "Max" else min(best, proposed)
    return int(best) if best not in (-1, math.inf) else current


def scale_down_limit(current: int, events: list[ScaleEvent], now: float, rules: Obj) -> int:
    select = rules.get("selectPolicy") or "Max"
    if select == "Disabled":
        return current
    best = math.inf if select == "Max" else -1
    for p in as_list(rules.get("policies")):
        p = as_dict(p)
        period = int(p.get("periodSeconds") or 15)
        start = current - _period_change(events, now, period, -1) + _period_change(events, now, period, 1)
        value = int(p.get("value") or 0)
        proposed = start - value if p.get("type") == "Pods" else int(start * (1 - value / 100))
        best = min(best, proposed) if select == "Max" else max(best, proposed)
    return int(best) if best not in (-1, math.inf) else current


def normalize(
    current: int,
    proposed: int,
    spec: Obj,
    history: list[Recommendation],
    events: list[ScaleEvent],
    now: float,
) -> tuple[int, str, str]:
    """(replicas, ScalingLimited reason or "", stabilization reason or "")."""
    behavior = as_dict(spec.get("behavior"))
    up = as_dict(behavior.get("scaleUp"))
    down = as_dict(behavior.get("scaleDown"))
    if not up:
        up = {
            "selectPolicy": "Max",
            "policies": [
                {"type": "Pods", "value": 4, "periodSeconds": 15},
                {"type": "Percent", "value": 100, "periodSeconds": 15},
            ],
        }
    if not down:
        down = {"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}
    low = int(spec.get("minReplicas") or 1)
    high = int(spec.get("maxReplicas") or 1)
    value, stab = stabilize(current, proposed, history, now, up, down)
    reason = ""
    if value > current:
        limit = scale_up_limit(current, events, now, up)
        if value > limit:
            value, reason = limit, "ScaleUpLimit"
        if value > high:
            value, reason = high, "TooManyReplicas"
    elif value < current:
        limit = scale_down_limit(current, events, now, down)
        if value < limit:
            value, reason = limit, "ScaleDownLimit"
        if value < low:
            value, reason = low, "TooFewReplicas"
    if value > high:
        value, reason = high, "TooManyReplicas"
    if value < low:
        value, reason = low, "TooFewReplicas"
    return value, reason, stab


__all__ = ["Recommendation", "ScaleEvent", "normalize", "scale_down_limit", "scale_up_limit", "stabilize"]

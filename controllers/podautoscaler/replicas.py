"""kube's ``ReplicaCalculator`` for Resource metrics, pure: pods, their metrics, a target → replicas.

``GetResourceReplicas`` (``Utilization`` targets) and ``GetRawResourceReplicas``
(``AverageValue``): pods being deleted or Failed are ignored; pods not Ready are *unready* and
only count (as using nothing) when the metric says to scale up; pods without metrics count as
using 100 % of their request when scaling down and nothing when scaling up; a change within the
``tolerance`` (0.1) keeps the current count, as does a change the assumptions would reverse.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from apiserver.api.types import Obj, as_dict, as_list
from apiserver.quantity import parse_quantity

TOLERANCE = 0.1


class MetricsError(Exception):
    """No replica count can be computed (no metrics, a missing request)."""


@dataclass(frozen=True)
class Result:
    replicas: int
    #: percentage of request (``Utilization``) or None
    utilization: int | None
    #: the average usage per pod, in the resource's units
    average: Fraction


def _ready(pod: Obj) -> bool:
    return any(
        as_dict(c).get("type") == "Ready" and as_dict(c).get("status") == "True"
        for c in as_list(as_dict(pod.get("status")).get("conditions"))
    )


def _request(pod: Obj, resource: str) -> Fraction:
    total = Fraction(0)
    md = as_dict(pod.get("metadata"))
    for c in as_list(as_dict(pod.get("spec")).get("containers")):
        c = as_dict(c)
        raw = as_dict(as_dict(c.get("resources")).get("requests")).get(resource)
        if raw is None:
            raise MetricsError(
                f"missing request for {resource} in container {c.get('name')} of Pod {md.get('name')}"
            )
        total += parse_quantity(raw)
    return total


def pod_usage(metrics: list[Obj], resource: str) -> dict[str, Fraction]:
    out: dict[str, Fraction] = {}
    for m in metrics:
        name = str(as_dict(m.get("metadata")).get("name"))
        out[name] = sum(
            (
                parse_quantity(as_dict(as_dict(c).get("usage")).get(resource, "0"))
                for c in as_list(m.get("containers"))
            ),
            Fraction(0),
        )
    return out


def _group(pods: list[Obj], usage: dict[str, Fraction]) -> tuple[list[Obj], list[Obj], list[Obj]]:
    """(pods with metrics and ready, unready, missing metrics); deleted and failed ones dropped."""
    ready, unready, missing = [], [], []
    for pod in pods:
        md, st = as_dict(pod.get("metadata")), as_dict(pod.get("status"))
        if md.get("deletionTimestamp") or st.get("phase") == "Failed":
            continue
        name = str(md.get("name"))
        if st.get("phase") == "Pending" or not _ready(pod):
            unready.append(pod)
        elif name not in usage:
            missing.append(pod)
        else:
            ready.append(pod)
    return ready, unready, missing


def replicas_for(
    current: int,
    pods: list[Obj],
    metrics: list[Obj],
    resource: str,
    *,
    utilization: int | None = None,
    average_value: Fraction | None = None,
    tolerance: float = TOLERANCE,
) -> Result:
    """The replica count one Resource metric asks for (``utilization`` percent or ``average_value``)."""
    if not pods:
        raise MetricsError("no pods returned by selector while calculating replica count")
    usage = pod_usage(metrics, resource)
    ready, unready, missing = _group(pods, usage)
    if not ready and not missing and not unready:
        raise MetricsError("did not receive metrics for targeted pods (pods might be unready)")
    counted = {str(as_dict(p.get("metadata")).get("name")): p for p in ready}
    if not counted:
        raise MetricsError("did not receive metrics for any ready pods")
    requests = {n: _request(p, resource) for n, p in counted.items()} if utilization is not None else {}

    def ratio_of(values: dict[str, Fraction], reqs: dict[str, Fraction]) -> tuple[float, Fraction]:
        total = sum(values.values(), Fraction(0))
        avg = total / len(values)
        if utilization is not None:
            req = sum(reqs.values(), Fraction(0))
            if req == 0:
                raise MetricsError(f"no {resource} requests in the targeted pods")
            util = total * 100 / req
            return float(util / utilization), avg
        assert average_value is not None
        return float(avg / average_value) if average_value else math.inf, avg

    values = {n: usage[n] for n in counted}
    ratio, avg = ratio_of(values, requests)
    util_now = (
        int(sum(values.values(), Fraction(0)) * 100 / sum(requests.values(), Fraction(0)))
        if requests
        else None
    )
    scale_up_unready = bool(unready) and ratio > 1
    if not scale_up_unready and not missing:
        if abs(1.0 - ratio) <= tolerance:
            return Result(current, util_now, avg)
        return Result(math.ceil(ratio * len(values)), util_now, avg)
    for pod in missing:
        name = str(as_dict(pod.get("metadata")).get("name"))
        req = _request(pod, resource) if utilization is not None else (average_value or Fraction(0))
        values[name] = req if ratio < 1 else Fraction(0)
        if utilization is not None:
            requests[name] = req
    if scale_up_unready:
        for pod in unready:
            name = str(as_dict(pod.get("metadata")).get("name"))
            values[name] = Fraction(0)
            if utilization is not None:
                requests[name] = _request(pod, resource)
    new_ratio, _ = ratio_of(values, requests)
    if abs(1.0 - new_ratio) <= tolerance or (ratio < 1 < new_ratio) or (ratio > 1 > new_ratio):
        return Result(current, util_now, avg)
    proposal = math.ceil(new_ratio * len(values))
    if (new_ratio < 1 and proposal > current) or (new_ratio > 1 and proposal < current):
        return Result(current, util_now, avg)
    return Result(proposal, util_now, avg)


__all__ = ["MetricsError", "Result", "TOLERANCE", "pod_usage", "replicas_for"]

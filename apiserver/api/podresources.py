"""Pod resource arithmetic: requests, limits and QoS the way kube's resource helpers compute them.

``k8s.io/component-helpers/resource`` (``PodRequests``/``PodLimits``) and ``qos.ComputePodQOS``,
as pure functions over wire-format pods. The API server (defaulting, validation of pod-level
resources), the scheduler (NodeInfo accounting, NodeResourcesFit) and the node agent (kubelet
admission) all import them from here, so none of the components depends on a registry strategy.
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from typing import Any

import orjson

from apiserver.api.types import Obj, as_dict, as_list
from apiserver.quantity import (
    parse_quantity,
)

QOS_GUARANTEED, QOS_BURSTABLE, QOS_BEST_EFFORT = "Guaranteed", "Burstable", "BestEffort"
QOS_RESOURCES = ("cpu", "memory")
HUGEPAGES_PREFIX = "hugepages-"


def all_containers(spec: Obj) -> Iterable[tuple[str, int, Obj]]:
    """``(list name, index, container)`` for init, regular and ephemeral containers."""
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for i, c in enumerate(as_list(spec.get(key))):
            if isinstance(c, dict):
                yield key, i, c


def is_restartable_init_container(c: Obj) -> bool:
    """A sidecar: an init container with ``restartPolicy: Always``."""
    return c.get("restartPolicy") == "Always"


def quantity_or_none(v: Any) -> Fraction | None:
    try:
        return parse_quantity(v)
    except (ValueError, TypeError):
        return None


def parse_resource_list(rl: Any) -> dict[str, Fraction]:
    """A ResourceList as exact values, skipping entries that do not parse."""
    out: dict[str, Fraction] = {}
    for k, v in as_dict(rl).items():
        q = quantity_or_none(v)
        if q is not None:
            out[k] = q
    return out


def _add(into: dict[str, Fraction], other: dict[str, Fraction]) -> None:
    for k, v in other.items():
        into[k] = into.get(k, Fraction(0)) + v


def _max(into: dict[str, Fraction], other: dict[str, Fraction]) -> None:
    for k, v in other.items():
        if k not in into or v > into[k]:
            into[k] = v


def is_supported_pod_level_resource(name: str) -> bool:
    return name in QOS_RESOURCES or name.startswith(HUGEPAGES_PREFIX)


def _aggregate(pod: Obj, kind: str) -> dict[str, Fraction]:
    """``AggregateContainerRequests``/``Limits``: sum of containers, sidecars folded into init maxima."""
    spec = as_dict(pod.get("spec"))
    total: dict[str, Fraction] = {}
    for c in as_list(spec.get("containers")):
        _add(total, parse_resource_list(as_dict(as_dict(c).get("resources")).get(kind)))
    sidecars: dict[str, Fraction] = {}
    init_max: dict[str, Fraction] = {}
    for c in as_list(spec.get("initContainers")):
        c = as_dict(c)
        res = parse_resource_list(as_dict(c.get("resources")).get(kind))
        if is_restartable_init_container(c):
            _add(total, res)
            _add(sidecars, res)
            use = dict(sidecars)
        else:
            use = dict(res)
            _add(use, sidecars)
        _max(init_max, use)
    _max(total, init_max)
    return total


def pod_requests(pod: Obj, *, exclude_overhead: bool = False) -> dict[str, Fraction]:
    """``resourcehelper.PodRequests``: what the scheduler reserves for a pod.

    ``max(sum(containers) + sum(sidecars), max over init containers of (init + earlier
    sidecars))``, pod-level ``spec.resources.requests`` overriding cpu/memory/hugepages, plus
    ``spec.overhead``.
    """
    spec = as_dict(pod.get("spec"))
    reqs = _aggregate(pod, "requests")
    for k, v in parse_resource_list(as_dict(spec.get("resources")).get("requests")).items():
        if is_supported_pod_level_resource(k):
            reqs[k] = v
    if not exclude_overhead:
        _add(reqs, parse_resource_list(spec.get("overhead")))
    return reqs


def pod_limits(pod: Obj, *, exclude_overhead: bool = False) -> dict[str, Fraction]:
    """``resourcehelper.PodLimits``: overhead is added only to non-zero limits."""
    spec = as_dict(pod.get("spec"))
    limits = _aggregate(pod, "limits")
    for k, v in parse_resource_list(as_dict(spec.get("resources")).get("limits")).items():
        if is_supported_pod_level_resource(k):
            limits[k] = v
    if not exclude_overhead:
        for k, v in parse_resource_list(spec.get("overhead")).items():
            if limits.get(k):
                limits[k] += v
    return limits


#: QoS classes by the JSON text of the pod's resources (see :func:`pod_qos_class`).
_QOS_BY_RESOURCES: dict[bytes, str] = {}
_QOS_MEMO_LIMIT = 1024
_QOS_KEY_MAX_BYTES = 4096


def pod_qos_class(pod: Obj) -> str:
    """``qos.ComputePodQOS``: Guaranteed, Burstable or BestEffort from cpu/memory only.

    Pod-level ``spec.resources`` (when set) decide alone; otherwise every regular and init
    container must limit both cpu and memory, and requests must equal limits, for Guaranteed.

    The class is a function of the resources alone, and the pods of a template share them, so
    it is remembered by their JSON text (every pod create asks; the exact arithmetic on
    quantities costs more than the text). orjson writes a ``str`` subclass as its ``str``, which
    parses alike; NaN and infinities it writes as ``null``, so a text with ``null`` is not kept.
    """
    spec = as_dict(pod.get("spec"))
    try:
        key: bytes | None = orjson.dumps(
            (
                _resources_or_zero(spec),
                [_resources_or_zero(c) for c in as_list(spec.get("containers"))],
                [_resources_or_zero(c) for c in as_list(spec.get("initContainers"))],
            )
        )
    except TypeError:
        key = None
    if key is not None and (b"null" in key or len(key) > _QOS_KEY_MAX_BYTES):
        key = None
    if key is not None:
        known = _QOS_BY_RESOURCES.get(key)
        if known is not None:
            return known
    qos = _compute_qos(spec)
    if key is not None:
        if len(_QOS_BY_RESOURCES) >= _QOS_MEMO_LIMIT:
            _QOS_BY_RESOURCES.clear()
        _QOS_BY_RESOURCES[key] = qos
    return qos


def _resources_or_zero(holder: Any) -> Any:
    """``holder.resources`` for the QoS key; ``0`` where it is not a map, which the class treats
    alike (and which, unlike ``null``, never stands for NaN in the key's text)."""
    res = holder.get("resources") if isinstance(holder, dict) else None
    return res if isinstance(res, dict) else 0


def _compute_qos(spec: Obj) -> str:
    requests: dict[str, Fraction] = {}
    limits: dict[str, Fraction] = {}
    guaranteed = True

    def take(rl: Any, into: dict[str, Fraction]) -> set[str]:
        found: set[str] = set()
        for name, q in parse_resource_list(rl).items():
            if name in QOS_RESOURCES and q > 0:
                found.add(name)
                into[name] = into.get(name, Fraction(0)) + q
        return found

    pod_res = spec.get("resources")
    if isinstance(pod_res, dict):
        take(pod_res.get("requests"), requests)
        if as_dict(pod_res.get("limits")) and take(pod_res.get("limits"), limits) != set(QOS_RESOURCES):
            guaranteed = False
    else:
        for key in ("containers", "initContainers"):
            for c in as_list(spec.get(key)):
                res = as_dict(as_dict(c).get("resources"))
                take(res.get("requests"), requests)
                if take(res.get("limits"), limits) != set(QOS_RESOURCES):
                    guaranteed = False
    if not requests and not limits:
        return QOS_BEST_EFFORT
    if guaranteed and all(limits.get(k) == v for k, v in requests.items()) and len(requests) == len(limits):
        return QOS_GUARANTEED
    return QOS_BURSTABLE


def is_pod_terminal(pod: Obj) -> bool:
    """Succeeded or Failed: the pod will never run containers again."""
    return as_dict(pod.get("status")).get("phase") in ("Succeeded", "Failed")


def is_pod_ready(pod: Obj) -> bool:
    """``podutil.IsPodReady``: the Ready condition is True."""
    for c in as_list(as_dict(pod.get("status")).get("conditions")):
        c = as_dict(c)
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return False

"""``metrics.k8s.io/v1beta1`` NodeMetrics and PodMetrics for simulated containers (what
metrics-server would scrape from kubelets), computed from the stored pods and nodes.

A running container uses what it requests (``resources.requests``, else its limits, else
nothing), scaled or replaced by gangplane's annotations:

======================================  =========================================================
``gangplane.dev/usage``                 every container of the pod: a factor of the requests
                                        (``"0.5"``, ``"150%"``) or quantities (``"cpu=250m,memory=64Mi"``)
``gangplane.dev/usage.<container>``     the same for one container (wins over the above)
======================================  =========================================================

A node uses what its running pods use. Only pods in phase Running with running containers
report (metrics-server skips the others); a node appears once it is Ready.
"""

from __future__ import annotations

from fractions import Fraction

from apiserver.api.types import Obj, as_dict, as_list
from apiserver.meta import rfc3339
from apiserver.quantity import parse_quantity

USAGE_ANNOTATION = "gangplane.dev/usage"
GROUP_VERSION = "metrics.k8s.io/v1beta1"
WINDOW = "30s"
RESOURCES = ("cpu", "memory")


class UsageError(ValueError):
    """An annotation gangplane cannot read (reported as the pod reporting no metrics)."""


def _requests(c: Obj) -> dict[str, Fraction]:
    res = as_dict(c.get("resources"))
    out: dict[str, Fraction] = {}
    for key in RESOURCES:
        raw = as_dict(res.get("requests")).get(key, as_dict(res.get("limits")).get(key))
        if raw is not None:
            out[key] = parse_quantity(raw)
    return out


def container_usage(pod: Obj, c: Obj) -> dict[str, Fraction]:
    ann = as_dict(as_dict(pod.get("metadata")).get("annotations"))
    name = str(c.get("name") or "")
    spec = ann.get(f"{USAGE_ANNOTATION}.{name}", ann.get(USAGE_ANNOTATION))
    base = _requests(c)
    usage = {k: base.get(k, Fraction(0)) for k in RESOURCES}
    if spec is None:
        return usage
    text = str(spec).strip()
    try:
        if "=" in text:
            for part in text.split(","):
                key, _, value = part.partition("=")
                key = key.strip()
                if key not in RESOURCES:
                    raise UsageError(f"unknown resource {key!r}")
                usage[key] = parse_quantity(value.strip())
            return usage
        factor = Fraction(text[:-1]) / 100 if text.endswith("%") else Fraction(text)
    except (ValueError, ZeroDivisionError) as e:
        raise UsageError(f"{USAGE_ANNOTATION}: {e}") from None
    if factor < 0:
        raise UsageError(f"{USAGE_ANNOTATION}: negative factor")
    return {k: v * factor for k, v in usage.items()}


def _cpu(v: Fraction) -> str:
    return f"{int(v * 1_000_000_000)}n"


def _memory(v: Fraction) -> str:
    return f"{int(v) // 1024}Ki"


def _format(usage: dict[str, Fraction]) -> dict[str, str]:
    return {"cpu": _cpu(usage.get("cpu", Fraction(0))), "memory": _memory(usage.get("memory", Fraction(0)))}


def reports(pod: Obj) -> bool:
    st = as_dict(pod.get("status"))
    if st.get("phase") != "Running" or as_dict(pod.get("metadata")).get("deletionTimestamp"):
        return False
    return any("running" in as_dict(as_dict(cs).get("state")) for cs in as_list(st.get("containerStatuses")))


def pod_usage(pod: Obj) -> list[tuple[str, dict[str, Fraction]]]:
    """Per running container: (name, usage). Raises :class:`UsageError` on a bad annotation."""
    running = {
        as_dict(cs).get("name")
        for cs in as_list(as_dict(pod.get("status")).get("containerStatuses"))
        if "running" in as_dict(as_dict(cs).get("state"))
    }
    spec = as_dict(pod.get("spec"))
    out = []
    for c in as_list(spec.get("containers")):
        c = as_dict(c)
        if c.get("name") in running:
            out.append((str(c.get("name")), container_usage(pod, c)))
    return out


def pod_metrics(pod: Obj, now: float) -> Obj | None:
    if not reports(pod):
        return None
    try:
        usage = pod_usage(pod)
    except UsageError:
        return None
    md = as_dict(pod.get("metadata"))
    return {
        "kind": "PodMetrics",
        "apiVersion": GROUP_VERSION,
        "metadata": {
            "name": md.get("name"),
            "namespace": md.get("namespace"),
            "creationTimestamp": rfc3339(now),
            "labels": dict(as_dict(md.get("labels"))),
        },
        "timestamp": rfc3339(now),
        "window": WINDOW,
        "containers": [{"name": name, "usage": _format(u)} for name, u in usage],
    }


def node_ready(node: Obj) -> bool:
    return any(
        as_dict(c).get("type") == "Ready" and as_dict(c).get("status") == "True"
        for c in as_list(as_dict(node.get("status")).get("conditions"))
    )


def node_metrics(node: Obj, pods: list[Obj], now: float) -> Obj | None:
    if not node_ready(node):
        return None
    total = {k: Fraction(0) for k in RESOURCES}
    for pod in pods:
        if not reports(pod):
            continue
        try:
            for _, u in pod_usage(pod):
                for k in RESOURCES:
                    total[k] += u.get(k, Fraction(0))
        except UsageError:
            continue
    md = as_dict(node.get("metadata"))
    return {
        "kind": "NodeMetrics",
        "apiVersion": GROUP_VERSION,
        "metadata": {
            "name": md.get("name"),
            "creationTimestamp": rfc3339(now),
            "labels": dict(as_dict(md.get("labels"))),
        },
        "timestamp": rfc3339(now),
        "window": WINDOW,
        "usage": _format(total),
    }


__all__ = ["USAGE_ANNOTATION", "UsageError", "container_usage", "node_metrics", "pod_metrics", "pod_usage"]

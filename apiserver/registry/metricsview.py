"""``/apis/metrics.k8s.io/v1beta1``: NodeMetrics and PodMetrics answered from the stored objects.

metrics-server's API (``get`` and ``list``, label and field selectors; no watch) over
:mod:`apiserver.kubeletsim.metrics`, so ``kubectl top nodes|pods`` works against gangplane; both
front doors (HTTP and the in-process client, which the HPA controller reads through) answer here.
"""

from __future__ import annotations

from apiserver import errors
from apiserver.kubeletsim import metrics
from apiserver.registry.generic import GenericStore
from apiserver.rest.resources import ResourceDef


def _node_items(api: GenericStore) -> list[dict]:
    now = api.clock.now()
    pods_by_node: dict[str, list[dict]] = {}
    for pod in api.peek_all("", "pods"):
        node = (pod.get("spec") or {}).get("nodeName")
        if node:
            pods_by_node.setdefault(node, []).append(pod)
    out = []
    for node in api.peek_all("", "nodes"):
        m = metrics.node_metrics(
            node, pods_by_node.get((node.get("metadata") or {}).get("name", ""), []), now
        )
        if m is not None:
            out.append(m)
    return out


def _pod_items(api: GenericStore, ns: str) -> list[dict]:
    now = api.clock.now()
    return [m for pod in api.peek_all("", "pods", ns) if (m := metrics.pod_metrics(pod, now)) is not None]


def answer(
    api: GenericStore,
    rd: ResourceDef,
    verb: str,
    ns: str,
    name: str,
    label_selector: str,
    field_selector: str,
) -> dict:
    """The object (``get``) or list (``list``) metrics-server would answer; 405 for other verbs."""
    if verb not in ("get", "list"):
        raise errors.method_not_allowed(verb, rd.plural, rd.group)
    items = _node_items(api) if rd.plural == "nodes" else _pod_items(api, ns)
    if verb == "get":
        for m in items:
            if m["metadata"]["name"] == name and (rd.plural == "nodes" or m["metadata"]["namespace"] == ns):
                return m
        raise errors.not_found(rd.plural, name, rd.group)
    flt = api.make_filter(rd, label_selector, field_selector)
    if flt is not None:
        items = [m for m in items if flt(m)]
    return {"kind": f"{rd.kind}List", "apiVersion": metrics.GROUP_VERSION, "metadata": {}, "items": items}


__all__ = ["answer"]

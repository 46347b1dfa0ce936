"""Which nodes a DaemonSet's pod belongs on (kube's ``daemon_controller.go`` predicates and ``util``).

The matching rules are component-helpers' (``ToleratesTaint``, ``FindMatchingUntoleratedTaint``,
``nodeaffinity``'s requirements): :mod:`apiserver.api.nodematching`, the very functions the
scheduler's plugins apply (controllers never import the scheduler, so they live below both).

* :func:`new_pod_template` is ``NewPod``: the template with its node affinity pinned to one node by
  ``matchFields metadata.name In [node]`` and the DaemonSet default tolerations added;
* :func:`node_should_run` is ``NodeShouldRunDaemonPod``: (should run, should continue running).
"""

from __future__ import annotations

import copy

from apiserver.api.nodematching import (
    NO_EXECUTE,
    NO_SCHEDULE,
    OBJECT_NAME_FIELD,
    do_not_schedule_taints,
    find_untolerated_taint,
    requirement_matches,
)
from apiserver.api.types import Obj


def _toleration(key: str, effect: str) -> Obj:
    return {"key": key, "operator": "Exists", "effect": effect}


#: ``AddOrUpdateDaemonPodTolerations``
DEFAULT_TOLERATIONS = (
    _toleration("node.kubernetes.io/not-ready", NO_EXECUTE),
    _toleration("node.kubernetes.io/unreachable", NO_EXECUTE),
    _toleration("node.kubernetes.io/disk-pressure", NO_SCHEDULE),
    _toleration("node.kubernetes.io/memory-pressure", NO_SCHEDULE),
    _toleration("node.kubernetes.io/pid-pressure", NO_SCHEDULE),
    _toleration("node.kubernetes.io/unschedulable", NO_SCHEDULE),
)
NETWORK_UNAVAILABLE = _toleration("node.kubernetes.io/network-unavailable", NO_SCHEDULE)


def _no_execute(taint: Obj) -> bool:
    """The taints that evict a running daemon pod (``NoExecute``)."""
    return taint.get("effect") == NO_EXECUTE


def pin_to_node(affinity: Obj | None, node_name: str) -> Obj:
    """``ReplaceDaemonSetPodNodeNameNodeAffinity``: required terms keep their expressions, fields pin the node."""
    affinity = copy.deepcopy(affinity or {})
    na = affinity.setdefault("nodeAffinity", {})
    field_req = {"key": OBJECT_NAME_FIELD, "operator": "In", "values": [node_name]}
    required = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    terms = (required or {}).get("nodeSelectorTerms") or []
    if not terms:
        na["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [{"matchFields": [field_req]}]
        }
        return affinity
    new_terms = []
    for t in terms:
        nt = {k: v for k, v in t.items() if k != "matchFields"}
        nt["matchFields"] = [field_req]
        new_terms.append(nt)
    na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": new_terms}
    return affinity


def add_default_tolerations(pod_spec: Obj) -> None:
    """``AddOrUpdateDaemonPodTolerations``: add each default toleration unless an equal one exists."""
    tolerations = list(pod_spec.get("tolerations") or [])
    wanted = list(DEFAULT_TOLERATIONS)
    if pod_spec.get("hostNetwork"):
        wanted.append(NETWORK_UNAVAILABLE)
    for t in wanted:
        if not any(
            (x.get("key"), x.get("operator") or "Equal", x.get("effect") or "")
            == (t["key"], t["operator"], t["effect"])
            for x in tolerations
        ):
            tolerations.append(dict(t))
    pod_spec["tolerations"] = tolerations


def new_pod_template(template: Obj, node_name: str) -> Obj:
    """``NewPod``: the template pinned to ``node_name``, with the default tolerations."""
    t = copy.deepcopy(template or {})
    spec = t.setdefault("spec", {})
    spec["affinity"] = pin_to_node(spec.get("affinity"), node_name)
    add_default_tolerations(spec)
    return t


class DaemonPodFit:
    """``NodeShouldRunDaemonPod`` for one template, prepared once and asked per node.

    The daemon pod's required affinity is the template's with every term's ``matchFields`` replaced
    by the node-name pin (which the node itself always matches), so a node fits when the
    ``nodeSelector`` matches and some term's ``matchExpressions`` all match (or there is no required
    affinity). Its tolerations are the template's plus the DaemonSet defaults.
    """

    def __init__(self, template: Obj) -> None:
        tspec = template.get("spec") or {}
        self.node_name: str = tspec.get("nodeName") or ""
        self.node_selector: dict[str, str] = tspec.get("nodeSelector") or {}
        required = ((tspec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        terms = (required or {}).get("nodeSelectorTerms") or []
        self.terms: list[list[Obj]] | None = (
            [list(t.get("matchExpressions") or []) for t in terms] if terms else None
        )
        spec_copy = {
            "tolerations": list(tspec.get("tolerations") or []),
            "hostNetwork": tspec.get("hostNetwork"),
        }
        add_default_tolerations(spec_copy)
        self.tolerations: list[Obj] = spec_copy["tolerations"]

    def should_run(self, node: Obj) -> tuple[bool, bool]:
        """(should run, should continue running)."""
        md = node.get("metadata") or {}
        name = md.get("name", "")
        if self.node_name and self.node_name != name:
            return False, False
        labels = md.get("labels") or {}
        for k, v in self.node_selector.items():
            if labels.get(k) != v:
                return False, False
        if self.terms is not None and not any(
            all(requirement_matches(r, labels.get(r.get("key", ""))) for r in exprs) for exprs in self.terms
        ):
            return False, False
        taints = (node.get("spec") or {}).get("taints") or []
        if taints and find_untolerated_taint(taints, self.tolerations, do_not_schedule_taints) is not None:
            return False, find_untolerated_taint(taints, self.tolerations, _no_execute) is None
        return True, True


def node_should_run(node: Obj, template: Obj) -> tuple[bool, bool]:
    """``NodeShouldRunDaemonPod``: (should run, should continue running)."""
    return DaemonPodFit(template).should_run(node)


def target_node(pod: Obj) -> str:
    """``GetTargetNodeName``: spec.nodeName, or the node the affinity pins a pending pod to."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return spec["nodeName"]
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    for term in required.get("nodeSelectorTerms") or []:
        for req in term.get("matchFields") or []:
            if (
                req.get("key") == OBJECT_NAME_FIELD
                and req.get("operator") == "In"
                and len(req.get("values") or []) == 1
            ):
                return req["values"][0]
    return ""

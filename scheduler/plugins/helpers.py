"""Matching rules several plugins share: tolerations vs taints, node selectors and node affinity.

These are kube's ``component-helpers/scheduling/corev1`` semantics (``ToleratesTaint``,
``FindMatchingUntoleratedTaint``, ``nodeaffinity.RequiredNodeAffinity``), kept in one place so
TaintToleration, NodeUnschedulable, NodeAffinity and PodTopologySpread's node inclusion
policies cannot drift apart. The rules themselves are :mod:`apiserver.api.nodematching`'s (the
DaemonSet controller applies them too), re-exported here; what only the scheduler needs — a
pod's required and preferred node affinity, its tolerations — is defined here.
"""

from __future__ import annotations

from collections.abc import Mapping

from apiserver.api.nodematching import (
    NO_EXECUTE,
    NO_SCHEDULE,
    OBJECT_NAME_FIELD,
    PREFER_NO_SCHEDULE,
    TAINT_NODE_UNSCHEDULABLE,
    do_not_schedule_taints,
    find_untolerated_taint,
    is_empty_term,
    node_selector_matches,
    node_selector_term_matches,
    requirement_matches,
    tolerates,
    tolerations_tolerate_taint,
)
from apiserver.api.types import Obj


class RequiredNodeAffinity:
    """``nodeaffinity.GetRequiredNodeAffinity``: ``spec.nodeSelector`` AND required node affinity."""

    __slots__ = ("node_selector", "required")

    def __init__(self, pod: Obj) -> None:
        spec = pod.get("spec") or {}
        self.node_selector: dict[str, str] = spec.get("nodeSelector") or {}
        na = (spec.get("affinity") or {}).get("nodeAffinity") or {}
        self.required: Obj | None = na.get("requiredDuringSchedulingIgnoredDuringExecution")

    def is_empty(self) -> bool:
        return not self.node_selector and self.required is None

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        for k, v in self.node_selector.items():
            if labels.get(k) != v:
                return False
        if self.required is not None:
            return node_selector_matches(self.required, labels, node_name)
        return True


def preferred_terms(pod: Obj) -> list[tuple[int, Obj]]:
    """(weight, preference) of the pod's preferred node affinity, skipping zero weights and empty terms."""
    na = (((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity")) or {}
    out = []
    for t in na.get("preferredDuringSchedulingIgnoredDuringExecution") or []:
        w = int(t.get("weight") or 0)
        pref = t.get("preference") or {}
        if w and not is_empty_term(pref):
            out.append((w, pref))
    return out


def tolerations_of(pod: Obj) -> list[Obj]:
    return (pod.get("spec") or {}).get("tolerations") or []


__all__ = [
    "NO_EXECUTE",
    "NO_SCHEDULE",
    "OBJECT_NAME_FIELD",
    "PREFER_NO_SCHEDULE",
    "TAINT_NODE_UNSCHEDULABLE",
    "RequiredNodeAffinity",
    "do_not_schedule_taints",
    "find_untolerated_taint",
    "is_empty_term",
    "node_selector_matches",
    "node_selector_term_matches",
    "preferred_terms",
    "requirement_matches",
    "tolerates",
    "tolerations_of",
    "tolerations_tolerate_taint",
]

"""NodeAffinity: ``spec.nodeSelector`` and required node affinity filter; preferred terms score.

Filter: every ``nodeSelector`` label must match and, if set, at least one required
``nodeSelectorTerm`` (expressions and ``metadata.name`` fields ANDed; In/NotIn/Exists/
DoesNotExist/Gt/Lt). A node that does not match is UnschedulableAndUnresolvable.
PreFilter narrows the nodes when every required term pins ``metadata.name`` with ``In``.
Score sums the weights of matching preferred terms, normalized to 0..100 by the best node.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scheduler import arraypolicy, lazymodule
from scheduler.events import NODE, ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint
from scheduler.interfaces import (
    MAX_NODE_SCORE,
    CycleState,
    FilterHint,
    Handle,
    NodeScore,
    PreFilterResult,
    default_normalize_score,
    default_normalize_scores,
)
from scheduler.nodeinfo import NodeInfo, PodInfo
from scheduler.plugins.helpers import (
    OBJECT_NAME_FIELD,
    RequiredNodeAffinity,
    node_selector_term_matches,
    preferred_terms,
)
from scheduler.status import Code, Status

if TYPE_CHECKING:
    from scheduler.cache import Snapshot

NAME = "NodeAffinity"
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_CONFLICT = "pod affinity terms conflict"
_PRE_FILTER_KEY = "PreFilter" + NAME
_PRE_SCORE_KEY = "PreScore" + NAME
_NOT_MATCHED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD)


def _node_now_matches(pod: dict[str, Any], old: Any, new: Any) -> QueueingHint:
    if not isinstance(new, dict):
        return QueueingHint.QUEUE
    meta = new.get("metadata") or {}
    ok = RequiredNodeAffinity(pod).matches(meta.get("labels") or {}, meta.get("name", ""))
    return QueueingHint.QUEUE if ok else QueueingHint.SKIP


class NodeAffinity:
    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        pass

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL), _node_now_matches
            )
        ]

    def pre_filter(
        self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        req = RequiredNodeAffinity(pod_info.pod)
        if req.is_empty():
            return None, Status(Code.SKIP)
        state.write(_PRE_FILTER_KEY, req)
        terms = (req.required or {}).get("nodeSelectorTerms") or []
        if not terms:
            return None, None
        names: set[str] | None = None
        for t in terms:
            term_names: set[str] | None = None
            for r in t.get("matchFields") or []:
                if r.get("key") == OBJECT_NAME_FIELD and r.get("operator") == "In":
                    s = set(r.get("values") or [])
                    term_names = s if term_names is None else term_names & s
            if term_names is None:
                return None, None  # this term allows any node name; terms are ORed
            names = term_names if names is None else names | term_names
        if names is not None and not names:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
        return PreFilterResult(names), None

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> Status | None:
        req = state.get(_PRE_FILTER_KEY)
        if req is None:
            req = RequiredNodeAffinity(pod_info.pod)
        if not req.matches(node_info.labels, node_info.name):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD)
        return None

    def filter_hint(self, state: CycleState, pod_info: PodInfo, snapshot: Snapshot) -> FilterHint | None:
        """gangplane: for a pod with only a ``nodeSelector``, the nodes it accepts (or rejects),
        from the node table's label ids (:mod:`scheduler.plugins.selector_arrays`); ``None``
        (Filter runs on every node visited) with required affinity terms or on a small cluster."""
        req = state.get(_PRE_FILTER_KEY)
        if req is None:
            req = RequiredNodeAffinity(pod_info.pod)
        if req.required is not None or not req.node_selector:
            return None
        if snapshot.num_nodes() < arraypolicy.ARRAY_MIN_NODES:
            return None
        # numpy: imported when a cycle first needs it
        selector_arrays = lazymodule.module("scheduler.plugins.selector_arrays")
        return selector_arrays.node_selector_hint(snapshot.node_table(), req.node_selector, _NOT_MATCHED)

    def pre_score(self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]) -> Status | None:
        terms = preferred_terms(pod_info.pod)
        if not terms:
            return Status(Code.SKIP)
        state.write(_PRE_SCORE_KEY, terms)
        return None

    def score(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        terms = state.get(_PRE_SCORE_KEY)
        if terms is None:
            terms = preferred_terms(pod_info.pod)
        total = sum(
            w for w, term in terms if node_selector_term_matches(term, node_info.labels, node_info.name)
        )
        return total, None

    def normalize_score(self, state: CycleState, pod_info: PodInfo, scores: list[NodeScore]) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, False, scores)
        return None

    def normalize_scores(
        self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo], scores: list[int]
    ) -> list[int]:
        return default_normalize_scores(MAX_NODE_SCORE, False, scores)


def new(args: dict[str, Any], handle: Handle) -> NodeAffinity:
    return NodeAffinity(args, handle)

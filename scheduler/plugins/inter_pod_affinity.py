"""InterPodAffinity: required/preferred pod affinity and anti-affinity, both directions.

Filter, in kube's order:

1. the pod's required *affinity*: for every term, some matching pod must run in the node's
   topology domain, and the node must carry every term's topology key
   (UnschedulableAndUnresolvable ``node(s) didn't match pod affinity rules``). The first pod of
   a group that has affinity to itself may go anywhere if no pod matches yet;
2. the pod's required *anti-affinity*: no matching pod in the node's domain of any term
   (Unschedulable ``node(s) didn't match pod anti-affinity rules``);
3. *existing* pods' required anti-affinity: the pod may not enter a domain where a running
   pod's term matches it (Unschedulable ``node(s) didn't satisfy existing pods anti-affinity rules``).

Counts are keyed by (topology key, value) and computed once in PreFilter; AddPod/RemovePod keep
them right for preemption and nominated pods. Score adds preferred-term weights (and existing
pods' required affinity at ``hardPodAffinityWeight``) per topology domain and rescales the
node totals to 0..100 between the lowest and highest.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from scheduler.events import ASSIGNED_POD, NODE, ActionType, ClusterEvent, ClusterEventWithHint
from scheduler.interfaces import MAX_NODE_SCORE, CycleState, Handle, NodeScore, PreFilterResult
from scheduler.nodeinfo import AffinityTerm, NodeInfo, PodInfo
from scheduler.status import Code, Status

NAME = "InterPodAffinity"
ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"
DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1
_PRE_FILTER_KEY = "PreFilter" + NAME
_PRE_SCORE_KEY = "PreScore" + NAME

TopologyCounts = dict[tuple[str, str], int]


def _bump(m: TopologyCounts, key: tuple[str, str], delta: int) -> None:
    v = m.get(key, 0) + delta
    if v == 0:
        m.pop(key, None)
    else:
        m[key] = v


class _NamespaceLabels:
    """Namespace labels looked up once per cycle through the handle."""

    def __init__(self, lookup: Callable[[str], dict[str, str] | None]) -> None:
        self._lookup = lookup
        self._cache: dict[str, dict[str, str] | None] = {}

    def __call__(self, ns: str) -> dict[str, str] | None:
        if ns not in self._cache:
            self._cache[ns] = self._lookup(ns)
        return self._cache[ns]


def _matches_all(terms: Sequence[AffinityTerm], pod: PodInfo, ns_labels: dict[str, str] | None) -> bool:
    return bool(terms) and all(t.matches(pod, ns_labels) for t in terms)


@dataclass
class _FilterState:
    pod_info: PodInfo
    ns_labels: dict[str, str] | None
    ns_of: _NamespaceLabels
    existing_anti_affinity: TopologyCounts = field(default_factory=dict)
    affinity: TopologyCounts = field(default_factory=dict)
    anti_affinity: TopologyCounts = field(default_factory=dict)

    def clone(self) -> _FilterState:
        return _FilterState(
            self.pod_info,
            self.ns_labels,
            self.ns_of,
            dict(self.existing_anti_affinity),
            dict(self.affinity),
            dict(self.anti_affinity),
        )

    def update_with_pod(self, other: PodInfo, node: NodeInfo, delta: int) -> None:
        """Account ``other`` (running on ``node``) in all three counters."""
        labels = node.labels
        for t in other.required_anti_affinity_terms:
            if t.matches(self.pod_info, self.ns_labels) and t.topology_key in labels:
                _bump(self.existing_anti_affinity, (t.topology_key, labels[t.topology_key]), delta)
        other_ns = self.ns_of(other.namespace)
        terms = self.pod_info.required_affinity_terms
        if _matches_all(terms, other, other_ns):
            for t in terms:
                if t.topology_key in labels:
                    _bump(self.affinity, (t.topology_key, labels[t.topology_key]), delta)
        for t in self.pod_info.required_anti_affinity_terms:
            if t.matches(other, other_ns) and t.topology_key in labels:
                _bump(self.anti_affinity, (t.topology_key, labels[t.topology_key]), delta)


class InterPodAffinity:
    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        args = args or {}
        self.handle = handle
        hw = args.get("hardPodAffinityWeight")
        self.hard_pod_affinity_weight = DEFAULT_HARD_POD_AFFINITY_WEIGHT if hw is None else int(hw)
        self.ignore_preferred_terms_of_existing_pods = bool(args.get("ignorePreferredTermsOfExistingPods"))

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(ASSIGNED_POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE)
            ),
            ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)),
        ]

    def _ns_lookup(self) -> _NamespaceLabels:
        lookup = self.handle.namespace_labels if self.handle is not None else (lambda ns: None)
        return _NamespaceLabels(lookup)

    def _snapshot_nodes(self, nodes: list[NodeInfo]) -> tuple[list[NodeInfo], list[NodeInfo], list[NodeInfo]]:
        snap = self.handle.snapshot if self.handle is not None else None
        if snap is None:
            with_aff = [n for n in nodes if n.pods_with_affinity]
            with_anti = [n for n in nodes if n.pods_with_required_anti_affinity]
            return nodes, with_aff, with_anti
        return (
            snap.ordered(),
            snap.have_pods_with_affinity_list(),
            snap.have_pods_with_required_anti_affinity_list(),
        )

    def _with_anti(self, nodes: list[NodeInfo]) -> list[NodeInfo]:
        """:meth:`_snapshot_nodes`' third list alone (PreFilter's test of a pod without terms)."""
        snap = self.handle.snapshot if self.handle is not None else None
        if snap is None:
            return [n for n in nodes if n.pods_with_required_anti_affinity]
        return snap.have_pods_with_required_anti_affinity_list()  # type: ignore[no-any-return]

    def _with_aff(self, nodes: list[NodeInfo]) -> list[NodeInfo]:
        """:meth:`_snapshot_nodes`' second list alone (PreScore's test of a pod without terms)."""
        snap = self.handle.snapshot if self.handle is not None else None
        if snap is None:
            return [n for n in nodes if n.pods_with_affinity]
        return snap.have_pods_with_affinity_list()  # type: ignore[no-any-return]

    # -- filter -----------------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        if (
            not pod_info.required_affinity_terms
            and not pod_info.required_anti_affinity_terms
            and not self._with_anti(nodes)
        ):
            # nothing to count (the common case): what the loops below end in, without the state
            # (and without the other two lists, which only the loops read)
            return None, Status(Code.SKIP)
        all_nodes, _, with_anti = self._snapshot_nodes(nodes)
        ns_of = self._ns_lookup()
        s = _FilterState(pod_info, ns_of(pod_info.namespace), ns_of)
        for ni in with_anti:
            for existing in ni.pods_with_required_anti_affinity:
                for t in existing.required_anti_affinity_terms:
                    if t.topology_key in ni.labels and t.matches(pod_info, s.ns_labels):
                        _bump(s.existing_anti_affinity, (t.topology_key, ni.labels[t.topology_key]), 1)
        if pod_info.required_affinity_terms or pod_info.required_anti_affinity_terms:
            for ni in all_nodes:
                for existing in ni.pods:
                    other_ns = ns_of(existing.namespace)
                    if _matches_all(pod_info.required_affinity_terms, existing, other_ns):
                        for t in pod_info.required_affinity_terms:
                            if t.topology_key in ni.labels:
                                _bump(s.affinity, (t.topology_key, ni.labels[t.topology_key]), 1)
                    for t in pod_info.required_anti_affinity_terms:
                        if t.topology_key in ni.labels and t.matches(existing, other_ns):
                            _bump(s.anti_affinity, (t.topology_key, ni.labels[t.topology_key]), 1)
        if (
            not s.existing_anti_affinity
            and not pod_info.required_affinity_terms
            and not pod_info.required_anti_affinity_terms
        ):
            return None, Status(Code.SKIP)
        state.write(_PRE_FILTER_KEY, s)
        return None, None

    def pre_filter_extensions(self) -> InterPodAffinity:
        return self

    def add_pod(
        self, state: CycleState, pod_to_schedule: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        s: _FilterState | None = state.get(_PRE_FILTER_KEY)
        if s is not None:
            s.update_with_pod(pod_to_add, node_info, 1)
        return None

    def remove_pod(
        self, state: CycleState, pod_to_schedule: PodInfo, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        s: _FilterState | None = state.get(_PRE_FILTER_KEY)
        if s is not None:
            s.update_with_pod(pod_to_remove, node_info, -1)
        return None

    def filter(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> Status | None:
        s: _FilterState | None = state.get(_PRE_FILTER_KEY)
        if s is None:
            return None
        if not self._satisfies_affinity(s, node_info):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH)
        if not self._satisfies_anti_affinity(s, node_info):
            return Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
        if s.existing_anti_affinity:
            for k, v in node_info.labels.items():
                if s.existing_anti_affinity.get((k, v), 0) > 0:
                    return Status(Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
        return None

    @staticmethod
    def _satisfies_affinity(s: _FilterState, node: NodeInfo) -> bool:
        terms = s.pod_info.required_affinity_terms
        pods_exist = True
        for t in terms:
            v = node.labels.get(t.topology_key)
            if v is None:
                return False  # every topology label must exist on the node
            if s.affinity.get((t.topology_key, v), 0) <= 0:
                pods_exist = False
        if pods_exist:
            return True
        # The first pod of a group with affinity to itself: allowed when nothing matches anywhere.
        return not s.affinity and _matches_all(terms, s.pod_info, s.ns_labels)

    @staticmethod
    def _satisfies_anti_affinity(s: _FilterState, node: NodeInfo) -> bool:
        if not s.anti_affinity:
            return True
        for t in s.pod_info.required_anti_affinity_terms:
            v = node.labels.get(t.topology_key)
            if v is not None and s.anti_affinity.get((t.topology_key, v), 0) > 0:
                return False
        return True

    # -- score ------------------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]) -> Status | None:
        has_constraints = bool(pod_info.preferred_affinity_terms or pod_info.preferred_anti_affinity_terms)
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return Status(Code.SKIP)
        if not has_constraints and not self._with_aff(nodes):
            return Status(Code.SKIP)  # no term on either side: the loop below scores nothing
        all_nodes, with_aff, _ = self._snapshot_nodes(nodes)
        ns_of = self._ns_lookup()
        pod_ns = ns_of(pod_info.namespace)
        scores: dict[str, dict[str, int]] = {}

        def add(
            term: AffinityTerm, weight: int, target: PodInfo, target_ns: dict[str, str] | None, node: NodeInfo
        ) -> None:
            if term.matches(target, target_ns):
                v = node.labels.get(term.topology_key)
                if v is not None:
                    by_value = scores.setdefault(term.topology_key, {})
                    by_value[v] = by_value.get(v, 0) + weight

        for ni in all_nodes if has_constraints else with_aff:
            if not ni.labels:
                continue
            pods = ni.pods if has_constraints else ni.pods_with_affinity
            for existing in pods:
                existing_ns = ns_of(existing.namespace)
                for t in pod_info.preferred_affinity_terms:
                    add(t, t.weight, existing, existing_ns, ni)
                for t in pod_info.preferred_anti_affinity_terms:
                    add(t, -t.weight, existing, existing_ns, ni)
                if self.hard_pod_affinity_weight > 0:
                    for t in existing.required_affinity_terms:
                        add(t, self.hard_pod_affinity_weight, pod_info, pod_ns, ni)
                if not self.ignore_preferred_terms_of_existing_pods:
                    for t in existing.preferred_affinity_terms:
                        add(t, t.weight, pod_info, pod_ns, ni)
                    for t in existing.preferred_anti_affinity_terms:
                        add(t, -t.weight, pod_info, pod_ns, ni)
        if not scores:
            return Status(Code.SKIP)
        state.write(_PRE_SCORE_KEY, scores)
        return None

    def score(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        scores: dict[str, dict[str, int]] | None = state.get(_PRE_SCORE_KEY)
        if not scores:
            return 0, None
        total = 0
        for key, by_value in scores.items():
            v = node_info.labels.get(key)
            if v is not None:
                total += by_value.get(v, 0)
        return total, None

    def normalize_score(self, state: CycleState, pod_info: PodInfo, scores: list[NodeScore]) -> Status | None:
        if not state.get(_PRE_SCORE_KEY):
            return None
        lo = min((s.score for s in scores), default=0)
        hi = max((s.score for s in scores), default=0)
        diff = hi - lo
        for s in scores:
            s.score = int(MAX_NODE_SCORE * ((s.score - lo) / diff)) if diff > 0 else 0
        return None


def new(args: dict[str, Any], handle: Handle) -> InterPodAffinity:
    return InterPodAffinity(args, handle)

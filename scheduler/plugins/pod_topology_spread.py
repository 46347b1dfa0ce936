"""PodTopologySpread: keep matching pods spread across topology domains.

Filter (``whenUnsatisfiable: DoNotSchedule``): for each constraint, placing the pod in the
node's domain must keep ``matching pods in that domain + (1 if the pod matches itself) -
global minimum <= maxSkew``. The global minimum is taken over the eligible domains, and is 0
while there are fewer than ``minDomains`` of them. Nodes count toward domains only if they
carry every constraint's topology key and pass the node inclusion policies
(``nodeAffinityPolicy`` Honor by default: the pod's nodeSelector/required affinity;
``nodeTaintsPolicy`` Ignore by default). Terminating pods and pods of other namespaces never
count. A node missing a topology key is UnschedulableAndUnresolvable
(``... (missing required label)``); a skew violation is Unschedulable.

Score (``ScheduleAnyway``, and kube's system default constraints — hostname maxSkew 3, zone
maxSkew 5 — for pods selected by a Service/ReplicaSet/StatefulSet when the handle provides
``default_spread_selector``): fewer matching pods in the node's domains score higher.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from apiserver.selectors import LabelSelector
from scheduler import arraypolicy, lazymodule
from scheduler.cache import SpreadCounts
from scheduler.events import ASSIGNED_POD, NODE, ActionType, ClusterEvent, ClusterEventWithHint
from scheduler.interfaces import MAX_NODE_SCORE, CycleState, Handle, NodeScore, PreFilterResult
from scheduler.nodeinfo import NodeInfo, PodInfo, Selector, compile_selector
from scheduler.plugins import resource_allocation
from scheduler.plugins.helpers import RequiredNodeAffinity, find_untolerated_taint, tolerations_of
from scheduler.status import Code, Status

NAME = "PodTopologySpread"
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_ZONE = "topology.kubernetes.io/zone"
#: kube's ``systemDefaultConstraints``
SYSTEM_DEFAULT_CONSTRAINTS: tuple[dict[str, Any], ...] = (
    {"topologyKey": LABEL_HOSTNAME, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 3},
    {"topologyKey": LABEL_ZONE, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 5},
)
#: default constraint lists (and their run keys) a plugin keeps for reuse by later pods
MAX_SHARED_CONSTRAINTS = 1024
#: at most this many nodes holding pods a constraint's selector may match (the pod label index's
#: answer): PreScore counts their pods itself rather than ask the snapshot for running counts
#: (:class:`_SparseCounts`)
SMALL_HOLDERS = 16
_PRE_FILTER_KEY = "PreFilter" + NAME
#: the (shared, never changed) default constraints of an action no default constraint has
_NO_CONSTRAINTS: list[Constraint] = []
_PRE_SCORE_KEY = "PreScore" + NAME


class _MergedSelector:
    """A constraint's selector ANDed with ``matchLabelKeys`` values taken from the pod."""

    def __init__(self, base: Selector, extra: Mapping[str, str]) -> None:
        self.base = base
        self.extra = dict(extra)

    def matches(self, labels: Mapping[str, str]) -> bool:
        for k, v in self.extra.items():
            if labels.get(k) != v:
                return False
        return self.base.matches(labels)


@dataclass(frozen=True)
class Constraint:
    """A topology spread constraint of a pod (or of the default constraints), its selector compiled."""

    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE

    def includes_node(self, pod: PodInfo, node: NodeInfo, required: RequiredNodeAffinity) -> bool:
        """``matchNodeInclusionPolicies``."""
        if self.node_affinity_policy == HONOR and not required.matches(node.labels, node.name):
            return False
        return not (
            self.node_taints_policy == HONOR and find_untolerated_taint(node.taints, tolerations_of(pod.pod))
        )


def constraints_for(pod: PodInfo, raw: Iterable[Mapping[str, Any]], action: str) -> list[Constraint]:
    """The pod's constraints with ``whenUnsatisfiable == action``, defaults filled as kube does."""
    out = []
    for c in raw:
        if c.get("whenUnsatisfiable", DO_NOT_SCHEDULE) != action:
            continue
        sel: Selector = compile_selector(c.get("labelSelector"))
        keys = c.get("matchLabelKeys") or []
        extra = {k: pod.labels[k] for k in keys if k in pod.labels}
        if extra:
            sel = _MergedSelector(sel, extra)
        out.append(
            Constraint(
                max_skew=int(c.get("maxSkew") or 1),
                topology_key=c.get("topologyKey", ""),
                selector=sel,
                min_domains=int(c.get("minDomains") or 1),
                node_affinity_policy=c.get("nodeAffinityPolicy") or HONOR,
                node_taints_policy=c.get("nodeTaintsPolicy") or IGNORE,
            )
        )
    return out


def _has_all_keys(labels: Mapping[str, str], constraints: list[Constraint]) -> bool:
    return all(c.topology_key in labels for c in constraints)


def count_pods_matching(pods: Iterable[PodInfo], selector: Selector, namespace: str) -> int:
    """Matching pods of the namespace, skipping terminating ones (kube #87621)."""
    return sum(
        1 for p in pods if not p.terminating and p.namespace == namespace and selector.matches(p.labels)
    )


def _selector_text(selector: Any) -> str | None:
    """A string that equal selectors share (None for a selector kind without one)."""
    if isinstance(selector, _AllOf):
        texts = [_selector_text(p) for p in selector.parts]
        return None if None in texts else "all(" + ";".join(texts) + ")"  # type: ignore[arg-type]
    if isinstance(selector, _MergedSelector):
        base = _selector_text(selector.base)
        extra = ",".join(f"{k}={v}" for k, v in sorted(selector.extra.items()))
        return None if base is None else f"merged({base};{extra})"
    if isinstance(selector, LabelSelector):
        return "nothing" if selector.nothing else f"sel({selector})"
    return None


def _count_key(selector: Selector, namespace: str) -> str | None:
    """The NodeInfo memo key of a count: one string (its hash is computed once), or None."""
    text = _selector_text(selector)
    return None if text is None else f"PodTopologySpread.count|{namespace}|{text}"


def count_on(ni: NodeInfo, selector: Selector, namespace: str, key: str | None) -> int:
    """:func:`count_pods_matching` on the node's pods, remembered in its memo until the node changes."""
    if key is None:
        return count_pods_matching(ni.pods, selector, namespace)
    m = ni.memo
    if m is None:
        m = ni.memo = {}
    else:
        v = m.get(key)
        if v is not None:
            return v  # type: ignore[no-any-return]
    v = m[key] = count_pods_matching(ni.pods, selector, namespace)
    return v


def build_default_selector(
    pod: Mapping[str, Any], services: Iterable[Mapping[str, Any]], owner_selector: Any = None
) -> Any:
    """kube's ``helper.DefaultSelector`` from the pod's Services and its controller's selector.

    ``services`` are Services of the pod's namespace; those with a non-empty ``spec.selector``
    matching the pod contribute their selector labels. ``owner_selector`` is the label selector
    dict of the pod's controlling ReplicaSet/StatefulSet/ReplicationController (or ``None``).
    Returns a selector, or ``None`` when nothing selects the pod (no default spreading).
    """
    labels = ((pod.get("metadata") or {}).get("labels")) or {}
    merged: dict[str, str] = {}
    for svc in services:
        sel = (svc.get("spec") or {}).get("selector") or {}
        if sel and all(labels.get(k) == v for k, v in sel.items()):
            merged.update(sel)
    parts: list[Selector] = []
    if merged:
        parts.append(compile_selector({"matchLabels": merged}))
    if owner_selector:
        s = compile_selector(owner_selector)
        if not getattr(s, "empty", False):
            parts.append(s)
    if not parts:
        return None
    return _AllOf(parts)


class _AllOf:
    def __init__(self, parts: list[Selector]) -> None:
        self.parts = parts

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(p.matches(labels) for p in self.parts)


def _required_pairs(selector: Any) -> tuple[tuple[str, str], ...]:
    """The ``key=value`` pairs every label set ``selector`` matches carries (empty: none known)."""
    if isinstance(selector, _AllOf):
        return tuple(pair for part in selector.parts for pair in _required_pairs(part))
    if isinstance(selector, _MergedSelector):
        return tuple(selector.extra.items()) + _required_pairs(selector.base)
    pairs = getattr(selector, "required_pairs", None)
    return pairs() if callable(pairs) else ()


def _required_triples(selector: Any, namespace: str) -> frozenset[tuple[str, str, str]]:
    """:func:`_required_pairs` of the namespace's pods, as the pod label index keys them."""
    return frozenset((namespace, k, v) for k, v in _required_pairs(selector))


@dataclass
class _FilterState:
    """PreFilter's result for Filter: matching pod counts per topology value of each hard constraint."""

    constraints: list[Constraint]
    #: per constraint: topology value -> matching pod count
    counts: list[dict[str, int]] = field(default_factory=list)
    _mins: list[int | None] = field(default_factory=list)

    def clone(self) -> _FilterState:
        return _FilterState(self.constraints, [dict(c) for c in self.counts], list(self._mins))

    def add(self, i: int, value: str, delta: int) -> None:
        self.counts[i][value] = self.counts[i].get(value, 0) + delta
        self._mins[i] = None

    def min_match(self, i: int) -> int:
        """The global minimum for constraint ``i`` (0 while there are fewer than minDomains domains)."""
        counts = self.counts[i]
        if len(counts) < self.constraints[i].min_domains:
            return 0
        m = self._mins[i]
        if m is None:
            m = min(counts.values(), default=0)
            self._mins[i] = m
        return m


class _ScoreState:
    """PreScore's result for Score: the soft constraints, their counts and weights, and the nodes to skip.

    When no pod matches (``none_match``) the counts, weights and running counts are worked out
    only if something reads them (:meth:`PodTopologySpread.uniform_score` answers without them):
    ``fill`` computes them from the cycle's snapshot and nodes, which stay as PreScore saw them
    until the cycle's Score, and a run started from it, have read them."""

    __slots__ = ("_counted", "_fill", "constraints", "holders", "ignored_nodes", "none_match")

    def __init__(
        self,
        constraints: list[Constraint],
        ignored_nodes: set[str],
        counts: list[dict[str, int]] | None,
        weights: list[float] | None,
        holders: Any = None,
        per_node: list[Any] | None = None,
        domain_counts: list[Any] | None = None,
        none_match: bool = False,
        fill: Callable[[], tuple[list[dict[str, int]], list[float], list[Any], list[Any]]] | None = None,
    ) -> None:
        self.constraints = constraints
        self.ignored_nodes = ignored_nodes
        #: per constraint: the nodes that may hold matching pods (None: any node)
        self.holders = holders if holders is not None else []
        #: no node of the snapshot holds a pod any constraint's selector may match (the pod label
        #: index says so): every count is 0, which :meth:`PodTopologySpread.uniform_score` reads
        self.none_match = none_match
        self._fill = fill
        self._counted: tuple[list[dict[str, int]], list[float], list[Any], list[Any]] | None = (
            None if fill is not None else (counts or [], weights or [], per_node or [], domain_counts or [])
        )

    def _got(self) -> tuple[list[dict[str, int]], list[float], list[Any], list[Any]]:
        got = self._counted
        if got is None:
            assert self._fill is not None
            got = self._counted = self._fill()
            self._fill = None
        return got

    @property
    def counts(self) -> list[dict[str, int]]:
        """Per constraint: matching pods per topology value (hostname: empty, counted in Score)."""
        return self._got()[0]

    @property
    def weights(self) -> list[float]:
        return self._got()[1]

    @property
    def per_node(self) -> list[Any]:
        """Per hostname constraint: the snapshot's running per-node counts (None: count in Score)."""
        return self._got()[2]

    @property
    def domain_counts(self) -> list[Any]:
        """Per other constraint: the snapshot's running counts ``counts[i]`` was read from, when
        every node counts (None: counted here); the array Score reads their per-domain column."""
        return self._got()[3]


class _SparseCounts:
    """Matching pods per node and per topology value for a selector whose pods sit on at most
    :data:`SMALL_HOLDERS` nodes, counted by PreScore from those nodes: what the snapshot's
    :class:`~scheduler.cache.SpreadCounts` holds (the same count per node, the same skipping of a
    node without a Node or pods), without creating one that the snapshot would then keep current
    through every node change after it (a new set's or small gang's pods: one per set and key,
    for a few cycles). Read like it by Score (``on_node``, ``nodes_counted``); ``key`` is empty: no
    node table column is kept for it (:func:`~scheduler.plugins.spread_arrays._node_counts`)."""

    __slots__ = ("_of", "by_value")
    key = ""

    def __init__(self, counted: list[tuple[str, NodeInfo, int]], topology_key: str) -> None:
        """``counted``: :func:`_counted_nodes` of the holders (their non-zero counts, in order)."""
        of: dict[str, tuple[str, int]] = {}
        by_value: dict[str, int] = {}
        for name, ni, n in counted:
            value = ni.labels.get(topology_key, "")
            of[name] = (value, n)
            by_value[value] = by_value.get(value, 0) + n
        self._of = of
        #: matching pods per value of the topology key (nodes without it under ``""``)
        self.by_value = by_value

    def on_node(self, name: str) -> int:
        got = self._of.get(name)
        return got[1] if got is not None else 0

    def nodes_counted(self) -> Mapping[str, tuple[str, int]]:
        """Node name -> (its value, its count) for every node with a non-zero count (read-only)."""
        return self._of


def _counted_nodes(
    snapshot: Any, names: Iterable[str], count: Callable[[NodeInfo], int]
) -> list[tuple[str, NodeInfo, int]]:
    """Each of ``names``' nodes with a Node, pods and a non-zero ``count``, with that count, in
    the order of ``names``: what :class:`_SparseCounts` counts by value of a topology key. The
    default constraints (hostname and zone) share a selector and so its holders and counts:
    a sibling's PreScore counts them once for both."""
    out: list[tuple[str, NodeInfo, int]] = []
    infos = snapshot.node_info_map
    for name in names:
        ni = infos.get(name)
        if ni is None or ni.node is None or not ni.pods:
            continue
        n = count(ni)
        if n:
            out.append((name, ni, n))
    return out


class _Holders:
    """Per constraint, the nodes that may hold matching pods (``None``: any node), from the
    snapshot's pod label index, asked for on first use: a set as large as the nodes holding
    the selector's pods, which the running counts need only when they are first built."""

    def __init__(
        self,
        snapshot: Any,
        namespace: str,
        constraints: list[Constraint],
        pairs: list[tuple[tuple[str, str], ...]] | None = None,
    ) -> None:
        self.snapshot = snapshot
        self.namespace = namespace
        self.constraints = constraints
        #: per constraint, :func:`_required_pairs` of its selector
        self.pairs = pairs if pairs is not None else [_required_pairs(c.selector) for c in constraints]
        self._got: dict[int, set[str] | None] = {}
        #: :meth:`few`'s answer per pairs: the default constraints share one selector, so the
        #: pod label index is asked once for all of them (the sets are only read)
        self._few: dict[tuple[tuple[str, str], ...], set[str] | None] = {}

    def __getitem__(self, i: int) -> set[str] | None:
        if i not in self._got:
            pairs = self.pairs[i]
            self._got[i] = (
                self.snapshot.nodes_with_pod_labels(self.namespace, pairs)
                if self.snapshot is not None and pairs
                else None
            )
        return self._got[i]

    def few(self, i: int) -> set[str] | None:
        """Constraint ``i``'s holders when some pair of its selector is on at most
        :data:`SMALL_HOLDERS` nodes (so they are that few or fewer); None otherwise or for any
        node. Asked for every pod of a set: a large set's holders are never built for it."""
        if i in self._got:
            held = self._got[i]
            return held if held is not None and len(held) <= SMALL_HOLDERS else None
        pairs = self.pairs[i]
        if self.snapshot is None or not pairs:
            self._got[i] = None
            return None
        held = self.few_of(pairs)
        if held is not None:
            self._got[i] = held
        return held

    def few_of(self, pairs: tuple[tuple[str, str], ...]) -> set[str] | None:
        """The nodes holding pods of the namespace with every pair of ``pairs`` (empty: none)
        when some pair is on at most :data:`SMALL_HOLDERS` nodes, else None (the pod label
        index's :meth:`~scheduler.cache.PodLabelIndex.nodes_with_at_most`); asked once per pairs
        (the sets are only read)."""
        if pairs in self._few:
            return self._few[pairs]
        held = self._few[pairs] = self.snapshot.nodes_with_pod_labels_at_most(
            self.namespace, pairs, SMALL_HOLDERS
        )
        return held


class PodTopologySpread:
    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        args = args or {}
        self.handle = handle
        defaulting = args.get("defaultingType") or "System"
        if defaulting == "System":
            self.default_constraints: list[dict[str, Any]] = [dict(c) for c in SYSTEM_DEFAULT_CONSTRAINTS]
            self.system_defaulted = True
        else:
            self.default_constraints = list(args.get("defaultConstraints") or [])
            self.system_defaulted = False
        #: the ``whenUnsatisfiable`` values some default constraint has: a pod without its own
        #: constraints has no default ones for any other (kube's system defaults are all soft,
        #: so a set's pods need no default selector for PreFilter or the run signature's hard half)
        self._default_actions = frozenset(
            c.get("whenUnsatisfiable", DO_NOT_SCHEDULE) for c in self.default_constraints
        )
        #: the default constraints per ``whenUnsatisfiable`` value, in their order (a pod's
        #: default constraints are these with its default selector: picked out once, not per pod)
        self._defaults_by_action: dict[str, list[dict[str, Any]]] = {
            action: [
                c for c in self.default_constraints if c.get("whenUnsatisfiable", DO_NOT_SCHEDULE) == action
            ]
            for action in self._default_actions
        }
        #: a pod's default constraints per ``whenUnsatisfiable`` for one snapshot generation
        #: (see :meth:`_default_constraints`): (generation, id(PodInfo) -> (PodInfo, per action))
        self._defaults_memo: tuple[int, dict[int, tuple[PodInfo, dict[str, list[Constraint]]]]] = (-1, {})
        #: default constraints per (action, ids of the selector's parts), with the parts
        self._by_selector: dict[tuple[str, tuple[int, ...]], tuple[tuple[Any, ...], list[Constraint]]] = {}
        #: :func:`scheduler.plugins.spread_run.key_of` per shared constraint list (by id, pinned)
        self._run_keys: dict[tuple[int, str], tuple[list[Constraint], Any]] = {}
        #: :meth:`_selector_facts` per shared constraint list (by id, pinned) and namespace
        self._facts: dict[
            tuple[int, str],
            tuple[list[Constraint], list[tuple[tuple[str, str], ...]], list[str | None]],
        ] = {}

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(ASSIGNED_POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE)
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    NODE,
                    ActionType.ADD
                    | ActionType.DELETE
                    | ActionType.UPDATE_NODE_LABEL
                    | ActionType.UPDATE_NODE_TAINT,
                )
            ),
        ]

    # -- constraints ------------------------------------------------------------------------

    def _constraints(self, pod: PodInfo, action: str) -> list[Constraint]:
        raw = (pod.pod.get("spec") or {}).get("topologySpreadConstraints") or []
        if raw:
            return constraints_for(pod, raw, action)
        return self._default_constraints(pod, action)

    def _default_constraints(self, pod: PodInfo, action: str) -> list[Constraint]:
        """The default constraints with ``whenUnsatisfiable == action`` and the pod's default
        selector, remembered per pod until the snapshot is next updated.

        The run signature, PreFilter and PreScore each ask for them, for every pod of every
        placement a PodGroup cycle tries; kube derives them in PreFilter and in PreScore from
        the listers. Within one scheduling attempt (one snapshot generation) gangplane derives
        them once per pod: the pod and its cycle's snapshot are the same, and a Service or
        owner change arriving meanwhile is seen from the next attempt on, as if this attempt
        had read the listers a moment earlier. The list returned is shared (read-only)."""
        if action not in self._default_actions:
            return _NO_CONSTRAINTS
        snapshot = self.handle.snapshot if self.handle is not None else None
        if snapshot is None:
            return self._derive_default_constraints(pod, action)
        generation, memo = self._defaults_memo
        if generation != snapshot.generation:
            memo = {}
            self._defaults_memo = (snapshot.generation, memo)
        entry = memo.get(id(pod))
        if entry is None or entry[0] is not pod:
            entry = memo[id(pod)] = (pod, {})
        got = entry[1].get(action)
        if got is None:
            got = entry[1][action] = self._derive_default_constraints(pod, action)
        return got

    def _derive_default_constraints(self, pod: PodInfo, action: str) -> list[Constraint]:
        base = self._defaults_by_action.get(action)
        if not base or self.handle is None or self.handle.default_spread_selector is None:
            return []
        selector = self.handle.default_spread_selector(pod.pod)
        if selector is None:
            return []
        if isinstance(selector, dict):
            selector = compile_selector(selector)
        # compiled selectors are shared (compile_selector), so the pods of one set ask with the
        # same selector, or the same parts: their constraints are built once and shared
        parts = tuple(selector.parts) if isinstance(selector, _AllOf) else (selector,)
        memo_key = (action, tuple(map(id, parts)))
        got = self._by_selector.get(memo_key)
        if got is not None:
            return got[1]
        out = [
            Constraint(
                int(c.get("maxSkew") or 1), c.get("topologyKey", ""), selector, int(c.get("minDomains") or 1)
            )
            for c in base
        ]
        if len(self._by_selector) >= MAX_SHARED_CONSTRAINTS:
            self._by_selector.clear()
        self._by_selector[memo_key] = (parts, out)  # the parts pinned: their ids stay theirs
        return out

    # -- filter -----------------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        constraints = self._constraints(pod_info, DO_NOT_SCHEDULE)
        if not constraints:
            return None, Status(Code.SKIP)
        s = _FilterState(constraints, [{} for _ in constraints], [None for _ in constraints])
        required = RequiredNodeAffinity(pod_info.pod)
        for ni in nodes:
            if not _has_all_keys(ni.labels, constraints):
                continue
            for i, c in enumerate(constraints):
                if not c.includes_node(pod_info, ni, required):
                    continue
                s.add(
                    i, ni.labels[c.topology_key], count_pods_matching(ni.pods, c.selector, pod_info.namespace)
                )
        state.write(_PRE_FILTER_KEY, s)
        return None, None

    def pre_filter_extensions(self) -> PodTopologySpread:
        return self

    def _update_with_pod(
        self, state: CycleState, pod: PodInfo, other: PodInfo, node_info: NodeInfo, delta: int
    ) -> Status | None:
        s: _FilterState | None = state.get(_PRE_FILTER_KEY)
        if s is None or other.namespace != pod.namespace or node_info.node is None:
            return None
        if not _has_all_keys(node_info.labels, s.constraints):
            return None
        required = RequiredNodeAffinity(pod.pod)
        for i, c in enumerate(s.constraints):
            if not c.selector.matches(other.labels) or not c.includes_node(pod, node_info, required):
                continue
            s.add(i, node_info.labels[c.topology_key], delta)
        return None

    def add_pod(
        self, state: CycleState, pod_to_schedule: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._update_with_pod(state, pod_to_schedule, pod_to_add, node_info, 1)

    def remove_pod(
        self, state: CycleState, pod_to_schedule: PodInfo, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._update_with_pod(state, pod_to_schedule, pod_to_remove, node_info, -1)

    def filter(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> Status | None:
        s: _FilterState | None = state.get(_PRE_FILTER_KEY)
        if s is None or not s.constraints:
            return None
        for i, c in enumerate(s.constraints):
            value = node_info.labels.get(c.topology_key)
            if value is None:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_LABEL_NOT_MATCH)
            self_match = 1 if c.selector.matches(pod_info.labels) else 0
            skew = s.counts[i].get(value, 0) + self_match - s.min_match(i)
            if skew > c.max_skew:
                return Status(Code.UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH)
        return None

    # -- score ------------------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]) -> Status | None:
        snapshot = self.handle.snapshot if self.handle is not None else None
        if not (snapshot.num_nodes() if snapshot is not None else nodes):
            return Status(Code.SKIP)
        # (:meth:`_constraints`, with the pod's own constraints looked up once)
        own = (pod_info.pod.get("spec") or {}).get("topologySpreadConstraints")
        has_own = bool(own)
        if has_own:
            constraints = constraints_for(pod_info, own, SCHEDULE_ANYWAY)
        else:
            constraints = self._default_constraints(pod_info, SCHEDULE_ANYWAY)
        if not constraints:
            return Status(Code.SKIP)
        require_all = has_own or not self.system_defaulted
        ignored: set[str] = set()
        if require_all:
            ignored = {ni.name for ni in nodes if not _has_all_keys(ni.labels, constraints)}
        # (a pod's own constraints are a new list per call: nothing to remember them by)
        pairs, count_keys = self._selector_facts(constraints, pod_info.namespace, remember=not has_own)
        holders = _Holders(snapshot, pod_info.namespace, constraints, pairs)

        # (the counts taken later, should Score need them, by a partial: a closure here would
        # make every PreScore, a plain pod's skipped one included, create its cells on entry)
        args = (state, snapshot, pod_info, nodes, constraints, ignored, holders, require_all, count_keys)
        if _none_match(snapshot, pod_info.namespace, constraints, pairs, holders):
            fill = partial(self._score_counts, *args)
            st = _ScoreState(constraints, ignored, None, None, holders, none_match=True, fill=fill)
        else:
            counts, weights, per_node, domain_counts = self._score_counts(*args)
            st = _ScoreState(constraints, ignored, counts, weights, holders, per_node, domain_counts)
        state.write(_PRE_SCORE_KEY, st)
        return None

    def _score_counts(
        self,
        state: CycleState,
        snapshot: Any,
        pod_info: PodInfo,
        nodes: list[NodeInfo],
        constraints: list[Constraint],
        ignored: set[str],
        holders: _Holders,
        require_all: bool,
        count_keys: list[str | None] | None = None,
    ) -> tuple[list[dict[str, int]], list[float], list[Any], list[Any]]:
        """PreScore's counts per constraint and topology value, the constraints' weights, and
        the snapshot's running per-node (hostname) and per-domain counts they come from."""
        counted = [ni for ni in nodes if ni.name not in ignored] if ignored else nodes
        counts: list[dict[str, int]] = [
            {}
            if c.topology_key == LABEL_HOSTNAME
            else dict.fromkeys(_domain_values(state, snapshot, counted, c.topology_key), 0)
            for c in constraints
        ]
        weights = []
        for i, c in enumerate(constraints):
            size = len(nodes) - len(ignored) if c.topology_key == LABEL_HOSTNAME else len(counts[i])
            weights.append(math.log(size + 2))
        required = RequiredNodeAffinity(pod_info.pod)
        # Only nodes holding matching pods add to a count: with the snapshot's pod label index
        # those are the nodes with pods carrying the selector's key=value pairs, not all nodes.
        # (Asked only when needed: the running counts need them only when first built.)
        ns = pod_info.namespace
        if count_keys is None:
            count_keys = [_count_key(c.selector, ns) for c in constraints]
        domain_counts: list[SpreadCounts | None] = [None] * len(constraints)
        # the holders' counts per (holders, count key): equal keys count alike (count_on's memo
        # is by key), so constraints sharing a selector share the one pass over their holders
        counted_by: dict[tuple[int, str], tuple[set[str], list[tuple[str, NodeInfo, int]]]] = {}

        def sparse_counted(held: set[str], sel: Any, key: str) -> list[tuple[str, NodeInfo, int]]:
            got = counted_by.get((id(held), key))
            if got is not None and got[0] is held:
                return got[1]
            counted = _counted_nodes(snapshot, held, lambda ni: count_on(ni, sel, ns, key))
            counted_by[(id(held), key)] = (held, counted)
            return counted

        for i, c in enumerate(constraints):
            if c.topology_key == LABEL_HOSTNAME or not counts[i]:
                continue  # hostname counts are taken per node in Score
            key = count_keys[i]
            every_node = c.node_taints_policy != HONOR and (
                c.node_affinity_policy != HONOR or required.is_empty()
            )
            if every_node and not require_all and key is not None and snapshot is not None:
                held = holders.few(i)
                if held is not None:
                    # a few nodes hold the set's pods: counted from them here
                    few = _SparseCounts(sparse_counted(held, c.selector, key), c.topology_key)
                    counts_i = counts[i]
                    for v, n in few.by_value.items():
                        if v in counts_i:
                            counts_i[v] = n
                    continue
                # every node counts: the snapshot's running totals per domain answer
                sel = c.selector
                agg = snapshot.spread_counts(
                    key,
                    c.topology_key,
                    lambda ni, sel=sel, key=key: count_on(ni, sel, ns, key),
                    lambda i=i: holders[i],
                    lambda sel=sel: _required_triples(sel, ns),
                    lambda pods, sel=sel: count_pods_matching(pods, sel, ns),
                )
                domain_counts[i] = agg
                totals = agg.by_value
                counts[i] = {v: totals.get(v, 0) for v in counts[i]}
                continue
            held = holders[i]
            assert snapshot is not None or held is None
            if held is not None:
                candidates = [snapshot.node_info_map[n] for n in held]
            else:
                candidates = snapshot.ordered() if snapshot is not None else nodes
            for ni in candidates:
                if require_all and not _has_all_keys(ni.labels, constraints):
                    continue
                if not every_node and not c.includes_node(pod_info, ni, required):
                    continue
                v = ni.labels.get(c.topology_key, "")
                if v not in counts[i]:
                    continue
                counts[i][v] += count_on(ni, c.selector, pod_info.namespace, key)
        # hostname constraints count each node's own pods in Score: from running totals when the
        # snapshot can keep them
        per_node: list[SpreadCounts | _SparseCounts | None] = []
        for i, c in enumerate(constraints):
            key = count_keys[i] if c.topology_key == LABEL_HOSTNAME else None
            if key is None or snapshot is None:
                per_node.append(None)
                continue
            sel = c.selector
            held = holders.few(i)
            if held is not None:
                per_node.append(_SparseCounts(sparse_counted(held, sel, key), c.topology_key))
                continue
            per_node.append(
                snapshot.spread_counts(
                    key,
                    c.topology_key,
                    lambda ni, sel=sel, key=key: count_on(ni, sel, ns, key),
                    lambda i=i: holders[i],
                    lambda sel=sel: _required_triples(sel, ns),
                    lambda pods, sel=sel: count_pods_matching(pods, sel, ns),
                )
            )
        return counts, weights, per_node, domain_counts

    def uniform_score(self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]) -> int | None:
        """gangplane (:class:`~scheduler.interfaces.UniformScorePlugin`): the maximum for every
        node when no pod matches any constraint (the first pod of a new StatefulSet, Deployment
        or gang) and every node has every constraint's topology key: each node's raw score is
        then the same sum of ``maxSkew - 1`` terms, which the reversed normalization maps to the
        maximum (``100 * (v + v - v) // v``, or 100 when the sum is 0). ``None`` otherwise, and
        while the scheduling records keep this pod's raw scores (they would read the raw sum)."""
        s: _ScoreState | None = state.get(_PRE_SCORE_KEY)
        if s is None or not s.none_match or s.ignored_nodes or not nodes:
            return None
        handle = self.handle
        records = handle.records if handle is not None else None
        if records is not None and records.keeps_scores():
            return None
        snapshot = handle.snapshot if handle is not None else None
        constraints = s.constraints
        if snapshot is not None and len(nodes) >= arraypolicy.ARRAY_MIN_NODES and snapshot.is_run(nodes):
            # the nodes are the snapshot's own, in a run: its node table knows whether every
            # node carries a key, without a look at each node
            table = snapshot.node_table()
            if all(table.all_labelled(c.topology_key) for c in constraints):
                return MAX_NODE_SCORE
        for ni in nodes:
            if not _has_all_keys(ni.labels, constraints):
                return None
        return MAX_NODE_SCORE

    def score(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        s: _ScoreState | None = state.get(_PRE_SCORE_KEY)
        if s is None or node_info.name in s.ignored_nodes:
            return 0, None
        total = 0.0
        for i, c in enumerate(s.constraints):
            v = node_info.labels.get(c.topology_key)
            if v is None:
                continue
            if c.topology_key == LABEL_HOSTNAME:
                cnt = count_pods_matching(node_info.pods, c.selector, pod_info.namespace)
            else:
                cnt = s.counts[i].get(v, 0)
            total += cnt * s.weights[i] + (c.max_skew - 1)
        return _round_half_away(total), None

    def score_nodes(self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]) -> list[int]:
        """:meth:`score` for every node in one call (the framework's batch path).

        A hostname constraint counts the node's own matching pods; nodes the pod label index
        says hold none score their count as 0 without looking at their pods.
        """
        s: _ScoreState | None = state.get(_PRE_SCORE_KEY)
        if s is None:
            return [0] * len(nodes)
        fused = _table_scores(state, self.handle, s, nodes)
        if fused is None:
            fused = _fused_scores(s, nodes)
        if fused is not None:
            return fused
        ns = pod_info.namespace
        totals: list[float] | None = None
        for i, c in enumerate(s.constraints):
            key, weight, skew = c.topology_key, s.weights[i], c.max_skew - 1
            if key == LABEL_HOSTNAME and s.per_node and s.per_node[i] is not None:
                on_node = s.per_node[i].on_node
                col = [(on_node(ni.name) * weight + skew) if key in ni.labels else 0.0 for ni in nodes]
            elif key == LABEL_HOSTNAME:
                held, selector, ckey = s.holders[i], c.selector, _count_key(c.selector, ns)
                col = [
                    (
                        (count_on(ni, selector, ns, ckey) if held is None or ni.name in held else 0) * weight
                        + skew
                    )
                    if key in ni.labels
                    else 0.0
                    for ni in nodes
                ]
            else:
                counts = s.counts[i]
                col = [
                    (counts.get(v, 0) * weight + skew) if (v := ni.labels.get(key)) is not None else 0.0
                    for ni in nodes
                ]
            totals = col if totals is None else list(map(operator.add, totals, col))
        return _node_scores(totals, nodes, s.ignored_nodes)

    def score_array(self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]) -> Any:
        """Score and NormalizeScore of ``nodes`` in arrays over the node table (the fused
        column of :meth:`score_nodes`, normalized as :meth:`normalize_scores` does), or ``None``."""
        got = self._array_inputs(state, nodes)
        if got is None:
            return None
        spread_arrays = lazymodule.module("scheduler.plugins.spread_arrays")
        return spread_arrays.normalized_array(got[0], got[1], got[2], len(nodes))

    def score_array_bounded(
        self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]
    ) -> tuple[Any, int, int] | None:
        """:meth:`score_array` with the least and greatest value of its column
        (:class:`~scheduler.interfaces.BoundedArrayScorePlugin`), or ``None`` where it is ``None``."""
        got = self._array_inputs(state, nodes)
        if got is None:
            return None
        spread_arrays = lazymodule.module("scheduler.plugins.spread_arrays")
        return spread_arrays.normalized_array_bounded(got[0], got[1], got[2], len(nodes))  # type: ignore[no-any-return]

    def _array_inputs(self, state: CycleState, nodes: list[NodeInfo]) -> tuple[_ScoreState, Any, Any] | None:
        """The PreScore state, node table and rows the array scores read, or ``None`` (no
        PreScore, ignored nodes, or ``nodes`` not a run of the table)."""
        s: _ScoreState | None = state.get(_PRE_SCORE_KEY)
        if s is None or s.ignored_nodes:
            return None
        found = _table(state, self.handle.snapshot if self.handle is not None else None, nodes)
        if found is None:
            return None
        return s, found[0], found[1]

    def score_run_key(self, pod_info: PodInfo) -> Any:
        """gangplane's run of identical pods: equal for pods whose PreFilter, PreScore and Score
        are alike (their namespace and constraints, selectors included); ``None``: not comparable."""
        soft = self._run_key(self._constraints(pod_info, SCHEDULE_ANYWAY), pod_info.namespace)
        hard = self._run_key(self._constraints(pod_info, DO_NOT_SCHEDULE), pod_info.namespace)
        return None if soft is None or hard is None else (soft, hard)

    def _run_key(self, constraints: list[Constraint], namespace: str) -> Any:
        """``key_of``, remembered for the constraint lists the pods of a set share."""
        memo_key = (id(constraints), namespace)
        got = self._run_keys.get(memo_key)
        if got is not None and got[0] is constraints:
            return got[1]
        from scheduler.plugins.spread_run import key_of

        key = key_of(constraints, namespace)
        if len(self._run_keys) >= MAX_SHARED_CONSTRAINTS:
            self._run_keys.clear()
        self._run_keys[memo_key] = (constraints, key)
        return key

    def _selector_facts(
        self, constraints: list[Constraint], namespace: str, remember: bool = True
    ) -> tuple[list[tuple[tuple[str, str], ...]], list[str | None]]:
        """Per constraint, its selector's :func:`_required_pairs` and :func:`_count_key`, remembered
        for the constraint lists the pods of a set share (PreScore asked each three or four
        times per pod: a walk of the selector's parts and a string built each time)."""
        memo_key = (id(constraints), namespace)
        got = self._facts.get(memo_key)
        if got is not None and got[0] is constraints:
            return got[1], got[2]
        # (worked out once per selector: the default constraints, hostname and zone, share one)
        pairs: list[tuple[tuple[str, str], ...]] = []
        keys: list[str | None] = []
        selector: Any = None
        for c in constraints:
            if c.selector is not selector or not pairs:
                selector = c.selector
                pair, key = _required_pairs(selector), _count_key(selector, namespace)
            pairs.append(pair)
            keys.append(key)
        if not remember:
            return pairs, keys
        if len(self._facts) >= MAX_SHARED_CONSTRAINTS:
            self._facts.clear()
        self._facts[memo_key] = (constraints, pairs, keys)  # the list pinned: its id stays its own
        return pairs, keys

    def start_score_run(self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]) -> Any:
        """gangplane's run of identical pods (:mod:`scheduler.placement_run`): this cycle's raw
        column over ``nodes``, carried to the next pods (:mod:`scheduler.plugins.spread_run`);
        ``None`` when it cannot be."""
        from scheduler.plugins.spread_run import SpreadScoreRun

        run = SpreadScoreRun(self, state, pod_info, nodes)
        return run if run.ok else None

    def normalize_scores(
        self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo], scores: list[int]
    ) -> list[int]:
        """:meth:`normalize_score` over the plain column (node order)."""
        s: _ScoreState | None = state.get(_PRE_SCORE_KEY)
        if s is None:
            return scores
        ignored = s.ignored_nodes
        if type(scores) is not list:
            if not ignored:
                return _normalize_array(scores)
            scores = scores.tolist()
        if ignored:
            valid = [v for ni, v in zip(nodes, scores, strict=True) if ni.name not in ignored]
        else:
            valid = scores
        lo, hi = min(valid, default=0), max(valid, default=0)
        if hi == 0:
            out = [MAX_NODE_SCORE] * len(scores)
        else:
            top = hi + lo
            # one division per distinct score, not per node: a column holds few distinct counts
            # (a run's rack: one zone, hostname counts k or k + 1), and each node gets the same value
            by_score = {v: MAX_NODE_SCORE * (top - v) // hi for v in set(scores)}
            out = list(map(by_score.__getitem__, scores))
        return _zero_ignored(nodes, out, ignored) if ignored else out

    def normalize_scores_bounded(
        self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo], scores: Any
    ) -> tuple[Any, int, int] | None:
        """:meth:`normalize_scores` of an int64 array with no node ignored (a run's column,
        :mod:`scheduler.placement_run`), with the least and greatest normalized score, worked out
        from the raw column's (the normalization is monotonic) instead of read from the result;
        ``None``: any other case, for :meth:`normalize_scores`."""
        s: _ScoreState | None = state.get(_PRE_SCORE_KEY)
        if s is None or s.ignored_nodes or type(scores) is list or not len(scores):
            return None
        return _normalize_array_bounded(scores)

    def normalize_score(self, state: CycleState, pod_info: PodInfo, scores: list[NodeScore]) -> Status | None:
        s: _ScoreState | None = state.get(_PRE_SCORE_KEY)
        if s is None:
            return None
        valid = [ns.score for ns in scores if ns.name not in s.ignored_nodes]
        min_score = min(valid, default=0)
        max_score = max(valid, default=0)
        for ns in scores:
            if ns.name in s.ignored_nodes:
                ns.score = 0
            elif max_score == 0:
                ns.score = MAX_NODE_SCORE
            else:
                ns.score = MAX_NODE_SCORE * (max_score + min_score - ns.score) // max_score
        return None


def _normalize_array(scores: Any) -> Any:
    """:meth:`PodTopologySpread.normalize_scores` of an int64 array (a run's column over many
    nodes, :mod:`scheduler.placement_run`), no node ignored: the same integers."""
    if not len(scores):
        return scores
    lo, hi = int(scores.min()), int(scores.max())
    if hi == 0:
        return scores * 0 + MAX_NODE_SCORE
    return MAX_NODE_SCORE * ((hi + lo) - scores) // hi


def _normalize_array_bounded(scores: Any) -> tuple[Any, int, int]:
    """:func:`_normalize_array` of a non-empty array, with the least and greatest value of the result.

    With ``lo``/``hi`` the raw column's least and greatest, each score ``v`` becomes
    ``MAX * (hi + lo - v) // hi``: a floor division of a linear function of ``v`` by a fixed
    divisor, so monotonic in ``v`` (non-increasing for ``hi`` > 0, non-decreasing below), and the
    result's bounds are the images of ``lo`` and ``hi``."""
    lo, hi = lazymodule.module("scheduler.score_totals").bounds(scores)  # (the ufuncs: no wrappers)
    if hi == 0:
        return scores * 0 + MAX_NODE_SCORE, MAX_NODE_SCORE, MAX_NODE_SCORE
    top = hi + lo
    at_lo, at_hi = MAX_NODE_SCORE * (top - lo) // hi, MAX_NODE_SCORE * (top - hi) // hi
    return MAX_NODE_SCORE * (top - scores) // hi, min(at_lo, at_hi), max(at_lo, at_hi)


def _none_match(
    snapshot: Any,
    namespace: str,
    constraints: list[Constraint],
    pairs_of: list[tuple[tuple[str, str], ...]] | None = None,
    holders: _Holders | None = None,
) -> bool:
    """Whether the snapshot's pod label index shows that no node holds a pod any constraint's
    selector may match (every count 0); False when it cannot tell (a selector without a required
    ``key=value`` pair, or no snapshot). Asks only whether such a node exists: the holders' set
    itself (:class:`_Holders`) is as large as the nodes running the set's pods, and is built only
    if the counts are (once, for the running counts), not for every pod of a growing set. The
    index is asked once per run of equal pairs: the default constraints (hostname, zone) share
    one selector, so a new set's first pod asks once, not twice.

    With the cycle's ``holders`` (of the same snapshot and namespace), a question is first
    their :meth:`_Holders.few_of`: when some pair is on at most :data:`SMALL_HOLDERS` nodes that
    is the nodes holding pods with every pair, so empty exactly when no node does; only when it
    cannot say (``None``: every pair on more nodes, whose intersection may still be empty) is
    the index asked as above. A small gang's sibling, whose pods are on a node or two, then asks
    the index once for both answers instead of once here and again for its counts
    (:meth:`_Holders.few`, which reads the same answer)."""
    if snapshot is None or not constraints:
        return False
    asked: tuple[tuple[str, str], ...] | None = None
    for i, c in enumerate(constraints):
        pairs = pairs_of[i] if pairs_of is not None else _required_pairs(c.selector)
        if not pairs:
            return False
        if pairs == asked:
            continue  # the same question as the previous constraint's: no node, again
        held = holders.few_of(pairs) if holders is not None else None
        if held is not None:
            if held:
                return False  # a few nodes hold such pods
        elif snapshot.any_node_with_pod_labels(namespace, pairs):
            return False
        asked = pairs
    return True


def _table(state: CycleState, snapshot: Any, nodes: list[NodeInfo]) -> tuple[Any, Any] | None:
    """(node table, rows of ``nodes``) when the batch is large enough for the array forms."""
    if snapshot is None or not resource_allocation.wants_table(snapshot, nodes, state):
        return None
    table = snapshot.node_table()
    # numpy: imported when a cycle first needs it
    rows = lazymodule.module("scheduler.nodetable").rows_for(state, table, nodes)
    return None if rows is None else (table, rows)


def _domain_values(state: CycleState, snapshot: Any, nodes: list[NodeInfo], key: str) -> AbstractSet[str]:
    """The values of label ``key`` among ``nodes`` (``""`` for a node without it)."""
    found = _table(state, snapshot, nodes)
    if found is None:
        return {ni.labels.get(key, "") for ni in nodes}
    return lazymodule.module("scheduler.plugins.spread_arrays").domain_values(found[0], found[1], key)


def _table_scores(
    state: CycleState, handle: Handle | None, s: _ScoreState, nodes: list[NodeInfo]
) -> list[int] | None:
    """:func:`_fused_scores` over the snapshot's node table, or ``None``."""
    found = _table(state, handle.snapshot if handle is not None else None, nodes)
    if found is None:
        return None
    return lazymodule.module("scheduler.plugins.spread_arrays").fused_scores(found[0], found[1], s, nodes)


def _fused_scores(s: _ScoreState, nodes: list[NodeInfo]) -> list[int] | None:
    """:meth:`PodTopologySpread.score_nodes` when every hostname constraint has the snapshot's
    running per-node counts (the default spreading of a StatefulSet's or ReplicaSet's pods);
    ``None`` otherwise.

    Each constraint's column holds the terms the general code computes (a node's count times
    the weight plus ``maxSkew - 1``, 0.0 without the label), read from dictionaries (per node
    for hostname, per domain value otherwise) rather than through a call per node, and the
    columns are added in constraint order: the same floats, rounded alike.
    """
    totals: list[float] | None = None
    for i, c in enumerate(s.constraints):
        key, weight, skew = c.topology_key, s.weights[i], c.max_skew - 1
        zero = 0 * weight + skew
        if key == LABEL_HOSTNAME:
            per_node = s.per_node[i] if s.per_node else None
            if per_node is None:
                return None
            counted = per_node.nodes_counted()
            col = [
                (zero if (got := counted.get(ni.name)) is None else got[1] * weight + skew)
                if key in ni.labels
                else 0.0
                for ni in nodes
            ]
        else:
            terms = {v: n * weight + skew for v, n in s.counts[i].items()}
            col = [terms.get(v, zero) if (v := ni.labels.get(key)) is not None else 0.0 for ni in nodes]
        totals = col if totals is None else list(map(operator.add, totals, col))
    return _node_scores(totals, nodes, s.ignored_nodes)


def _node_scores(totals: list[float] | None, nodes: list[NodeInfo], ignored: set[str]) -> list[int]:
    """The score column from the constraints' summed terms (``None``: no constraint): each total
    rounded as Go's ``math.Round`` does on non-negative values (halves away from zero), and 0 for
    the nodes PreScore ignored. Shared by :func:`_fused_scores` and the general path of
    :meth:`PodTopologySpread.score_nodes`, which must round alike to give the same scores."""
    if totals is None:
        return [0] * len(nodes)
    out = [int(t + 0.5) for t in totals]
    if ignored:
        return _zero_ignored(nodes, out, ignored)
    return out


def _zero_ignored(nodes: list[NodeInfo], scores: list[int], ignored: set[str]) -> list[int]:
    """``scores`` (in node order) with 0 for every node in ``ignored``: what Score and
    NormalizeScore give a node PreScore ignored."""
    return [0 if ni.name in ignored else v for ni, v in zip(nodes, scores, strict=True)]


def _round_half_away(x: float) -> int:
    """Go's ``math.Round``: halves round away from zero."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def new(args: dict[str, Any], handle: Handle) -> PodTopologySpread:
    return PodTopologySpread(args, handle)

"""PodTopologySpread's Score carried from one pod of a run of identical pods to the next (gangplane).

The PodGroup search (:mod:`scheduler.placement_run`) scores the same feasible nodes for pod
after identical pod, each assumed on the node the previous one chose. For this plugin the
previous pod changes only the counts of the domains of that node: its own hostname count and,
per other constraint, the count of its domain value. :class:`SpreadScoreRun` therefore keeps,
per constraint, the term PreScore and Score give each node (``count * weight + (maxSkew - 1)``,
``0.0`` without the label), adds one to the counts an assumed pod adds to, recomputes the terms
of the nodes in the changed domains only, and each node's score as Score does (the terms added
in constraint order, then ``int(t + 0.5)``; 0 for nodes PreScore ignored). Nothing else of
PreScore changes while the feasible nodes stay the same: the weights come from their number and
their domain values, the ignored nodes from their labels.

Which pods add to a count is PreScore's own rule: a pod of the namespace, not terminating, that
the constraint's selector matches, on a node PreScore counts (with every node counted unless the
pod's own constraints require every key, or a node inclusion policy is honoured). A pod whose
constraints differ from the first one's (its selector, e.g. a Service selecting it by another
label, or a ``matchLabelKeys`` value) is not of the run (:func:`key_of`).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from scheduler import lazymodule
from scheduler.interfaces import CycleState
from scheduler.nodeinfo import NodeInfo, PodInfo
from scheduler.plugins.helpers import RequiredNodeAffinity

if TYPE_CHECKING:
    from scheduler.plugins.pod_topology_spread import PodTopologySpread


def key_of(constraints: list[Any], namespace: str) -> tuple[Any, ...] | None:
    """What makes two pods' constraints count and score alike (None: not comparable)."""
    from scheduler.plugins import pod_topology_spread as pts

    out = []
    for c in constraints:
        ck = pts._count_key(c.selector, namespace)
        if ck is None:
            return None
        out.append(
            (c.max_skew, c.topology_key, ck, c.min_domains, c.node_affinity_policy, c.node_taints_policy)
        )
    return (namespace, tuple(out))


class SpreadScoreRun:
    """The plugin's raw score column over ``nodes``, kept current as identical pods are assumed."""

    def __init__(
        self, plugin: PodTopologySpread, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]
    ):
        from scheduler.plugins import pod_topology_spread as pts

        s: Any = state.get(pts._PRE_SCORE_KEY)
        self.plugin = plugin
        self.state = state
        self.pod_info = pod_info
        self.nodes = nodes
        #: :meth:`elsewhere_key`, computed when first asked
        self._elsewhere_key: tuple[Any, ...] | None = None
        self.ok = s is not None
        if s is None:
            return
        self.constraints = s.constraints
        self.namespace = ns = pod_info.namespace
        self.ok = key_of(s.constraints, ns) is not None
        if not self.ok:
            return
        self.ignored = set(s.ignored_nodes)
        has_own = bool((pod_info.pod.get("spec") or {}).get("topologySpreadConstraints"))
        self.require_all = has_own or not plugin.system_defaulted
        required = RequiredNodeAffinity(pod_info.pod)
        n = len(nodes)
        #: per constraint: is it the hostname one; its count per node (hostname) or per value
        self.hostname: list[bool] = []
        self.per_node: list[list[int]] = []
        self.per_value: list[dict[str, int]] = []
        #: per constraint: positions of the nodes having each value of its key
        self.positions: list[dict[str, list[int]]] = []
        self.weights: list[float] = list(s.weights)
        self.skews: list[int] = [c.max_skew - 1 for c in s.constraints]
        #: per constraint: whether an assumed pod on a node adds to this constraint's counts
        self.counts_on: list[list[bool]] = []
        self.terms: list[list[float]] = []
        #: for pods assumed outside ``nodes`` (:meth:`assumed_elsewhere`): what PreScore's
        #: counting rule needs, and per constraint the counts added since :meth:`catch_up`
        self.required = required
        self.every_node: list[bool] = []
        self.pending: list[dict[str, int]] = []
        for i, c in enumerate(s.constraints):
            key = c.topology_key
            host = key == pts.LABEL_HOSTNAME
            self.hostname.append(host)
            every_node = c.node_taints_policy != pts.HONOR and (
                c.node_affinity_policy != pts.HONOR or required.is_empty()
            )
            self.every_node.append(every_node)
            self.pending.append({})
            if host:
                ckey = pts._count_key(c.selector, ns)
                pn = s.per_node[i] if s.per_node else None
                counts = [
                    pn.on_node(ni.name) if pn is not None else pts.count_on(ni, c.selector, ns, ckey)
                    for ni in nodes
                ]
                self.per_node.append(counts)
                self.per_value.append({})
                self.positions.append({})
                self.counts_on.append([True] * n)
            else:
                self.per_node.append([])
                self.per_value.append(dict(s.counts[i]))
                pos: dict[str, list[int]] = {}
                for q, ni in enumerate(nodes):
                    v = ni.labels.get(key)
                    if v is not None:
                        pos.setdefault(v, []).append(q)
                self.positions.append(pos)
                self.counts_on.append(
                    [
                        (not self.require_all or pts._has_all_keys(ni.labels, s.constraints))
                        and (every_node or c.includes_node(pod_info, ni, required))
                        for ni in nodes
                    ]
                )
            self.terms.append([self._term(i, q) for q in range(n)])
        self.raw: Any = [self._score(q) for q in range(n)]
        # the column starts where the plugin's own Score is (else the run is not taken)
        self.ok = self.raw == plugin.score_nodes(state, pod_info, nodes)
        #: the terms and the column are numpy arrays (:meth:`to_arrays`)
        self.arrays = False
        #: in arrays, per domain constraint: each value's row in :attr:`value_terms`, and each
        #: node's row (the last row, term 0.0, for a node without the key) (:meth:`to_arrays`)
        self.value_rows: list[dict[str, int]] = []
        self.node_rows: list[Any] = []
        #: in arrays, per domain constraint: the term of each value (and 0.0), gathered into the
        #: constraint's column by :meth:`catch_up` when a count changed
        self.value_terms: list[Any] = []
        #: in arrays: the column must be scored again at :meth:`catch_up` (a count changed)
        self.dirty = False
        #: in arrays: the domain constraints whose value terms changed since their per-node
        #: column was last gathered (:meth:`catch_up_terms`)
        self.ungathered: set[int] = set()
        #: in arrays: the domain counts of every window's run, kept once, which this run reads
        #: instead of its own (:meth:`share_counts`); None: its own
        self.shared: list[dict[str, int]] | None = None

    def share_counts(self, counts: list[dict[str, int]]) -> None:
        """From now on the domain counts are ``counts`` (equal to this run's now: a table every
        window's run shares, :class:`~scheduler.class_pick.SharedCounts`), kept current by its
        owner for every assumed pod, this run's own included: :meth:`_assumed_in_arrays` adds
        only to the hostname counts, and :meth:`catch_up` first takes the table's counts."""
        self.shared = counts

    def _take_shared(self) -> None:
        """Before the column is read: the shared counts into :attr:`per_value` and every value's
        term computed again from them (as :meth:`catch_up_terms`), to be gathered."""
        shared = self.shared
        if shared is None:
            return
        for i, rows in enumerate(self.value_rows):
            if self.hostname[i]:
                continue
            counts = self.per_value[i] = dict(shared[i])
            w, skew, terms = self.weights[i], self.skews[i], self.value_terms[i]
            for v, row in rows.items():
                terms[row] = counts.get(v, 0) * w + skew
            self.ungathered.add(i)
        self.dirty = True

    def can_use_arrays(self) -> bool:
        """Whether :meth:`to_arrays` may be used: no node is ignored (their score is 0 whatever
        their terms, which the array sum does not know)."""
        return self.ok and not self.ignored

    def to_arrays(self) -> None:
        """Keep the terms as float64 arrays and the column as an int64 array (for
        :class:`~scheduler.placement_run.PlacementRun` over many nodes): the same floats, added in
        the same order and rounded alike (``int(t + 0.5)`` of a non-negative float is its
        truncation, which ``astype`` does), so the same column."""
        import numpy as np  # (already imported: the run's nodes are many)

        self.terms = [np.array(col, dtype=np.float64) for col in self.terms]
        self.raw = np.array(self.raw, dtype=np.int64)
        n = len(self.nodes)
        for i, pos in enumerate(self.positions):
            rows = {v: r for r, v in enumerate(pos)}
            self.value_rows.append(rows)
            if self.hostname[i]:
                self.node_rows.append(None)
                self.value_terms.append(None)
                continue
            at = np.full(n, len(rows), dtype=np.intp)  # the extra row: no key, term 0.0
            for v, qs in pos.items():
                at[qs] = rows[v]
            self.node_rows.append(at)
            # each value's term as _term gives it (the same float: count * weight + skew)
            vals = [self.per_value[i].get(v, 0) * self.weights[i] + self.skews[i] for v in pos]
            self.value_terms.append(np.array([*vals, 0.0], dtype=np.float64))
        self.arrays = True

    def _term(self, i: int, q: int) -> float:
        ni = self.nodes[q]
        key = self.constraints[i].topology_key
        v = ni.labels.get(key)
        if v is None:
            return 0.0
        cnt = self.per_node[i][q] if self.hostname[i] else self.per_value[i].get(v, 0)
        return cnt * self.weights[i] + self.skews[i]

    def _score(self, q: int) -> int:
        if self.ignored and self.nodes[q].name in self.ignored:
            return 0
        t: float | None = None
        for col in self.terms:
            t = col[q] if t is None else t + col[q]
        return 0 if t is None else int(t + 0.5)

    def _score_all(self) -> Any:
        """:meth:`_score` of every node (the same additions, column by column)."""
        terms = self.terms
        if self.arrays:
            total = terms[0]
            for col in terms[1:]:
                total = total + col
            return (total + 0.5).astype(self.raw.dtype)  # int64 (no numpy import per call)
        if len(terms) == 2:  # the system defaults (hostname, zone): one pass, the same additions
            out = _sum_of_two(terms[0], terms[1])
        else:
            totals = terms[0]
            for col in terms[1:]:
                totals = list(map(operator.add, totals, col))
            out = [int(t + 0.5) for t in totals]
        if self.ignored:
            out = [0 if ni.name in self.ignored else v for ni, v in zip(self.nodes, out, strict=True)]
        return out

    def assumed(self, q: int, pod_info: PodInfo, node_info: NodeInfo) -> bool:
        """``pod_info`` was assumed on ``nodes[q]`` (now ``node_info``); whether the column changed."""
        self.nodes[q] = node_info
        if pod_info.terminating or pod_info.namespace != self.namespace:
            return False
        if self.arrays:
            return self._assumed_in_arrays(q, pod_info, node_info)
        changed: set[int] = set()
        everything = False
        for i, c in enumerate(self.constraints):
            if not c.selector.matches(pod_info.labels):
                continue
            if self.hostname[i]:
                self.per_node[i][q] += 1
                self.terms[i][q] = self._term(i, q)
                changed.add(q)
                continue
            if not self.counts_on[i][q]:
                continue
            v = node_info.labels.get(c.topology_key, "")
            counts = self.per_value[i]
            if v not in counts:
                continue
            counts[v] += 1
            everything |= self._retally(i, v, changed)
        if everything:
            self.raw[:] = self._score_all()
            return True
        raw = self.raw
        for p in changed:
            raw[p] = self._score(p)
        return bool(changed)

    def _assumed_in_arrays(self, q: int, pod_info: PodInfo, node_info: NodeInfo) -> bool:
        """:meth:`assumed` in arrays: the counts change now, the terms and the column when the
        column is next read (:meth:`catch_up`), once for every pod assumed since (in arrays a
        pass over the column costs less than a few dozen of its elements one by one)."""
        changed = False
        for i, c in enumerate(self.constraints):
            # (a domain constraint over shared counts, or not counting at this node, does nothing
            # whether or not its selector matches: asked first, the selector is not run for it)
            if not self.hostname[i] and (self.shared is not None or not self.counts_on[i][q]):
                continue  # (shared counts: their owner adds the pod)
            if not c.selector.matches(pod_info.labels):
                continue
            if self.hostname[i]:
                self.per_node[i][q] += 1
                self.terms[i][q] = self._term(i, q)
                changed = True
                continue
            v = node_info.labels.get(c.topology_key, "")
            if v not in self.per_value[i]:
                continue
            pending = self.pending[i]  # added with the other windows' pods, in catch_up
            pending[v] = pending.get(v, 0) + 1
            changed |= v in self.value_rows[i]  # (else no node of the column has that value)
        self.dirty |= changed
        return changed

    def _retally(self, i: int, v: str, changed: set[int]) -> bool:
        """Constraint ``i``'s term for domain ``v``, whose count changed, written to every node of
        ``v`` (their positions added to ``changed``); True when ``v`` is the whole placement (a
        rack in one zone), whose column is then rewritten at once. (Lists only: in arrays see
        :meth:`_catch_up_in_arrays`.)"""
        at = self.positions[i].get(v)
        if not at:
            return False
        term = self.per_value[i][v] * self.weights[i] + self.skews[i]  # every node of v has it
        col = self.terms[i]
        if len(at) == len(col):
            col[:] = [term] * len(col)
            return True
        for p in at:
            col[p] = term
        changed.update(at)
        return False

    def assumed_elsewhere(
        self, pod_info: PodInfo, node_info: NodeInfo, shared: list[Any] | None = None
    ) -> None:
        """``pod_info`` was assumed on ``node_info``, which is not one of ``nodes`` (gangplane's
        runs over the whole cluster, one per window: :class:`~scheduler.placement_run.WindowedRuns`).

        No hostname count of ``nodes`` changes; a domain count does when PreScore would count the
        pod there (the same rule as :meth:`assumed`, asked of that node). The counts are noted,
        and the terms and scores follow in :meth:`catch_up`, once, before the column is next read.

        ``shared``: a memo kept with this one assumed pod for every run it is told to. Which
        domain counts the pod adds to depends only on the pod, the node and the constraints with
        what PreScore's rule reads of them (:meth:`elsewhere_key`); runs whose keys are equal
        (the windows of one run signature) compute it once, and each keeps the domains it counts.
        """
        if self.shared is not None:
            return  # (their owner added it)
        if shared is None:
            adds = self._elsewhere_adds(pod_info, node_info)
        else:
            key = self.elsewhere_key()
            for k, got in shared:
                if k == key:
                    adds = got
                    break
            else:
                adds = self._elsewhere_adds(pod_info, node_info)
                shared.append((key, adds))
        for i, v in adds:
            if v in self.per_value[i]:
                pending = self.pending[i]
                pending[v] = pending.get(v, 0) + 1

    def assumed_elsewhere_many(self, entries: Sequence[Any]) -> None:
        """:meth:`assumed_elsewhere` of each of ``entries`` in turn (objects with ``pod_info``,
        ``node_info`` and ``shared``: a window's run told at once of the pods the other windows
        placed since it was last read), in one loop.

        A memo made by another run with an equal key hands this run that key object, so the
        next lookups compare by identity (the windows' runs each build their own equal key)."""
        if self.shared is not None:
            return  # (their owner added them)
        key = self.elsewhere_key()
        per_value, pending = self.per_value, self.pending
        for a in entries:
            shared = a.shared
            for k, got in shared:
                if k is key:
                    adds = got
                    break
                if k == key:
                    adds = got
                    key = self._elsewhere_key = k
                    break
            else:
                adds = self._elsewhere_adds(a.pod_info, a.node_info)
                shared.append((key, adds))
            for i, v in adds:
                if v in per_value[i]:
                    at = pending[i]
                    at[v] = at.get(v, 0) + 1

    def elsewhere_key(self) -> tuple[Any, ...]:
        """What :meth:`_elsewhere_adds` reads of this run besides the pod and the node: the
        constraints as they count (:func:`key_of`), which of them count every node, whether
        every key is required, and the first pod's spec (its node inclusion policies' inputs)."""
        key = self._elsewhere_key
        if key is None:
            spec = self.pod_info.pod.get("spec") or {}
            key = self._elsewhere_key = (
                key_of(self.constraints, self.namespace),
                tuple(self.hostname),
                tuple(self.every_node),
                self.require_all,
                spec.get("affinity"),
                spec.get("nodeSelector"),
                spec.get("tolerations"),
            )
        return key

    def _elsewhere_adds(self, pod_info: PodInfo, node_info: NodeInfo) -> tuple[tuple[int, str], ...]:
        """The (constraint, domain value) counts PreScore's rule adds ``pod_info`` on ``node_info``
        to, whichever domains this run's nodes have."""
        pts = lazymodule.module("scheduler.plugins.pod_topology_spread")  # (imports this module)

        if pod_info.terminating or pod_info.namespace != self.namespace:
            return ()
        out = []
        for i, c in enumerate(self.constraints):
            if self.hostname[i] or not c.selector.matches(pod_info.labels):
                continue
            v = node_info.labels.get(c.topology_key, "")
            if self.require_all and not pts._has_all_keys(node_info.labels, self.constraints):
                continue
            if not (self.every_node[i] or c.includes_node(self.pod_info, node_info, self.required)):
                continue
            out.append((i, v))
        return tuple(out)

    def catch_up(self) -> bool:
        """Apply the counts :meth:`assumed_elsewhere` noted; whether the column changed."""
        if self.arrays:
            return self._catch_up_in_arrays()
        changed: set[int] = set()
        everything = False
        for i, pending in enumerate(self.pending):
            if not pending:
                continue
            counts = self.per_value[i]
            for v, k in pending.items():
                counts[v] += k
                everything |= self._retally(i, v, changed)
            pending.clear()
        if everything or (changed and 2 * len(changed) > len(self.raw)):
            # (pods of every domain came, as on a window spanning a few zones: one pass)
            self.raw[:] = self._score_all()
            return True
        raw = self.raw
        for p in changed:
            raw[p] = self._score(p)
        return bool(changed)

    def catch_up_terms(self) -> None:
        """In arrays: the pending counts added (the pods of the other windows' runs and this
        run's own: :meth:`_assumed_in_arrays`) and each changed value's term computed once (as
        :meth:`_term` does), into :attr:`value_terms` only. The constraint's per-node column is
        gathered from them when the column is next read (:meth:`_catch_up_in_arrays`); a pick
        over classes of nodes (:mod:`scheduler.class_pick`) reads the value terms themselves."""
        for i, pending in enumerate(self.pending):
            if not pending:
                continue
            counts, rows, terms = self.per_value[i], self.value_rows[i], self.value_terms[i]
            w, skew = self.weights[i], self.skews[i]
            hit = False
            for v, k in pending.items():
                cnt = counts[v] = counts[v] + k
                row = rows.get(v)
                if row is not None:
                    terms[row] = cnt * w + skew
                    hit = True
            pending.clear()
            if hit:
                self.ungathered.add(i)
                self.dirty = True

    def _catch_up_in_arrays(self) -> bool:
        """:meth:`catch_up` in arrays: :meth:`catch_up_terms`, then each constraint whose value
        terms changed gathered into its column (one pass, whichever and however many of its
        domains changed, from the terms as they are now), and the column scored again when
        anything changed since it was last (:meth:`_score_all`: the same sums)."""
        self._take_shared()
        self.catch_up_terms()
        for i in self.ungathered:
            self.terms[i] = self.value_terms[i].take(self.node_rows[i])
        self.ungathered.clear()
        if not self.dirty:
            return False
        self.dirty = False
        self.raw[:] = self._score_all()
        return True


def _sum_of_two(first: list[float], second: list[float]) -> list[int]:
    """``int(a + b + 0.5)`` of each node's two terms, in this order.

    When one column holds a single value (the zone term over a rack, which lies in one zone; the
    hostname term over a window no pod of the set has reached yet), the sum is computed once per
    distinct value of the other column - a few, not one per node - with the same operands in
    the same order, so the same floats and the same rounding."""
    n = len(first)
    if n and second.count(second[0]) == n:
        b = second[0]
        by_a = {a: int(a + b + 0.5) for a in set(first)}
        return list(map(by_a.__getitem__, first))
    if n and first.count(first[0]) == n:
        a = first[0]
        by_b = {b: int(a + b + 0.5) for b in set(second)}
        return list(map(by_b.__getitem__, second))
    return [int(a + b + 0.5) for a, b in zip(first, second, strict=True)]

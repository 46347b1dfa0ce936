"""The scheduler's view of nodes and pods, and the per-cycle :class:`Snapshot` taken from it.

The informer handlers feed the cache through ``add_node/update_node/remove_node`` and
``add_pod/update_pod/remove_pod`` (assigned pods only). A pod the scheduler has decided on is
*assumed* onto its node before the bind call returns (``assume_pod``), so the next cycle already
sees the node as used; the informer's Add for the bound pod confirms it, ``forget_pod`` undoes a
failed bind, and ``finish_binding`` starts the optional expiry clock (kube's default TTL is 0:
assumed pods never expire, because the informer event always arrives).

:meth:`Cache.update_snapshot` copies only NodeInfos whose ``generation`` moved since the
snapshot's last update (kube keeps nodes in most-recently-updated order for the same reason),
so a cycle costs work proportional to what changed, not to the cluster size.

Capacity index: each snapshot keeps, per resource (pod slots, cpu, memory, ephemeral-storage
and every extended resource), a ``SortedList`` of ``(free amount, node)`` pairs (the cache builds
one of its own only when asked, since scheduling cycles read the snapshot's).
``candidate_nodes(requests)`` bisects each requested resource's list, takes the smallest
candidate slice and checks the other resources only on those nodes, so "which nodes could fit
4 GPUs" never loops over thousands of nodes in Python.

Topology domains: a snapshot asked for the domains of a label key (``domains(key)``, e.g.
``topology.kubernetes.io/rack`` for a PodGroup's ``schedulingConstraints``) builds, once, one
:class:`Domain` per label value (its sorted node names, its own capacity index and running
free-capacity totals) and keeps them current as nodes change and pods are assumed, so the
PodGroup cycle prunes racks that cannot hold the group and searches a rack's nodes without
scanning the cluster.

PodGroups: the cache also holds the PodGroup objects (fed by the scheduler's PodGroup
informer) and each group's members (:class:`~scheduler.podgroups.PodGroupStates`):
unscheduled pods as the informer handlers report them, assumed and assigned pods as the
pod bookkeeping below moves them.

Journal: the PodGroup cycle tries a group on a snapshot (``assume_pod``) and must leave no
trace when the group fails or a placement is rejected: ``backup()`` marks the journal of
snapshot changes and ``restore(mark)`` undoes everything after the mark, newest first.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence, Set
from typing import TYPE_CHECKING, Any

from sortedcontainers import SortedList

from apiserver.api.types import Obj
from apiserver.meta import parse_time
from scheduler.nodeinfo import PODS, NodeInfo, PodInfo, next_generation
from scheduler.noderun import NodeRun
from scheduler.pod_delta import pods_changed
from scheduler.podgroups import ASSIGNED, ASSUMED, UNSCHEDULED, PodGroupState, PodGroupStates

if TYPE_CHECKING:
    from scheduler.nodetable import NodeTable, Rows


def pod_key(pod: Obj) -> str:
    m = pod.get("metadata") or {}
    return f"{m.get('namespace', '')}/{m.get('name', '')}"


# --- capacity index ------------------------------------------------------------------------------


class CapacityIndex:
    """Nodes sorted by free capacity, per resource.

    ``lazy`` (the snapshot's cluster-wide index, gangplane): a resource's sorted list is built
    only once a query needs it; until then the index keeps, per resource, a floor under every
    node's free amount (the least amount ever indexed), and a query whose request is at most the
    floor knows no node is short of it without a list. On a cluster with room (every node's
    free cpu, memory and pod slots above what pods ask) no list is ever built and re-indexing a
    node that took a pod is a few dictionary writes instead of moving it in three sorted lists;
    once a request exceeds the floor the list is built and kept current from then on. The answers
    are the eager index's, whatever the history (``tests/unit/scheduler/test_capacity_index.py``).
    """

    def __init__(self, lazy: bool = False) -> None:
        self._by_resource: dict[str, SortedList] = {}
        self._free: dict[str, dict[str, int]] = {}
        #: resource -> sum of the free amounts over all indexed nodes
        self.totals: dict[str, int] = {}
        #: resource -> how many indexed nodes have it
        self._count: dict[str, int] = {}
        self._lazy = lazy
        #: lazy: resource without a sorted list -> at most every node's free amount of it
        self._floor: dict[str, int] = {}

    def _list(self, resource: str) -> SortedList:
        lst = self._by_resource.get(resource)
        if lst is None:
            lst = SortedList()
            self._by_resource[resource] = lst
        return lst

    def _sorted(self, resource: str) -> SortedList | None:
        """The resource's sorted ``(free, node)`` list, built now if the index is lazy and has
        none yet (``None``: no node has the resource)."""
        lst = self._by_resource.get(resource)
        if lst is None and self._lazy and self._count.get(resource):
            lst = SortedList((f[resource], n) for n, f in self._free.items() if resource in f)
            self._by_resource[resource] = lst
            self._floor.pop(resource, None)
        return lst

    def update(self, name: str, ni: NodeInfo | None) -> None:
        """Re-index ``name`` from ``ni`` (``None`` or a NodeInfo without node removes it).

        Only the resources whose free amount changed move in their sorted lists.
        """
        old = self._free.pop(name, None) or {}
        free: dict[str, int] = {}
        if ni is not None and ni.node is not None:
            # ``NodeInfo.free`` of every resource the node has or its pods request, spelled out
            # (one pass over each dict instead of a call per resource and a set union)
            alloc, req = ni.allocatable, ni.requested
            free[PODS] = alloc.get(PODS, 0) - len(ni.pods)
            for r, v in alloc.items():
                if r != PODS:
                    free[r] = v - req.get(r, 0)
            for r, v in req.items():
                if r not in alloc and r != PODS:
                    free[r] = -v
        totals, count, lists = self.totals, self._count, self._by_resource
        if free.keys() == old.keys():
            # the same resources (a node that took or lost pods): each that moved moves once,
            # and no resource's node count changes
            for r, v in free.items():
                was = old[r]
                if was == v:
                    continue
                lst = lists.get(r)
                if lst is not None:
                    lst.discard((was, name))
                self._enter(r, v, name, lst)
                totals[r] += v - was
            if free:
                self._free[name] = free
            return
        for r, v in old.items():
            if free.get(r) != v:
                lst = lists.get(r)
                if lst is not None:
                    lst.discard((v, name))
                totals[r] -= v
                if r not in free:
                    count[r] -= 1
        for r, v in free.items():
            if old.get(r) != v:
                self._enter(r, v, name, lists.get(r))
                totals[r] = totals.get(r, 0) + v
                if r not in old:
                    count[r] = count.get(r, 0) + 1
        if free:
            self._free[name] = free

    def _enter(self, r: str, v: int, name: str, lst: SortedList | None) -> None:
        """``name``'s new free amount ``v`` of ``r`` into ``r``'s sorted list ``lst`` when it is
        kept; lazily, only the floor of amounts seen; otherwise the list is built now."""
        if lst is not None:
            lst.add((v, name))
        elif self._lazy:
            floor = self._floor.get(r)
            if floor is None or v < floor:
                self._floor[r] = v
        else:
            self._list(r).add((v, name))

    def free(self, name: str, resource: str) -> int:
        return self._free.get(name, {}).get(resource, 0)

    def entries(self) -> dict[str, list[tuple[int, str]]]:
        """Every resource some node has -> its ``(free, node)`` pairs in order (for comparisons)."""
        out: dict[str, list[tuple[int, str]]] = {}
        for r in sorted(r for r, c in self._count.items() if c):
            out[r] = sorted((f[r], n) for n, f in self._free.items() if r in f)
        return out

    def candidates(self, requests: Mapping[str, int]) -> set[str]:
        """Nodes with at least one free pod slot and ``free >= request`` for every positive request."""
        wanted = [(r, v) for r, v in requests.items() if v > 0 and r != PODS]
        wanted.append((PODS, max(1, requests.get(PODS, 0))))
        slices = []
        for r, v in wanted:
            lst = self._sorted(r)
            if lst is None:
                return set()
            lo = lst.bisect_left((v, ""))
            slices.append((len(lst) - lo, r, lst, lo))
        slices.sort(key=lambda t: t[0])
        if slices[0][0] == len(self._free):
            # even the scarcest resource is free enough everywhere: every node qualifies
            return set(self._free)
        _, _, lst, lo = slices[0]
        rest = [(r, v) for r, v in wanted if r != slices[0][1]]
        out = set()
        for _, name in lst.islice(lo):
            free = self._free[name]
            if all(free.get(r, 0) >= v for r, v in rest):
                out.add(name)
        return out

    def short_of(self, requests: Mapping[str, int]) -> tuple[set[str] | None, set[str] | None]:
        """The nodes that cannot hold ``requests``, or, when that set would be the larger, those that can.

        Returns ``(short, None)`` or ``(None, fits)``: ``short`` lists every node with no free
        pod slot or less free than a positive request (the nodes NodeResourcesFit rejects),
        ``fits`` every other node. The cost follows the smaller set: when every node has room
        (the common case) it is a few bisections and an empty set (a lazy index: a comparison
        with each requested resource's floor).
        """
        wanted = [(r, v) for r, v in requests.items() if v > 0 and r != PODS]
        wanted.append((PODS, max(1, requests.get(PODS, 0))))
        total = len(self._free)
        bound = 0
        cuts = []
        for r, v in wanted:
            lst = self._by_resource.get(r)
            if lst is None and self._lazy:
                if self._count.get(r, 0) < total:
                    return None, self.candidates(requests)
                floor = self._floor.get(r)
                if floor is not None and floor >= v:
                    continue  # every node has at least v free: none is short of it
                lst = self._sorted(r)
            if lst is None or len(lst) < total:
                # some nodes lack the resource altogether: fewer nodes fit than lack it
                return None, self.candidates(requests)
            lo = lst.bisect_left((v, ""))
            bound += lo
            cuts.append((lst, lo))
        if bound * 2 > total:
            return None, self.candidates(requests)
        short: set[str] = set()
        for lst, lo in cuts:
            if lo:
                short.update(name for _, name in lst.islice(0, lo))
        return short, None

    def __len__(self) -> int:
        return len(self._free)


# --- topology domains ----------------------------------------------------------------------------


class Domain:
    """The nodes carrying one value of a topology label, with a capacity index of their own."""

    __slots__ = ("value", "names", "index", "_sorted")

    def __init__(self, value: str) -> None:
        self.value = value
        self.names: SortedList = SortedList()
        self.index = CapacityIndex()
        self._sorted: list[str] | None = None

    def node_names(self) -> list[str]:
        """The domain's nodes in name order (cached until the membership changes)."""
        if self._sorted is None:
            self._sorted = list(self.names)
        return self._sorted

    def max_free(self, resource: str) -> int:
        """The largest free amount of ``resource`` on one node of the domain (0 if none)."""
        lst = self.index._by_resource.get(resource)
        return lst[-1][0] if lst else 0

    def total_free(self, resource: str) -> int:
        return self.index.totals.get(resource, 0)


class TopologyDomains:
    """One :class:`Domain` per value of ``key``; nodes without the label belong to none."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.domains: dict[str, Domain] = {}
        self._value_of: dict[str, str] = {}

    def update(self, name: str, ni: NodeInfo | None) -> None:
        old = self._value_of.pop(name, None)
        value = ni.labels.get(self.key) if ni is not None and ni.node is not None else None
        if old is not None and old != value:
            d = self.domains[old]
            d.names.discard(name)
            d._sorted = None
            d.index.update(name, None)
            if len(d.names) == 0:
                del self.domains[old]
        if value is None:
            return
        d = self.domains.get(value)
        if d is None:
            d = self.domains[value] = Domain(value)
        if old != value:
            d.names.add(name)
            d._sorted = None
        d.index.update(name, ni)
        self._value_of[name] = value

    def value_of(self, node_name: str) -> str | None:
        return self._value_of.get(node_name)

    def values(self) -> list[str]:
        return sorted(self.domains)


# --- pod label index -----------------------------------------------------------------------------


class PodLabelIndex:
    """Which nodes run a pod of a namespace carrying a label pair (built on first use).

    PodTopologySpread counts the pods matching a selector in every topology domain; with the
    index it visits only the nodes holding pods with the selector's ``key=value`` pairs,
    instead of every pod of every node of the cluster.

    Per node it keeps how many of its pods carry each (namespace, key, value) triple, so a node
    whose pods changed is told only those pods (:meth:`apply`, from :mod:`scheduler.pod_delta`)
    instead of being rebuilt from all of them (:meth:`update`).
    """

    def __init__(self) -> None:
        #: the nodes of each triple: the name itself while one node has it, a set from the second.
        #: Many triples are one pod's own (a StatefulSet pod's ``pod-name`` label): a set each
        #: would be one more long-lived object per pod for the cyclic collector to traverse
        #: (a set is always GC-tracked; a str never is)
        self.nodes: dict[tuple[str, str, str], str | set[str]] = {}
        self._of: dict[str, dict[tuple[str, str, str], int]] = {}
        #: each triple of :attr:`nodes` by itself: the one tuple every node's entry holds. A pod's
        #: labels make fresh tuples; kept as they come, each node's entries would hold their own
        #: copies of a set's shared triples (its ``app`` and revision labels: 3 of a StatefulSet
        #: pod's 4), each one more long-lived object per pod for the cyclic collector to count
        #: and traverse once (a tuple of strings is untracked only by the pass that sees it)
        self._canon: dict[tuple[str, str, str], tuple[str, str, str]] = {}

    def _add(self, t: tuple[str, str, str], name: str) -> tuple[str, str, str]:
        """Record that ``name`` has a pod with ``t``; returns the triple's shared tuple."""
        nodes = self.nodes
        cur = nodes.get(t)
        if cur is None:
            nodes[t] = name
            self._canon[t] = t
            return t
        if isinstance(cur, str):
            if cur != name:
                nodes[t] = {cur, name}
        else:
            cur.add(name)
        return self._canon[t]

    def _discard(self, t: tuple[str, str, str], name: str) -> None:
        nodes = self.nodes
        cur = nodes[t]
        if isinstance(cur, str):
            if cur == name:
                del nodes[t]
                del self._canon[t]
            return
        cur.discard(name)
        if len(cur) == 1:
            nodes[t] = next(iter(cur))
        elif not cur:
            del nodes[t]
            del self._canon[t]

    def node_set(self, t: tuple[str, str, str]) -> set[str]:
        """The nodes running a pod with the triple (a new set: the caller may change it)."""
        cur = self.nodes.get(t)
        if cur is None:
            return set()
        return {cur} if isinstance(cur, str) else set(cur)

    def as_sets(self) -> dict[tuple[str, str, str], set[str]]:
        """Every triple's nodes as a set (for comparisons in tests and debugging)."""
        return {t: self.node_set(t) for t in self.nodes}

    def update(self, name: str, ni: NodeInfo | None) -> None:
        """Rebuild the node's entries from every pod of ``ni``."""
        old = self._of.pop(name, {})
        new: dict[tuple[str, str, str], int] = {}
        if ni is not None and ni.node is not None and ni.pods:
            for p in ni.pods:
                ns = p.namespace
                for k, v in p.labels.items():
                    t = (ns, k, v)
                    new[t] = new.get(t, 0) + 1
        for t in old.keys() - new.keys():
            self._discard(t, name)
        for t in new.keys() - old.keys():
            self._add(t, name)
        if new:
            canon = self._canon
            self._of[name] = {canon[t]: c for t, c in new.items()}  # (the same keys, shared tuples)

    def apply(self, name: str, removed: Iterable[PodInfo], added: Iterable[PodInfo]) -> None:
        """The node lost the pods ``removed`` and gained ``added`` since its entries were made
        (by :meth:`update` or this method): what :meth:`update` of the node now would give."""
        of = self._of.get(name)
        if of is None:
            of = {}
        for p in removed:
            ns = p.namespace
            for k, v in p.labels.items():
                t = (ns, k, v)
                c = of[t] - 1
                if c:
                    of[t] = c
                    continue
                del of[t]
                self._discard(t, name)
        for p in added:
            ns = p.namespace
            for k, v in p.labels.items():
                t = (ns, k, v)
                c = of.get(t, 0)
                if c:
                    of[t] = c + 1  # (the entry keeps its key: ``t`` is dropped)
                else:
                    of[self._add(t, name)] = 1
        if of:
            self._of[name] = of
        else:
            self._of.pop(name, None)

    def triples_of(self, name: str) -> Set[tuple[str, str, str]] | None:
        """The (namespace, key, value) triples of the node's pods (``None``: no pods)."""
        of = self._of.get(name)
        return of.keys() if of is not None else None

    def nodes_with(self, namespace: str, pairs: Iterable[tuple[str, str]]) -> set[str]:
        """Nodes with at least one pod of ``namespace`` carrying each pair (maybe not the same pod)."""
        nodes = self.nodes
        found = [nodes.get((namespace, k, v)) for k, v in pairs]
        if not found:
            raise ValueError("at least one label pair is required")
        sets: list[set[str]] = []
        single: str | None = None
        for f in found:
            if f is None:
                return set()
            if isinstance(f, str):
                if single is not None and f != single:
                    return set()
                single = f
            else:
                sets.append(f)
        if single is not None:
            # one node is the smallest answer: it stands if every other pair's nodes have it
            return {single} if all(single in other for other in sets) else set()
        sets.sort(key=len)
        out = set(sets[0])
        for other in sets[1:]:
            out &= other
        return out

    def nodes_with_at_most(
        self, namespace: str, pairs: Iterable[tuple[str, str]], limit: int
    ) -> set[str] | None:
        """:meth:`nodes_with` when some pair is on at most ``limit`` nodes (the answer is then that
        small or smaller, and built from that pair's nodes); None otherwise, without building the
        answer: PodTopologySpread asks for every pod of a set whether its pods are on a few nodes."""
        nodes = self.nodes
        pairs = tuple(pairs)
        smallest: int | None = None
        for k, v in pairs:
            f = nodes.get((namespace, k, v))
            if f is None:
                return set()
            n = 1 if isinstance(f, str) else len(f)
            smallest = n if smallest is None else min(smallest, n)
        if smallest is None:
            raise ValueError("at least one label pair is required")
        return self.nodes_with(namespace, pairs) if smallest <= limit else None

    def any_node_with(self, namespace: str, pairs: Iterable[tuple[str, str]]) -> bool:
        """Whether :meth:`nodes_with` would name a node, without building its set: asked for every
        pod of a large set by PodTopologySpread's no-match test, where the answer's set is as
        large as the nodes already holding the set's pods."""
        nodes = self.nodes
        found = [nodes.get((namespace, k, v)) for k, v in pairs]
        if not found:
            raise ValueError("at least one label pair is required")
        if any(f is None for f in found):
            return False
        singles = {f for f in found if isinstance(f, str)}
        sets = [f for f in found if not isinstance(f, str)]
        if len(singles) > 1:
            return False
        if singles:
            (single,) = singles
            return all(single in other for other in sets)
        sets.sort(key=len)
        smallest, others = sets[0], sets[1:]
        return any(all(n in other for other in others) for n in smallest)


# --- spreading counts ----------------------------------------------------------------------------


class SpreadCounts:
    """Matching pods per value of a topology label, over every node, kept current per node change.

    PodTopologySpread's pre-score needs, for one selector, the count in every domain; pods of
    one StatefulSet ask for the same counts cycle after cycle while only the node that took the
    previous pod changed, so the snapshot keeps the totals instead of recounting every node.
    ``count`` is the plugin's own count of a node's matching pods.
    """

    __slots__ = ("topology_key", "count", "count_pods", "by_value", "_of", "key", "required", "by_id")

    def __init__(
        self,
        topology_key: str,
        count: Callable[[NodeInfo], int],
        key: str = "",
        required: frozenset[tuple[str, str, str]] = frozenset(),
        count_pods: Callable[[Sequence[PodInfo]], int] | None = None,
    ) -> None:
        #: what is counted and per which label (equal keys count alike, whichever object counts)
        self.key = key
        self.topology_key = topology_key
        self.count = count
        #: ``count`` as a sum over pods, when it is one: ``count(ni) == count_pods(ni.pods)`` for
        #: every NodeInfo, so a node whose pods changed by a known delta moves by the delta's
        #: count (:meth:`shift`) instead of recounting all of its pods (``None``: not known)
        self.count_pods = count_pods
        #: (namespace, key, value) triples every counted pod carries (empty: none known): a node
        #: whose pods lack one holds no counted pod (the snapshot then skips the count)
        self.required = required
        self.by_value: dict[str, int] = {}
        self._of: dict[str, tuple[str, int]] = {}
        #: ``by_value`` as a column indexed by a node table's ids of ``topology_key``'s values:
        #: (the table's value -> id index it follows, the float64 counts per id, one slot more
        #: for id -1 that stays 0), built by :mod:`scheduler.plugins.spread_arrays` on first use
        #: and kept current here with every change, so a Score over the table reads it as is
        #: instead of rebuilding it per pod (``None``: not built, or to be rebuilt)
        self.by_id: tuple[dict[str, int], Any] | None = None

    def unaffected(self, name: str, ni: NodeInfo, changed: Iterable[PodInfo]) -> bool:
        """Whether :meth:`update` of ``name`` to ``ni`` would change nothing, when the node's pods
        differ from those it was last counted over by ``changed`` only (the removed and the added
        ones of :func:`~scheduler.pod_delta.pods_changed`): no count moves unless one of them
        carries every required triple (the others are counted in neither state), nor the node's
        count to another value unless its label changed."""
        got = self._of.get(name)
        if got is not None and got[0] != ni.labels.get(self.topology_key, ""):
            return False
        req = self.required
        for p in changed:
            labels = p.labels
            if all(p.namespace == ns and labels.get(k) == v for ns, k, v in req):
                return False
        return True

    def counts_none_on(self, name: str, triples: Set[tuple[str, str, str]] | None) -> bool:
        """Whether ``name`` had no count and, its pods carrying only ``triples`` (the pod label
        index's entry; ``None``: no pods), surely has none now: then :meth:`update` changes nothing."""
        req = self.required
        return bool(req) and name not in self._of and (triples is None or not req <= triples)

    def on_node(self, name: str) -> int:
        """The count on one node."""
        got = self._of.get(name)
        return got[1] if got is not None else 0

    def nodes_counted(self) -> Mapping[str, tuple[str, int]]:
        """Node name -> (its value, its count) for every node with a non-zero count (read-only)."""
        return self._of

    def update(self, name: str, ni: NodeInfo | None) -> None:
        self._recount(name, ni, self.count(ni) if ni is not None and ni.node is not None and ni.pods else 0)

    def shift(self, name: str, ni: NodeInfo, removed: Sequence[PodInfo], added: Sequence[PodInfo]) -> None:
        """:meth:`update` of a node whose pods are those it was last counted over less ``removed``
        plus ``added`` (:func:`~scheduler.pod_delta.pods_changed`): its count is the old one less
        ``count_pods(removed)`` plus ``count_pods(added)``, which is ``count(ni)`` since the count
        is a sum over pods, read from the delta (one gang pod) instead of every pod of the node
        (:attr:`count_pods` must be set; ``tests/unit/scheduler/test_pod_delta_reindex.py``
        checks the result against a rebuild)."""
        count_pods = self.count_pods
        assert count_pods is not None
        got = self._of.get(name)
        n = got[1] if got is not None else 0
        if added:
            n += count_pods(added)
        if removed:
            n -= count_pods(removed)
        self._recount(name, ni, n)

    def _recount(self, name: str, ni: NodeInfo | None, n: int) -> None:
        """Count ``n`` matching pods on ``name`` (``ni``'s node; ``n`` is 0 without one)."""
        old = self._of.pop(name, None)
        if old is not None:
            value, was = old
            left = self.by_value[value] - was
            if left:
                self.by_value[value] = left
            else:
                del self.by_value[value]
            if self.by_id is not None:
                self._column_add(value, -was)
        if n:
            value = ni.labels.get(self.topology_key, "")  # type: ignore[union-attr]
            self._of[name] = (value, n)
            self.by_value[value] = self.by_value.get(value, 0) + n
            if self.by_id is not None:
                self._column_add(value, n)

    def _column_add(self, value: str, n: int) -> None:
        """Keep :attr:`by_id` equal to :attr:`by_value`. A value the table has no id for yet is
        left out: once a row with it is filled the table's value list grows, and a column
        shorter than that list is rebuilt before it is read."""
        index, column = self.by_id  # type: ignore[misc]
        vid = index.get(value)
        if vid is not None and vid < len(column) - 1:
            column[vid] += n


#: spreading counts a snapshot keeps current (the most recently asked for)
MAX_SPREAD_COUNTS = 8
#: a catch-up that reindexes at least this many nodes, and at least this share of the
#: snapshot's, drops the kept spreading counts instead of moving them node by node
#: (:meth:`Snapshot.drop_spread_counts`)
BIG_CATCH_UP = 256
BIG_CATCH_UP_SHARE = 0.5
#: stale node table rows from which :meth:`Snapshot.node_table` refills them in one batch
#: (:meth:`~scheduler.nodetable.NodeTable.refill`) rather than row by row
BATCHED_REFILL = 64


# --- snapshot ------------------------------------------------------------------------------------


class Snapshot:
    """An immutable-for-the-cycle view of the cluster (NodeInfos copied from the cache).

    Gang scheduling assumes pods into the snapshot only (:meth:`assume_pod` / :meth:`forget_pod`);
    those nodes are marked so the next :meth:`Cache.update_snapshot` restores them from the cache.
    """

    def __init__(self, node_infos: Iterable[NodeInfo] = ()) -> None:
        self.node_info_map: dict[str, NodeInfo] = {}
        self._names = SortedList()
        self.generation = 0
        self._index = CapacityIndex(lazy=True)
        #: nodes assumed with ``defer_index`` or rolled back (``restore``): their index entries
        #: (capacity, topology domains, pod labels, spreading counts) are brought up to date
        #: when an index is next read
        self._deferred: set[str] = set()
        self._with_affinity: set[str] = set()
        self._with_anti_affinity: set[str] = set()
        #: nodes with ``spec.unschedulable`` / with any taint (the only ones those Filters may reject)
        self.unschedulable_nodes: set[str] = set()
        self.tainted_nodes: set[str] = set()
        #: tainted nodes grouped by their taints' (key, value, effect): nodes of a group are
        #: tolerated, or not, alike
        self.taint_groups: dict[tuple[tuple[str, str, str], ...], set[str]] = {}
        self._taint_group_of: dict[str, tuple[tuple[str, str, str], ...]] = {}
        self._dirty: set[str] = set()
        #: node -> the cache generation this snapshot's NodeInfo already equals (:meth:`Cache.adopt_assumed`):
        #: the next :meth:`Cache.update_snapshot` does not copy it again unless it changed since
        self._adopted: dict[str, int] = {}
        #: NodeInfos in name order, kept in step with ``node_info_map`` (None: rebuild on demand)
        self._ordered: list[NodeInfo] | None = None
        self._topologies: dict[str, TopologyDomains] = {}
        self._pod_labels: PodLabelIndex | None = None
        #: node -> its pods as the pod indexes (pod labels, spreading counts) last saw them: a
        #: node reindexed is told only the pods that changed since (:mod:`scheduler.pod_delta`)
        self._indexed_pods: dict[str, tuple[PodInfo, ...]] = {}
        #: node -> the Node object the spreading counts last saw it as: while it is the same
        #: object (informer objects are replaced, never changed in place) its labels, hence its
        #: domain in every count, are the same
        self._indexed_node: dict[str, Obj] = {}
        self._spread: OrderedDict[str, SpreadCounts] = OrderedDict()
        #: the kept spreading counts by one of their required triples, and those with none
        #: (:meth:`_spread_touched`; ``None``: rebuilt when next needed, after a count came or went)
        self._spread_by_triple: (
            tuple[list[SpreadCounts], dict[tuple[str, str, str], list[SpreadCounts]]] | None
        ) = None
        #: (op, pod, node) of every assume/forget since the last cache update, for restore()
        self._journal: list[tuple[str, PodInfo, str]] = []
        #: the topology domain a PodGroup cycle is evaluating (capacity hints come from its index)
        self._scope: Domain | None = None
        #: nodes changed while a scope was set, whose entries in the cluster-wide capacity
        #: index are brought up to date when the scope is cleared (nothing reads it meanwhile)
        self._index_stale: set[str] = set()
        #: the numpy node table (:mod:`scheduler.nodetable`), built on first use
        self._table: NodeTable | None = None
        #: nodes changed since the table was last read: their rows are refilled on the next read,
        #: so a cycle that never reads the table (a rack placement) pays nothing for it
        self._table_stale: set[str] = set()
        #: bumped whenever a node's NodeInfo is replaced, or a node joins or leaves: a window
        #: made by :meth:`run` is this snapshot's run of nodes while the epoch is unchanged
        self._epoch = 0
        #: the epoch at which the node table's rows last held exactly the snapshot's NodeInfos
        #: (-1: not known to), so a :class:`~scheduler.noderun.NodeRun` of that epoch maps to
        #: its rows without comparing them
        self._table_epoch = -1
        for ni in node_infos:
            self._put(ni.name, ni)

    @property
    def index(self) -> CapacityIndex:
        """The cluster-wide capacity index (up to date with every assume)."""
        self._catch_up()
        return self._index

    def _catch_up(self) -> None:
        """Reindex the nodes assumed with ``defer_index`` (once each, from their current state)."""
        if self._deferred:
            pending, self._deferred = self._deferred, set()
            infos = self.node_info_map
            for name in pending:
                self._reindex(name, infos.get(name))

    @property
    def scope(self) -> Domain | None:
        """The topology domain a PodGroup cycle is evaluating, or ``None``.

        While a scope is set, capacity hints come from the domain's own index, so assuming a
        pod there defers the cluster-wide index (a placement's pods are rolled back anyway);
        clearing the scope brings it up to date.
        """
        return self._scope

    @scope.setter
    def scope(self, domain: Domain | None) -> None:
        # Nodes still deferred need no catch-up here: reindexed later under any scope, they
        # land in the cluster-wide index (no scope) or in ``_index_stale`` (flushed below when
        # the scope is cleared), and every domain's index is updated either way.
        self._scope = domain
        if domain is None and self._index_stale:
            infos = self.node_info_map
            for name in self._index_stale:
                self._index.update(name, infos.get(name))
            self._index_stale.clear()

    @property
    def node_names(self) -> list[str]:
        """All node names, sorted (the order Filter visits nodes in)."""
        return self._names  # type: ignore[return-value]

    def _put(self, name: str, ni: NodeInfo | None) -> None:
        self._deferred.discard(name)  # reindexed below
        if ni is None or ni.node is None:
            if self.node_info_map.pop(name, None) is not None:
                self._names.discard(name)
                self._ordered = None
                self._table = None  # rows would shift: rebuilt on next use
                self._epoch += 1
            self._with_affinity.discard(name)
            self._with_anti_affinity.discard(name)
            self.unschedulable_nodes.discard(name)
            self.tainted_nodes.discard(name)
            self._regroup_taints(name, None)
            self._reindex(name, None)
            return
        was = self.node_info_map.get(name)
        if was is None:
            self._names.add(name)
            self._ordered = None
            self._table = None
            self._epoch += 1
        elif was.node is ni.node:
            # the same Node object (informer objects are replaced, never edited): its taints and
            # ``unschedulable``, hence the node's taint group and sets, are what they were; only
            # its pods changed (the cache's copy of a node that took or lost pods)
            self._set(name, ni)
            self._refresh_affinity(name, ni)
            self._reindex(name, ni)
            return
        if ni.unschedulable:
            self.unschedulable_nodes.add(name)
        else:
            self.unschedulable_nodes.discard(name)
        if ni.taints:
            self.tainted_nodes.add(name)
        else:
            self.tainted_nodes.discard(name)
        self._regroup_taints(name, ni)
        self._set(name, ni)
        self._refresh_affinity(name, ni)
        self._reindex(name, ni)

    def refresh(self, name: str, ni: NodeInfo) -> bool:
        """Take ``ni`` for a node whose NodeInfo here differs from it only by pods refreshed in
        place, each with the same requests, host ports, affinity, namespace, labels and
        deletion state (the bound pod confirming its assumed self): what :meth:`_put` would
        reindex (capacity, table row, topologies, pod labels, spreading counts, affinity and
        taint sets) reads nothing that changed, so only the references to the NodeInfo move.
        False (nothing done) when the node is not this snapshot's or not the same Node.

        The caller (:meth:`Cache.update_snapshot`) vouches for the equality; the differential
        test ``tests/unit/scheduler/test_snapshot_refresh.py`` checks it against a full copy.
        """
        old = self.node_info_map.get(name)
        if old is None or old.node is not ni.node or name in self._deferred:
            return False
        self._set(name, ni)
        if name in self._indexed_pods:
            # The pod indexes saw these pods as they see the new ones (the caller's vouching), so
            # the node's entry can name the new PodInfos: the old ones (the assumed copies, each
            # holding its pod's pending manifest) would otherwise be kept until the node is next
            # reindexed, for the whole run on a node no later pod lands on.
            self._indexed_pods[name] = tuple(ni.pods)
        table = self._table
        if table is not None and name not in self._table_stale:
            row = table.row_of.get(name)
            if row is None:
                self._table_stale.add(name)
            else:
                table.infos[row] = ni  # the row's numbers are the same; ``rows_of`` checks identity
                if self._table_epoch == self._epoch - 1:  # the rows held every NodeInfo before
                    self._table_epoch = self._epoch
        return True

    def _regroup_taints(self, name: str, ni: NodeInfo | None) -> None:
        old = self._taint_group_of.pop(name, None)
        new = (
            tuple(
                (str(t.get("key") or ""), str(t.get("value") or ""), str(t.get("effect") or ""))
                for t in ni.taints
            )
            if ni is not None and ni.taints
            else None
        )
        if old == new:
            if new is not None:
                self._taint_group_of[name] = new
            return
        if old is not None:
            group = self.taint_groups[old]
            group.discard(name)
            if not group:
                del self.taint_groups[old]
        if new is not None:
            self.taint_groups.setdefault(new, set()).add(name)
            self._taint_group_of[name] = new

    def _reindex(self, name: str, ni: NodeInfo | None) -> None:
        if self._table is not None:
            self._table_stale.add(name)  # refilled when the table is next read
        if self._scope is None:
            self._index.update(name, ni)
        else:
            self._index_stale.add(name)
        for topo in self._topologies.values():
            topo.update(name, ni)
        # the pods the pod indexes last saw on the node against its pods now (scheduler/pod_delta.py)
        old = self._indexed_pods.pop(name, None)
        old_node = self._indexed_node.pop(name, None)
        delta = None
        if ni is not None and ni.node is not None:
            if ni.pods:
                self._indexed_pods[name] = tuple(ni.pods)
            self._indexed_node[name] = ni.node
            if old is not None:
                delta = pods_changed(old, ni.pods)
        labels = self._pod_labels
        if labels is not None:
            if delta is not None:
                labels.apply(name, *delta)
            else:
                labels.update(name, ni)
        if self._spread:
            # counts for selectors none of the node's pods can match are left alone (stale counts
            # of earlier sets' selectors would otherwise recount every node that changes), as are
            # those no changed pod can count in (a node that took one more gang's pod)
            triples = labels.triples_of(name) if labels is not None else None
            changed = None if delta is None else delta[0] + delta[1]
            aggs: Iterable[SpreadCounts] = self._spread.values()
            same_node = changed is not None and ni is not None and old_node is ni.node
            if same_node:
                # the same Node: every count keeps its domain, so only the counts whose required
                # triples a changed pod carries can move (a node that took one more gang's pod
                # is told to its set's count only, not checked against every kept selector)
                aggs = self._spread_touched(changed)  # type: ignore[arg-type]
            for agg in aggs:
                if changed is not None and agg.unaffected(name, ni, changed):  # type: ignore[arg-type]
                    continue
                if labels is None or not agg.counts_none_on(name, triples):
                    if same_node and agg.count_pods is not None:
                        # the same domain, and the pods it was counted over are known: count the
                        # delta (one gang pod) rather than every pod of the node
                        agg.shift(name, ni, *delta)  # type: ignore[arg-type,misc]
                    else:
                        agg.update(name, ni)

    def _spread_touched(self, changed: Iterable[PodInfo]) -> list[SpreadCounts]:
        """The kept spreading counts a pod of ``changed`` may be counted in: those requiring
        nothing, and those whose chosen required triple one of them carries (a pod lacking it
        lacks *every* required triple, which :meth:`SpreadCounts.unaffected` reads as
        unaffected). A superset: each is still asked :meth:`~SpreadCounts.unaffected`."""
        index = self._spread_by_triple
        if index is None:
            free: list[SpreadCounts] = []
            by: dict[tuple[str, str, str], list[SpreadCounts]] = {}
            for agg in self._spread.values():
                if agg.required:
                    by.setdefault(min(agg.required), []).append(agg)
                else:
                    free.append(agg)
            index = self._spread_by_triple = (free, by)
        free, by = index
        out = list(free)
        if by:
            for p in changed:
                ns = p.namespace
                for k, v in p.labels.items():
                    got = by.get((ns, k, v))
                    if got is not None:
                        out.extend(a for a in got if a not in out)
        return out

    def spread_counts(
        self,
        key: str,
        topology_key: str,
        count: Callable[[NodeInfo], int],
        holders: Iterable[str] | Callable[[], Iterable[str] | None] | None = None,
        required: frozenset[tuple[str, str, str]]
        | Callable[[], frozenset[tuple[str, str, str]]] = frozenset(),
        count_pods: Callable[[Sequence[PodInfo]], int] | None = None,
    ) -> SpreadCounts:
        """Matching pods per ``topology_key`` value (``by_value``; nodes without the label count
        under ``""``) and per node (``on_node``).

        ``key`` names what ``count`` counts (equal keys must count alike); ``holders``, when
        given (or a function giving them, asked only when the counts are first built), are the only
        nodes that may hold matching pods now (from :meth:`nodes_with_pod_labels`).
        ``required`` (or a function giving it, asked only when the counts are first built):
        (namespace, key, value) triples every counted pod carries (part of what ``key`` names):
        a changed node whose pods lack one is not recounted. ``count_pods``: ``count`` as a sum over
        a list of pods (:attr:`SpreadCounts.count_pods`), when it is one.
        Built on first use, then kept current with every node change (:class:`SpreadCounts`).
        """
        self._catch_up()
        k = f"{key}|{topology_key}"
        agg = self._spread.get(k)
        if agg is None:
            agg = SpreadCounts(
                topology_key, count, k, required() if callable(required) else required, count_pods
            )
            infos = self.node_info_map
            if callable(holders):
                holders = holders()
            for name in holders if holders is not None else list(infos):
                agg.update(name, infos.get(name))
            self._spread[k] = agg
            if len(self._spread) > MAX_SPREAD_COUNTS:
                self._spread.popitem(last=False)
            self._spread_by_triple = None
        else:
            self._spread.move_to_end(k)
        return agg

    def drop_spread_counts(self, reindexing: int) -> bool:
        """Forget every kept spreading count before a catch-up that reindexes ``reindexing``
        nodes, when that is most of the cluster (:data:`BIG_CATCH_UP`); True when dropped.

        After a big gang every node took one of its pods, and the counts its search built (its own
        selector, by hostname and by zone) would move on each of them, though no pod left to
        schedule may ask for them again. A count asked for later is built afresh by
        :meth:`spread_counts` from the pod label index's holders: the totals a kept one would
        hold (a sum over the same pods), for at most the cost of the per-node moves skipped
        here, which then touched every node it counts on; unasked, nothing is spent.
        (Called at a cycle's start: no cycle holds a count from before.)
        """
        if not self._spread or reindexing < max(BIG_CATCH_UP, len(self.node_info_map) * BIG_CATCH_UP_SHARE):
            return False
        self._spread.clear()
        self._spread_by_triple = None
        return True

    def nodes_with_pod_labels(self, namespace: str, pairs: Iterable[tuple[str, str]]) -> set[str]:
        """Nodes running pods of ``namespace`` that carry every pair (:class:`PodLabelIndex`)."""
        return self._pod_label_index().nodes_with(namespace, pairs)

    def any_node_with_pod_labels(self, namespace: str, pairs: Iterable[tuple[str, str]]) -> bool:
        """Whether :meth:`nodes_with_pod_labels` would name a node (:meth:`PodLabelIndex.any_node_with`)."""
        return self._pod_label_index().any_node_with(namespace, pairs)

    def nodes_with_pod_labels_at_most(
        self, namespace: str, pairs: Iterable[tuple[str, str]], limit: int
    ) -> set[str] | None:
        """:meth:`nodes_with_pod_labels` if some pair is on at most ``limit`` nodes, else None
        (:meth:`PodLabelIndex.nodes_with_at_most`)."""
        return self._pod_label_index().nodes_with_at_most(namespace, pairs, limit)

    def _pod_label_index(self) -> PodLabelIndex:
        self._catch_up()
        idx = self._pod_labels
        if idx is None:
            idx = self._pod_labels = PodLabelIndex()
            for name, ni in self.node_info_map.items():
                idx.update(name, ni)
        return idx

    def node_table(self) -> NodeTable:
        """The nodes' numbers as numpy columns in name order (built on first use, then kept current)."""
        self._catch_up()  # derived columns may read the other indexes (spreading counts)
        table = self._table
        stale = self._table_stale
        if table is not None and stale:
            infos = self.node_info_map
            if len(stale) < BATCHED_REFILL:
                # a cycle's one or two nodes: numpy's fancy indexing costs more than it saves
                for name in stale:
                    ni = infos.get(name)
                    if ni is None or not table.update(name, ni):
                        table = self._table = None  # a node left or joined: rebuilt below
                        break
            else:
                changed = [(name, infos.get(name)) for name in stale]
                if not all(ni is not None for _, ni in changed) or not table.refill(changed):  # type: ignore[arg-type]
                    table = self._table = None  # a node left or joined: rebuilt below
            stale.clear()
        if table is None:
            from scheduler.nodetable import NodeTable  # numpy is imported only once a cycle needs it

            table = self._table = NodeTable(self.ordered())
            self._table_stale.clear()
        # every NodeInfo replaced since the rows were last exact was marked stale (``_reindex``,
        # ``_defer``) or written into its row (``refresh``): the rows are exact again
        self._table_epoch = self._epoch
        return table

    def run(self, start: int, count: int) -> list[NodeInfo]:
        """The ``count`` nodes from index ``start`` in name order, wrapping around (at most every
        node once), as a :class:`~scheduler.noderun.NodeRun` that proves to :meth:`is_run` and
        :meth:`run_rows` what it is, while no node changes, without comparing its elements."""
        ordered = self.ordered()
        nodes = ordered[start : start + count]
        if len(nodes) < count:
            nodes += ordered[: count - len(nodes)]
        run = NodeRun(nodes)
        run.owner, run.epoch, run.start = self, self._epoch, start
        return run

    def run_rows(self, nodes: NodeRun, table: NodeTable) -> Rows | None:
        """The rows of ``table`` that ``nodes`` are, when its proof holds for this snapshot and
        ``table`` is this snapshot's table with exact rows; ``None``: not known this way."""
        epoch = self._epoch
        if (
            nodes.owner is self
            and nodes.epoch == epoch
            and table is self._table
            and self._table_epoch == epoch
        ):
            return table.window(nodes.start, len(nodes))
        return None

    def is_run(self, nodes: list[NodeInfo]) -> bool:
        """Whether ``nodes`` are consecutive nodes of this snapshot in name order (wrapping around),
        i.e. the window a cycle scores from its rotating start; identity comparisons, in C."""
        if type(nodes) is NodeRun and nodes.owner is self and nodes.epoch == self._epoch:
            return len(nodes) > 0  # made by :meth:`run`, and no node has changed since
        k = len(nodes)
        if not k:
            return False
        ordered = self.ordered()
        if self._table is not None:
            # rows are in name order and move only when nodes join or leave (the table is dropped)
            got = self._table.row_of.get(nodes[0].name)
            if got is None:
                return False
            r0 = got
        else:
            try:
                r0 = self._names.index(nodes[0].name)
            except ValueError:
                return False
        n = len(ordered)
        if r0 + k <= n:
            return ordered[r0 : r0 + k] == nodes
        split = n - r0
        return ordered[r0:] == nodes[:split] and ordered[: k - split] == nodes[split:]

    def domains(self, key: str) -> TopologyDomains:
        """The nodes grouped by the value of label ``key`` (built on first use, then kept current).

        Current as of this call: nodes assumed with ``defer_index`` or rolled back since are
        reindexed when an index is next read, so read the domains through this method again
        after such changes rather than through an object held from before."""
        self._catch_up()
        topo = self._topologies.get(key)
        if topo is None:
            topo = self._topologies[key] = TopologyDomains(key)
            for name, ni in self.node_info_map.items():
                topo.update(name, ni)
        return topo

    def _set(self, name: str, ni: NodeInfo) -> None:
        """Replace the NodeInfo of a node already listed (keeping the ordered list in step)."""
        self.node_info_map[name] = ni
        self._epoch += 1
        if self._ordered is not None:
            # the node table's rows are the name order (it is dropped when a node joins or leaves)
            row = self._table.row_of.get(name) if self._table is not None else None
            self._ordered[row if row is not None else self._names.index(name)] = ni

    def _refresh_affinity(self, name: str, ni: NodeInfo) -> None:
        if ni.pods_with_affinity:
            self._with_affinity.add(name)
        else:
            self._with_affinity.discard(name)
        if ni.pods_with_required_anti_affinity:
            self._with_anti_affinity.add(name)
        else:
            self._with_anti_affinity.discard(name)

    def get(self, name: str) -> NodeInfo | None:
        return self.node_info_map.get(name)

    def list(self) -> list[NodeInfo]:
        """Every NodeInfo in name order (a fresh list; the order is maintained, not rebuilt per call)."""
        return list(self.ordered())

    def ordered(self) -> list[NodeInfo]:
        """:meth:`list` without the copy, for the hot path: the caller must not modify it."""
        if self._ordered is None:
            self._ordered = [self.node_info_map[n] for n in self._names]
        return self._ordered

    def num_nodes(self) -> int:
        return len(self.node_info_map)

    def have_pods_with_affinity_list(self) -> list[NodeInfo]:
        return [self.node_info_map[n] for n in sorted(self._with_affinity)]

    def have_pods_with_required_anti_affinity_list(self) -> list[NodeInfo]:
        return [self.node_info_map[n] for n in sorted(self._with_anti_affinity)]

    def candidate_nodes(self, requests: Mapping[str, int]) -> set[str]:
        """Nodes whose free capacity covers ``requests``; within :attr:`scope` when one is set."""
        if self.scope is not None:
            self._catch_up()
            return self.scope.index.candidates(requests)
        return self.index.candidates(requests)

    def short_of(self, requests: Mapping[str, int]) -> tuple[set[str] | None, set[str] | None]:
        """:meth:`CapacityIndex.short_of` of the snapshot (within :attr:`scope` when one is set)."""
        if self.scope is not None:
            self._catch_up()
            return self.scope.index.short_of(requests)
        return self.index.short_of(requests)

    def assume_pod(self, pod_info: PodInfo, node_name: str, defer_index: bool = False) -> None:
        """Place a pod on a node of this snapshot only (the cache is untouched).

        ``defer_index``: the node's NodeInfo changes now, its index entries when an index is
        next read (a run of a placement's pods reads none: :mod:`scheduler.placement_run`),
        so a node taking many pods is reindexed once.
        """
        ni = self.node_info_map[node_name]
        if node_name not in self._dirty:
            ni = ni.clone()
            self._set(node_name, ni)
            self._dirty.add(node_name)
        ni.add_pod_info(pod_info)
        self._refresh_affinity(node_name, ni)
        if defer_index:
            self._defer((node_name,))
        else:
            self._reindex(node_name, ni)
        self._journal.append(("assume", pod_info, node_name))

    def forget_pod(self, pod_info: PodInfo, node_name: str) -> None:
        """Take a pod off a node of this snapshot only (preemption dry runs remove victims)."""
        ni = self.node_info_map.get(node_name)
        if ni is None:
            return
        if node_name not in self._dirty:
            ni = ni.clone()
            self._set(node_name, ni)
            self._dirty.add(node_name)
        ni.remove_pod(pod_info.key)
        self._refresh_affinity(node_name, ni)
        self._reindex(node_name, ni)
        self._journal.append(("forget", pod_info, node_name))

    def assumed_pods(self) -> dict[str, PodInfo]:
        """uid -> the PodInfo of each pod assumed here (:meth:`assume_pod`) since the last
        :meth:`Cache.update_snapshot` and neither forgotten nor rolled back since: the pods a
        kept PodGroup placement left in the snapshot (``PodGroupAlgorithm.run_async(keep_winner=True)``),
        which the cache's assume takes as they are (:meth:`Cache.assume_pod`'s ``assumed``)."""
        out: dict[str, PodInfo] = {}
        for op, pi, _ in self._journal:
            if op == "assume":
                out[pi.uid] = pi
            else:
                out.pop(pi.uid, None)
        return out

    def backup(self) -> int:
        """A mark to :meth:`restore` to: every assume/forget after it can be undone."""
        return len(self._journal)

    def restore(self, mark: int) -> None:
        """Undo every :meth:`assume_pod` / :meth:`forget_pod` made after ``mark``, newest first.

        The indexes of the touched nodes are brought up to date when an index is next read
        (as for ``defer_index``), once per node rather than once per undone pod (a placement of a
        large gang puts many pods on one node). A rolled-back placement is usually followed by
        :meth:`Cache.update_snapshot` putting the same nodes with the group's pods assumed in the
        cache: reindexed then, their entries move once instead of back and forth.
        """
        touched: dict[str, NodeInfo] = {}
        while len(self._journal) > mark:
            op, pi, node = self._journal.pop()
            ni = self.node_info_map.get(node)
            if ni is None:
                continue
            if op == "assume":
                ni.remove_pod(pi.key)
            else:
                ni.add_pod_info(pi)
            touched[node] = ni
        for node, ni in touched.items():
            self._refresh_affinity(node, ni)
        self._defer(touched)

    def _defer(self, names: Iterable[str]) -> None:
        """Mark nodes whose index entries (capacity, domains, pod labels, spreading counts, node
        table row) lag their NodeInfo: every reader of an index catches up first (:meth:`_catch_up`)."""
        self._deferred.update(names)
        if self._table is not None:
            self._table_stale.update(names)


# --- cache ---------------------------------------------------------------------------------------


class CacheError(Exception):
    pass


class Cache:
    """Nodes and pods (bound and assumed) as the scheduler sees them."""

    def __init__(self, clock: Any = None, assumed_pod_ttl: float = 0.0) -> None:
        self.clock = clock
        self.ttl = assumed_pod_ttl
        self.nodes: dict[str, NodeInfo] = {}
        #: node names by last change, most recent last (kube's linked list of NodeInfos)
        self._recent: OrderedDict[str, None] = OrderedDict()
        #: every pod the cache accounts (bound or assumed), by key: its PodInfo, whose
        #: ``node_name`` is the node it is accounted on. The PodInfo itself, not a record around
        #: it, so that a bound pod costs the cyclic collector no object beyond its PodInfo.
        self._pods: dict[str, PodInfo] = {}
        self._assumed: set[str] = set()
        #: assumed pods whose binding finished, with a TTL: the monotonic deadline after which
        #: they expire (kube's ``podState.deadline``; ``bindingFinished`` is being listed here)
        self._deadlines: dict[str, float] = {}
        #: the cache's own capacity index, built on first use (scheduling cycles read the
        #: snapshot's): until someone asks, node and pod changes need not keep it current
        self._index: CapacityIndex | None = None
        self._real_nodes = 0
        #: node -> its generation before a run of pod refreshes that changed nothing any snapshot
        #: index reads (:meth:`_replace_pod`): a snapshot that holds that state or a later one of
        #: the run takes the node's new NodeInfo without reindexing it (:meth:`Snapshot.refresh`)
        self._refreshed: dict[str, int] = {}
        self.pod_groups = PodGroupStates()
        self._pod_group_objs: dict[str, Obj] = {}
        #: assumed pods whose binding cycle has come back from Bind (:meth:`finish_binding`): that
        #: cycle uses its assumed PodInfo no more after that step (the Scheduled Event, PostBind),
        #: so the pod's bound revision may confirm that PodInfo in place (:meth:`_confirm_in_place`)
        self._binding_done: set[str] = set()
        #: True while a scheduling cycle may still read the snapshot (the scheduler sets it): a
        #: PodInfo the snapshot shares is then never changed in place
        self.snapshot_in_use = False

    # -- pod groups -------------------------------------------------------------------------

    def add_pod_group(self, pod_group: Obj) -> None:
        """A PodGroup appeared or changed (the scheduler's PodGroup informer)."""
        meta = pod_group.get("metadata") or {}
        self._pod_group_objs[f"{meta.get('namespace', '')}/{meta.get('name', '')}"] = pod_group

    update_pod_group = add_pod_group

    def remove_pod_group(self, pod_group: Obj) -> None:
        meta = pod_group.get("metadata") or {}
        self._pod_group_objs.pop(f"{meta.get('namespace', '')}/{meta.get('name', '')}", None)

    def get_pod_group(self, namespace: str, name: str) -> Obj | None:
        return self._pod_group_objs.get(f"{namespace}/{name}")

    def pod_group_state(self, namespace: str, name: str) -> PodGroupState | None:
        return self.pod_groups.get(f"{namespace}/{name}")

    def add_unscheduled_pod(self, pod: Obj) -> None:
        """A pending pod of some group is known to the scheduler (informer Add/Update)."""
        if pod_key(pod) not in self._pods:
            self.pod_groups.set(pod, UNSCHEDULED)

    def remove_unscheduled_pod(self, pod: Obj) -> None:
        if pod_key(pod) not in self._pods:
            self.pod_groups.remove(pod)

    # -- nodes ------------------------------------------------------------------------------

    @property
    def index(self) -> CapacityIndex:
        """Nodes by free capacity (:class:`CapacityIndex`), kept current once first asked for."""
        idx = self._index
        if idx is None:
            idx = self._index = CapacityIndex()
            for name, ni in self.nodes.items():
                idx.update(name, ni)
        return idx

    def _touch(self, name: str, reindex: bool = True, refreshed_from: int | None = None) -> None:
        """Mark the node changed (the next snapshot copies it); ``reindex`` False when its
        free capacity did not change; ``refreshed_from``: the node's generation before this
        change, when the change left every input of the snapshot's indexes as it was."""
        if refreshed_from is None:
            self._refreshed.pop(name, None)
        else:
            self._refreshed.setdefault(name, refreshed_from)
        self._recent[name] = None
        self._recent.move_to_end(name)
        if reindex and self._index is not None:
            self._index.update(name, self.nodes.get(name))

    def add_node(self, node: Obj) -> NodeInfo:
        name = (node.get("metadata") or {}).get("name", "")
        ni = self.nodes.get(name)
        if ni is None:
            ni = NodeInfo()
            self.nodes[name] = ni
        if ni.node is None:
            self._real_nodes += 1
        ni.set_node(node)
        self._touch(name)
        return ni

    def update_node(self, old: Obj | None, new: Obj) -> NodeInfo:
        return self.add_node(new)

    def remove_node(self, node: Obj) -> None:
        """Forget the node; NodeInfo lingers (without node) while pods still point at it."""
        name = (node.get("metadata") or {}).get("name", "")
        ni = self.nodes.get(name)
        if ni is None or ni.node is None:
            return
        self._real_nodes -= 1
        if ni.pods:
            ni.remove_node()
        else:
            del self.nodes[name]
        self._touch(name)

    def node_count(self) -> int:
        return self._real_nodes

    # -- pods -------------------------------------------------------------------------------

    def _add_pod_to_node(self, pi: PodInfo, node_name: str) -> None:
        ni = self.nodes.get(node_name)
        if ni is None:
            ni = NodeInfo()
            ni.name = node_name
            self.nodes[node_name] = ni
        ni.add_pod_info(pi)
        self._touch(node_name)

    def _remove_pod_from_node(self, key: str, node_name: str) -> None:
        ni = self.nodes.get(node_name)
        if ni is None:
            return
        ni.remove_pod(key)
        if ni.node is None and not ni.pods:
            del self.nodes[node_name]
        self._touch(node_name)

    def assume_pod(
        self,
        pod: Obj,
        node_name: str | None = None,
        pod_info: PodInfo | None = None,
        assumed: PodInfo | None = None,
    ) -> PodInfo:
        """Account the pod on its node before binding; ``node_name`` defaults to ``spec.nodeName``.

        ``pod_info``, the scheduling cycle's PodInfo of this same ``pod``, saves parsing it again.
        ``assumed``: ``pod_info.on_node(node_name)`` made already, by the PodGroup search that
        assumed this same ``pod_info`` on that node in the snapshot and kept it there
        (:meth:`Snapshot.assumed_pods`): the cache takes that PodInfo rather than an equal copy,
        so cache and snapshot share it as they share every other pod's PodInfo (one pod object,
        spec and PodInfo fewer per member of a big gang; ``adopt_assumed`` then finds the very
        same PodInfos). Taken only with ``pod_info`` and when it names the same pod and node.
        """
        key = pod_info.key if pod_info is not None and pod_info.pod is pod else pod_key(pod)
        if key in self._pods:
            raise CacheError(f"pod {key} is in the cache, so can't be assumed")
        if pod_info is not None and pod_info.pod is pod:
            host = node_name if node_name is not None else pod_info.node_name
            if assumed is not None and assumed.node_name == host and assumed.uid == pod_info.uid:
                pi = assumed
            else:
                pi = pod_info.on_node(host)
            pod = pi.pod
        else:
            if node_name is not None and (pod.get("spec") or {}).get("nodeName") != node_name:
                pod = {**pod, "spec": {**(pod.get("spec") or {}), "nodeName": node_name}}
            pi = PodInfo(pod)
        self._add_pod_to_node(pi, pi.node_name)
        self._pods[key] = pi
        self._assumed.add(key)
        self.pod_groups.set(pod, ASSUMED, pi.node_name, key)
        return pi

    def finish_binding(self, pod: Obj) -> None:
        """Binding returned: the assumed pod may be confirmed in place from now on, and the expiry
        clock starts (only with a TTL: kube's default, 0, never expires one)."""
        key = pod_key(pod)
        if key not in self._assumed:
            return
        self._binding_done.add(key)
        if self.ttl > 0 and self.clock is not None:
            self._deadlines[key] = self.clock.monotonic() + self.ttl

    def forget_pod(self, pod: Obj) -> None:
        """Undo :meth:`assume_pod` (the bind failed)."""
        key = pod_key(pod)
        pi = self._pods.get(key)
        if pi is None:
            return
        if key not in self._assumed:
            raise CacheError(f"pod {key} wasn't assumed so cannot be forgotten")
        self._remove_pod_from_node(key, pi.node_name)
        del self._pods[key]
        self._unassume(key)
        # back to pending: it still belongs to its group
        unassigned = {**pod, "spec": {k: v for k, v in (pod.get("spec") or {}).items() if k != "nodeName"}}
        self.pod_groups.set(unassigned, UNSCHEDULED)

    def _unassume(self, key: str) -> None:
        self._assumed.discard(key)
        self._binding_done.discard(key)
        self._deadlines.pop(key, None)

    def is_assumed_pod(self, pod: Obj) -> bool:
        return pod_key(pod) in self._assumed

    def get_pod(self, pod: Obj) -> Obj | None:
        pi = self._pods.get(pod_key(pod))
        return pi.pod if pi is not None else None

    def _replace_pod(self, key: str, old: PodInfo, pi: PodInfo) -> None:
        """Move the pod's accounting from ``old`` to ``pi``: in place when it stays on the same
        node with the same requests (the bound pod confirming its assumed self, a status
        update), else removed from the old node and added to the new one."""
        if pi.node_name == old.node_name:
            ni = self.nodes.get(pi.node_name)
            before = ni.generation if ni is not None else 0
            if ni is not None and ni.replace_pod_info(pi):
                same = pi.labels == old.labels and pi.terminating == old.terminating
                self._touch(pi.node_name, reindex=False, refreshed_from=before if same else None)
                return
        self._remove_pod_from_node(key, old.node_name)
        self._add_pod_to_node(pi, pi.node_name)

    def add_pod(self, pod: Obj) -> None:
        """An assigned pod appeared (informer Add): confirm an assumed pod or add it."""
        key = pod_key(pod)
        old = self._pods.get(key)
        if (
            old is not None
            and key in self._assumed
            and (self._confirm_in_place(key, old, pod) or self._confirm(key, old, pod))
        ):
            return
        pi = PodInfo(pod, old)
        if not pi.node_name:
            return  # only assigned pods belong in the cache
        if old is not None and key in self._assumed:
            # the informer's view wins: move it if it landed elsewhere, refresh the object
            self._replace_pod(key, old, pi)
            self._pods[key] = pi
            self._unassume(key)
            self.pod_groups.set(pod, ASSIGNED, pi.node_name, key)
            return
        if old is not None:
            self.update_pod(old.pod, pod)
            return
        self._add_pod_to_node(pi, pi.node_name)
        self._pods[key] = pi
        self.pod_groups.set(pod, ASSIGNED, pi.node_name)

    def _confirm(self, key: str, old: PodInfo, pod: Obj) -> bool:
        """:meth:`add_pod`'s confirmation of the assumed ``old`` by ``pod`` when the bound revision
        has the assumed one's namespace and ``spec`` (the binding set ``nodeName``, which the
        assumption already had): the general path's result - the same PodInfo slots, node lists,
        generation and touch, group record - with less work (:meth:`PodInfo.confirmed_by`,
        :meth:`PodGroupStates.confirm`). False, with nothing changed, in any other case."""
        name = old.node_name
        ni = self.nodes.get(name)
        if ni is None or not name:
            return False
        pi = old.confirmed_by(pod)
        if pi is None:
            return False
        before = ni.generation
        if not ni.replace_pod_info(pi):
            return False
        same = pi.labels == old.labels and pi.terminating == old.terminating
        self._touch(name, reindex=False, refreshed_from=before if same else None)
        self._pods[key] = pi
        self._unassume(key)
        if not self.pod_groups.confirm(key, name):
            self.pod_groups.set(pod, ASSIGNED, name, key)
        return True

    def _confirm_in_place(self, key: str, old: PodInfo, pod: Obj) -> bool:
        """:meth:`_confirm` without a new PodInfo: ``old`` takes the bound revision ``pod`` itself
        (its ``pod``, ``uid`` and ``labels`` slots), so its node is not changed at all and no
        snapshot has the node to copy or refresh again: a snapshot that holds ``old`` (the PodGroup
        cycle's adopted placement, or a copy of the node since the assume) holds the confirmed pod
        as it is, what the general path's next :meth:`update_snapshot` would give it.

        Taken only when nothing can tell the two apart. The revision parses to ``old``'s facts: the
        same name, namespace and ``spec`` (:meth:`PodInfo.confirmed_by`'s test), equal labels, uid,
        deletion state and start time. ``old`` is its node's last pod (and last of the affinity
        lists it is in): the general path moves the confirmed pod to the end, which changes nothing
        then. Its binding cycle is over (:meth:`finish_binding`): that cycle reads the assumed pod
        for the Scheduled Event and PostBind in the step it comes back from Bind. No scheduling
        cycle reads the snapshot meanwhile (``snapshot_in_use``): its PodInfos stay as they were
        for the whole cycle, as kube's snapshot does. False, with nothing changed, otherwise."""
        if self.snapshot_in_use or key not in self._binding_done:
            return False
        name = old.node_name
        ni = self.nodes.get(name)
        if ni is None or not name or not ni.pods or ni.pods[-1] is not old:
            return False
        if (old.has_affinity and ni.pods_with_affinity[-1] is not old) or (
            old.has_required_anti_affinity and ni.pods_with_required_anti_affinity[-1] is not old
        ):
            return False
        if not old.same_pod_and_spec(pod):
            return False
        meta = pod.get("metadata") or {}
        uid = meta.get("uid") or old.key
        labels = meta.get("labels") or {}
        if (
            uid != old.uid
            or labels != old.labels
            or bool(meta.get("deletionTimestamp")) != old.terminating
            or parse_time((pod.get("status") or {}).get("startTime")) != old.start_time
        ):
            return False
        old.pod = pod
        old.uid = uid
        old.labels = labels
        self._unassume(key)
        if not self.pod_groups.confirm(key, name):
            self.pod_groups.set(pod, ASSIGNED, name, key)
        return True

    def update_pod(self, old: Obj | None, new: Obj) -> None:
        key = pod_key(new)
        old = self._pods.get(key)
        if old is None or key in self._assumed:
            self.add_pod(new)
            return
        pi = PodInfo(new, old)
        self._replace_pod(key, old, pi)
        self._pods[key] = pi
        self.pod_groups.set(new, ASSIGNED, pi.node_name)

    def remove_pod(self, pod: Obj) -> None:
        key = pod_key(pod)
        pi = self._pods.pop(key, None)
        if pi is None:
            return
        self._unassume(key)
        self._remove_pod_from_node(key, pi.node_name)
        self.pod_groups.remove(pod)

    def cleanup_assumed_pods(self) -> list[str]:
        """Expire assumed pods whose binding finished and whose TTL passed (kube: ``cleanupAssumedPods``)."""
        if self.clock is None:
            return []
        now = self.clock.monotonic()
        expired = [k for k, deadline in self._deadlines.items() if now > deadline]
        for k in expired:
            pi = self._pods.pop(k)
            self._unassume(k)
            self._remove_pod_from_node(k, pi.node_name)
            self.pod_groups.remove(pi.pod)
        return sorted(expired)

    expire = cleanup_assumed_pods

    def pod_count(self) -> int:
        return len(self._pods)

    def assumed_pod_keys(self) -> set[str]:
        return set(self._assumed)

    def candidate_nodes(self, requests: Mapping[str, int]) -> set[str]:
        """Names of nodes whose current free capacity covers ``requests`` (integer units, cpu milli)."""
        return self.index.candidates(requests)

    # -- snapshot ---------------------------------------------------------------------------

    def update_snapshot(self, snapshot: Snapshot) -> None:
        """Bring ``snapshot`` up to date, copying only NodeInfos changed since its last update."""
        gen = snapshot.generation
        changed: list[str] = []
        for name in reversed(self._recent):
            ni = self.nodes.get(name)
            if ni is not None and ni.generation <= gen:
                break
            changed.append(name)
        adopted = snapshot._adopted
        refreshed = self._refreshed
        dirty = snapshot._dirty
        put: list[str] = []  # the nodes copied and reindexed
        for name in changed:
            ni = self.nodes.get(name)
            if adopted and ni is not None and adopted.get(name) == ni.generation:
                continue  # the snapshot's NodeInfo is this one already (adopt_assumed)
            since = refreshed.get(name)
            if (
                since is not None
                and since < gen
                and name not in dirty
                and ni is not None
                and ni.node is not None
                and snapshot.refresh(name, ni.clone())
            ):
                continue  # only pods refreshed since the snapshot's copy (a bound pod confirmed)
            put.append(name)
        if dirty:  # the nodes the snapshot assumed on or forgot from, back to the cache's state
            put.extend(dirty - set(changed))
            dirty.clear()
        if len(put) >= BIG_CATCH_UP:
            snapshot.drop_spread_counts(len(put))
        nodes = self.nodes
        for name in put:
            ni = nodes.get(name)
            snapshot._put(name, ni.clone() if ni is not None and ni.node is not None else None)
        snapshot._journal.clear()
        adopted.clear()
        # trim the recency list: entries for removed nodes are no longer needed once copied
        if len(self._recent) > len(self.nodes):  # it names every node, and nodes removed since
            for name in changed:
                if name not in self.nodes:
                    self._recent.pop(name, None)
        if snapshot.num_nodes() != self._real_nodes:
            for name in [
                n for n in snapshot.node_info_map if n not in self.nodes or self.nodes[n].node is None
            ]:
                snapshot._put(name, None)
        # every later change takes a larger generation than this one
        snapshot.generation = next_generation()

    def adopt_assumed(self, snapshot: Snapshot, node_names: Iterable[str], members: Collection[str]) -> int:
        """Let ``snapshot`` keep its NodeInfos of ``node_names`` at the next :meth:`update_snapshot`
        where they already equal the cache's; returns how many it keeps.

        A PodGroup cycle that left its placement's pods assumed in the snapshot
        (``PodGroupAlgorithm.run_async(keep_winner=True)``) and then assumed the same pods in the
        cache holds, for each of their nodes, what copying the cache's NodeInfo would give it:
        the same Node and the same pods in the same order - the very PodInfos of the other pods,
        equal copies (the same pod with ``nodeName`` set) for the group's ``members`` (uids).
        Anything else that changed the cache's node since the snapshot was taken (an informer
        event while the search yielded, a Reserve or Permit failure that forgot a pod) makes a
        pod differ, and that node is copied as usual. A node kept is copied again as soon as
        the cache changes it (the bound pod confirming its assumed self)."""
        kept = 0
        for name in node_names:
            ni = self.nodes.get(name)
            mine = snapshot.node_info_map.get(name)
            if ni is None or mine is None or ni.node is None or ni.node is not mine.node:
                continue
            # (``==`` of the two lists: the same PodInfos in the same order, element by element
            # by identity - PodInfo has no ``__eq__`` - the common case once the cache took the
            # search's assumed PodInfos, decided without a Python step per pod)
            if ni.pods != mine.pods and (
                len(ni.pods) != len(mine.pods)
                or not all(
                    a is b or (a.uid == b.uid and a.uid in members and a.node_name == b.node_name)
                    for a, b in zip(ni.pods, mine.pods, strict=True)
                )
            ):
                continue
            snapshot._adopted[name] = ni.generation
            kept += 1
        return kept

    def snapshot(self) -> Snapshot:
        s = Snapshot()
        self.update_snapshot(s)
        return s

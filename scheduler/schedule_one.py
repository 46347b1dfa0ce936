"""kube's pod scheduling algorithm (``schedule_one.go``) over one profile's :class:`Framework`.

The framework (:mod:`scheduler.framework`) is the extension-point runtime: it owns the plugins
and runs them point by point. This module is the algorithm that drives those points for one pod,
as upstream's ``schedulePod`` / ``findNodesThatFitPod`` / ``prioritizeNodes`` / ``selectHost``:
PreFilter (results may narrow the nodes), Filter over the nodes starting at a rotating index and
stopping once ``numFeasibleNodesToFind`` fit, the first failing plugin deciding a node's status; on
failure a :class:`~scheduler.diagnosis.FitError` whose text is kube's; otherwise PreScore, Score,
NormalizeScore, weighting, and a random pick among the best.

The functions take the framework as their first argument, as upstream's take ``fwk``. The rotating
start index (upstream's ``nextStartNodeIndex``) stays on the framework, one per profile, so that the
pod-by-pod cycle and the PodGroup cycle of one profile continue the same rotation.

gangplane addition: Filter plugins may also offer ``filter_hint(state, pod, snapshot)``
(:class:`~scheduler.interfaces.FilterHint`): the only nodes they may reject this cycle (cordoned
nodes, tainted nodes, nodes short of the requests per the snapshot's capacity index) or the only
nodes they accept. The algorithm then runs a plugin only on nodes it may reject - on a cluster with
room, no Filter runs at all for a plain pod - and tries the surely-rejected nodes last, only when
nothing else fits, to give the exact per-node reasons for the FitError. The result is the same as
kube's; only the work is smaller. (A PreFilterResult would change the diagnosis text, so the hint is
not one.)
"""

from __future__ import annotations

import bisect
import itertools
import operator
from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from scheduler import arraypolicy, lazymodule
from scheduler.diagnosis import Diagnosis, FitError, NoNodesAvailableError
from scheduler.framework import Framework, run_filter_chain
from scheduler.interfaces import (
    MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND,
    MIN_FEASIBLE_NODES_TO_FIND,
    CycleState,
    NodePluginScores,
    ScheduleResult,
    go_list,
)
from scheduler.nodeinfo import NodeInfo, PodInfo
from scheduler.score_fusion import NOT_FUSED, fused_totals
from scheduler.status import Code, Status, is_success

if TYPE_CHECKING:
    from scheduler.cache import Snapshot

__all__ = [
    "CycleTrace",
    "SchedulingError",
    "find_nodes_that_fit",
    "find_nodes_that_pass_filters",
    "num_feasible_nodes_to_find",
    "prioritize_nodes",
    "prioritize_totals",
    "schedule_pod",
    "select_from_totals",
    "select_host",
]


def num_feasible_nodes_to_find(fw: Framework, num_all_nodes: int) -> int:
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = fw.profile.percentage_of_nodes_to_score
    if not pct:
        pct = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    n = num_all_nodes * pct // 100
    return max(n, MIN_FEASIBLE_NODES_TO_FIND)


class CycleTrace:
    """What a cycle found on its way (gangplane): the PodGroup search's run of identical pods
    (:mod:`scheduler.placement_run`) continues from it instead of repeating the cycle."""

    __slots__ = ("feasible", "narrowed")

    def __init__(self) -> None:
        #: the feasible nodes in the order Score saw them (empty: the cycle failed)
        self.feasible: list[NodeInfo] = []
        #: PreFilter narrowed the nodes (a PreFilterResult other than all nodes)
        self.narrowed = False


def schedule_pod(
    fw: Framework,
    state: CycleState,
    pod_info: PodInfo,
    snapshot: Snapshot | None = None,
    node_names: list[str] | None = None,
    trace: CycleTrace | None = None,
) -> ScheduleResult:
    """Pick a node for the pod or raise :class:`FitError` (no node fits) / :class:`NoNodesAvailableError`.

    A plugin Error raises :class:`SchedulingError`. The snapshot defaults to ``handle.snapshot``.
    ``node_names`` (sorted) restricts the cycle to one placement's nodes, as if the
    snapshot held only those (the PodGroup cycle's placements). ``trace`` receives the feasible
    nodes (it changes nothing in the cycle).
    """
    snap = snapshot or fw.handle.snapshot
    if snap is None:
        raise SchedulingError("no snapshot")
    fw.handle.snapshot = snap
    num_nodes = snap.num_nodes() if node_names is None else len(node_names)
    if num_nodes == 0:
        raise NoNodesAvailableError()
    feasible, diagnosis = find_nodes_that_fit(fw, state, pod_info, snap, node_names, trace)
    if trace is not None:
        trace.feasible = feasible
    records = fw.handle.records  # --- scheduling-records hook (gangplane) ---
    if not feasible:
        if records is not None:
            records.pod_cycle(pod_info, diagnosis, num_nodes, 0, "")
        raise FitError(pod_info.key, num_nodes, diagnosis)
    if len(feasible) == 1:
        if records is not None:
            records.pod_cycle(pod_info, diagnosis, num_nodes, 1, feasible[0].name)
        return ScheduleResult(feasible[0].name, 1 + len(diagnosis.node_to_status), 1)
    host = select_from_totals(fw, feasible, _totals(fw, state, pod_info, feasible, fw.array_scores))
    if records is not None:
        records.pod_cycle(pod_info, diagnosis, num_nodes, len(feasible), host)
    return ScheduleResult(host, len(feasible) + len(diagnosis.node_to_status), len(feasible))


def find_nodes_that_fit(
    fw: Framework,
    state: CycleState,
    pod_info: PodInfo,
    snapshot: Snapshot,
    node_names: list[str] | None = None,
    trace: CycleTrace | None = None,
) -> tuple[list[NodeInfo], Diagnosis]:
    diagnosis = Diagnosis()
    if node_names is None:
        all_nodes = snapshot.ordered()
    else:
        infos = snapshot.node_info_map
        all_nodes = [infos[n] for n in node_names if n in infos]
    pre_res, s, narrowing = fw.run_pre_filter_plugins(state, pod_info, all_nodes)
    if trace is not None:
        trace.narrowed = pre_res is not None and not pre_res.all_nodes()
    if s is not None and not s.is_success():
        if not s.is_rejected():
            raise SchedulingError(s.message(), s)
        diagnosis.node_to_status.absent_status = s
        diagnosis.pre_filter_msg = s.message()
        diagnosis.add_plugin_status(s)
        return [], diagnosis

    # A pod preempted its way onto a node before: try that node first.
    nominated = ((pod_info.pod.get("status") or {}).get("nominatedNodeName")) or ""
    if nominated:
        ni = snapshot.get(nominated)
        if node_names is not None and nominated not in set(node_names):
            ni = None
        if ni is not None and (
            pre_res is None or pre_res.all_nodes() or nominated in (pre_res.node_names or ())
        ):
            st = fw.run_filter_plugins_with_nominated_pods(state, pod_info, ni)
            if is_success(st):
                return [ni], diagnosis
            assert st is not None
            if not st.is_rejected():
                raise SchedulingError(st.message(), st)
            diagnosis.node_to_status.set(nominated, st)
            diagnosis.add_plugin_status(st)

    names = snapshot.node_names if node_names is None else node_names
    if pre_res is not None and not pre_res.all_nodes():
        allowed = pre_res.node_names or set()
        names = [n for n in names if n in allowed]
        diagnosis.node_to_status.absent_status = Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            f"node(s) didn't satisfy plugin(s) {go_list(sorted(narrowing))}",
        )
    feasible = find_nodes_that_pass_filters(fw, state, pod_info, diagnosis, names, snapshot)
    return feasible, diagnosis


def find_nodes_that_pass_filters(
    fw: Framework,
    state: CycleState,
    pod_info: PodInfo,
    diagnosis: Diagnosis,
    names: Sequence[str],
    snapshot: Snapshot,
) -> list[NodeInfo]:
    """Filter nodes in name order from a rotating start until enough fit (``names`` is sorted).

    The Filter plugins' hints decide, per node, which plugins must actually run there:
    none on a node no plugin may reject (it is feasible as it is), only the ones that may
    reject it otherwise. Nodes some plugin surely rejects are tried last, and only when
    nothing else fits, so that the FitError still names every node's real reason.
    """
    n = len(names)
    if n == 0:
        return []
    to_find = num_feasible_nodes_to_find(fw, n)
    start = fw.next_start_node_index % n
    node_infos = snapshot.node_info_map
    if not fw.filter_plugins:
        picked = [node_infos.get(nm) for nm in itertools.islice(_rotation(names, start), to_find)]
        fw.next_start_node_index = (start + to_find) % n
        return [ni for ni in picked if ni is not None]

    # the nodes a status was already written for (the nominated node's): none in most cycles
    already: Collection[str] = (
        {name for name, _ in diagnosis.node_to_status.items()} if len(diagnosis.node_to_status) else ()
    )
    skip = state.skip_filter_plugins
    active = [pl for pl in fw.filter_plugins if pl.name not in skip]
    hints = fw.run_filter_hints(state, pod_info, snapshot, active)
    # per node: which plugins run (in plugin order) and which nodes are surely rejected
    always: list[int] = []  # plugins without a hint
    checks: list[tuple[int, Collection[str]]] = []  # plugins that may reject only these
    surely: list[Collection[str]] = []  # nodes some plugin rejects for certain
    only: list[Collection[str]] = []  # nodes outside one of these are rejected for certain
    for i, h in enumerate(hints):
        if h is None:
            always.append(i)
        elif h.passes is not None:
            only.append(h.passes)
        elif h.check:
            if h.rejects:
                surely.append(h.check)
            else:
                checks.append((i, h.check))
    with_nominated = fw.any_nominated_pods()
    #: the index in ``names`` of the last feasible node, when the path that found them knows it
    last_index: int | None = None
    feasible: list[NodeInfo]
    if not always and not checks and not surely and not only and not with_nominated and not already:
        # nothing can reject any node: the next nodes in rotation are the feasible ones
        if names is snapshot.node_names:
            # the same nodes, in the same (name) order, as a window that knows it is a run
            # of the snapshot (its consumers need not compare it with the snapshot again)
            feasible = snapshot.run(start, to_find)
            # the window is consecutive in name order: its last node is ``to_find - 1`` on
            last_index = (start + len(feasible) - 1) % n
        else:
            feasible = [
                ni
                for ni in map(node_infos.get, itertools.islice(_rotation(names, start), to_find))
                if ni is not None
            ]
    elif (
        not always
        and not checks
        and not with_nominated
        and not already
        and names is snapshot.node_names
        and n >= arraypolicy.ARRAY_MIN_NODES
        and (masked := _feasible_by_mask(snapshot, surely, only, start, to_find))
    ):
        # every rejection is known from the hints: the feasible nodes are the first ones in
        # rotation outside them, found with array operations over the node table
        feasible = masked
    else:
        feasible = _visit_nodes(
            fw,
            state,
            pod_info,
            diagnosis,
            names,
            snapshot,
            active,
            hints,
            (always, checks, surely, only),
            with_nominated,
            start,
            to_find,
            already,
        )
    if len(feasible) >= to_find:
        # kube stops right after the last feasible node; continue from the node after it
        # (a SortedList bisects itself in O(log n); bisect.bisect_left would index it per step)
        if last_index is not None:
            last = last_index
        else:
            bisect_left = getattr(names, "bisect_left", None)
            last_name = feasible[-1].name
            last = bisect_left(last_name) if bisect_left is not None else bisect.bisect_left(names, last_name)
        fw.next_start_node_index = (last + 1) % n
    else:
        fw.next_start_node_index = start
    return feasible


def _visit_nodes(
    fw: Framework,
    state: CycleState,
    pod_info: PodInfo,
    diagnosis: Diagnosis,
    names: Sequence[str],
    snapshot: Snapshot,
    active: list[Any],
    hints: list[Any],
    by_hint: tuple[
        list[int], list[tuple[int, Collection[str]]], list[Collection[str]], list[Collection[str]]
    ],
    with_nominated: bool,
    start: int,
    to_find: int,
    already: Collection[str],
) -> list[NodeInfo]:
    """:func:`find_nodes_that_pass_filters` node by node, where the hints leave some Filter plugin
    to run or a node is nominated; ``by_hint``: its ``always``, ``checks``, ``surely`` and ``only``.
    A function of its own so that the closures below are made on this path only, not in every
    cycle whose hints decide every node (a StatefulSet pod's on a cluster with room)."""
    node_infos = snapshot.node_info_map
    always, checks, surely, only = by_hint
    nominated_nodes: Collection[str] = ()
    if with_nominated:
        nominator = fw.handle.nominator
        names_of = getattr(nominator, "nominated_node_names", None)
        nominated_nodes = names_of() if names_of is not None else snapshot.node_info_map.keys()

    feasible: list[NodeInfo] = []
    deferred: list[str] = []
    append = feasible.append

    def record(name: str, ni: NodeInfo, st: Status | None) -> None:
        if st is None or st.code == Code.SUCCESS:
            append(ni)
        elif st.is_rejected():
            diagnosis.node_to_status.set(name, st)
            diagnosis.add_plugin_status(st)
        else:
            raise SchedulingError(st.message(), st)

    def visit_hinted(order: Iterable[str]) -> None:
        for name in order:
            if len(feasible) >= to_find:
                return
            if name in already:
                continue
            ni = node_infos.get(name)
            if ni is None:
                continue
            if (surely and any(name in c for c in surely)) or (only and any(name not in c for c in only)):
                deferred.append(name)
                continue
            if with_nominated and name in nominated_nodes:
                st = fw.run_filter_plugins_with_nominated_pods(state, pod_info, ni)
            else:
                run = always + [i for i, c in checks if name in c] if checks else always
                if not run:
                    append(ni)
                    continue
                if len(run) > 1:
                    run.sort()
                st = run_filter_chain([active[i] for i in run], state, pod_info, ni)
            record(name, ni, st)

    def hinted_status(name: str, ni: NodeInfo) -> Status | None:
        """The Filter result on a node, asking only the plugins whose hint does not decide it."""
        for pl, h in zip(active, hints, strict=True):
            if h is not None:
                if h.passes is not None:
                    if name in h.passes:
                        continue
                    if h.status is not None:
                        return Status(h.status.code, *h.status.reasons, plugin=pl.name)
                elif name not in h.check:  # type: ignore[operator]
                    continue
                elif h.rejects and h.status is not None:
                    return Status(h.status.code, *h.status.reasons, plugin=pl.name)
            st = run_filter_chain([pl], state, pod_info, ni)
            if st is not None:
                return st
        return None

    def visit_deferred(order: Iterable[str]) -> None:
        for name in order:
            if len(feasible) >= to_find:
                return
            ni = node_infos.get(name)
            if ni is None:
                continue
            if with_nominated and name in nominated_nodes:
                st = fw.run_filter_plugins_with_nominated_pods(state, pod_info, ni)
            else:
                st = hinted_status(name, ni)
            record(name, ni, st)

    visit_hinted(_rotation(names, start))
    if not feasible and deferred:
        # Nothing fits: the surely-rejected nodes get their statuses too, so that the
        # FitError names every node's real reason (the first rejecting plugin, in order).
        visit_deferred(deferred)
    return feasible


def _feasible_by_mask(
    snapshot: Snapshot,
    surely: list[Collection[str]],
    only: list[Collection[str]],
    start: int,
    to_find: int,
) -> list[NodeInfo]:
    """What the hinted visit finds when the hints decide every node (no Filter to run): the first
    ``to_find`` nodes from ``start`` in name order that no hint rejects. Empty when none is left
    (the caller then visits the rejected nodes for their statuses, node by node)."""
    # numpy: imported when a cycle needs it
    feasible_in_rotation = lazymodule.module("scheduler.nodetable").feasible_in_rotation
    return feasible_in_rotation(snapshot.node_table(), snapshot.ordered(), surely, only, start, to_find)


def prioritize_nodes(
    fw: Framework, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]
) -> list[NodePluginScores]:
    if not fw.score_plugins:
        return [NodePluginScores(ni.name, {}, 1) for ni in nodes]
    s = fw.run_pre_score_plugins(state, pod_info, nodes)
    if not is_success(s):
        assert s is not None
        raise SchedulingError(s.message(), s)
    scores, s = fw.run_score_plugins(state, pod_info, nodes)
    if not is_success(s):
        assert s is not None
        raise SchedulingError(s.message(), s)
    return scores


def prioritize_totals(
    fw: Framework, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]
) -> list[int]:
    """:meth:`prioritize_nodes` reduced to each node's total (the scheduling hot path).

    The totals leave out the plugins that score every node alike: adding the same number
    to every node changes neither the best total nor which nodes tie for it, and those
    are all :meth:`select_from_totals` looks at.
    """
    totals = _totals(fw, state, pod_info, nodes, False)
    assert isinstance(totals, list)
    return totals


def _totals(
    fw: Framework, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo], arrays: bool
) -> list[int] | Any | None:
    """:func:`prioritize_totals`; with ``arrays`` the totals may be an int64 numpy array (some
    plugin gave its column as one: :mod:`scheduler.score_totals`), or ``None`` when every node
    has the same total (every column uniform; the scheduling records then read it as zeros)."""
    if not fw.score_plugins:
        return [1] * len(nodes)
    s = fw.run_pre_score_plugins(state, pod_info, nodes)
    if not is_success(s):
        assert s is not None
        raise SchedulingError(s.message(), s)
    records = fw.handle.records
    keeps = records is not None and records.keeps_scores()
    if arrays and not keeps:
        # the array scorers' weighted sum kept as one column per pod shape (gangplane)
        fused = fused_totals(fw, state, pod_info, nodes)
        if fused is not NOT_FUSED:
            return fused
    columns, s = fw.score_columns(state, pod_info, nodes, arrays)
    if s is not None:
        raise SchedulingError(s.message(), s)
    cols = [c for c in columns.values() if not isinstance(c, int)]
    totals: list[int] | Any
    if not cols:
        totals = None if arrays and nodes else [0] * len(nodes)
    elif arrays and not all(type(c) is list for c in cols):
        # numpy: some plugin already imported it
        totals = lazymodule.module("scheduler.score_totals").add_columns(cols)
    else:
        totals = cols[0]
        for col in cols[1:]:
            totals = list(map(operator.add, totals, col))
    if keeps:  # --- scheduling-records hook (gangplane) ---
        records.scored(pod_info, nodes, columns, fw.score_weights, totals)
    return totals


def select_host(fw: Framework, scores: list[NodePluginScores]) -> str:
    """Highest total score; ties broken uniformly at random (seeded rng)."""
    return select_from_totals(fw, scores, [ns.total_score for ns in scores])


def select_from_totals(fw: Framework, nodes: Sequence[Any], totals: list[int] | Any | None) -> str:
    """The name of a node with the highest total, uniformly among ties (kube's reservoir sampling).

    ``totals`` may also be an int64 numpy array (:mod:`scheduler.score_totals` picks alike) or
    ``None``: every node has the same total, so all tie."""
    if totals is None:
        if not nodes:
            raise SchedulingError("empty priorityList")
        if len(nodes) == 1:
            return nodes[0].name  # type: ignore[no-any-return]
        return nodes[fw.handle.rng.randrange(len(nodes))].name  # type: ignore[no-any-return]
    if type(totals) is not list:
        if not len(totals):  # numpy: the totals are already an array
            raise SchedulingError("empty priorityList")
        return lazymodule.module("scheduler.score_totals").select(fw.handle.rng, nodes, totals)
    if not totals:
        raise SchedulingError("empty priorityList")
    best = max(totals)
    ties = totals.count(best)
    if ties == 1:
        return nodes[totals.index(best)].name
    # the r-th of the tied nodes, found in C (the same draw as indexing a list of the ties)
    r = fw.handle.rng.randrange(ties)
    tied = itertools.compress(itertools.count(), map(best.__eq__, totals))
    return nodes[next(itertools.islice(tied, r, None))].name


def _rotation(names: Sequence[str], start: int) -> Iterator[str]:
    """``names`` from index ``start`` to the end, then from the beginning (without copying a SortedList)."""
    isl = getattr(names, "islice", None)
    if isl is not None:
        return itertools.chain(isl(start), isl(0, start))
    return itertools.chain(itertools.islice(names, start, None), itertools.islice(names, 0, start))


class SchedulingError(Exception):
    """A plugin returned Error (or raised): the cycle is aborted and the pod retried with backoff."""

    def __init__(self, message: str, status: Status | None = None) -> None:
        super().__init__(message)
        self.status = status or Status(Code.ERROR, message)

"""Shared scoring of node resource usage (kube's ``resourceAllocationScorer``).

For each configured resource the scorer takes the node's allocatable and what would be
requested with the pod added, then combines them: LeastAllocated favours free room,
MostAllocated favours packing, BalancedAllocation favours equal cpu/memory fractions.
Fit scores with the *non-zero* requests (100m / 200Mi for containers that request nothing) so
that best-effort pods still spread; BalancedAllocation uses the real requests.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from scheduler import arraypolicy, lazymodule
from scheduler.cycle_memo import WANTS_TABLE_KEY
from scheduler.interfaces import MAX_NODE_SCORE, CycleState, Handle, ScoreColumn
from scheduler.nodeinfo import CPU, EPHEMERAL_STORAGE, MEMORY, NodeInfo, PodInfo

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
DEFAULT_RESOURCES: tuple[tuple[str, int], ...] = ((CPU, 1), (MEMORY, 1))

Scorer = Callable[[Sequence[int], Sequence[int], Sequence[int]], int]


def parse_resources(spec: Sequence[dict[str, Any]] | None) -> list[tuple[str, int]]:
    """``[{name, weight}]`` from plugin args; kube's defaults are cpu and memory with weight 1."""
    if not spec:
        return list(DEFAULT_RESOURCES)
    return [(r["name"], int(r.get("weight") or 1)) for r in spec]


def is_scalar(resource: str) -> bool:
    """Extended resources, hugepages and other non-native names (``schedutil.IsScalarResourceName``)."""
    return resource not in (CPU, MEMORY, EPHEMERAL_STORAGE, "pods")


def pod_request(pod_info: PodInfo, resource: str, use_requested: bool) -> int:
    if not use_requested:
        if resource == CPU:
            return pod_info.non_zero_cpu
        if resource == MEMORY:
            return pod_info.non_zero_memory
    return pod_info.requests.get(resource, 0)


def allocatable_and_requested(
    node_info: NodeInfo, resource: str, pod_req: int, use_requested: bool
) -> tuple[int, int]:
    """(allocatable, requested-with-the-pod); (0, 0) skips the resource."""
    if pod_req == 0 and is_scalar(resource):
        return 0, 0
    if resource == CPU:
        base = node_info.requested.get(CPU, 0) if use_requested else node_info.non_zero_cpu
        return node_info.allocatable.get(CPU, 0), base + pod_req
    if resource == MEMORY:
        base = node_info.requested.get(MEMORY, 0) if use_requested else node_info.non_zero_memory
        return node_info.allocatable.get(MEMORY, 0), base + pod_req
    if resource == EPHEMERAL_STORAGE or resource in node_info.allocatable:
        return node_info.allocatable.get(resource, 0), node_info.requested.get(resource, 0) + pod_req
    return 0, 0


def least_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def most_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    requested = min(requested, capacity)
    return requested * MAX_NODE_SCORE // capacity


def _weighted(fn: Callable[[int, int], int]) -> Scorer:
    def scorer(requested: Sequence[int], allocatable: Sequence[int], weights: Sequence[int]) -> int:
        total = wsum = 0
        for req, alloc, w in zip(requested, allocatable, weights, strict=True):
            if alloc == 0:
                continue
            total += fn(req, alloc) * w
            wsum += w
        return total // wsum if wsum else 0

    return scorer


least_allocated_scorer: Scorer = _weighted(least_requested_score)
most_allocated_scorer: Scorer = _weighted(most_requested_score)


def balanced_scorer(requested: Sequence[int], allocatable: Sequence[int], weights: Sequence[int]) -> int:
    """``(1 - std(fractions)) * 100`` over the resources the node has (fractions capped at 1)."""
    fractions = [min(r / a, 1.0) for r, a in zip(requested, allocatable, strict=True) if a]
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) ** 2 for f in fractions) / len(fractions))
    else:
        std = 0.0
    return int((1 - std) * MAX_NODE_SCORE)


def score_node(
    node_info: NodeInfo,
    pod_requests: Sequence[int],
    resources: Sequence[tuple[str, int]],
    scorer: Scorer,
    use_requested: bool,
) -> int:
    if len(resources) == 2 and resources[0] == (CPU, 1) and resources[1] == (MEMORY, 1):
        fast = _FAST_CPU_MEMORY.get(scorer)
        if fast is not None:
            return fast(node_info, pod_requests[0], pod_requests[1], use_requested)
    requested = [0] * len(resources)
    allocatable = [0] * len(resources)
    for i, (name, _) in enumerate(resources):
        alloc, req = allocatable_and_requested(node_info, name, pod_requests[i], use_requested)
        if alloc == 0:
            continue
        allocatable[i] = alloc
        requested[i] = req
    return scorer(requested, allocatable, [w for _, w in resources])


def node_scorer(
    pod_requests: Sequence[int],
    resources: Sequence[tuple[str, int]],
    scorer: Scorer,
    use_requested: bool,
) -> Callable[[NodeInfo], int]:
    """:func:`score_node` with everything but the node bound: the cpu-and-memory function chosen
    once, not per call. A run of identical pods (:mod:`scheduler.placement_run`) scores again
    the node that took each of its pods with the same requests, resources and scorer: ~1 µs of
    dispatch per call (the resources compared, the fast function looked up) it need not repeat."""
    if len(resources) == 2 and resources[0] == (CPU, 1) and resources[1] == (MEMORY, 1):
        fast = _FAST_CPU_MEMORY.get(scorer)
        if fast is not None:
            cpu, mem = pod_requests[0], pod_requests[1]
            return lambda ni: fast(ni, cpu, mem, use_requested)
    reqs = list(pod_requests)
    return lambda ni: score_node(ni, reqs, resources, scorer, use_requested)


def wants_table(snapshot: Any, nodes: Sequence[NodeInfo], state: CycleState | None = None) -> bool:
    """Whether a batch is worth the node table: a run of the snapshot's consecutive nodes, or
    a list long enough to map node by node (:mod:`scheduler.arraypolicy`). The answer for a
    list is kept in ``state``: every array-capable plugin of the cycle asks about the same list."""
    if len(nodes) < arraypolicy.ARRAY_MIN_NODES:
        return False
    if len(nodes) >= arraypolicy.MAPPED_MIN_NODES:
        return True
    if state is not None:
        cached = state.get(WANTS_TABLE_KEY)
        if cached is not None and cached[0] is nodes and cached[1] is snapshot:
            return bool(cached[2])
    is_run = getattr(snapshot, "is_run", None)
    answer = bool(is_run is not None and is_run(nodes))
    if state is not None:
        state.write(WANTS_TABLE_KEY, (nodes, snapshot, answer))
    return answer


def array_scores(
    state: CycleState,
    handle: Handle | None,
    nodes: Sequence[NodeInfo],
    pod_requests: Sequence[int],
    resources: Sequence[tuple[str, int]],
    scorer: Scorer,
    use_requested: bool,
    as_array: bool = False,
) -> Any:
    """The batch's scores computed over the snapshot's node table, or ``None`` (use the per-node path);
    a list, or with ``as_array`` an int64 numpy array (read-only: :class:`ArrayScorePlugin`).

    Only NodeInfos that are the snapshot's own have rows (a clone made for a what-if has none),
    so a batch scored here is scored as the per-node code would score it.
    """
    if handle is None:
        return None
    snapshot = handle.snapshot
    if snapshot is None or not wants_table(snapshot, nodes, state):
        return None
    table = snapshot.node_table()
    # numpy: imported when a cycle first needs it
    return lazymodule.module("scheduler.plugins.resource_arrays").scores(
        state, table, nodes, pod_requests, resources, scorer, use_requested, as_array
    )


def array_column(
    state: CycleState,
    handle: Handle | None,
    nodes: Sequence[NodeInfo],
    pod_requests: Sequence[int],
    resources: Sequence[tuple[str, int]],
    scorer: Scorer,
    use_requested: bool,
) -> ScoreColumn | None:
    """The node-table column :func:`array_scores` reads for the batch, unread, or ``None`` (no
    table for this batch, or a scorer or request the arrays cannot score exactly)."""
    if handle is None:
        return None
    snapshot = handle.snapshot
    if snapshot is None or not wants_table(snapshot, nodes, state):
        return None
    # numpy: imported when a cycle first needs it
    return lazymodule.module("scheduler.plugins.resource_arrays").column(
        state, snapshot.node_table(), nodes, pod_requests, resources, scorer, use_requested
    )


def score_nodes(
    nodes: Sequence[NodeInfo],
    pod_requests: Sequence[int],
    resources: Sequence[tuple[str, int]],
    scorer: Scorer,
    use_requested: bool,
) -> list[int]:
    """:func:`score_node` for many nodes (the batch Score path)."""
    if len(resources) == 2 and resources[0] == (CPU, 1) and resources[1] == (MEMORY, 1):
        batch = _BATCH_CPU_MEMORY.get(scorer)
        if batch is not None:
            return batch(nodes, pod_requests[0], pod_requests[1], use_requested)
    return [score_node(ni, pod_requests, resources, scorer, use_requested) for ni in nodes]


# --- the default configuration (cpu and memory, weight 1) without the general machinery ---------
#
# Every pod is scored on hundreds of nodes, so the common case computes the same integers as
# the general code straight from the NodeInfos, and remembers them per node state (NodeInfo's
# memo): the next pod with the same requests re-scores only the nodes that changed.

CpuMemoryBatch = Callable[[Sequence[NodeInfo], int, int, bool], list[int]]


#: remembered scores per scorer and pod requests before the memo starts over (each pod placed
#: leaves one stale entry behind; a node visited again is scored again after a reset)
_MEMO_MAX = 100_000


def _memoized(fn: Callable[[NodeInfo, int, int, bool], int]) -> CpuMemoryBatch:
    """A batch scorer from a per-node one, remembering scores by NodeInfo ``generation``.

    The score is a pure function of the node's state and the pod's two requests, and a
    NodeInfo's generation changes with every change of its state (a clone shares it only while
    both are equal), so it is computed once per node state: from one pod to the next only the
    node that took the previous pod is scored again. The lookups run in C (``map``).
    """
    memos: dict[tuple[int, int, bool], dict[int, int]] = {}

    def batch(nodes: Sequence[NodeInfo], cpu_req: int, mem_req: int, use_requested: bool) -> list[int]:
        memo = memos.get((cpu_req, mem_req, use_requested))
        if memo is None:
            if len(memos) > 64:
                memos.clear()
            memo = memos[(cpu_req, mem_req, use_requested)] = {}
        get = memo.get
        out = [get(ni.generation) for ni in nodes]  # (a comprehension reads the slot faster than attrgetter)
        if None in out:
            if len(memo) > _MEMO_MAX:
                memo.clear()
            for i, v in enumerate(out):
                if v is None:
                    ni = nodes[i]
                    out[i] = memo[ni.generation] = fn(ni, cpu_req, mem_req, use_requested)
        return out  # type: ignore[return-value]

    return batch


def _cpu_memory(ni: NodeInfo, cpu_req: int, mem_req: int, use_requested: bool) -> tuple[int, int, int, int]:
    """(allocatable cpu, allocatable memory, requested cpu, requested memory) with the pod added."""
    alloc = ni.allocatable
    if use_requested:
        req = ni.requested
        return (
            alloc.get(CPU, 0),
            alloc.get(MEMORY, 0),
            req.get(CPU, 0) + cpu_req,
            req.get(MEMORY, 0) + mem_req,
        )
    return alloc.get(CPU, 0), alloc.get(MEMORY, 0), ni.non_zero_cpu + cpu_req, ni.non_zero_memory + mem_req


def _least_one(ni: NodeInfo, cpu_req: int, mem_req: int, use_requested: bool) -> int:
    a_cpu, a_mem, r_cpu, r_mem = _cpu_memory(ni, cpu_req, mem_req, use_requested)
    total = wsum = 0
    if a_cpu:
        total += (a_cpu - r_cpu) * MAX_NODE_SCORE // a_cpu if r_cpu <= a_cpu else 0
        wsum += 1
    if a_mem:
        total += (a_mem - r_mem) * MAX_NODE_SCORE // a_mem if r_mem <= a_mem else 0
        wsum += 1
    return total // wsum if wsum else 0


def _most_one(ni: NodeInfo, cpu_req: int, mem_req: int, use_requested: bool) -> int:
    a_cpu, a_mem, r_cpu, r_mem = _cpu_memory(ni, cpu_req, mem_req, use_requested)
    total = wsum = 0
    if a_cpu:
        total += min(r_cpu, a_cpu) * MAX_NODE_SCORE // a_cpu
        wsum += 1
    if a_mem:
        total += min(r_mem, a_mem) * MAX_NODE_SCORE // a_mem
        wsum += 1
    return total // wsum if wsum else 0


def _balanced_one(ni: NodeInfo, cpu_req: int, mem_req: int, use_requested: bool) -> int:
    a_cpu, a_mem, r_cpu, r_mem = _cpu_memory(ni, cpu_req, mem_req, use_requested)
    if a_cpu and a_mem:
        std = abs((min(r_cpu / a_cpu, 1.0) - min(r_mem / a_mem, 1.0)) / 2)
        return int((1 - std) * MAX_NODE_SCORE)
    return MAX_NODE_SCORE  # one fraction or none: no spread


_least_batch = _memoized(_least_one)
_most_batch = _memoized(_most_one)
_balanced_batch = _memoized(_balanced_one)


_BATCH_CPU_MEMORY: dict[Scorer, CpuMemoryBatch] = {
    least_allocated_scorer: _least_batch,
    most_allocated_scorer: _most_batch,
    balanced_scorer: _balanced_batch,
}


_FAST_CPU_MEMORY: dict[Scorer, Callable[[NodeInfo, int, int, bool], int]] = {
    least_allocated_scorer: _least_one,
    most_allocated_scorer: _most_one,
    balanced_scorer: _balanced_one,
}

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

from scheduler.framework import MAX_NODE_SCORE
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
    requested = [0] * len(resources)
    allocatable = [0] * len(resources)
    for i, (name, _) in enumerate(resources):
        alloc, req = allocatable_and_requested(node_info, name, pod_requests[i], use_requested)
        if alloc == 0:
            continue
        allocatable[i] = alloc
        requested[i] = req
    return scorer(requested, allocatable, [w for _, w in resources])

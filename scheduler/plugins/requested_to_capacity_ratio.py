"""NodeResourcesFit's ``RequestedToCapacityRatio`` scoring strategy (kube's ``requested_to_capacity_ratio.go``).

The user gives a shape: points ``(utilization %, score 0-10)``; a node's score for one resource
is the broken-linear function of its utilization with the pod added (full when requested
exceeds capacity), scaled to 0-100. Resources combine by weight, counting only resources that
scored above zero, rounded to the nearest integer - kube's arithmetic, integer for integer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scheduler.interfaces import MAX_NODE_SCORE

REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
#: the shape's score scale (kube's ``MaxCustomPriorityScore``)
MAX_CUSTOM_PRIORITY_SCORE = 10
MAX_UTILIZATION = 100


def broken_linear(shape: Sequence[tuple[int, int]], p: int) -> int:
    """kube's ``BuildBrokenLinearFunction``: the shape's value at utilization ``p`` (integer division as Go's)."""
    for i, (u, s) in enumerate(shape):
        if p <= u:
            if i == 0:
                return s
            pu, ps = shape[i - 1]
            return ps + _go_div((s - ps) * (p - pu), u - pu)
    return shape[-1][1]


def _go_div(a: int, b: int) -> int:
    """Go's integer division truncates toward zero (Python's ``//`` floors)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


class RequestedToCapacityRatioScorer:
    """A :data:`~scheduler.plugins.resource_allocation.Scorer` for one configured shape."""

    def __init__(self, shape_args: Sequence[dict[str, Any]]) -> None:
        scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
        self.shape = [(int(p.get("utilization", 0)), int(p.get("score", 0)) * scale) for p in shape_args]
        if not self.shape:
            raise ValueError("requestedToCapacityRatio.shape: at least one point must be specified")

    def resource_score(self, requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return broken_linear(self.shape, MAX_UTILIZATION)
        return broken_linear(self.shape, requested * MAX_UTILIZATION // capacity)

    def __call__(self, requested: Sequence[int], allocatable: Sequence[int], weights: Sequence[int]) -> int:
        total = wsum = 0
        for req, alloc, w in zip(requested, allocatable, weights, strict=True):
            if alloc == 0:
                continue
            s = self.resource_score(req, alloc)
            if s > 0:
                total += s * w
                wsum += w
        if wsum == 0:
            return 0
        return int(total / wsum + 0.5)  # math.Round of a non-negative quotient

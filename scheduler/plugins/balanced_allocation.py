"""NodeResourcesBalancedAllocation: prefer nodes whose cpu and memory would be equally used.

Score is ``(1 - std of requested/allocatable fractions) * 100`` with the pod added, using the
pods' real requests. Pods requesting nothing (best-effort) skip this plugin, as in kube, so
they are not all drawn to the same node.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scheduler.interfaces import CycleState, Handle, ScoreColumn
from scheduler.nodeinfo import NodeInfo, PodInfo
from scheduler.plugins.resource_allocation import (
    array_column,
    array_scores,
    balanced_scorer,
    node_scorer,
    parse_resources,
    pod_request,
    score_node,
    score_nodes,
)
from scheduler.status import Code, Status

NAME = "NodeResourcesBalancedAllocation"
_PRE_SCORE_KEY = "PreScore" + NAME


class BalancedAllocation:
    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        self.resources = parse_resources((args or {}).get("resources"))
        self.handle = handle

    def pre_score(self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]) -> Status | None:
        reqs = [pod_request(pod_info, r, True) for r, _ in self.resources]
        if not any(reqs):
            return Status(Code.SKIP)
        state.write(_PRE_SCORE_KEY, reqs)
        return None

    def score(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        reqs = state.get(_PRE_SCORE_KEY)
        if reqs is None:
            reqs = [pod_request(pod_info, r, True) for r, _ in self.resources]
        return score_node(node_info, reqs, self.resources, balanced_scorer, True), None

    def node_scorer(self, state: CycleState, pod_info: PodInfo) -> Callable[[NodeInfo], int]:
        """:meth:`score`'s raw score of a node as a function of the node alone, for ``state`` and
        ``pod_info`` as they are now (a run's first pod: :mod:`scheduler.placement_run`)."""
        reqs = state.get(_PRE_SCORE_KEY)
        if reqs is None:
            reqs = [pod_request(pod_info, r, True) for r, _ in self.resources]
        return node_scorer(reqs, self.resources, balanced_scorer, True)

    def score_nodes(self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]) -> list[int]:
        """:meth:`score` for every node in one call (the framework's batch path)."""
        reqs = state.get(_PRE_SCORE_KEY)
        if reqs is None:
            reqs = [pod_request(pod_info, r, True) for r, _ in self.resources]
        arr = array_scores(state, self.handle, nodes, reqs, self.resources, balanced_scorer, True)
        if arr is not None:
            return arr
        return score_nodes(nodes, reqs, self.resources, balanced_scorer, True)

    def score_array(self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]) -> Any:
        """:meth:`score_nodes` as an int64 array from the node table (no NormalizeScore), or ``None``."""
        reqs = state.get(_PRE_SCORE_KEY)
        if reqs is None:
            reqs = [pod_request(pod_info, r, True) for r, _ in self.resources]
        return array_scores(state, self.handle, nodes, reqs, self.resources, balanced_scorer, True, True)

    def score_column(self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]) -> ScoreColumn | None:
        """The node-table column :meth:`score_array` reads (:class:`ColumnScorePlugin`), or ``None``."""
        reqs = state.get(_PRE_SCORE_KEY)
        if reqs is None:
            reqs = [pod_request(pod_info, r, True) for r, _ in self.resources]
        return array_column(state, self.handle, nodes, reqs, self.resources, balanced_scorer, True)


def new(args: dict[str, Any], handle: Handle) -> BalancedAllocation:
    return BalancedAllocation(args, handle)

"""TaintToleration: NoSchedule/NoExecute taints filter, PreferNoSchedule taints lower the score.

Filter rejects a node with any NoSchedule or NoExecute taint the pod does not tolerate
(UnschedulableAndUnresolvable: evicting pods would not remove a taint). Score counts the
node's PreferNoSchedule taints not tolerated by the pod's tolerations with an empty or
PreferNoSchedule effect; NormalizeScore reverses it so fewer such taints score higher.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any

from scheduler import arraypolicy
from scheduler.events import NODE, POD, ActionType, ClusterEvent, ClusterEventWithHint
from scheduler.interfaces import (
    MAX_NODE_SCORE,
    NO_REJECTIONS,
    CycleState,
    FilterHint,
    Handle,
    NodeScore,
    default_normalize_score,
    default_normalize_scores,
)
from scheduler.nodeinfo import NodeInfo, PodInfo
from scheduler.plugins.helpers import (
    PREFER_NO_SCHEDULE,
    find_untolerated_taint,
    tolerations_of,
    tolerations_tolerate_taint,
)
from scheduler.status import Code, Status

if TYPE_CHECKING:
    from scheduler.cache import Snapshot

NAME = "TaintToleration"
ERR_REASON_NOT_MATCH = "node(s) had untolerated taint(s)"
_PRE_SCORE_KEY = "PreScore" + NAME
_UNTOLERATED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NOT_MATCH)
_TAINTS = operator.attrgetter("taints")


class TaintToleration:
    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        self.handle = handle

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT)),
            ClusterEventWithHint(ClusterEvent(POD, ActionType.UPDATE_POD_TOLERATIONS)),
        ]

    def filter(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> Status | None:
        if not node_info.taints:
            return None
        if find_untolerated_taint(node_info.taints, tolerations_of(pod_info.pod)) is None:
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NOT_MATCH)

    def filter_hint(self, state: CycleState, pod_info: PodInfo, snapshot: Snapshot) -> FilterHint:
        """The nodes whose taints the pod does not tolerate, decided once per group of equal taints."""
        if not snapshot.taint_groups:
            return NO_REJECTIONS  # no tainted node (what a hint naming no node says)
        tolerations = tolerations_of(pod_info.pod)
        rejected: set[str] = set()
        for taints, names in snapshot.taint_groups.items():
            as_objs = [{"key": k, "value": v, "effect": e} for k, v, e in taints]
            if find_untolerated_taint(as_objs, tolerations) is not None:
                rejected |= names
        return FilterHint(check=rejected, rejects=True, status=_UNTOLERATED)

    def pre_score(self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]) -> Status | None:
        prefer = [
            t for t in tolerations_of(pod_info.pod) if (t.get("effect") or "") in ("", PREFER_NO_SCHEDULE)
        ]
        state.write(_PRE_SCORE_KEY, prefer)
        return None

    def _prefer(self, state: CycleState, pod_info: PodInfo) -> list[dict[str, Any]]:
        prefer = state.get(_PRE_SCORE_KEY)
        if prefer is None:
            prefer = [
                t for t in tolerations_of(pod_info.pod) if (t.get("effect") or "") in ("", PREFER_NO_SCHEDULE)
            ]
        return prefer

    @staticmethod
    def _count(prefer: list[dict[str, Any]], node_info: NodeInfo) -> int:
        return sum(
            1
            for taint in node_info.taints
            if taint.get("effect") == PREFER_NO_SCHEDULE and not tolerations_tolerate_taint(prefer, taint)
        )

    def score(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        return self._count(self._prefer(state, pod_info), node_info), None

    def score_nodes(self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]) -> list[int]:
        """:meth:`score` for every node in one call (the framework's batch path)."""
        prefer = self._prefer(state, pod_info)
        count = self._count
        return [count(prefer, ni) if ni.taints else 0 for ni in nodes]

    def uniform_score(self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]) -> int | None:
        """No node carries a taint: every count is 0, and the reversed normalization gives
        every node the maximum (kube's ``DefaultNormalizeScore`` with a zero maximum).

        When the nodes are a run of the snapshot's own NodeInfos (the window a cycle scores) and
        the snapshot has no tainted node, no node of the run has a taint: answered without
        looking at each node."""
        snapshot = self.handle.snapshot if self.handle is not None else None
        if (
            snapshot is not None
            and not snapshot.tainted_nodes
            and len(nodes) >= arraypolicy.ARRAY_MIN_NODES
            and snapshot.is_run(nodes)
        ):
            return MAX_NODE_SCORE
        if any(map(_TAINTS, nodes)):
            return None
        return MAX_NODE_SCORE

    def normalize_score(self, state: CycleState, pod_info: PodInfo, scores: list[NodeScore]) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, True, scores)
        return None

    def normalize_scores(
        self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo], scores: list[int]
    ) -> list[int]:
        return default_normalize_scores(MAX_NODE_SCORE, True, scores)


def new(args: dict[str, Any], handle: Handle) -> TaintToleration:
    return TaintToleration(args, handle)

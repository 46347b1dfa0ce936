"""NodeUnschedulable: cordoned nodes (``spec.unschedulable``) take only pods tolerating that.

A pod tolerating the ``node.kubernetes.io/unschedulable:NoSchedule`` taint (DaemonSet pods do)
may still land on a cordoned node, as in kube.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scheduler.events import NODE, ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint
from scheduler.interfaces import NO_REJECTIONS, CycleState, FilterHint, Handle
from scheduler.nodeinfo import NodeInfo, PodInfo
from scheduler.plugins.helpers import (
    NO_SCHEDULE,
    TAINT_NODE_UNSCHEDULABLE,
    tolerations_of,
    tolerations_tolerate_taint,
)
from scheduler.status import Code, Status

if TYPE_CHECKING:
    from scheduler.cache import Snapshot

NAME = "NodeUnschedulable"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
_UNSCHEDULABLE_TAINT = {"key": TAINT_NODE_UNSCHEDULABLE, "effect": NO_SCHEDULE}
_UNSCHEDULABLE = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE)


def _schedulable_now(pod: dict[str, Any], old: Any, new: Any) -> QueueingHint:
    """Requeue only when the node is (now) schedulable."""
    if isinstance(new, dict) and not (new.get("spec") or {}).get("unschedulable"):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


class NodeUnschedulable:
    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        pass

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT), _schedulable_now
            )
        ]

    def filter(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> Status | None:
        if not node_info.unschedulable:
            return None
        if tolerations_tolerate_taint(tolerations_of(pod_info.pod), _UNSCHEDULABLE_TAINT):
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE)

    def filter_hint(self, state: CycleState, pod_info: PodInfo, snapshot: Snapshot) -> FilterHint:
        """Only cordoned nodes can be rejected, and none if the pod tolerates the cordon."""
        if not snapshot.unschedulable_nodes:
            return NO_REJECTIONS  # (what a hint naming no node says)
        if tolerations_tolerate_taint(tolerations_of(pod_info.pod), _UNSCHEDULABLE_TAINT):
            return NO_REJECTIONS
        return FilterHint(check=snapshot.unschedulable_nodes, rejects=True, status=_UNSCHEDULABLE)


def new(args: dict[str, Any], handle: Handle) -> NodeUnschedulable:
    return NodeUnschedulable(args, handle)

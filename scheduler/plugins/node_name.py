"""NodeName: a pod that already names its node (``spec.nodeName``) only fits that node.

The scheduler normally never sees such pods (they are bound at creation), but a pod created
with ``spec.nodeName`` of a node that is not in the cache yet is still filtered consistently.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scheduler.events import NODE, ActionType, ClusterEvent, ClusterEventWithHint
from scheduler.interfaces import NO_REJECTIONS, CycleState, FilterHint, Handle
from scheduler.nodeinfo import NodeInfo, PodInfo
from scheduler.status import Code, Status

if TYPE_CHECKING:
    from scheduler.cache import Snapshot

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"
_MISMATCH = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON)


class NodeName:
    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        pass

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL))]

    def filter(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> Status | None:
        want = pod_info.node_name
        if want and want != node_info.name:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON)
        return None

    def filter_hint(self, state: CycleState, pod_info: PodInfo, snapshot: Snapshot) -> FilterHint:
        """A pod naming no node passes everywhere; one naming a node passes only there."""
        want = pod_info.node_name
        if not want:
            return NO_REJECTIONS
        return FilterHint(passes=(want,) if snapshot.get(want) is not None else (), status=_MISMATCH)


def new(args: dict[str, Any], handle: Handle) -> NodeName:
    return NodeName(args, handle)

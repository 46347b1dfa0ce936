"""NodePorts: a pod's ``hostPort``s must be free on the node (``0.0.0.0`` conflicts with any IP).

Unschedulable (not Unresolvable): evicting the pod holding the port frees it, so preemption
may help.
"""

from __future__ import annotations

from typing import Any

from scheduler.events import ASSIGNED_POD, NODE, ActionType, ClusterEvent, ClusterEventWithHint
from scheduler.interfaces import CycleState, Handle, PreFilterResult
from scheduler.nodeinfo import NodeInfo, PodInfo
from scheduler.status import Code, Status

NAME = "NodePorts"
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"


class NodePorts:
    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        pass

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(ASSIGNED_POD, ActionType.DELETE)),
            ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD)),
        ]

    def pre_filter(
        self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        if not pod_info.host_ports:
            return None, Status(Code.SKIP)
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> Status | None:
        used = node_info.used_ports
        if not len(used):
            return None
        for ip, proto, port in pod_info.host_ports:
            if used.conflicts(ip, proto, port):
                return Status(Code.UNSCHEDULABLE, ERR_REASON)
        return None


def new(args: dict[str, Any], handle: Handle) -> NodePorts:
    return NodePorts(args, handle)

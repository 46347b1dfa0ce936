"""SchedulingGates: a pod with ``spec.schedulingGates`` stays gated (no condition, no event).

Only the pod's own update removing its last gate lets it in; the queue never re-checks gated
pods on other cluster events.
"""

from __future__ import annotations

from typing import Any

from scheduler.events import UNSCHEDULED_POD, ActionType, ClusterEvent, ClusterEventWithHint
from scheduler.interfaces import Handle, go_list
from scheduler.nodeinfo import PodInfo
from scheduler.status import Code, Status

NAME = "SchedulingGates"


class SchedulingGates:
    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        pass

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(UNSCHEDULED_POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
            )
        ]

    def pre_enqueue(self, pod_info: PodInfo) -> Status | None:
        gates = (pod_info.pod.get("spec") or {}).get("schedulingGates") or []
        if not gates:
            return None
        names = [g.get("name", "") for g in gates]
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"waiting for scheduling gates: {go_list(names)}")


def new(args: dict[str, Any], handle: Handle) -> SchedulingGates:
    return SchedulingGates(args, handle)

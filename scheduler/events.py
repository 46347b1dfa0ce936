"""Cluster events the scheduling queue reacts to, and plugins' interest in them.

kube-scheduler parks a pod that failed a cycle in ``unschedulablePods`` and only moves it back to
activeQ/backoffQ when a cluster event happens that one of the *rejecting* plugins registered
(``EnqueueExtensions.EventsToRegister``), optionally refined by a queueing hint function. This
module holds that vocabulary: :class:`ActionType` bits, :class:`ClusterEvent` matching,
:class:`ClusterEventWithHint`, and the helpers that turn an informer's old/new pair into the
fine-grained update events (``UpdateNodeLabel``, ``UpdatePodScaleDown``...) plugins register for.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from apiserver.api.types import Obj


class ActionType(enum.IntFlag):
    """What happened to an object; bits so one registration can cover several actions."""

    ADD = 1
    DELETE = 2
    UPDATE_NODE_ALLOCATABLE = 4
    UPDATE_NODE_LABEL = 8
    UPDATE_NODE_TAINT = 16
    UPDATE_NODE_CONDITION = 32
    UPDATE_NODE_ANNOTATION = 64
    UPDATE_POD_LABEL = 128
    UPDATE_POD_SCALE_DOWN = 256
    UPDATE_POD_TOLERATIONS = 512
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1024
    UPDATE_POD_OTHER = 2048
    UPDATE_OTHER = 4096  # any update of a resource with no finer-grained classification
    UPDATE = (
        UPDATE_NODE_ALLOCATABLE
        | UPDATE_NODE_LABEL
        | UPDATE_NODE_TAINT
        | UPDATE_NODE_CONDITION
        | UPDATE_NODE_ANNOTATION
        | UPDATE_POD_LABEL
        | UPDATE_POD_SCALE_DOWN
        | UPDATE_POD_TOLERATIONS
        | UPDATE_POD_SCHEDULING_GATES_ELIMINATED
        | UPDATE_POD_OTHER
        | UPDATE_OTHER
    )
    ALL = ADD | DELETE | UPDATE


# Resource names used in events. ``Pod`` in a registration matches both assigned and unscheduled pods.
POD = "Pod"
ASSIGNED_POD = "AssignedPod"
UNSCHEDULED_POD = "UnscheduledPod"
NODE = "Node"
PVC = "PersistentVolumeClaim"
PV = "PersistentVolume"
PODGROUP = "PodGroup"
WORKLOAD = "Workload"
RESOURCECLAIM = "ResourceClaim"
RESOURCESLICE = "ResourceSlice"
DEVICECLASS = "DeviceClass"
WILDCARD = "*"


@dataclass(frozen=True)
class ClusterEvent:
    """An event on a resource; ``label`` names special events (timeouts, forced activation)."""

    resource: str
    action_type: ActionType
    label: str = ""

    @property
    def name(self) -> str:
        return self.label or f"{self.resource}{_action_name(self.action_type)}"

    def is_wildcard(self) -> bool:
        return self.resource == WILDCARD and self.action_type == ActionType.ALL

    def match(self, incoming: ClusterEvent) -> bool:
        """Whether this *registered* event covers ``incoming`` (kube's ``ClusterEvent.Match``)."""
        if self.is_wildcard():
            return True
        if not self.action_type & incoming.action_type:
            return False
        if self.resource == incoming.resource:
            return True
        return self.resource == POD and incoming.resource in (ASSIGNED_POD, UNSCHEDULED_POD)


def _action_name(a: ActionType) -> str:
    if a == ActionType.ALL:
        return "All"
    if a == ActionType.ADD:
        return "Add"
    if a == ActionType.DELETE:
        return "Delete"
    names = [m.name.title().replace("_", "") for m in ActionType if m.value & a and m.value.bit_count() == 1]
    return "|".join(names) if names else "Update"


class QueueingHint(enum.Enum):
    QUEUE = "Queue"
    SKIP = "QueueSkip"


#: ``(pod being requeued, old object or None, new object or None) -> hint``
QueueingHintFn = Callable[[Obj, Any, Any], QueueingHint]


@dataclass(frozen=True)
class ClusterEventWithHint:
    """A cluster event a plugin registers, with the hint that decides whether it may make a rejected pod
    schedulable."""

    event: ClusterEvent
    hint_fn: QueueingHintFn | None = None
    #: gangplane: ``hint_fn`` queues only pods of the event pod's own PodGroup, so the queue
    #: asks it about those alone (:mod:`scheduler.parked`); a promise about the hint, which
    #: decides as before
    same_pod_group: bool = False


# Well-known events the queue and the informer wiring send.
NODE_ADD = ClusterEvent(NODE, ActionType.ADD)
NODE_DELETE = ClusterEvent(NODE, ActionType.DELETE)
ASSIGNED_POD_ADD = ClusterEvent(ASSIGNED_POD, ActionType.ADD)
ASSIGNED_POD_DELETE = ClusterEvent(ASSIGNED_POD, ActionType.DELETE)
UNSCHEDULED_POD_ADD = ClusterEvent(UNSCHEDULED_POD, ActionType.ADD)
UNSCHEDULED_POD_DELETE = ClusterEvent(UNSCHEDULED_POD, ActionType.DELETE)
#: Pods parked in unschedulablePods longer than the max duration are flushed with this event.
UNSCHEDULABLE_TIMEOUT = ClusterEvent(WILDCARD, ActionType.ALL, "UnschedulableTimeout")
#: Moves pods straight to activeQ regardless of backoff (``PodsToActivate``).
FORCE_ACTIVATE = ClusterEvent(WILDCARD, ActionType.ALL, "ForceActivate")
#: Label used when a pod re-enters the queue after a failed attempt.
SCHEDULE_ATTEMPT_FAILURE = "ScheduleAttemptFailure"
BACKOFF_COMPLETE = "BackoffComplete"
POP_FROM_BACKOFF = "PopFromBackoffQ"


def _spec(o: Obj | None) -> Obj:
    return (o or {}).get("spec") or {}


def _meta(o: Obj | None) -> Obj:
    return (o or {}).get("metadata") or {}


def node_update_events(old: Obj, new: Obj) -> list[ClusterEvent]:
    """The fine-grained node update events kube derives from an old/new pair (``NodeSchedulingPropertiesChange``)."""
    actions = ActionType(0)
    if _spec(old).get("unschedulable") != _spec(new).get("unschedulable"):
        actions |= ActionType.UPDATE_NODE_TAINT
    if (old.get("status") or {}).get("allocatable") != (new.get("status") or {}).get("allocatable"):
        actions |= ActionType.UPDATE_NODE_ALLOCATABLE
    if _meta(old).get("labels") != _meta(new).get("labels"):
        actions |= ActionType.UPDATE_NODE_LABEL
    if _spec(old).get("taints") != _spec(new).get("taints"):
        actions |= ActionType.UPDATE_NODE_TAINT
    if _conditions_key(old) != _conditions_key(new):
        actions |= ActionType.UPDATE_NODE_CONDITION
    if _meta(old).get("annotations") != _meta(new).get("annotations"):
        actions |= ActionType.UPDATE_NODE_ANNOTATION
    return [ClusterEvent(NODE, ActionType(bit)) for bit in _bits(actions)]


def _conditions_key(node: Obj) -> dict[str, str]:
    return {
        c.get("type", ""): c.get("status", "") for c in (node.get("status") or {}).get("conditions") or []
    }


def _bits(a: ActionType) -> list[int]:
    return [m.value for m in ActionType if m.value & a and m.value.bit_count() == 1]


def pod_update_events(old: Obj, new: Obj) -> list[ClusterEvent]:
    """Fine-grained pod update events (``PodSchedulingPropertiesChange``); resource depends on assignment."""
    resource = ASSIGNED_POD if _spec(new).get("nodeName") else UNSCHEDULED_POD
    actions = ActionType(0)
    if _meta(old).get("labels") != _meta(new).get("labels"):
        actions |= ActionType.UPDATE_POD_LABEL
    if _spec(old).get("tolerations") != _spec(new).get("tolerations"):
        actions |= ActionType.UPDATE_POD_TOLERATIONS
    if _spec(old).get("schedulingGates") and not _spec(new).get("schedulingGates"):
        actions |= ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED
    if _requests_changed(old, new):
        actions |= ActionType.UPDATE_POD_SCALE_DOWN
    if not actions:
        actions = ActionType.UPDATE_POD_OTHER
    return [ClusterEvent(resource, ActionType(bit)) for bit in _bits(actions)]


def _requests_changed(old: Obj, new: Obj) -> bool:
    def reqs(p: Obj) -> list[Any]:
        return [((c.get("resources") or {}).get("requests") or {}) for c in _spec(p).get("containers") or []]

    return reqs(old) != reqs(new)

"""The StatefulSet controller's scheduling extension point (for KEP-6277's Workload/PodGroup work).

``StatefulSetController.sync`` consults ``self.scheduling_hook`` once per sync, after it has
claimed the set's pods and before any pod is created or deleted (KEP-6277 "Controller Workflow":
discover or create the Workload and PodGroup, reconcile minCount, *then* run the existing pod
management with ``spec.schedulingGroup.podGroupName`` set on every new pod)::

    if hook.wants(sts):                      # pure; False => no extra API call at all
        plan = await hook.prepare(sts, pods)
    else:
        plan = PROCEED
    status = await control.update(sts, pods, revisions, plan)

* ``plan.proceed`` False holds pod creation and deletion for this sync (revisions and status are
  still maintained) — e.g. while a minCount update has not landed yet (KEP-6277 "Scale
  Lifecycle": "waits for both updates to succeed before creating pods on scale-up or deleting
  pods on scale-down"). ``plan.requeue_after`` asks for another sync after that many seconds.
* ``plan.decorate_pod(pod)`` edits every pod object right before it is created (the PodGroup
  name, the extra ownerReference to the PodGroup); it must not touch identity or storage.
* ``plan.conditions`` are the ``status.conditions`` the hook wants on the StatefulSet (gangplane's
  ``StatefulSetWorkloadStatusCondition``); empty — the default — writes no ``conditions`` at
  all, as upstream's StatefulSet controller never does.
* ``attach(controller)`` runs once, in ``setup``: add informers (``controller.informers``) and
  handlers that call ``controller.enqueue(key)``.
* ``settled(sts)`` (optional; False when absent): ``prepare`` would now make no API call, raise
  no Event and return a plan that proceeds with no conditions and no requeue, as it did in the
  last sync — so a sync of a state the last sync vouched for (:mod:`.quiet`) may skip it.

The default :class:`NoopSchedulingHook` wants nothing, so a StatefulSet without
``spec.scheduling`` (or a controller without the extension) behaves exactly as upstream.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from apiserver.api.types import Obj

if TYPE_CHECKING:
    from controllers.statefulset.controller import StatefulSetController


@dataclass(frozen=True)
class SchedulingPlan:
    """What the hook lets this sync do (see module docstring)."""

    proceed: bool = True
    decorate_pod: Callable[[Obj], None] | None = None
    requeue_after: float | None = None
    reason: str = ""
    conditions: tuple[Obj, ...] = ()


PROCEED = SchedulingPlan()


class SchedulingHook(Protocol):
    def attach(self, controller: StatefulSetController) -> None: ...

    def wants(self, sts: Obj) -> bool: ...

    async def prepare(self, sts: Obj, pods: list[Obj]) -> SchedulingPlan: ...

    def settled(self, sts: Obj) -> bool: ...


class NoopSchedulingHook:
    """Upstream behaviour: no Workload, no PodGroup, no extra calls."""

    def attach(self, controller: StatefulSetController) -> None:
        return None

    def wants(self, sts: Obj) -> bool:
        return False

    async def prepare(self, sts: Obj, pods: list[Obj]) -> SchedulingPlan:
        return PROCEED

    def settled(self, sts: Obj) -> bool:
        return True

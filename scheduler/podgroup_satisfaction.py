"""``PodGroupSatisfied``: the KEP-6413 proposal (``PodGroupRuntimeSatisfaction``, scheduler only).

``PodGroupInitiallyScheduled`` is terminal by design, so a gang that has since lost members looks
as healthy as one that has not. KEP-6413 (proposed for 1.39, not in any release; gangplane's
gate) adds a second condition that follows the group for its whole life, in both directions:

* ``True``, reason ``MinCountSatisfied`` — at least ``minCount`` members are scheduled;
* ``False``, reason ``MinCountNotSatisfied`` — fewer are (before the first placement, or after
  a member was lost: deleted, evicted, preempted, failed, or being deleted).

A member counts as scheduled while it is bound to a node (``spec.nodeName``), not terminal (the
scheduler's pod informer holds non-terminal pods only) and not being deleted. Only gang
PodGroups carry the condition (a basic group has no ``minCount``). It changes no scheduling
decision; the replacement policy that does is :mod:`scheduler.plugins.gang_scheduling`'s
``PodGroupReplacementsScheduleFreely``.

Level-triggered, as a controller: pod and PodGroup events enqueue the group's key, ``sync(key)``
recounts from the informers and writes the condition only when it changes (a merge patch of
``/status`` guarded by the resourceVersion read).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.informer import Informer
from apiserver.client.interface import PODGROUPS, Client
from apiserver.client.workqueue import ShutDown, WorkQueue
from apiserver.meta import rfc3339
from scheduler.podgroup_status import MERGE_PATCH, condition_of, set_status_condition
from scheduler.podgroups import group_key_of, is_gang, min_count, pod_group_key

log = logging.getLogger("gangplane.scheduler.satisfaction")

POD_GROUP_SATISFIED = "PodGroupSatisfied"
REASON_SATISFIED = "MinCountSatisfied"
REASON_NOT_SATISFIED = "MinCountNotSatisfied"
#: pods indexed by ``namespace/podGroupName``
BY_GROUP = "satisfaction-by-pod-group"


def _by_group(pod: Obj) -> list[str]:
    key = pod_group_key(pod)
    return [key] if key else []


def counts_as_scheduled(pod: Obj) -> bool:
    """Bound, not terminal and not being deleted (see the module docstring)."""
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    return (
        bool(spec.get("nodeName"))
        and not meta.get("deletionTimestamp")
        and status.get("phase") not in ("Succeeded", "Failed")
    )


def satisfied_condition(pod_group: Obj, scheduled: int) -> Obj:
    """The condition ``pod_group`` should carry with ``scheduled`` members."""
    n = min_count(pod_group)
    ok = scheduled >= n
    return {
        "type": POD_GROUP_SATISFIED,
        "status": "True" if ok else "False",
        "reason": REASON_SATISFIED if ok else REASON_NOT_SATISFIED,
        "message": f"minCount ({n}) is {'satisfied' if ok else 'not satisfied'}: {scheduled} scheduled",
        "observedGeneration": int((pod_group.get("metadata") or {}).get("generation") or 0),
    }


class PodGroupSatisfaction:
    """Keeps ``PodGroupSatisfied`` current on every gang PodGroup (module docstring)."""

    def __init__(self, client: Client, pods: Informer, pod_groups: Informer, clock: Any) -> None:
        self.client = client
        self.pods = pods
        self.pod_groups = pod_groups
        self.clock = clock
        self.queue: WorkQueue[str] = WorkQueue("podgroup-satisfaction")
        self._task: asyncio.Task[None] | None = None

    def attach(self) -> None:
        """Register the index and handlers (before the informers start)."""
        self.pods.add_indexer(BY_GROUP, _by_group)
        self.pods.add_event_handler(
            self._on_pod, lambda old, new: self._on_pod_update(old, new), self._on_pod
        )
        self.pod_groups.add_event_handler(self._on_group, lambda old, new: self._on_group(new), None)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="podgroup-satisfaction")

    async def stop(self) -> None:
        self.queue.shutdown()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None

    # ------------------------------------------------------------------ handlers
    def _on_pod(self, pod: Obj) -> None:
        key = pod_group_key(pod)
        if key:
            self.queue.add(key)

    def _on_pod_update(self, old: Obj, new: Obj) -> None:
        if counts_as_scheduled(old) != counts_as_scheduled(new) or pod_group_key(old) != pod_group_key(new):
            self._on_pod(old)
            self._on_pod(new)

    def _on_group(self, pod_group: Obj) -> None:
        self.queue.add(group_key_of(pod_group))

    # ------------------------------------------------------------------ the loop
    async def _run(self) -> None:
        while True:
            try:
                key = await self.queue.get()
            except ShutDown:
                return
            try:
                await self.sync(key)
                self.queue.forget(key)
            except errors.StatusError as e:
                log.info("PodGroupSatisfied of %s: %s; retrying", key, e.message)
                self.queue.add_rate_limited(key)
            finally:
                self.queue.done(key)

    async def sync(self, key: str) -> None:
        """Recount ``key``'s scheduled members and write the condition if it changes."""
        pg = self.pod_groups.get(key)
        if pg is None or not is_gang(pg) or (pg.get("metadata") or {}).get("deletionTimestamp"):
            return
        scheduled = sum(1 for p in self.pods.by_index(BY_GROUP, key) if counts_as_scheduled(p))
        want = satisfied_condition(pg, scheduled)
        current = condition_of(pg, POD_GROUP_SATISFIED)
        if current is not None and all(current.get(k) == v for k, v in want.items()):
            return
        conditions = [dict(c) for c in ((pg.get("status") or {}).get("conditions") or [])]
        set_status_condition(conditions, want, rfc3339(self.clock.now()))
        meta = pg.get("metadata") or {}
        patch = {
            "metadata": {"resourceVersion": meta.get("resourceVersion")},
            "status": {"conditions": conditions},
        }
        try:
            await self.client.patch(
                PODGROUPS,
                meta.get("name", ""),
                patch,
                meta.get("namespace", ""),
                patch_type=MERGE_PATCH,
                subresource="status",
            )
        except errors.StatusError as e:
            if e.code == 404:
                return
            if e.code == 409:
                # the informer brings the newer PodGroup, whose update event enqueues the key again
                return
            raise

"""TTL-after-finished controller (kube's ``pkg/controller/ttlafterfinished``).

A finished Job (``Complete`` or ``Failed`` True) with ``spec.ttlSecondsAfterFinished`` is deleted,
with ``propagationPolicy: Foreground`` and a UID precondition, once that many seconds have passed
since it finished (``status.completionTime``, else the terminal condition's
``lastTransitionTime``). Before deleting, the Job is read fresh from the API server: a TTL that was
changed or removed meanwhile wins over the cached copy. Expiry waits on the injected clock.
"""

from __future__ import annotations

import logging

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.informer import Informer
from apiserver.client.interface import JOBS
from apiserver.meta import (
    is_being_deleted,
    key_of,
    name_of,
    namespace_of,
    parse_time,
    split_key,
    uid_of,
)
from controllers.timed import TimedController

log = logging.getLogger("gangplane.ttlafterfinished")

NAME = "ttl-after-finished-controller"


def finish_time(job: Obj) -> float | None:
    """``jobFinishTime``: when the Job's terminal condition became True."""
    status = job.get("status") or {}
    for c in status.get("conditions") or []:
        if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
            return parse_time(c.get("lastTransitionTime")) or parse_time(status.get("completionTime"))
    return None


def needs_cleanup(job: Obj) -> bool:
    ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
    return isinstance(ttl, int) and not is_being_deleted(job) and finish_time(job) is not None


def time_left(job: Obj, now: float) -> float | None:
    """Seconds until ``job`` expires (<= 0: expired); None when it is not subject to a TTL."""
    if not needs_cleanup(job):
        return None
    finished = finish_time(job)
    assert finished is not None
    return finished + int((job.get("spec") or {})["ttlSecondsAfterFinished"]) - now


class TTLAfterFinishedController(TimedController):
    name = NAME
    workers = 5  # kube's --concurrent-ttl-after-finished-syncs

    def setup(self) -> None:
        self.jobs: Informer = self.informers.informer(JOBS)
        self.jobs.add_event_handler(self._on_job, lambda old, new: self._on_job(new))

    def _on_job(self, job: Obj) -> None:
        if needs_cleanup(job):
            self.enqueue(key_of(job))

    async def on_synced(self) -> None:
        for job in self.jobs.list():
            self._on_job(job)

    async def sync(self, key: str) -> None:
        ns, name = split_key(key)
        job = self.jobs.get_by_name(ns, name)
        if job is None:
            return
        left = time_left(job, self.clock.now())
        if left is None:
            return
        if left > 0:
            self.timers.schedule(key, self.clock.monotonic() + left)
            return
        # The cache may be stale (TTL changed, Job recreated): decide on a fresh read.
        try:
            fresh = await self.client.get(JOBS, name, ns)
        except errors.StatusError as e:
            if e.code == 404:
                return
            raise
        left = time_left(fresh, self.clock.now())
        if left is None:
            return
        if left > 0:
            self.timers.schedule(key, self.clock.monotonic() + left)
            return
        log.info("cleaning up Job %s/%s (TTL expired)", ns, name)
        try:
            await self.client.delete(
                JOBS,
                name_of(fresh),
                namespace_of(fresh),
                propagation_policy="Foreground",
                preconditions={"uid": uid_of(fresh)},
            )
        except errors.StatusError as e:
            if e.code not in (404, 409):
                raise

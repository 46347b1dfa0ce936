"""Events expire: kube-apiserver's ``--event-ttl`` (default one hour).

kube stores each Event with an etcd lease of the TTL, renewed by every write of it, so an Event
disappears (a DELETED watch event, no finalizers) once it has not been written for that long. A
long-running cluster's Events would otherwise grow without bound (a kubelet and a scheduler write
several per pod).

gangplane has no leases in every backend, so :class:`EventExpiry` sweeps: each sweep notes, per
stored Event, the revision it saw and when it first saw it; an Event whose revision has not
changed for ``ttl`` is deleted (only at that revision: a write racing the sweep keeps it). An
Event therefore lives between ``ttl`` and ``ttl`` plus one sweep interval after its last write,
whichever API server wrote it (several servers on one etcd each sweep; a delete that lost the race
is simply skipped). Events loaded from a ``--data-dir`` or found in etcd at start count from then.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from apiserver.api.types import Obj
from apiserver.meta import Clock
from apiserver.rest.resources import ResourceDef
from apiserver.storage.interface import Key, Storage, StoreError

log = logging.getLogger("gangplane.apiserver")

#: kube-apiserver's ``--event-ttl`` default
DEFAULT_EVENT_TTL = 3600.0


def sweep_interval(ttl: float) -> float:
    """A tenth of the TTL, between 0.1 s and one minute: expiry is late by at most this much."""
    return min(60.0, max(0.1, ttl / 10))


class EventExpiry:
    """Deletes Events not written for ``ttl`` seconds (see the module docstring)."""

    def __init__(
        self,
        store: Storage,
        events: ResourceDef,
        clock: Clock,
        ttl: float = DEFAULT_EVENT_TTL,
        notify: Callable[[str, ResourceDef, Obj], None] | None = None,
    ) -> None:
        self.store = store
        self.events = events
        self.clock = clock
        self.ttl = ttl
        #: the registry's write hooks, told of each expiry as of any delete
        self._notify = notify
        #: key -> (revision seen, monotonic time it was first seen at)
        self._seen: dict[Key, tuple[int, float]] = {}
        self._task: asyncio.Task[None] | None = None
        #: Events deleted so far
        self.expired = 0

    def sweep(self) -> int:
        """One pass: returns how many Events it deleted."""
        now = self.clock.monotonic()
        skey = self.events.storage_key
        seen = self._seen
        present: dict[Key, tuple[int, float]] = {}
        due: list[tuple[Key, int]] = []
        records, _, _ = self.store.list(skey)
        for rec in records:
            md = rec.obj.get("metadata") or {}
            key = (md.get("namespace") or "", md.get("name") or "")
            was = seen.get(key)
            if was is None or was[0] != rec.rv:
                present[key] = (rec.rv, now)
            elif now - was[1] >= self.ttl:
                due.append((key, rec.rv))
            else:
                present[key] = was
        self._seen = present  # forgets Events deleted meanwhile
        deleted = 0
        for key, rv in due:
            try:
                gone = self.store.delete(skey, key, rv)
            except StoreError:  # written or deleted since this sweep read it: not expired
                continue
            deleted += 1
            if self._notify is not None:
                self._notify("delete", self.events, gone.obj)
        self.expired += deleted
        return deleted

    async def run(self) -> None:
        interval = sweep_interval(self.ttl)
        while True:
            await asyncio.sleep(interval)
            self.store.fresh()
            try:
                if self.sweep():
                    await self.store.durable()
            except Exception:  # a failed sweep is retried by the next one; the server goes on
                log.exception("expiring events failed")

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self.run(), name="event-ttl")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


__all__ = ["DEFAULT_EVENT_TTL", "EventExpiry", "sweep_interval"]

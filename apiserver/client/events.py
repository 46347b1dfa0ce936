"""Event recorder for every component, after client-go's ``tools/record``.

``recorder.event(obj, "Normal", "Scheduled", "Successfully assigned ...")`` never blocks the
caller: events are queued and written by a background task through the component's client.
Repeats of the same (object, type, reason, message, source) within the correlation window are
folded into one core/v1 Event whose ``count`` and ``lastTimestamp`` grow (kube's
de-duplication), so ``kubectl describe`` shows ``x5 over 2m`` instead of five rows.
The same objects read back through events.k8s.io/v1 (shared storage).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import Any

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.interface import EVENTS, Client
from apiserver.meta import Clock, rfc3339, rfc3339_micro

NORMAL = "Normal"
WARNING = "Warning"

log = logging.getLogger("gangplane.events")


def object_reference(obj: Obj, api_version: str = "", kind: str = "") -> Obj:
    md = obj.get("metadata") or {}
    ref: Obj = {
        "kind": kind or obj.get("kind", ""),
        "apiVersion": api_version or obj.get("apiVersion", ""),
        "name": md.get("name", ""),
        "uid": md.get("uid", ""),
        "resourceVersion": md.get("resourceVersion", ""),
    }
    if md.get("namespace"):
        ref["namespace"] = md["namespace"]
    return {k: v for k, v in ref.items() if v}


def event_stamp(ts: float, after: int = 0) -> int:
    """The Unix nanoseconds of ``ts``, bumped past ``after`` (the stamp last used).

    A recorder passes its previous stamp, so two events about one object at the same instant - or
    under a frozen test clock - still get two names.
    """
    whole = int(ts)
    return max(whole * 1_000_000_000 + round((ts - whole) * 1_000_000_000), after + 1)


def event_name(object_name: str, stamp: int) -> str:
    """client-go's Event name: ``<object name>.<event time in Unix nanoseconds, hex>``."""
    return f"{object_name}.{stamp:x}"


@dataclass
class _Pending:
    """An event queued by a component, written (or aggregated into an existing one) by the recorder's task."""

    ref: Obj
    type: str
    reason: str
    message: str
    related: Obj | None
    ts: float


class EventRecorder:
    """Records Events for one component (``source.component`` / ``reportingController``)."""

    def __init__(self, client: Client, component: str, host: str = "", clock: Clock | None = None) -> None:
        self.client = client
        self.component = component
        self.host = host
        self.clock = clock or Clock()
        self._queue: asyncio.Queue[_Pending] | None = None
        self._task: asyncio.Task[None] | None = None
        # dedup key -> (event name, namespace, count)
        self._seen: dict[tuple[str, ...], tuple[str, str, int]] = {}
        self._last_stamp = 0  # the newest name stamp this recorder used
        self.written = 0

    def event(self, obj: Obj, etype: str, reason: str, message: str, related: Obj | None = None) -> None:
        self.event_ref(object_reference(obj), etype, reason, message, related)

    def eventf(self, obj: Obj, etype: str, reason: str, fmt: str, *args: Any) -> None:
        self.event(obj, etype, reason, fmt % args if args else fmt)

    def event_ref(self, ref: Obj, etype: str, reason: str, message: str, related: Obj | None = None) -> None:
        if self._queue is None:
            self._queue = asyncio.Queue()
        self._queue.put_nowait(_Pending(ref, etype, reason, message[:1024], related, self.clock.now()))
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run(), name=f"events-{self.component}")

    async def flush(self) -> None:
        """Wait until every queued event is written (tests and shutdown)."""
        if self._queue is not None:
            await self._queue.join()

    async def stop(self) -> None:
        with contextlib.suppress(asyncio.TimeoutError, TimeoutError):
            await asyncio.wait_for(self.flush(), 2)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None

    async def _run(self) -> None:
        assert self._queue is not None
        while True:
            p = await self._queue.get()
            try:
                await self._write(p)
                self.written += 1
            except errors.StatusError as e:
                # A namespace that is gone (or going) takes no events; that is not an error.
                if e.code not in (403, 404):
                    log.warning("could not record event %s/%s: %s", p.reason, p.ref.get("name"), e.message)
            except Exception:
                log.exception("could not record event %s", p.reason)
            finally:
                self._queue.task_done()

    async def _write(self, p: _Pending) -> None:
        ns = p.ref.get("namespace") or "default"
        key = (
            p.ref.get("kind", ""),
            ns,
            p.ref.get("name", ""),
            p.ref.get("uid", ""),
            p.type,
            p.reason,
            p.message,
            self.component,
            self.host,
        )
        now = rfc3339(p.ts)
        seen = self._seen.get(key)
        if seen is not None:
            name, sns, count = seen
            try:
                await self.client.patch(
                    EVENTS,
                    name,
                    {"count": count + 1, "lastTimestamp": now, "series": None},
                    sns,
                )
                self._seen[key] = (name, sns, count + 1)
                return
            except errors.StatusError as e:
                if e.code != 404:
                    raise
        self._last_stamp = event_stamp(p.ts, self._last_stamp)
        name = event_name(p.ref.get("name", "unknown"), self._last_stamp)
        source: Obj = {"component": self.component}
        if self.host:
            source["host"] = self.host
        ev: Obj = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": ns},
            "involvedObject": p.ref,
            "reason": p.reason,
            "message": p.message,
            "type": p.type,
            "source": source,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "eventTime": None,
            "count": 1,
            "reportingComponent": self.component,
            "reportingInstance": self.host or self.component,
        }
        if p.related:
            ev["related"] = p.related
        del ev["eventTime"]
        while True:
            try:
                await self.client.create(EVENTS, ev, ns)
                break
            except errors.StatusError as e:
                # Another recorder (another component, or another process on the same cluster)
                # took this name in the same nanosecond: the next stamp is as truthful.
                if not errors.is_already_exists(e):
                    raise
                self._last_stamp += 1
                name = ev["metadata"]["name"] = event_name(p.ref.get("name", "unknown"), self._last_stamp)
        self._seen[key] = (name, ns, 1)
        if len(self._seen) > 4096:
            # bounded like kube's LRU of 4096 event keys
            for k in list(self._seen)[:1024]:
                del self._seen[k]


__all__ = ["NORMAL", "WARNING", "EventRecorder", "object_reference", "rfc3339_micro"]

"""Event recorder for every component, after client-go's ``tools/record``.

``recorder.event(obj, "Normal", "Scheduled", "Successfully assigned ...")`` never blocks the
caller: events are queued and written by a background task through the component's client.
Before a write, each event goes through client-go's ``EventCorrelator``
(:mod:`apiserver.client.eventcorrelator`): more than 9 messages of one reason about one object
within 10 minutes are combined into one ``(combined from similar events): …`` Event, repeats of
an event are folded into it (``count`` and ``lastTimestamp`` grow, so ``kubectl describe``
shows ``x5 over 2m`` instead of five rows), and a source may write 25 events about an object,
then one every 5 minutes.
The same objects read back through events.k8s.io/v1 (shared storage).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from typing import Any

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.eventcorrelator import EventCorrelator
from apiserver.client.interface import EVENTS, Client
from apiserver.meta import Clock, rfc3339, rfc3339_micro

NORMAL = "Normal"
WARNING = "Warning"

log = logging.getLogger("gangplane.events")


def object_reference(obj: Obj, api_version: str = "", kind: str = "") -> Obj:
    """``ref.GetReference``: the object's kind, API version, name, uid, resourceVersion and
    namespace, each only if set (non-empty), in that order.

    Built field by field: every component's ``event()`` (the StatefulSet controller's, the
    scheduler's ``Scheduled``) makes one per Event, and a dict filtered into a second one cost
    twice as much."""
    md = obj.get("metadata") or {}
    ref: Obj = {}
    v = kind or obj.get("kind", "")
    if v:
        ref["kind"] = v
    v = api_version or obj.get("apiVersion", "")
    if v:
        ref["apiVersion"] = v
    v = md.get("name", "")
    if v:
        ref["name"] = v
    v = md.get("uid", "")
    if v:
        ref["uid"] = v
    v = md.get("resourceVersion", "")
    if v:
        ref["resourceVersion"] = v
    v = md.get("namespace")
    if v:
        ref["namespace"] = v
    return ref


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


#: An event queued by a component, written (or aggregated into an existing one) by the
#: recorder's task: ``(involved object reference, type, reason, message, related, time)``,
#: queued as :data:`PENDING_FIELDS` consecutive items of one deque (see ``EventRecorder._pending``).
_Pending = tuple[Obj, str, str, str, "Obj | None", float]

#: how many deque items one queued event takes (the fields of :data:`_Pending`)
PENDING_FIELDS = 6


class EventRecorder:
    """Records Events for one component (``source.component`` / ``reportingController``)."""

    def __init__(
        self,
        client: Client,
        component: str,
        host: str = "",
        clock: Clock | None = None,
        *,
        correlate: bool = True,
    ) -> None:
        self.client = client
        self.component = component
        self.host = host
        self.clock = clock or Clock()
        #: queued events, oldest first, and how many are not written yet (queued or being
        #: written): a deque and a count instead of an ``asyncio.Queue``, whose put, get and
        #: ``task_done`` are each a Python call per event. An event's fields are queued as
        #: :data:`PENDING_FIELDS` items of the deque rather than as one tuple: a tuple holding
        #: the reference dict stays tracked by the cyclic collector for as long as it is queued
        #: (CPython untracks a tuple only when no item can hold a reference cycle, and any dict
        #: might), and a busy component queues thousands (a 5,000-pod gang's ``Scheduled``
        #: Events wait until the scheduler's loop is idle), so every collector pass meanwhile
        #: traversed them. The reference dicts of strings themselves are never tracked, and a
        #: deque's storage is not a tracked object: a queued event adds nothing to traverse.
        self._pending: deque[Any] = deque()
        self._unwritten = 0
        #: the writer task's wake-up while it waits for an event, and ``flush``-es waiting
        self._waiter: asyncio.Future[None] | None = None
        self._flushers: list[asyncio.Future[None]] = []
        self._task: asyncio.Task[None] | None = None
        #: client-go's aggregation, de-duplication and spam filter (``correlate=False``: exact
        #: de-duplication only, for a component that records through ``tools/events`` upstream)
        self.correlator = (
            EventCorrelator(component, host) if correlate else EventCorrelator.dedup_only(component, host)
        )
        self._last_stamp = 0  # the newest name stamp this recorder used
        self.written = 0
        #: what every Event of this recorder says about its source, built once: copied into each
        #: body (a stored Event shares nothing with another or with the recorder)
        self._source: Obj = {"component": component, "host": host} if host else {"component": component}
        self._reporting_instance = host or component
        #: the second of the last event's time, ``[from, to)``, its text and its Unix nanoseconds:
        #: the events of one second share a ``lastTimestamp`` and a name stamp's whole seconds
        #: (see :meth:`_enter_second`)
        self._second_from = self._second_to = 0.0
        self._second_text = ""
        self._second_ns = 0

    def event(self, obj: Obj, etype: str, reason: str, message: str, related: Obj | None = None) -> None:
        """:meth:`event_ref` of the object's reference (the controllers record every Event
        through here)."""
        self.event_ref(object_reference(obj), etype, reason, message, related)

    def eventf(self, obj: Obj, etype: str, reason: str, fmt: str, *args: Any) -> None:
        self.event(obj, etype, reason, fmt % args if args else fmt)

    def event_ref(self, ref: Obj, etype: str, reason: str, message: str, related: Obj | None = None) -> None:
        """Queue an event about the object ``ref`` names and wake the writer task, or start it."""
        self._pending.extend((ref, etype, reason, message[:1024], related, self.clock.now()))
        self._unwritten += 1
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                # the task waits on it (a task that ended cancelled its wait): it runs on
                waiter.set_result(None)
                return
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run(), name=f"events-{self.component}")

    async def flush(self) -> None:
        """Wait until every queued event is written (tests and shutdown)."""
        while self._unwritten:
            done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._flushers.append(done)
            await done

    async def stop(self) -> None:
        with contextlib.suppress(asyncio.TimeoutError, TimeoutError):
            await asyncio.wait_for(self.flush(), 2)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None

    async def _run(self) -> None:
        pending = self._pending
        while True:
            if not pending:
                # nothing queued: wait for ``event_ref`` (a backlog is drained without waiting)
                self._waiter = waiter = asyncio.get_running_loop().create_future()
                await waiter
                continue
            # the fields popped into locals, passed as they are (no tuple of them to unpack)
            ref = pending.popleft()
            etype = pending.popleft()
            reason = pending.popleft()
            message = pending.popleft()
            related = pending.popleft()
            ts = pending.popleft()
            # one loop turn per Event, whatever the client's requests take: a backlog of Events
            # (a 5,000-pod gang's Scheduled) is written in the gaps of the components' work, never
            # several per step (kube's event sink is rate-limited and lags the same way). Its
            # write is then its step's first request (apiserver.server.loopshare)
            await asyncio.sleep(0)
            try:
                if await self._write(ref, etype, reason, message, related, ts):
                    self.written += 1
            except errors.StatusError as e:
                # A namespace that is gone (or going) takes no events; that is not an error.
                if e.code not in (403, 404):
                    log.warning("could not record event %s/%s: %s", reason, ref.get("name"), e.message)
            except Exception:
                log.exception("could not record event %s", reason)
            finally:
                self._unwritten -= 1
                if not self._unwritten and self._flushers:
                    flushers, self._flushers = self._flushers, []
                    for done in flushers:
                        if not done.done():
                            done.set_result(None)

    def _new_name(self, object_name: str, ts: float) -> str:
        """A new Event's name (a stamp past the last this recorder used): :func:`event_name` of
        :func:`event_stamp`, their steps inline (two calls fewer per Event). Within the second
        :meth:`_write` entered, its whole nanoseconds are remembered: ``int(ts)`` is that second
        there, and ``ts - int(ts)`` the same float as ``ts`` less the second's float."""
        second = self._second_from
        if second <= ts < self._second_to:
            stamp = self._second_ns + round((ts - second) * 1_000_000_000)
        else:
            whole = int(ts)
            stamp = whole * 1_000_000_000 + round((ts - whole) * 1_000_000_000)
        last = self._last_stamp
        if stamp <= last:
            stamp = last + 1
        self._last_stamp = stamp
        return f"{object_name}.{stamp:x}"

    def _enter_second(self, ts: float) -> str:
        """``rfc3339(ts)``, remembering its second ``s``: a later time in ``[s, s + 1)`` has the
        same text and the same whole nanoseconds (``rfc3339`` and the name's stamp take
        ``int(ts)``, which is ``s`` there for ``s >= 0``; before 1970 nothing is remembered, as
        ``int`` truncates towards zero). Two float comparisons per Event instead of ``rfc3339``'s
        two calls and the stamp's ``int``."""
        text = rfc3339(ts)
        whole = int(ts)
        if whole >= 0:
            self._second_from = second = float(whole)
            self._second_to = second + 1.0
            self._second_text = text
            self._second_ns = whole * 1_000_000_000
        return text

    async def _write(
        self, ref: Obj, etype: str, reason: str, message: str, related: Obj | None, ts: float
    ) -> bool:
        """Correlate the event (:mod:`.eventcorrelator`) and write what that asks for; False if filtered."""
        name_of_object = ref.get("name", "unknown")
        c = self.correlator.correlate(
            ref, etype, reason, message, ts, lambda: self._new_name(name_of_object, ts)
        )
        if c is None:
            return False
        # after the correlation, as before the memo (a time ``rfc3339`` cannot format fails here,
        # the correlator having counted it)
        if self._second_from <= ts < self._second_to:
            now = self._second_text  # ``rfc3339(ts)``: the second of the last event's
        else:
            now = self._enter_second(ts)
        # the answer's fields at once (a tuple's unpacking, not an attribute read each)
        name, text, count, first_seen, _, aggregate = c
        ns = ref.get("namespace") or "default"
        if count > 1:
            try:
                await self.client.patch(
                    EVENTS,
                    name,
                    {"count": count, "lastTimestamp": now, "message": text, "series": None},
                    ns,
                )
                # ``update_state(c, c.name, c.count)`` would store what ``correlate`` just stored
                # (see the end of this method): nothing to report
                return True
            except errors.StatusError as e:
                # Gone meanwhile (deleted, or its TTL ran out): recreated below as it is now.
                if e.code != 404:
                    raise
        # a new event was first seen now: the same string, formatted once
        first = now if first_seen == ts else rfc3339(first_seen)
        while True:
            # built afresh for each attempt and handed off: the in-process client then stores this
            # very dict instead of a copy, so nothing in it may be shared with what the recorder
            # keeps (the object reference and the source are copied; the values are strings)
            ev: Obj = {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": name, "namespace": ns},
                "involvedObject": ref.copy(),
                "reason": reason,
                "message": text,
                "type": etype,
                "source": self._source.copy(),
                "firstTimestamp": first,
                "lastTimestamp": now,
                "count": count,
            }
            if not aggregate:
                ev["reportingComponent"] = self.component
                ev["reportingInstance"] = self._reporting_instance
                if related:
                    ev["related"] = dict(related)
            try:
                await self.client.create(EVENTS, ev, ns, handoff=True, answer=False)
                break
            except errors.StatusError as e:
                # Another recorder (another component, or another process on the same cluster)
                # took this name in the same nanosecond: the next stamp is as truthful.
                if not errors.is_already_exists(e):
                    raise
                self._last_stamp += 1
                name = event_name(name_of_object, self._last_stamp)
        if name is not c.name:
            # ``UpdateState`` only when the stored name is not the one correlated. Under that
            # name, ``correlate`` has just made the key's entry ``(count, first seen, name)`` and
            # moved it to the recent end, and nothing correlated since (this task alone
            # correlates for the recorder, one event at a time): ``update_state`` would replace
            # the newest entry with an equal one.
            self.correlator.update_state(c, name, count)
        return True


__all__ = ["NORMAL", "WARNING", "EventRecorder", "object_reference", "rfc3339_micro"]

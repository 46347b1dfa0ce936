"""The watch cache: every backend's in-memory view of the stored objects and their recent history.

kube-apiserver's cacher serves lists and watches from memory and keeps a window of recent events
so that a client can resume a watch from a resourceVersion; etcd compacts older revisions every
five minutes, after which such a client gets ``410 Expired`` and re-lists. This module is that
cache, shared by all backends:

* objects per resource in a dict keyed ``(namespace, name)``, as immutable
  :class:`~apiserver.storage.interface.Record` s (the dict and its serialized bytes), with their
  key order sorted when a list or watch walks it (:mod:`apiserver.storage.keyorder`), not per write;
* a history of events per resource, bounded by count per resource and, across resources, by age
  (``history_window`` seconds, kube's 5-minute compaction) and by the bytes it holds
  (``history_bytes``), so that memory stays bounded however fast one object is rewritten;
* lists at an older revision (``continue`` tokens, ``resourceVersionMatch=Exact``) by rolling the
  current state back through the history;
* synchronous, non-blocking watch fan-out: each watcher has its own bounded buffer; one that
  falls too far behind is closed (its client resumes or re-lists) and never slows writers.

Everything here runs on the event loop thread and never awaits, so each call is atomic.
Backends decide revisions and durability and feed every change through :meth:`WatchCache.apply`.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from apiserver import loops
from apiserver.storage.interface import (
    ADDED,
    DELETED,
    MODIFIED,
    Event,
    Filter,
    Key,
    Record,
    StorageKey,
    StoreError,
    restamp,
)
from apiserver.storage.keyorder import HIGHEST, KeyOrder

#: kube's etcd compaction interval: watch history older than this is compacted
DEFAULT_HISTORY_WINDOW = 300.0
#: bytes the history may hold across all resources (serialized objects and per-event overhead)
DEFAULT_HISTORY_BYTES = 256 << 20
#: a record keeps the decoded dict its writer built for this many further writes (watchers that
#: are a little behind still filter and deliver it without decoding), then only its bytes, unless
#: it is the current state and shared read-only (:meth:`Record.shared`, the informers' objects)
RELEASE_LAG = 1024
#: the shortest time between two wakings of a batched watcher (one served over HTTP) while its
#: events keep coming; the first event after a quiet spell wakes it at once
DEFAULT_WATCH_BATCH_INTERVAL = 0.02
#: what one history event holds besides its record's bytes (the Event, the Record, the bytes
#: object's header and the timeline entry): the byte budget counts it, so many small revisions
#: (Lease renewals) are bounded by their real footprint too
EVENT_OVERHEAD = 256


def footprint(rec: Record) -> int:
    """Bytes one history event of ``rec`` keeps alive (its decoded dict is released or shared)."""
    return len(rec.raw) + EVENT_OVERHEAD


class _Waker:
    """Wakes batched watchers together: at most once per ``interval``, with one timer for all.

    Waking a watcher costs its stream a task switch, an encode and a socket write however many
    events it then drains; with a hundred watchers and a steady stream of writes, waking each one
    per event would spend the event loop on wakeups (writes fell to ~130/s). Events still reach
    every buffer at once, in order; only the waking is deferred, by less than ``interval``.
    """

    __slots__ = ("interval", "pending", "handle", "loop", "last")

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self.pending: list[Watcher] = []
        self.handle: asyncio.Handle | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.last = float("-inf")

    def add(self, w: Watcher) -> None:
        self.pending.append(w)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # a write outside any event loop: nothing waits there to batch for
            self.flush()
            return
        if self.handle is not None and self.loop is loop:
            return
        if self.loop is not loop:
            self.loop, self.last = loop, float("-inf")
        due = self.last + self.interval
        if loop.time() >= due:
            self.handle = loop.call_soon(self.flush)
        else:
            self.handle = loop.call_at(due, self.flush)

    def flush(self) -> None:
        self.handle = None
        if self.loop is not None:
            self.last = self.loop.time()
        pending, self.pending = self.pending, []
        for w in pending:
            w._queued = False
            w._wake()


class Watcher:
    """One watch stream: a filter and a bounded buffer of pending events."""

    __slots__ = (
        "namespace",
        "filter",
        "buffer",
        "max_buffer",
        "closed",
        "error",
        "_waiter",
        "_timer",
        "_deadline",
        "_resource",
        "sent_rv",
        "served_as",
        "_waker",
        "_queued",
        "_shares",
        "_loop",
    )

    def __init__(self, namespace: str, flt: Filter | None, max_buffer: int) -> None:
        self.namespace = namespace
        self.filter = flt
        self.buffer: deque[tuple[str, Record]] = deque()
        self.max_buffer = max_buffer
        self.closed = False
        self.error: str | None = None
        #: the future :meth:`wait` awaits, and its timeout (see there)
        self._waiter: asyncio.Future[bool] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._deadline = 0.0
        self._resource: ResourceCache | None = None
        self.sent_rv = 0
        #: what the API server serves this watch as (its resource definition), set by the registry
        self.served_as: Any = None
        #: wakes this watcher with the other batched ones (None: woken by each event)
        self._waker: _Waker | None = None
        self._queued = False
        #: its reader shares the records it hands out (see :meth:`WatchCache.shared_by_reader`)
        self._shares = False
        #: the loop its reader waits on (:meth:`wait`), kept rather than asked for at each wait
        #: (:mod:`apiserver.loops`)
        self._loop: asyncio.AbstractEventLoop | None = None

    def _matches(self, rec: Record | None) -> bool:
        if rec is None:
            return False
        if self.filter is None:
            return True
        return self.filter(rec.obj)

    def offer(self, ev: Event, item: tuple[str, Record] | None = None) -> None:
        """Buffer what ``ev`` means to this watch; ``item`` is ``(ev.type, ev.rec)``, built once
        for every watcher without a selector (they all buffer the same tuple)."""
        if self.closed:
            return
        if self.namespace and ev.key[0] != self.namespace:
            return
        if self.filter is None:
            self._append(item if item is not None else (ev.type, ev.rec))
            return
        if ev.type == MODIFIED:
            now_in = self._matches(ev.rec)
            was_in = self._matches(ev.prev)
            if now_in and was_in:
                self._push(MODIFIED, ev.rec)
            elif now_in:
                self._push(ADDED, ev.rec)
            elif was_in and ev.prev is not None:
                # Leaving the selection: the previous state, at the new resourceVersion (kube's cacher).
                self._push(DELETED, restamp(ev.prev, ev.rv))
        elif self._matches(ev.rec):
            self._push(ev.type, ev.rec)

    def _push(self, etype: str, rec: Record) -> None:
        self._append((etype, rec))

    def _append(self, item: tuple[str, Record]) -> None:
        if len(self.buffer) >= self.max_buffer:
            self.close("watcher fell too far behind; re-list and watch again")
            return
        self.buffer.append(item)
        if self._shares:
            item[1].awaited()
        if self._waker is None:
            fut = self._waiter  # _wake(), inline: one call per event and watch
            if fut is not None and not fut.done():
                fut.set_result(True)
        elif not self._queued:
            self._queued = True
            self._waker.add(self)

    def _wake(self) -> None:
        fut = self._waiter
        if fut is not None and not fut.done():
            fut.set_result(True)

    def close(self, error: str | None = None) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.closed:
            return
        self.closed = True
        self.error = error
        self._wake()
        if self._resource is not None:
            self._resource.watchers.pop(self, None)

    async def wait(self, timeout: float | None) -> bool:
        """Wait for events or close; False on timeout.

        A stream waits once per batch of events with a long timeout (the bookmark interval), so
        the timer is not replaced at every wait: a wait moves the deadline, and a timer that
        fires before it is set again for it. One timer per timeout period, not per batch.
        """
        if self.buffer or self.closed:
            return True
        loop = self._loop = loops.running(self._loop)
        fut: asyncio.Future[bool] = loop.create_future()
        self._waiter = fut
        if timeout is None:
            self._deadline = math.inf
        else:
            self._deadline = deadline = loop.time() + timeout
            timer = self._timer
            if timer is None or timer.when() > deadline:
                if timer is not None:
                    timer.cancel()
                self._timer = loop.call_at(deadline, self._expire, loop)
        try:
            return await fut
        finally:
            self._waiter = None

    def _expire(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = None
        fut = self._waiter
        if fut is None or fut.done():
            return  # no wait is pending: the next one sets a timer of its own
        if loop.time() < self._deadline:
            if self._deadline != math.inf:
                self._timer = loop.call_at(self._deadline, self._expire, loop)
            return
        fut.set_result(False)

    def drain(self) -> list[tuple[str, Record]]:
        out = list(self.buffer)
        self.buffer.clear()
        if out:
            self.sent_rv = out[-1][1].rv
        return out


class _Collector(Watcher):
    """A watcher that only applies filtering/transition rules to replayed history."""

    def __init__(self, w: Watcher) -> None:
        super().__init__(w.namespace, w.filter, 1 << 62)
        self.events: list[tuple[str, Record]] = []

    def _append(self, item: tuple[str, Record]) -> None:
        self.events.append(item)


class ResourceCache:
    """Objects and history of one resource (one storage key).

    ``items`` is read directly (lookups); it changes only through :meth:`put`, :meth:`remove`,
    :meth:`put_many` and :meth:`clear`, which keep ``order`` (the sorted keys) in step.
    """

    __slots__ = ("items", "order", "history", "history_size", "compacted_rv", "watchers", "last_rv")

    def __init__(self, history_size: int) -> None:
        self.items: dict[Key, Record] = {}
        self.order = KeyOrder(self.items)
        self.history: deque[Event] = deque()
        self.history_size = history_size
        self.compacted_rv = 0  # events with rv <= this are gone from history
        #: in the order they started (a dict used as an ordered set): each event is offered, and
        #: so each watch woken, in that order. A set's order followed the watchers' addresses,
        #: which any allocation elsewhere changes; with it changed whichever read-only watch ran
        #: first after a burst of writes (the one that decodes the revisions whose writer's dict
        #: was released, see RELEASE_LAG, and takes the collector passes that allocation sets off),
        #: so one build's timings could differ from another's by who paid, not by what was done.
        self.watchers: dict[Watcher, None] = {}
        self.last_rv = 0

    def put(self, key: Key, rec: Record) -> None:
        items = self.items
        new = key not in items
        items[key] = rec
        if new:  # told once present: a merge it triggers keeps only present keys
            self.order.added(key)

    def remove(self, key: Key) -> None:
        if self.items.pop(key, None) is not None:
            self.order.removed()

    def put_many(self, records: dict[Key, Record]) -> None:
        items, order = self.items, self.order
        for key, rec in records.items():
            new = key not in items
            items[key] = rec
            if new:
                order.added(key)

    def clear(self) -> None:
        self.items.clear()
        self.order.clear()

    def keys(self, namespace: str = "") -> list[Key]:
        """The keys in order, of one namespace or all."""
        if namespace:
            return self.order.namespace(namespace)
        return self.order.keys()

    def range(self, namespace: str) -> Iterator[tuple[Key, Record]]:
        items = self.items
        for k in self.keys(namespace):
            yield k, items[k]

    def state_at(self, rv: int, namespace: str, start: Key | None) -> Iterator[tuple[Key, Record]]:
        """The objects as they were at revision ``rv`` (rolling back newer events), from ``start`` on."""
        if rv < self.compacted_rv:
            raise StoreError("Expired")
        overrides: dict[Key, Record | None] = {}
        for ev in reversed(self.history):
            if ev.rv <= rv:
                break
            overrides[ev.key] = ev.prev  # the earliest event after rv wins (visited last)
        lo = start if start is not None else ((namespace, "") if namespace else None)
        hi = (namespace, HIGHEST) if namespace else None
        cur_keys = self.order.span(lo, hi, lo_inclusive=start is None)
        extra = sorted(
            k
            for k in overrides
            if (not namespace or k[0] == namespace) and (start is None or k > start) and k not in self.items
        )
        # merge the two sorted key streams
        ei = 0
        for k in cur_keys:
            while ei < len(extra) and extra[ei] < k:
                rec = overrides[extra[ei]]
                if rec is not None:
                    yield extra[ei], rec
                ei += 1
            if k in overrides:
                rec = overrides[k]
                if rec is not None:
                    yield k, rec
            else:
                yield k, self.items[k]
        while ei < len(extra):
            rec = overrides[extra[ei]]
            if rec is not None:
                yield extra[ei], rec
            ei += 1


def page(
    items: Iterable[tuple[Key, Record]], flt: Filter | None, limit: int, list_rv: int
) -> tuple[list[Record], int, Key | None]:
    """One page of a list: the items ``flt`` keeps, at most ``limit`` (0: all), in the given order.

    Returns (records, list revision, the last key when more matching items follow), the shape of
    :meth:`WatchCache.list`; shared by every source of items a backend lists from.
    """
    out: list[Record] = []
    last: Key | None = None
    for k, rec in items:
        if flt is not None and not flt(rec.obj):
            continue
        if limit and len(out) >= limit:
            return out, list_rv, last
        out.append(rec)
        last = k
    return out, list_rv, None


class WatchCache:
    """All resources' objects, history and watchers, at one cluster-wide revision ``rv``.

    Backends subclass it: they decide each write's revision (a counter, or etcd's) and hand the
    change to :meth:`apply`; everything a reader sees comes from here.
    """

    #: see :attr:`apiserver.storage.interface.Storage.acknowledged_at_apply`; a backend whose
    #: ``durable`` never waits says so
    acknowledged_at_apply = False

    def __init__(
        self,
        history_size: int = 200_000,
        watcher_buffer: int = 100_000,
        history_window: float = DEFAULT_HISTORY_WINDOW,
        history_bytes: int = DEFAULT_HISTORY_BYTES,
        monotonic: Callable[[], float] = time.monotonic,
        watch_batch_interval: float = DEFAULT_WATCH_BATCH_INTERVAL,
    ) -> None:
        self._rv = 0
        #: revisions at or below this predate the cache (an earlier run, the loaded state): 410
        self._floor = 0
        self._resources: dict[StorageKey, ResourceCache] = {}
        self.history_size = history_size
        self.watcher_buffer = watcher_buffer
        self.history_window = history_window
        self.history_bytes = history_bytes
        self._monotonic = monotonic
        #: every resource's events in revision order, for compaction by age and bytes across resources;
        #: ``_timeline_rs[i]`` is the resource cache of ``_timeline[i]``. Two parallel deques rather
        #: than one of (cache, event) pairs: a pair is one more object the cyclic collector tracks
        #: (and traverses) per write held in history, and the history holds every write of the window
        self._timeline: deque[Event] = deque()
        self._timeline_rs: deque[ResourceCache] = deque()
        self._history_held = 0  # bytes of the records the timeline holds
        #: records written or superseded (replaced, deleted) lately, whose decoded dicts are
        #: dropped RELEASE_LAG entries later (a shared current one keeps it)
        self._recent: deque[Record] = deque()
        self._waker = _Waker(watch_batch_interval)

    @property
    def rv(self) -> int:
        return self._rv

    def resource(self, skey: StorageKey) -> ResourceCache:
        rs = self._resources.get(skey)
        if rs is None:
            rs = ResourceCache(self.history_size)
            rs.compacted_rv = rs.last_rv = self._floor
            self._resources[skey] = rs
        return rs

    def live_items(self, skey: StorageKey) -> dict[Key, Record]:
        """The resource's current records by key, read only: the cache's own dict, the same one
        for the cache's life (a resource's cache is made once, never replaced, and its ``items``
        only changed in place). For readers that ask on every write (admission's counts and
        lookups) and keep it, rather than looking the resource up each time."""
        return self.resource(skey).items

    def storage_keys(self) -> list[StorageKey]:
        return list(self._resources)

    # -- feeding the cache -----------------------------------------------------------------------
    def apply(
        self,
        skey: StorageKey,
        etype: str,
        key: Key,
        rec: Record,
        prev: Record | None,
        at: float | None = None,
    ) -> None:
        """Record one change at ``rec.rv`` (> the cache's revision): objects, history, watchers.

        ``at`` (monotonic seconds) dates a change replayed from stored history (a restart),
        so that it leaves the window when it would have; live changes are dated now.
        """
        self._apply(self.resource(skey), etype, key, rec, prev, at)

    def _apply(
        self,
        rs: ResourceCache,
        etype: str,
        key: Key,
        rec: Record,
        prev: Record | None,
        at: float | None = None,
    ) -> None:
        """:meth:`apply` to a resource's cache already looked up (a backend's write has it)."""
        if etype == DELETED:
            rs.remove(key)
        else:
            items = rs.items
            new = key not in items
            items[key] = rec
            if new:  # told once present (see ResourceCache.put)
                rs.order.added(key)
        now = self._monotonic() if at is None else at
        rv = rec.rv
        ev = Event(rv, etype, key, rec, prev, now)
        history = rs.history
        history.append(ev)
        if len(history) > rs.history_size:
            rs.compacted_rv = history.popleft().rv
        tl = self._timeline
        tl.append(ev)
        self._timeline_rs.append(rs)
        self._history_held += len(rec.raw) + EVENT_OVERHEAD  # footprint(rec)
        self._rv = rs.last_rv = rv
        if prev is not None and prev is not rec and prev.supersede():
            self._retire(prev)  # it was kept decoded for its sharers: no longer
        if etype == DELETED:
            rec.supersede()
        # _retire(rec), inline: one per write
        pending = self._recent
        pending.append(rec)
        if len(pending) > RELEASE_LAG:
            pending.popleft().release_unshared()
        # compact(now) when the oldest event left the window or the budget is exceeded
        if tl[0].at < now - self.history_window or self._history_held > self.history_bytes:
            self.compact(now)
        if rs.watchers:
            item = (etype, rec)
            for w in tuple(rs.watchers):
                w.offer(ev, item)

    def _retire(self, rec: Record) -> None:
        """Drop a decoded dict that nobody shares RELEASE_LAG records later."""
        pending = self._recent
        pending.append(rec)
        if len(pending) > RELEASE_LAG:
            pending.popleft().release_unshared()

    def load(self, skey: StorageKey, key: Key, rec: Record) -> None:
        """Put a stored object in place without an event (state loaded at start)."""
        rs = self.resource(skey)
        rec.release_unshared()  # decoded again when an informer shares it
        rs.put(key, rec)
        rs.last_rv = max(rs.last_rv, rec.rv)

    def load_many(self, skey: StorageKey, records: dict[Key, Record]) -> None:
        """:meth:`load` for many objects of one resource at once (one sort instead of one insert each)."""
        rs = self.resource(skey)
        for rec in records.values():
            rec.release_unshared()  # decoded again when an informer shares it
        rs.put_many(records)
        if records:
            rs.last_rv = max(rs.last_rv, max(rec.rv for rec in records.values()))

    def loaded(self, rv: int) -> None:
        """The state loaded at start is at revision ``rv``: nothing older can be replayed."""
        self._rv = max(self._rv, rv)
        self._floor = max(self._floor, rv)
        for rs in self._resources.values():
            rs.compacted_rv = max(rs.compacted_rv, rv)
            # a loaded resource may have changed up to ``rv`` (a delete leaves no record behind):
            # a list at an older revision must roll back through history, and there is none
            rs.last_rv = max(rs.last_rv, rv)

    def advance(self, rv: int) -> None:
        """The cluster is at ``rv`` with no change in this cache's view (an etcd progress notify)."""
        if rv > self._rv:
            self._rv = rv

    def compact(self, now: float | None = None) -> None:
        """Drop history older than the window or beyond the byte budget (kube's compaction)."""
        tl = self._timeline
        if not tl:
            return
        if now is None:
            now = self._monotonic()
        tl_rs = self._timeline_rs
        horizon = now - self.history_window
        while tl and (tl[0].at < horizon or self._history_held > self.history_bytes):
            ev, rs = tl.popleft(), tl_rs.popleft()
            self._history_held -= footprint(ev.rec)
            if rs.history and rs.history[0] is ev:
                rs.history.popleft()
                rs.compacted_rv = ev.rv

    def compact_to(self, rv: int) -> None:
        """Drop every event at or below ``rv`` (an explicit compaction, e.g. etcd's)."""
        tl, tl_rs = self._timeline, self._timeline_rs
        while tl and tl[0].rv <= rv:
            ev, rs = tl.popleft(), tl_rs.popleft()
            self._history_held -= footprint(ev.rec)
            if rs.history and rs.history[0] is ev:
                rs.history.popleft()
        self._floor = max(self._floor, rv)
        for rs in self._resources.values():
            if rs.compacted_rv < rv:
                rs.compacted_rv = rv

    def history_held(self) -> tuple[int, int]:
        """(events, bytes) the history holds now."""
        return len(self._timeline), self._history_held

    # -- reads ---------------------------------------------------------------------------
    def get(self, skey: StorageKey, key: Key) -> Record | None:
        return self.resource(skey).items.get(key)

    def list(
        self,
        skey: StorageKey,
        namespace: str = "",
        flt: Filter | None = None,
        limit: int = 0,
        start: Key | None = None,
        at_rv: int | None = None,
    ) -> tuple[list[Record], int, Key | None]:
        """Items (filtered) in key order; returns (records, list revision, last key if truncated)."""
        rs = self.resource(skey)
        list_rv = self._rv if at_rv is None else at_rv
        if at_rv is not None and at_rv < self._rv and rs.last_rv > at_rv:
            self.compact()
            it: Iterator[tuple[Key, Record]] = rs.state_at(at_rv, namespace, start)
        elif start is not None:
            hi = (namespace, HIGHEST) if namespace else None
            items = rs.items
            it = ((k, items[k]) for k in rs.order.span(start, hi, lo_inclusive=False))
        else:
            it = rs.range(namespace)
        return page(it, flt, limit, list_rv)

    def count(self, skey: StorageKey, namespace: str = "") -> int:
        rs = self.resource(skey)
        if not namespace:
            return len(rs.items)
        return len(rs.keys(namespace))

    # -- watch -------------------------------------------------------------------------------
    def watch(
        self,
        skey: StorageKey,
        namespace: str,
        flt: Filter | None,
        since_rv: int | None,
        initial: bool,
    ) -> tuple[Watcher, list[tuple[str, Record]]]:
        """Register a watcher; return it with its initial events.

        ``initial``: synthetic ADDED for every current matching object (watch without a
        resourceVersion, ``resourceVersion=0``, or ``sendInitialEvents=true``).
        ``since_rv``: replay the history after that revision (raises ``Expired`` if compacted).
        """
        rs = self.resource(skey)
        w = Watcher(namespace, flt, self.watcher_buffer)
        events: list[tuple[str, Record]] = []
        if initial:
            for _, rec in rs.range(namespace):
                if flt is None or flt(rec.obj):
                    events.append((ADDED, rec))
        elif since_rv is not None and since_rv < self._rv:
            self.compact()
            if since_rv < rs.compacted_rv:
                raise StoreError("Expired")
            pending: list[Event] = []
            for ev in reversed(rs.history):
                if ev.rv <= since_rv:
                    break
                pending.append(ev)
            collector = _Collector(w)
            for ev in reversed(pending):
                collector.offer(ev)
            events = collector.events
        w._resource = rs
        rs.watchers[w] = None
        w.sent_rv = self._rv
        return w, events

    def batch_wakeups(self, w: Watcher) -> None:
        """Wake ``w`` with the other batched watchers (see :class:`_Waker`): for streams whose
        every waking costs a socket write, as an HTTP watch's does."""
        w._waker = self._waker

    def shared_by_reader(self, w: Watcher) -> None:
        """``w``'s reader shares every record it hands out (:meth:`Record.shared`: the informers
        of this process): a record buffered for it keeps its writer's dict until then, instead of
        for ``RELEASE_LAG`` writes, so a longer burst is not decoded again from its bytes."""
        w._shares = True

    def watcher_count(self) -> int:
        return sum(len(rs.watchers) for rs in self._resources.values())

    def close_watchers(self, skey: StorageKey, error: str | None = None) -> None:
        for w in tuple(self.resource(skey).watchers):
            w.close(error)


__all__ = ["DEFAULT_HISTORY_BYTES", "DEFAULT_HISTORY_WINDOW", "ResourceCache", "WatchCache", "Watcher"]

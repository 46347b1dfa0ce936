"""The versioned in-memory store: etcd's revision model plus kube-apiserver's watch cache.

* One cluster-wide, strictly increasing revision; every write gets the next one and stamps it
  into ``metadata.resourceVersion``.
* Objects are kept per resource in a ``SortedDict`` keyed ``(namespace, name)``, as immutable
  :class:`Record` s holding the dict and its serialized bytes. Readers get copies decoded from
  the bytes (cheaper than ``deepcopy``) and the HTTP layer streams the bytes as they are.
* Each resource keeps a bounded event history (type, record, previous record). It serves
  watch resume from a resourceVersion without gaps or duplicates, ``410 Expired`` when the
  requested version is older than the history, and lists at an older revision (``continue``
  tokens, ``resourceVersionMatch=Exact``) by rolling the current state back.
* Watch fan-out is synchronous and non-blocking: each watcher has its own bounded buffer; one
  that falls too far behind is closed (its client resumes or re-lists) and never slows writers.

Everything here runs on the event loop thread and never awaits, so each call is atomic.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson
from sortedcontainers import SortedDict

from apiserver.api.types import Obj

Key = tuple[str, str]  # (namespace, name); namespace "" for cluster-scoped

ADDED = "ADDED"
MODIFIED = "MODIFIED"
DELETED = "DELETED"
BOOKMARK = "BOOKMARK"
ERROR = "ERROR"


class Record:
    """An immutable stored object: the dict (never mutated once stored) and its JSON bytes."""

    __slots__ = ("obj", "raw", "rv")

    def __init__(self, obj: Obj, raw: bytes, rv: int) -> None:
        self.obj = obj
        self.raw = raw
        self.rv = rv

    def copy(self) -> Obj:
        return orjson.loads(self.raw)


@dataclass(slots=True)
class Event:
    rv: int
    type: str
    key: Key
    rec: Record
    prev: Record | None


class StoreError(Exception):
    """Raised with a reason the registry maps to a Status (NotFound, AlreadyExists, Conflict, Expired)."""

    def __init__(self, reason: str, message: str = "") -> None:
        super().__init__(message or reason)
        self.reason = reason


Filter = Callable[[Obj], bool]


class Watcher:
    """One watch stream: a filter and a bounded buffer of pending events."""

    __slots__ = (
        "namespace",
        "filter",
        "buffer",
        "max_buffer",
        "closed",
        "error",
        "_wake",
        "_resource",
        "sent_rv",
        "served_as",
    )

    def __init__(self, namespace: str, flt: Filter | None, max_buffer: int) -> None:
        self.namespace = namespace
        self.filter = flt
        self.buffer: deque[tuple[str, Record]] = deque()
        self.max_buffer = max_buffer
        self.closed = False
        self.error: str | None = None
        self._wake = asyncio.Event()
        self._resource: ResourceStore | None = None
        self.sent_rv = 0
        #: what the API server serves this watch as (its resource definition), set by the registry
        self.served_as: Any = None

    def _matches(self, rec: Record | None) -> bool:
        if rec is None:
            return False
        if self.filter is None:
            return True
        return self.filter(rec.obj)

    def offer(self, ev: Event) -> None:
        if self.closed:
            return
        if self.namespace and ev.key[0] != self.namespace:
            return
        if self.filter is None:
            self._push(ev.type, ev.rec)
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
                self._push(DELETED, _restamp(ev.prev, ev.rv))
        elif self._matches(ev.rec):
            self._push(ev.type, ev.rec)

    def _push(self, etype: str, rec: Record) -> None:
        if len(self.buffer) >= self.max_buffer:
            self.close("watcher fell too far behind; re-list and watch again")
            return
        self.buffer.append((etype, rec))
        self._wake.set()

    def close(self, error: str | None = None) -> None:
        if self.closed:
            return
        self.closed = True
        self.error = error
        self._wake.set()
        if self._resource is not None:
            self._resource.watchers.discard(self)

    async def wait(self, timeout: float | None) -> bool:
        """Wait for events or close; False on timeout."""
        if self.buffer or self.closed:
            return True
        self._wake.clear()
        try:
            async with asyncio.timeout(timeout):
                await self._wake.wait()
        except TimeoutError:
            return False
        return True

    def drain(self) -> list[tuple[str, Record]]:
        out = list(self.buffer)
        self.buffer.clear()
        if out:
            self.sent_rv = out[-1][1].rv
        return out


def _restamp(rec: Record, rv: int) -> Record:
    obj = orjson.loads(rec.raw)
    obj.setdefault("metadata", {})["resourceVersion"] = str(rv)
    return Record(obj, orjson.dumps(obj), rv)


class ResourceStore:
    """Objects and history of one resource (one storage key)."""

    def __init__(self, history_size: int) -> None:
        self.items: SortedDict = SortedDict()
        self.history: deque[Event] = deque()
        self.history_size = history_size
        self.compacted_rv = 0  # events with rv <= this are gone from history
        self.watchers: set[Watcher] = set()
        self.last_rv = 0

    def record_event(self, ev: Event) -> None:
        self.history.append(ev)
        if len(self.history) > self.history_size:
            old = self.history.popleft()
            self.compacted_rv = old.rv
        self.last_rv = ev.rv
        if self.watchers:
            for w in tuple(self.watchers):
                w.offer(ev)

    def range(self, namespace: str) -> Iterator[tuple[Key, Record]]:
        if namespace:
            for k in self.items.irange((namespace, ""), (namespace, "\U0010ffff")):
                yield k, self.items[k]
        else:
            yield from self.items.items()

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
        hi = (namespace, "\U0010ffff") if namespace else None
        cur_keys = (
            self.items.irange(lo, hi, inclusive=(start is None, True))
            if (lo or hi)
            else iter(self.items.keys())
        )
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


class Store:
    """All resources, one revision counter."""

    def __init__(self, history_size: int = 200_000, watcher_buffer: int = 100_000) -> None:
        self.rv = 0
        self._resources: dict[Any, ResourceStore] = {}
        self.history_size = history_size
        self.watcher_buffer = watcher_buffer

    def resource(self, skey: Any) -> ResourceStore:
        rs = self._resources.get(skey)
        if rs is None:
            rs = ResourceStore(self.history_size)
            self._resources[skey] = rs
        return rs

    # -- reads ---------------------------------------------------------------------------
    def get(self, skey: Any, key: Key) -> Record | None:
        return self.resource(skey).items.get(key)

    def list(
        self,
        skey: Any,
        namespace: str = "",
        flt: Filter | None = None,
        limit: int = 0,
        start: Key | None = None,
        at_rv: int | None = None,
    ) -> tuple[list[Record], int, Key | None]:
        """Items (filtered) in key order; returns (records, list revision, last key if truncated)."""
        rs = self.resource(skey)
        list_rv = self.rv if at_rv is None else at_rv
        if at_rv is not None and at_rv < self.rv and rs.last_rv > at_rv:
            it: Iterator[tuple[Key, Record]] = rs.state_at(at_rv, namespace, start)
        elif start is not None:
            hi = (namespace, "\U0010ffff") if namespace else None
            it = ((k, rs.items[k]) for k in rs.items.irange(start, hi, inclusive=(False, True)))
        else:
            it = rs.range(namespace)
        out: list[Record] = []
        last: Key | None = None
        for k, rec in it:
            if flt is not None and not flt(rec.obj):
                continue
            if limit and len(out) >= limit:
                return out, list_rv, last
            out.append(rec)
            last = k
        return out, list_rv, None

    def count(self, skey: Any, namespace: str = "") -> int:
        rs = self.resource(skey)
        if not namespace:
            return len(rs.items)
        return sum(1 for _ in rs.items.irange((namespace, ""), (namespace, "\U0010ffff")))

    # -- writes ----------------------------------------------------------------------------
    def _stamp(self, obj: Obj) -> Record:
        self.rv += 1
        obj.setdefault("metadata", {})["resourceVersion"] = str(self.rv)
        return Record(obj, orjson.dumps(obj), self.rv)

    def create(self, skey: Any, key: Key, obj: Obj) -> Record:
        rs = self.resource(skey)
        if key in rs.items:
            raise StoreError("AlreadyExists")
        rec = self._stamp(obj)
        rs.items[key] = rec
        rs.record_event(Event(rec.rv, ADDED, key, rec, None))
        return rec

    def update(self, skey: Any, key: Key, obj: Obj, expected_rv: int | None = None) -> Record:
        rs = self.resource(skey)
        prev = rs.items.get(key)
        if prev is None:
            raise StoreError("NotFound")
        if expected_rv is not None and expected_rv != prev.rv:
            raise StoreError("Conflict")
        rec = self._stamp(obj)
        rs.items[key] = rec
        rs.record_event(Event(rec.rv, MODIFIED, key, rec, prev))
        return rec

    def delete(self, skey: Any, key: Key, expected_rv: int | None = None) -> Record:
        rs = self.resource(skey)
        prev = rs.items.get(key)
        if prev is None:
            raise StoreError("NotFound")
        if expected_rv is not None and expected_rv != prev.rv:
            raise StoreError("Conflict")
        del rs.items[key]
        # The DELETED event carries the last state at a new revision, like etcd's delete revision.
        rec = _restamp(prev, self.rv + 1)
        self.rv += 1
        rs.record_event(Event(rec.rv, DELETED, key, rec, prev))
        return rec

    # -- watch -------------------------------------------------------------------------------
    def watch(
        self,
        skey: Any,
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
        elif since_rv is not None and since_rv < self.rv:
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
        rs.watchers.add(w)
        w.sent_rv = self.rv
        return w, events

    def watcher_count(self) -> int:
        return sum(len(rs.watchers) for rs in self._resources.values())


class _Collector(Watcher):
    """A watcher that only applies filtering/transition rules to replayed history."""

    def __init__(self, w: Watcher) -> None:
        super().__init__(w.namespace, w.filter, 1 << 62)
        self.events: list[tuple[str, Record]] = []

    def _push(self, etype: str, rec: Record) -> None:
        self.events.append((etype, rec))

"""The storage contract every backend honours, and the types it speaks in.

kube-apiserver talks to etcd through ``storage.Interface`` and serves reads and watches from its
watch cache (the *cacher*). gangplane keeps that split:

* reads (``get``, ``list`` at a revision with continue tokens, ``count``, ``watch`` from a
  revision) are answered from a :class:`~apiserver.storage.cache.WatchCache` kept in memory by
  every backend, synchronously, on the API server's event loop;
* writes (``create``/``update``/``delete`` with resourceVersion preconditions) are synchronous
  too, so the registry's read-check-write of one request is atomic within the process, and a
  backend shared between processes (etcd) detects a concurrent write with a compare on the stored
  revision and answers ``Conflict``;
* :meth:`Storage.durable` is the acknowledgement barrier: the API server awaits it before it
  answers a write, which lets the SQLite backend commit all writes of one event-loop turn in one
  transaction (group commit) while memory and etcd return at once;
* :meth:`Storage.fresh` is the consistent-read barrier (kube's consistent reads from cache): a
  backend shared with other API servers catches its cache up with the cluster's newest revision.

Revisions are one cluster-wide, strictly increasing integer stamped into
``metadata.resourceVersion``; ``Expired`` (HTTP 410) answers a revision older than the compacted
history.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import orjson

from apiserver.api.types import Obj
from apiserver.storage.compact import compact
from apiserver.storage.sharedsubtrees import SharedSubtrees

Key = tuple[str, str]  # (namespace, name); namespace "" for cluster-scoped
#: a storage key names one resource's keyspace: ``(group, plural)`` of its storage resource
StorageKey = Any

ADDED = "ADDED"
MODIFIED = "MODIFIED"
DELETED = "DELETED"
BOOKMARK = "BOOKMARK"
ERROR = "ERROR"

Filter = Callable[[Obj], bool]

# Record._state: written and not handed out yet; shared read-only as the current state; replaced;
# buffered for a watch whose reader will share it (kept decoded until it does); the same, past the
# release lag (so a replacement must still drop its dict, as a shared one's)
FRESH, SHARED, SUPERSEDED, AWAITED, HELD = 0, 1, 2, 3, 4


class Record:
    """An immutable stored object: its JSON bytes and, while useful, the decoded dict (never mutated).

    The bytes are what is served; the dict is kept only where it saves work or is shared anyway:

    * a record just written keeps the dict its writer built, for the watchers and the writer's
      next read (:class:`~apiserver.storage.cache.WatchCache` releases it some writes later);
    * a record handed out :meth:`shared` (informers of this process list and watch
      ``read_only``) keeps one compact decoded dict for every informer while it is the
      current state, since they hold it anyway;
    * a record buffered for a watch that shares what it hands out (:meth:`awaited`) keeps the
      writer's dict until that watch's reader has it, however many writes later: a burst of
      writes longer than the release lag (a 5,000-pod gang's bindings) is handed out as built,
      not decoded again from its bytes by the first informer;
    * a superseded revision (in the watch history only) and a current one nobody shares keep
      only their bytes; :attr:`obj` decodes them again for the rare late reader, without
      keeping the result.
    """

    __slots__ = ("_obj", "raw", "rv", "_state")

    def __init__(self, obj: Obj | None, raw: bytes, rv: int) -> None:
        self._obj: Obj | None = obj
        self.raw = raw
        self.rv = rv
        self._state = FRESH

    @property
    def obj(self) -> Obj:
        o = self._obj
        return o if o is not None else orjson.loads(self.raw)

    def shared(self, subtrees: SharedSubtrees | None = None) -> Obj:
        """The decoded dict for read-only sharing: one compact object per revision, kept while current.

        ``subtrees``: the store's table of canonical lists (:mod:`apiserver.storage.sharedsubtrees`),
        which the revision's template lists (containers, tolerations, owners, managedFields,
        conditions) are made one object with, when it is made compact.
        """
        o = self._obj
        state = self._state
        if state != SHARED and state != SUPERSEDED:  # FRESH, AWAITED, HELD: shared from now on
            self._state = SHARED
            if o is not None:
                if subtrees is not None:
                    subtrees.compact_and_share(o)
                else:
                    compact(o)
        if o is None:
            o = orjson.loads(self.raw)
            if subtrees is not None:
                subtrees.compact_and_share(o)
            else:
                compact(o)
            if self._state != SUPERSEDED:
                self._obj = o
        return o

    def shared_if_held(self) -> Obj | None:
        """The dict handed out read-only as the current state, or None where there is none yet
        (never decodes: for a writer asking whether its body holds parts of it)."""
        return self._obj if self._state == SHARED else None

    def awaited(self) -> None:
        """A watch that shares what it hands out has buffered this record: keep the writer's dict
        until it is shared (:meth:`release_unshared` leaves it) or superseded."""
        if self._state == FRESH:
            self._state = AWAITED

    def release(self) -> None:
        """Keep only the bytes (a superseded revision in the history)."""
        self._obj = None

    def release_unshared(self) -> None:
        """Keep only the bytes unless the dict is shared as the current state or awaited."""
        state = self._state
        if state == AWAITED:
            self._state = HELD
        elif state != SHARED and state != HELD:
            self._obj = None

    def supersede(self) -> bool:
        """Another revision replaced this one: it will not be kept decoded again.

        True if it was shared, or awaited past the release lag (so its dict outlived the lag and
        must still be dropped).
        """
        was_shared = self._state == SHARED or self._state == HELD
        self._state = SUPERSEDED
        return was_shared

    def copy(self) -> Obj:
        return orjson.loads(self.raw)


@dataclass(slots=True)
class Event:
    """One change at revision ``rv``; ``prev`` is the state it replaced (None for ADDED)."""

    rv: int
    type: str
    key: Key
    rec: Record
    prev: Record | None
    #: when the cache recorded it (monotonic seconds), for compaction by age
    at: float = 0.0


class StoreError(Exception):
    """Raised with a reason the registry maps to a Status (NotFound, AlreadyExists, Conflict, Expired)."""

    def __init__(self, reason: str, message: str = "") -> None:
        super().__init__(message or reason)
        self.reason = reason


def exact_bytes(raw: bytes) -> bytes:
    """``raw`` in an allocation of its own size, for keeping.

    orjson hands back its whole write buffer (at least 4 KB, then doubled as needed): a 1 KB
    Event would pin 4 KB for as long as it is stored, a 4 KB Pod 8 KB. The copy costs about
    2 µs for a Pod.
    """
    return bytes(memoryview(raw))


def exact_json(obj: Obj) -> bytes:
    """``orjson.dumps(obj)`` in an allocation of its own size (what :func:`exact_bytes` makes of it).

    Encoded with a trailing newline, which a slice then leaves out: the slice is the exact-size
    copy, made without the memoryview :func:`exact_bytes` needs (~0.3 µs of its ~0.35 µs for a
    gang pod; the newline itself costs nothing measurable). The bytes are the same.
    """
    return orjson.dumps(obj, option=orjson.OPT_APPEND_NEWLINE)[:-1]


def stamp(obj: Obj, rv: int) -> Record:
    """``obj`` stored at revision ``rv``: the resourceVersion written in, serialized once."""
    obj.setdefault("metadata", {})["resourceVersion"] = str(rv)
    return Record(obj, exact_json(obj), rv)


def restamp(rec: Record, rv: int) -> Record:
    """A copy of ``rec`` at another revision (a DELETED event carries the last state at the delete's)."""
    return stamp(orjson.loads(rec.raw), rv)


@runtime_checkable
class Storage(Protocol):
    """What the registry needs from a backend (memory, SQLite, etcd)."""

    @property
    def rv(self) -> int:
        """The newest revision this server has applied to its cache."""
        ...

    # -- reads (from the watch cache) --------------------------------------------------------
    def get(self, skey: StorageKey, key: Key) -> Record | None: ...

    def list(
        self,
        skey: StorageKey,
        namespace: str = "",
        flt: Filter | None = None,
        limit: int = 0,
        start: Key | None = None,
        at_rv: int | None = None,
    ) -> tuple[list[Record], int, Key | None]: ...

    def count(self, skey: StorageKey, namespace: str = "") -> int: ...

    def watch(
        self, skey: StorageKey, namespace: str, flt: Filter | None, since_rv: int | None, initial: bool
    ) -> tuple[Any, list[tuple[str, Record]]]: ...

    def watcher_count(self) -> int: ...

    def close_watchers(self, skey: StorageKey, error: str | None = None) -> None: ...

    # -- writes ----------------------------------------------------------------------------
    def create(self, skey: StorageKey, key: Key, obj: Obj) -> Record: ...

    def update(self, skey: StorageKey, key: Key, obj: Obj, expected_rv: int | None = None) -> Record: ...

    def delete(self, skey: StorageKey, key: Key, expected_rv: int | None = None) -> Record: ...

    # -- barriers and lifecycle ------------------------------------------------------------------
    def fresh(self) -> None:
        """Catch the cache up with the newest revision of the cluster (consistent read)."""
        ...

    async def durable(self) -> None:
        """Return once every write applied so far is durable (the write acknowledgement)."""
        ...

    #: True when a write is durable once applied (:meth:`durable` has nothing to wait for):
    #: the in-process client then acknowledges without awaiting it
    acknowledged_at_apply: bool

    async def check(self) -> str | None:
        """None while the storage can serve, else why not: the ``etcd`` health check of
        ``/livez`` and ``/readyz`` (kube's checks the same of its etcd)."""
        ...

    async def start(self) -> None:
        """Begin background work (commit loop, compaction, watch pump) on the running loop."""
        ...

    async def close(self) -> None:
        """Flush and release everything; the storage is unusable afterwards."""
        ...

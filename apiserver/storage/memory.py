"""The in-memory backend: the watch cache is the whole store; revisions come from a counter.

A fresh in-memory server must never take a resourceVersion handed out by an earlier run as one of
its own: an informer resuming from such a value would otherwise get a silent gap instead of the
``410 Expired`` that makes it re-list. So the counter starts from the wall clock in microseconds,
beyond anything an earlier run can have reached unless it wrote a million objects per second.

Backends that persist (SQLite) reuse this class: they load the stored state, continue its counter,
and override :meth:`MemoryStorage._persist` and :meth:`MemoryStorage.durable`.
"""

from __future__ import annotations

import time

from apiserver.api.types import Obj
from apiserver.storage.cache import WatchCache
from apiserver.storage.interface import (
    ADDED,
    DELETED,
    MODIFIED,
    Key,
    Record,
    StorageKey,
    StoreError,
    restamp,
    stamp,
)


def clock_revision() -> int:
    """A starting revision beyond any earlier run's: the wall clock in microseconds."""
    return time.time_ns() // 1000


class MemoryStorage(WatchCache):
    """All resources, one revision counter, nothing kept across runs."""

    #: :meth:`durable` has nothing to wait for (a subclass that persists says otherwise)
    acknowledged_at_apply = True

    def __init__(self, *, initial_rv: int | None = None, **cache_options: object) -> None:
        super().__init__(**cache_options)  # type: ignore[arg-type]
        # nothing before the first revision was ever this server's: resuming there is 410
        self.loaded(clock_revision() if initial_rv is None else initial_rv)

    # -- writes ----------------------------------------------------------------------------
    def create(self, skey: StorageKey, key: Key, obj: Obj) -> Record:
        rs = self.resource(skey)
        if key in rs.items:
            raise StoreError("AlreadyExists")
        rec = stamp(obj, self._rv + 1)
        self._persist(skey, ADDED, key, rec)
        self._apply(rs, ADDED, key, rec, None)
        return rec

    def update(self, skey: StorageKey, key: Key, obj: Obj, expected_rv: int | None = None) -> Record:
        rs = self.resource(skey)
        prev = rs.items.get(key)
        if prev is None:
            raise StoreError("NotFound")
        if expected_rv is not None and expected_rv != prev.rv:
            raise StoreError("Conflict")
        rec = stamp(obj, self._rv + 1)
        self._persist(skey, MODIFIED, key, rec)
        self._apply(rs, MODIFIED, key, rec, prev)
        return rec

    def delete(self, skey: StorageKey, key: Key, expected_rv: int | None = None) -> Record:
        rs = self.resource(skey)
        prev = rs.items.get(key)
        if prev is None:
            raise StoreError("NotFound")
        if expected_rv is not None and expected_rv != prev.rv:
            raise StoreError("Conflict")
        # The DELETED event carries the last state at a new revision, like etcd's delete revision.
        rec = restamp(prev, self._rv + 1)
        self._persist(skey, DELETED, key, rec)
        self._apply(rs, DELETED, key, rec, prev)
        return rec

    def _persist(self, skey: StorageKey, etype: str, key: Key, rec: Record) -> None:
        """Hand one write to durable storage before the cache shows it (nothing to do in memory)."""

    # -- barriers and lifecycle ------------------------------------------------------------------
    def fresh(self) -> None:
        """This process is the only writer: the cache is always current."""

    async def durable(self) -> None:
        """Nothing outlives the process: every applied write is as durable as it gets."""

    async def check(self) -> str | None:
        """Memory always serves."""
        return None

    async def start(self) -> None:
        """No background work."""

    async def close(self) -> None:
        for skey in self.storage_keys():
            self.close_watchers(skey, "the API server is shutting down")

"""The ``(namespace, name)`` order of one resource's keys, sorted when read instead of on every write.

A list or a watch from the current state walks a resource in key order (kube's cacher and etcd
both list by key), but most writes are never followed by such a walk: an Event, a Lease renewal,
a pod's binding are written thousands of times between two lists. A sorted container pays a
bisection and an insertion into a sorted list on every new key and a removal on every delete;
this keeps the keys in a plain ``dict`` (the records, for lookups) and a list that is sorted only
when an ordered walk asks for it:

* a new key is appended to ``_added``; a delete only marks the order stale;
* an ordered read merges: the sorted list plus the added keys, sorted again (Timsort finds the
  sorted run and merges the short tail: O(n + m log m) for m keys added since), then, if keys
  were deleted meanwhile, drops the keys no longer present and the duplicates a delete and a
  re-create leave.

The answer is a fresh list each time it changes, so a walk over an earlier answer (a page in
progress) never sees it change under it. A resource that is never listed (watched only, its
objects created and deleted for ever) does not grow the added keys without bound: once they
outnumber the sorted ones (and a floor), they are merged in at the write, which keeps the cost
per write amortized O(log n) and the memory at most about twice the live keys.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Container

from apiserver.storage.interface import Key

#: above every character a resource name may hold: ``(ns, HIGHEST)`` bounds a namespace's keys
HIGHEST = "\U0010ffff"
#: added keys merged at the write once there are more than this many and more than sorted ones
MERGE_FLOOR = 4096


class KeyOrder:
    """The sorted keys of ``present`` (one resource's records, whose key changes it is told of)."""

    __slots__ = ("_present", "_sorted", "_added", "_stale")

    def __init__(self, present: Container[Key]) -> None:
        self._present = present
        self._sorted: list[Key] = []
        self._added: list[Key] = []
        self._stale = False  # a key was deleted since the last sort

    def added(self, key: Key) -> None:
        """``key`` was not present and now is."""
        added = self._added
        added.append(key)
        if len(added) > MERGE_FLOOR and len(added) > len(self._sorted):
            self.keys()

    def removed(self) -> None:
        """A present key was deleted."""
        self._stale = True

    def clear(self) -> None:
        self._sorted, self._added, self._stale = [], [], False

    def keys(self) -> list[Key]:
        """Every present key, sorted."""
        if self._added:
            merged = self._sorted + self._added
            merged.sort()
            self._sorted, self._added = merged, []
        if self._stale:
            present = self._present
            kept: list[Key] = []
            last: Key | None = None
            for k in self._sorted:
                if k != last and k in present:
                    kept.append(k)
                last = k
            self._sorted, self._stale = kept, False
        return self._sorted

    def span(self, lo: Key | None, hi: Key | None, lo_inclusive: bool = True) -> list[Key]:
        """The sorted keys from ``lo`` (included unless ``lo_inclusive`` is false) to ``hi`` (included);
        None is unbounded."""
        ks = self.keys()
        i = 0 if lo is None else (bisect_left(ks, lo) if lo_inclusive else bisect_right(ks, lo))
        j = len(ks) if hi is None else bisect_right(ks, hi)
        return ks[i:j]

    def namespace(self, namespace: str) -> list[Key]:
        """The sorted keys of one namespace."""
        return self.span((namespace, ""), (namespace, HIGHEST))


__all__ = ["HIGHEST", "KeyOrder"]

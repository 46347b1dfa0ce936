"""A set's resolved Workload and PodGroup, recognised as still current in O(1) (KEP-6277 hook).

On the StatefulSet-managed path, :meth:`WorkloadSchedulingHook.prepare` discovers the set's
Workload by ``spec.controllerRef``, checks its structure, compiles the gang minCount the spec
wants, discovers the PodGroup by ``spec.workloadRef``, and compares both minCounts. Once the two
objects exist and agree with the spec, every later sync of the set repeats all of it to find
nothing to write — while the set's pods start, the scheduler binds them and it writes the
PodGroup's status, each of which triggers a sync.

What that walk reads is a pure function of

* the set's UID and ``metadata.generation`` (the spec: ``spec.scheduling``, ``spec.replicas``),
* what discovery reads of each object in the two reference-index buckets: UID,
  ``deletionTimestamp``, ``ownerReferences``, annotations (managed-by) and ``spec`` — not
  ``status`` (the scheduler's condition) nor the resourceVersion,
* the hook's own state: objects it created that the cache has not shown yet, and minCount writes
  it is waiting to see in the cache.

So :class:`ResolvedMemo` keeps, per set UID, those inputs as the last sync that *wrote nothing*
saw them, plus the position of the PodGroup it used in its bucket. A sync whose inputs compare
equal (tuples of the same sub-objects: the informer's unchanged objects compare by identity
first) gets that bucket's PodGroup object back without the walk; anything else — another
generation, an object added, removed, changed in spec or metadata, a pending create or minCount
write — takes the full path, which then stores its result again if it wrote nothing. Decisions
that raise events (ambiguity, unsupported structure, fall-backs) or write are never memoized.
"""

from __future__ import annotations

from dataclasses import dataclass

from apiserver.api.types import Obj

#: what discovery and the minCount check read of a Workload or PodGroup (see module docstring)
View = tuple[object, object, object, object, object]


def discovery_view(obj: Obj) -> View:
    """UID, deletionTimestamp, ownerReferences, annotations and spec of ``obj`` (shared, not copied)."""
    md = obj.get("metadata") or {}
    return (
        md.get("uid"),
        md.get("deletionTimestamp"),
        md.get("ownerReferences"),
        md.get("annotations"),
        obj.get("spec"),
    )


def views(objs: list[Obj]) -> tuple[View, ...]:
    return tuple(discovery_view(o) for o in objs)


@dataclass(slots=True)
class Resolved:
    """The inputs of one no-write resolution and where its PodGroup sits in its bucket.

    The views are replaced by equal ones read from the cache on a hit (:meth:`ResolvedMemo.pick`),
    so the next comparison finds the very same sub-objects and costs no deep comparison."""

    generation: int
    workloads: tuple[View, ...]
    #: the index key of the PodGroup bucket (``namespace/workloadName``)
    pod_group_key: str
    pod_groups: tuple[View, ...]
    #: position of the PodGroup the sync used in the PodGroup bucket
    chosen: int
    #: UIDs of the Workload and PodGroup used (a pending minCount write on either invalidates)
    uids: tuple[str, str]
    #: the very objects last compared equal: the informer replaces an object on every change,
    #: so the same objects (``is``) need no comparison at all
    seen_workloads: tuple[Obj, ...] = ()
    seen_pod_groups: tuple[Obj, ...] = ()


def _same(objs: list[Obj], seen: tuple[Obj, ...]) -> bool:
    return len(objs) == len(seen) and all(a is b for a, b in zip(objs, seen, strict=True))


class ResolvedMemo:
    """Per set UID, the last no-write resolution (see module docstring)."""

    def __init__(self) -> None:
        self._by_set: dict[str, Resolved] = {}
        #: how many lookups were answered from the memo (tests and profiling)
        self.hits = 0

    def get(self, set_uid: str, generation: int) -> Resolved | None:
        """The memo of ``set_uid`` if it was taken at ``generation`` (never for generation 0)."""
        hit = self._by_set.get(set_uid)
        if hit is None or not generation or hit.generation != generation:
            return None
        return hit

    @staticmethod
    def pick(hit: Resolved, workloads: list[Obj], pod_groups: list[Obj]) -> Obj | None:
        """The PodGroup to use when both buckets read as ``hit`` saw them, else None."""
        if len(workloads) != len(hit.workloads) or len(pod_groups) != len(hit.pod_groups):
            return None
        if not (_same(workloads, hit.seen_workloads) and _same(pod_groups, hit.seen_pod_groups)):
            wls, pgs = views(workloads), views(pod_groups)
            if wls != hit.workloads or pgs != hit.pod_groups:
                return None
            hit.workloads, hit.pod_groups = wls, pgs
            hit.seen_workloads, hit.seen_pod_groups = tuple(workloads), tuple(pod_groups)
        return pod_groups[hit.chosen]

    def store(self, set_uid: str, resolved: Resolved) -> None:
        self._by_set[set_uid] = resolved

    def forget(self, set_uid: str) -> None:
        """The set is gone, or its last resolution did not end in a plain no-write answer."""
        self._by_set.pop(set_uid, None)

    def __len__(self) -> int:
        return len(self._by_set)

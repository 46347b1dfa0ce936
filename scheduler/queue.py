"""The scheduling queue: activeQ, backoffQ, unschedulablePods, PreEnqueue gating, nominated pods.

Mirrors kube's ``PriorityQueue``:

* **activeQ** is a heap ordered by the profile's QueueSort (PrioritySort: higher priority first,
  then earlier enqueue time). :meth:`SchedulingQueue.pop` awaits it.
* **backoffQ** holds pods waiting out a per-pod exponential backoff (1s doubling to 10s by
  attempts, from the time of the last failure), driven by the injected clock;
  :meth:`flush_backoff_completed` (kube runs it every second) moves expired ones to activeQ.
  Pods that failed with an *error* wait in a separate error backoff queue; with
  ``pop_from_backoff`` (1.33+ ``SchedulerPopFromBackoffQ``) an idle scheduler may pop the
  others before their backoff ends.
* **unschedulablePods** parks pods that were rejected, until a cluster event that a *rejecting*
  plugin registered (and whose queueing hint says Queue) moves them back
  (:meth:`move_all_to_active_or_backoff`); pods parked longer than 5 minutes are flushed anyway.
  Events that arrive while a pod is being scheduled are remembered and replayed when it fails,
  so a node added mid-cycle is never missed.
* **Gated pods**: a pod a PreEnqueue plugin rejects never enters activeQ; it waits in
  unschedulablePods marked gated, with no condition and no event (by design, per kube), and is
  re-checked on its own updates (not on status-only ones, as kube's ``isPodUpdated``) and on
  events its gating plugin registered.
* **Pod groups**: the queue indexes its pods by PodGroup (``spec.schedulingGroup``). A gang
  member that passes PreEnqueue lets the group's held members re-check theirs (the gang has
  reached minCount); a PodGroup appearing or changing re-checks its members
  (:meth:`pod_group_changed`); and :meth:`pop_group_members` takes every queued member of a
  group out at once, for the PodGroup cycle to schedule together (kube's ``QueuedPodGroupInfo``).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections import deque
from collections.abc import Callable, Collection, Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any, Protocol

from apiserver.api.types import Obj
from scheduler.events import (
    ASSIGNED_POD,
    ASSIGNED_POD_ADD,
    FORCE_ACTIVATE,
    POD,
    SCHEDULE_ATTEMPT_FAILURE,
    UNSCHEDULABLE_TIMEOUT,
    UNSCHEDULED_POD,
    UNSCHEDULED_POD_ADD,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    pod_update_events,
)
from scheduler.interfaces import NO_PLUGINS
from scheduler.nodeinfo import PodInfo, pod_uid
from scheduler.parked import ParkedPods
from scheduler.podgroups import pod_group_key
from scheduler.status import Status

DEFAULT_POD_INITIAL_BACKOFF = 1.0
DEFAULT_POD_MAX_BACKOFF = 10.0
DEFAULT_POD_MAX_IN_UNSCHEDULABLE = 5 * 60.0
SCHEDULING_GATES = "SchedulingGates"

ACTIVE = "active"
BACKOFF = "backoff"
UNSCHEDULABLE = "unschedulable"
GATED = "gated"

# queueing strategies, in increasing order of urgency
_SKIP = 0
_AFTER_BACKOFF = 1
_IMMEDIATELY = 2


class QueueProfile(Protocol):
    """What the queue needs from a profile's framework (``Framework`` implements it)."""

    def run_pre_enqueue_plugins(self, pod_info: PodInfo) -> Status | None: ...

    def enqueue_extensions(self) -> dict[str, list[ClusterEventWithHint]]: ...


class Clock(Protocol):
    def monotonic(self) -> float: ...


@dataclass(eq=False, slots=True)
class QueuedPodInfo:
    """A pod in the queue plus its scheduling history (slotted: one is made per created pod)."""

    pod_info: PodInfo
    #: when the pod was last added or re-added (monotonic): QueueSort's tiebreak and backoff's base
    timestamp: float
    initial_attempt_timestamp: float | None = None
    attempts: int = 0
    unschedulable_count: int = 0
    #: the plugins that rejected the pod's last attempt or hold it (PreEnqueue), and those whose
    #: rejection was "pending": replaced, never changed in place, so a pod with none shares
    #: :data:`NO_PLUGINS` and a pod held by one plugin shares the queue's set of that plugin (a
    #: gang's members wait gated by thousands: two GC-tracked sets fewer each)
    unschedulable_plugins: AbstractSet[str] = NO_PLUGINS
    pending_plugins: AbstractSet[str] = NO_PLUGINS
    gated: bool = False
    gating_status: Status | None = None
    #: the last attempt ended in an Error (not a rejection): retried only after backoff
    last_error: bool = False

    @property
    def pod(self) -> Obj:
        return self.pod_info.pod

    @property
    def uid(self) -> str:
        return self.pod_info.uid

    @property
    def key(self) -> str:
        return self.pod_info.key

    @property
    def priority(self) -> int:
        return self.pod_info.priority


#: a heap whose top entry is a removed pod's is compacted (:class:`_KeyedHeap`) when removed
#: entries are at least 1/COMPACT_SHARE of it, and at least COMPACT_MIN (the tests compact every
#: time the top is removed with a huge COMPACT_SHARE, never with a huge COMPACT_MIN)
COMPACT_SHARE = 8
COMPACT_MIN = 64


class _Item:
    __slots__ = ("value", "seq", "less", "removed")

    def __init__(self, value: QueuedPodInfo, seq: int, less: Callable[[QueuedPodInfo, QueuedPodInfo], bool]):
        self.value = value
        self.seq = seq
        self.less = less
        self.removed = False

    def __lt__(self, other: _Item) -> bool:
        if self.less(self.value, other.value):
            return True
        if self.less(other.value, self.value):
            return False
        return self.seq < other.seq


class _KeyedHeap:
    """A heap with O(log n) push/pop and O(1) removal by pod UID (lazy deletion).

    With ``key`` (a sort key that orders pods exactly as ``less`` does: ``less(a, b)`` if and
    only if ``key(a) < key(b)``, equal keys for pods neither precedes), the heap holds
    ``(key, seq, item)`` tuples, compared in C: a push or pop into a backlog of thousands of pods
    makes a dozen comparisons, each of which would otherwise be three Python calls
    (``_Item.__lt__``, the framework's ``queue_sort_less``, the plugin's ``less``). The order is
    the same: ``less`` first, then the insertion sequence. Without ``key`` the entries are
    ``(item,)`` and compare through ``_Item.__lt__``.

    A removed pod's entry stays in the heap until it reaches the top (lazy deletion). A PodGroup
    cycle removes its gang's members at once (:meth:`SchedulingQueue.pop_group_members`): they
    are the oldest entries, so the next pop met all of them at the top and took them out one
    ``heappop`` each (5,000 pops of a heap of later gangs' members per big gang). When the
    top is removed and removed entries are at least ``1 / COMPACT_SHARE`` of the heap (and
    ``COMPACT_MIN``), the live entries are heaped again in one pass instead (O(n), not
    O(k log n)). The pop order is the same: every entry has its own ``seq`` (the tiebreak of
    both orders), so the live entries are totally ordered and each pop takes the least of them
    however the heap is laid out.
    """

    def __init__(
        self,
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
        key: Callable[[QueuedPodInfo], Any] | None = None,
    ) -> None:
        self._less = less
        self._key = key
        self._heap: list[tuple[Any, ...]] = []
        self._items: dict[str, _Item] = {}
        self._seq = itertools.count()
        #: entries of removed pods still in :attr:`_heap`
        self._dead = 0

    def push(self, q: QueuedPodInfo) -> None:
        self.remove(q.uid)
        seq = next(self._seq)
        item = _Item(q, seq, self._less)
        self._items[q.uid] = item
        key = self._key
        heapq.heappush(self._heap, (key(q), seq, item) if key is not None else (item,))

    def remove(self, uid: str) -> QueuedPodInfo | None:
        item = self._items.pop(uid, None)
        if item is None:
            return None
        item.removed = True
        self._dead += 1
        return item.value

    def _drop_dead_top(self) -> None:
        """Take the removed entries off the top: by compaction when many are left (see the
        class docstring), else one ``heappop`` each."""
        heap = self._heap
        dead = self._dead
        if heap and heap[0][-1].removed and dead >= COMPACT_MIN and dead * COMPACT_SHARE >= len(heap):
            heap[:] = [e for e in heap if not e[-1].removed]
            heapq.heapify(heap)
            self._dead = 0
            return
        while heap and heap[0][-1].removed:
            heapq.heappop(heap)
            self._dead -= 1

    def peek(self) -> QueuedPodInfo | None:
        self._drop_dead_top()
        heap = self._heap
        return heap[0][-1].value if heap else None

    def pop(self) -> QueuedPodInfo | None:
        self._drop_dead_top()
        heap = self._heap
        if not heap:
            return None
        item = heapq.heappop(heap)[-1]
        del self._items[item.value.uid]
        return item.value

    def get(self, uid: str) -> QueuedPodInfo | None:
        item = self._items.get(uid)
        return item.value if item else None

    def __contains__(self, uid: object) -> bool:
        return uid in self._items

    def __len__(self) -> int:
        return len(self._items)

    def values(self) -> list[QueuedPodInfo]:
        return [i.value for i in self._items.values()]


class SchedulingQueue:
    """kube's PriorityQueue (see module docstring). Not thread-safe; one asyncio loop owns it."""

    def __init__(
        self,
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
        clock: Clock,
        profiles: Mapping[str, QueueProfile] | None = None,
        *,
        initial_backoff: float = DEFAULT_POD_INITIAL_BACKOFF,
        max_backoff: float = DEFAULT_POD_MAX_BACKOFF,
        max_in_unschedulable: float = DEFAULT_POD_MAX_IN_UNSCHEDULABLE,
        pop_from_backoff: bool = True,
        sort_key: Callable[[QueuedPodInfo], Any] | None = None,
    ) -> None:
        """``sort_key``: optional, the activeQ order ``less`` gives as a key (see :class:`_KeyedHeap`)."""
        self.clock = clock
        self.profiles: dict[str, QueueProfile] = dict(profiles or {})
        #: ``frozenset({name})`` by plugin name, one immutable instance each, which the pods a
        #: PreEnqueue plugin holds share (:meth:`_one_plugin`; a profile has a few dozen plugins)
        self._one_plugin_sets: dict[str, frozenset[str]] = {}
        self._less = less
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.max_in_unschedulable = max_in_unschedulable
        self.pop_from_backoff = pop_from_backoff
        self._active = _KeyedHeap(less, sort_key)
        self._backoff = _KeyedHeap(self._less_backoff)
        self._error_backoff = _KeyedHeap(self._less_backoff)
        self._unschedulable = ParkedPods()
        self._hints: dict[str, dict[str, list[ClusterEventWithHint]]] = {
            name: p.enqueue_extensions() for name, p in self.profiles.items()
        }
        self._interest: dict[tuple[str, int, str], bool] = {}
        self._interest_by_plugin: dict[tuple[str, str, int, str], bool] = {}
        self._same_group_only: dict[tuple[str, str, int, str], bool] = {}
        #: :meth:`_unconcerned`'s answers: like the two above, a function of the profiles' fixed
        #: registrations, asked once per held PodGroup at every bound pod's event
        self._unconcerned_memo: dict[tuple[frozenset[str], str, int, str], bool] = {}
        self.scheduling_cycle = 0
        self.move_request_cycle = -1
        # in-flight pods: uid -> sequence number of the first event they have not seen
        self._in_flight: dict[str, int] = {}
        #: pods finished since ``_in_flight`` was last compacted (see :meth:`done`)
        self._in_flight_holes = 0
        self._in_flight_pods: dict[str, QueuedPodInfo] = {}
        #: events seen while pods are in flight, in sequence order (kube's inFlightEvents): trimmed
        #: from the left as the oldest in-flight pod finishes
        self._events: deque[tuple[int, ClusterEvent, Any, Any]] = deque()
        self._event_seq = 0
        self._in_flight_updates: dict[str, Obj | None] = {}
        self._nominated_by_node: dict[str, list[PodInfo]] = {}
        self._nominated_node_of: dict[str, str] = {}
        self._wakeup = asyncio.Event()
        self._closed = False
        #: PodGroup key -> uids of its pods in the queue (any sub-queue, or in flight)
        self._group_members: dict[str, set[str]] = {}
        self._group_of: dict[str, str] = {}

    # -- ordering ---------------------------------------------------------------------------

    def backoff_duration(self, q: QueuedPodInfo) -> float:
        """1s doubling per attempt, capped at 10s; no penalty before the first attempt."""
        if q.attempts == 0:
            return 0.0
        d = self.initial_backoff
        for _ in range(1, q.attempts):
            if d > self.max_backoff - d:
                return self.max_backoff
            d += d
        return min(d, self.max_backoff)

    def backoff_expiry(self, q: QueuedPodInfo) -> float:
        return q.timestamp + self.backoff_duration(q)

    def is_backing_off(self, q: QueuedPodInfo) -> bool:
        return self.backoff_expiry(q) > self.clock.monotonic()

    def _less_backoff(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        ea, eb = self.backoff_expiry(a), self.backoff_expiry(b)
        if ea != eb:
            return ea < eb
        return self._less(a, b)

    # -- adding and removing ----------------------------------------------------------------

    def _new(self, pod: Obj) -> QueuedPodInfo:
        now = self.clock.monotonic()
        return QueuedPodInfo(PodInfo(pod), timestamp=now, initial_attempt_timestamp=None)

    def _profile(self, q: QueuedPodInfo) -> QueueProfile | None:
        name = (q.pod.get("spec") or {}).get("schedulerName") or "default-scheduler"
        return self.profiles.get(name)

    def _run_pre_enqueue(self, q: QueuedPodInfo) -> None:
        prof = self._profile(q)
        s = prof.run_pre_enqueue_plugins(q.pod_info) if prof is not None else None
        if s is None or s.is_success():
            q.gated = False
            q.gating_status = None
            return
        q.gated = True
        q.gating_status = s
        q.unschedulable_plugins = self._one_plugin(s.plugin) if s.plugin else NO_PLUGINS
        q.pending_plugins = NO_PLUGINS

    def _one_plugin(self, name: str) -> frozenset[str]:
        """The set of the one plugin ``name``: the queue's one shared immutable instance."""
        got = self._one_plugin_sets.get(name)
        if got is None:
            got = self._one_plugin_sets[name] = frozenset((name,))
        return got

    def _move_to_active(self, q: QueuedPodInfo, *, skip_pre_enqueue: bool = False) -> bool:
        """activeQ if PreEnqueue passes, else gated in unschedulablePods. Returns whether it became active."""
        if not skip_pre_enqueue:
            self._run_pre_enqueue(q)
        uid = q.pod_info.uid
        if q.gated:
            if uid in self._active or uid in self._backoff or uid in self._error_backoff:
                return False
            self._unschedulable[uid] = q
            return False
        self._unschedulable.pop(uid, None)
        self._backoff.remove(uid)
        self._error_backoff.remove(uid)
        self._active.push(q)
        self._wakeup.set()
        return True

    def add(self, pod: Obj) -> None:
        """A new pending pod (informer Add of an unassigned pod).

        Also an ``UnscheduledPod/Add`` event for the parked pods: a gang member arriving may
        let the rest of its group pass PreEnqueue.
        """
        q = self._new(pod)
        uid = q.uid
        self._remove_everywhere(uid)
        self._track_group(uid, pod)
        # _move_to_active without its clearing of the other sub-queues: the pod is in none now
        self._run_pre_enqueue(q)
        if q.gated:
            self._unschedulable[uid] = q
        else:
            self._active.push(q)
            self._wakeup.set()
            self._activate_held_members(q)
        self._add_nominated_from_status(q.pod_info)
        if self._interested(UNSCHEDULED_POD_ADD):
            self.move_all_to_active_or_backoff(UNSCHEDULED_POD_ADD, None, pod)
        else:
            self._record_event([UNSCHEDULED_POD_ADD], None, pod)

    def update(self, old: Obj | None, new: Obj) -> None:
        """A pending pod changed: refresh it in place, or give a parked pod another chance."""
        uid = pod_uid(new)
        relevant = old is None or _scheduling_relevant(old) != _scheduling_relevant(new)
        if uid in self._in_flight:
            self._in_flight_updates[uid] = new
            if relevant:
                self._record_event(pod_update_events(old or {}, new), old, new)
            flying = self._in_flight_pods.get(uid)
            self._update_nominated(PodInfo(new, flying.pod_info if flying is not None else None))
            return
        queued = self._active.get(uid) or self._backoff.get(uid) or self._error_backoff.get(uid)
        if queued is None:
            queued = self._unschedulable.get(uid)
        pi = PodInfo(new, queued.pod_info if queued is not None else None)
        for heap in (self._active, self._backoff, self._error_backoff):
            q = heap.get(uid)
            if q is not None:
                q.pod_info = pi
                heap.push(q)
                self._update_nominated(pi)
                return
        q = self._unschedulable.get(uid)
        if q is not None:
            q.pod_info = pi
            self._update_nominated(pi)
            if q.gated:
                # kube re-checks a held pod on its own update only when the update may change
                # the answer (``isPodUpdated``; with queueing hints a status-only update matches
                # no event a gating plugin registers): a status-only write, such as KEP-5501's
                # own NotReadyForScheduling report, leaves it held as it was
                if relevant:
                    self._move_to_active(q)
            elif relevant:
                del self._unschedulable[uid]
                self._requeue(q, _AFTER_BACKOFF)
            return
        self.add(new)

    def delete(self, pod: Obj) -> None:
        uid = pod_uid(pod)
        if uid in self._in_flight:
            self._in_flight_updates[uid] = None
        self._remove_everywhere(uid)
        self._remove_nominated(uid)
        self._untrack_group(uid)

    # -- pod groups -------------------------------------------------------------------------

    def _track_group(self, uid: str, pod: Obj) -> None:
        key = pod_group_key(pod)
        was = self._group_of.get(uid)
        if was == key:
            return
        if was is not None:
            self._untrack_group(uid)
        if key:
            self._group_of[uid] = key
            self._group_members.setdefault(key, set()).add(uid)

    def _untrack_group(self, uid: str) -> None:
        key = self._group_of.pop(uid, None)
        if key is None:
            return
        members = self._group_members.get(key)
        if members is not None:
            members.discard(uid)
            if not members:
                del self._group_members[key]

    def _held_by_pre_enqueue(self, key: str) -> list[QueuedPodInfo]:
        out = []
        for uid in self._group_members.get(key, ()):
            q = self._unschedulable.get(uid)
            if q is not None and _held_by_plugin(q):
                out.append(q)
        return out

    def _activate_held_members(self, q: QueuedPodInfo) -> None:
        """A group member passed PreEnqueue: its held siblings may pass too (minCount reached)."""
        key = self._group_of.get(q.uid)
        if key:
            for other in self._held_by_pre_enqueue(key):
                self._move_to_active(other)

    def reevaluate_held(self) -> int:
        """Re-run PreEnqueue for every pod a PreEnqueue plugin holds (scheduling gates aside).

        Called once the informers have synced (after a start or a regained Lease): the initial
        list delivers a group's pending and bound members in name order, so a pending member
        may have been held before its bound siblings were known. Its release must not depend on
        an event that happened before the scheduler was looking. Returns how many moved.
        """
        moved = 0
        for q in list(self._unschedulable.values()):
            if _held_by_plugin(q) and self._move_to_active(q):
                moved += 1
        return moved

    def held_message(self, uid: str) -> str | None:
        """The message the PreEnqueue plugin that holds pod ``uid`` gave, or ``None`` where no
        PreEnqueue plugin holds it now (released, scheduled, deleted; scheduling gates aside)."""
        q = self._unschedulable.get(uid)
        if q is None or not _held_by_plugin(q) or q.gating_status is None:
            return None
        return q.gating_status.message()

    def held_pods(self) -> list[QueuedPodInfo]:
        """The pods PreEnqueue holds (scheduling gates aside: the API server reports those)."""
        return [q for q in self._unschedulable.values() if _held_by_plugin(q) and q.gating_status is not None]

    def pod_group_changed(self, key: str, requeue_rejected: bool = False) -> int:
        """The PodGroup appeared or changed: re-run PreEnqueue for its held members.

        ``requeue_rejected`` also sends members a failed cycle parked in unschedulablePods back
        (after their backoff): e.g. a lower ``minCount`` may make the gang fit now.
        """
        moved = 0
        for q in self._held_by_pre_enqueue(key):
            if self._move_to_active(q):
                moved += 1
        if requeue_rejected:
            for uid in list(self._group_members.get(key, ())):
                q = self._unschedulable.get(uid)
                if q is None or q.gated:
                    continue
                del self._unschedulable[uid]
                if self._requeue(q, _AFTER_BACKOFF) in (ACTIVE, BACKOFF):
                    moved += 1
        return moved

    def pop_group_members(self, key: str, exclude: str = "") -> list[QueuedPodInfo]:
        """Take every other queued member of group ``key`` out of the queue, as popped pods.

        Members held by PreEnqueue for another reason (scheduling gates) stay; members already
        in flight are not returned. Each returned pod counts an attempt and is in flight until
        :meth:`done` or :meth:`add_unschedulable_if_not_present`.
        """
        out: list[QueuedPodInfo] = []
        for uid in sorted(self._group_members.get(key, ())):
            if uid == exclude or uid in self._in_flight:
                continue
            q = self._active.remove(uid) or self._backoff.remove(uid) or self._error_backoff.remove(uid)
            if q is None:
                parked = self._unschedulable.get(uid)
                if parked is None or (parked.gated and SCHEDULING_GATES in parked.unschedulable_plugins):
                    continue
                q = self._unschedulable.pop(uid)
                q.gated = False
                q.gating_status = None
            q.attempts += 1
            if q.initial_attempt_timestamp is None:
                q.initial_attempt_timestamp = self.clock.monotonic()
            self._start_in_flight(q.uid)
            self._in_flight_pods[q.uid] = q
            out.append(q)
        return out

    def group_of(self, uid: str) -> str:
        return self._group_of.get(uid, "")

    def pending_pod_groups(self) -> dict[str, int]:
        """Groups with a pending member per sub-queue (``scheduler_pending_entities{type="podgroup"}``)."""
        counts = {ACTIVE: 0, BACKOFF: 0, UNSCHEDULABLE: 0, GATED: 0}
        parked = self._unschedulable
        for key, uids in self._group_members.items():
            # a gang waiting for its members is usually held whole at PreEnqueue: unschedulablePods
            # indexes those per group, so such a group is gated without a lookup per member
            # (the sub-queues hold a pod in one place only, and a held pod is stored gated)
            if uids and uids == parked.held_of(key).keys():
                counts[GATED] += 1
                continue
            seen = {self.where(uid) for uid in uids}
            for where in seen:
                if where in counts:
                    counts[where] += 1
        return counts

    def _remove_everywhere(self, uid: str) -> None:
        self._active.remove(uid)
        self._backoff.remove(uid)
        self._error_backoff.remove(uid)
        self._unschedulable.pop(uid, None)

    def activate(self, pods: Iterable[Obj]) -> None:
        """Move these pods to activeQ now if they are waiting in backoffQ or unschedulablePods."""
        for pod in pods:
            uid = pod_uid(pod)
            q = self._backoff.get(uid) or self._error_backoff.get(uid) or self._unschedulable.get(uid)
            if q is None:
                if uid in self._in_flight:
                    self._record_event([FORCE_ACTIVATE], None, pod)
                continue
            self._backoff.remove(uid)
            self._error_backoff.remove(uid)
            self._unschedulable.pop(uid, None)
            self._move_to_active(q)

    # -- popping ----------------------------------------------------------------------------

    def pop_nowait(self) -> QueuedPodInfo | None:
        q = self._active.pop()
        if q is None and self.pop_from_backoff:
            q = self._backoff.pop()
        if q is None:
            return None
        q.attempts += 1
        if q.initial_attempt_timestamp is None:
            q.initial_attempt_timestamp = self.clock.monotonic()
        self.scheduling_cycle += 1
        self._start_in_flight(q.uid)
        self._in_flight_pods[q.uid] = q
        return q

    async def pop(self) -> QueuedPodInfo | None:
        """Wait for the next pod; ``None`` once the queue is closed."""
        while True:
            q = self.pop_nowait()
            if q is not None:
                return q
            if self._closed:
                return None
            self._wakeup.clear()
            await self._wakeup.wait()

    def close(self) -> None:
        self._closed = True
        self._wakeup.set()

    def done(self, uid: str) -> None:
        """The pod's scheduling cycle is over (bound, parked, or dropped): stop tracking events for it."""
        in_flight = self._in_flight
        if in_flight.pop(uid, None) is not None:
            self._in_flight_holes += 1
        self._in_flight_pods.pop(uid, None)
        self._in_flight_updates.pop(uid, None)
        if not in_flight:
            self._events.clear()
            in_flight.clear()  # an emptied dict keeps its holes until cleared
            self._in_flight_holes = 0
        else:
            if self._in_flight_holes > len(in_flight):
                # A dict iterates over the holes its deletions left, and a gang's pods finish
                # oldest first: without compacting, finding the first value would step over
                # every pod finished before (quadratic in the gang's size). A copy keeps the order.
                in_flight = self._in_flight = dict(in_flight)
                self._in_flight_holes = 0
            # the first in-flight pod is the oldest (see _start_in_flight): a gang's 1,000 pods
            # finishing one by one cost one look each, not a scan of the others and the events
            oldest = next(iter(in_flight.values()))
            events = self._events
            while events and events[0][0] < oldest:
                events.popleft()

    def _start_in_flight(self, uid: str) -> None:
        """Track events for the pod from now on. ``_in_flight`` stays ordered by its values (the
        event sequence only grows, and a pod popped again moves to the end), so its first value
        is the oldest in-flight pod's."""
        self._in_flight.pop(uid, None)
        self._in_flight[uid] = self._event_seq

    def in_flight_pods(self) -> list[QueuedPodInfo]:
        return list(self._in_flight_pods.values())

    # -- after a failed attempt -------------------------------------------------------------

    def add_unschedulable_if_not_present(self, q: QueuedPodInfo) -> str:
        """Put a pod whose attempt failed back; returns the queue it went to.

        ``q.unschedulable_plugins`` / ``q.pending_plugins`` must name the rejecting plugins
        (empty after an error). Events seen while it was in flight may send it straight back.
        """
        uid = q.uid
        if (
            uid in self._active
            or uid in self._backoff
            or uid in self._error_backoff
            or uid in self._unschedulable
        ):
            self.done(uid)
            return ""
        update = self._in_flight_updates.get(uid, q.pod)
        if uid in self._in_flight_updates and update is None:
            self.done(uid)  # deleted while in flight
            return ""
        updated = (
            update is not None
            and update is not q.pod
            and _scheduling_relevant(update) != _scheduling_relevant(q.pod)
        )
        if update is not None and update is not q.pod:
            q.pod_info = PodInfo(update, q.pod_info)
        q.timestamp = self.clock.monotonic()
        if q.unschedulable_plugins or q.pending_plugins:
            q.unschedulable_count += 1
        strategy = self._hint_for_in_flight(q)
        if updated:
            strategy = max(strategy, _AFTER_BACKOFF)
        self.done(uid)
        return self._requeue(q, strategy, SCHEDULE_ATTEMPT_FAILURE)

    def _hint_for_in_flight(self, q: QueuedPodInfo) -> int:
        if not (q.unschedulable_plugins or q.pending_plugins):
            return _AFTER_BACKOFF
        start = self._in_flight.get(q.uid, self._event_seq)
        best = _SKIP
        for seq, ev, old, new in self._events:
            if seq < start:
                continue
            best = max(best, self._worth_requeuing(q, ev, old, new))
            if best == _IMMEDIATELY:
                break
        return best

    def _requeue(self, q: QueuedPodInfo, strategy: int, event: str = "") -> str:
        if strategy == _SKIP:
            self._unschedulable[q.uid] = q
            return GATED if q.gated else UNSCHEDULABLE
        if q.last_error and self.is_backing_off(q):
            self._error_backoff.push(q)
            return BACKOFF
        if strategy == _AFTER_BACKOFF and self.is_backing_off(q):
            self._backoff.push(q)
            if self.pop_from_backoff:
                self._wakeup.set()
            return BACKOFF
        if self._move_to_active(q):
            return ACTIVE
        return GATED if q.gated else UNSCHEDULABLE

    # -- cluster events ---------------------------------------------------------------------

    def _record_event(self, events: Iterable[ClusterEvent], old: Any, new: Any) -> None:
        if not self._in_flight:
            return
        for ev in events:
            self._events.append((self._event_seq, ev, old, new))
            self._event_seq += 1

    def _interested(self, event: ClusterEvent) -> bool:
        """Whether any plugin of any profile registered an event matching ``event``."""
        key = (event.resource, int(event.action_type), event.label)
        hit = self._interest.get(key)
        if hit is None:
            hit = event.is_wildcard() or any(
                reg.event.match(event)
                for hints in self._hints.values()
                for regs in hints.values()
                for reg in regs
            )
            self._interest[key] = hit
        return hit

    def _plugin_interested(self, plugin: str, event: ClusterEvent) -> bool:
        """Whether ``plugin`` registered (in any profile) an event matching ``event``."""
        key = (plugin, event.resource, int(event.action_type), event.label)
        hit = self._interest_by_plugin.get(key)
        if hit is None:
            hit = event.is_wildcard() or any(
                reg.event.match(event) for hints in self._hints.values() for reg in hints.get(plugin, ())
            )
            self._interest_by_plugin[key] = hit
        return hit

    def _unconcerned(self, plugins: frozenset[str], event: ClusterEvent) -> bool:
        """Whether pods held at PreEnqueue by ``plugins`` stay held through ``event`` unless they
        are of the event pod's PodGroup: scheduling gates (only the pod's own update lifts them),
        no holding plugin registered the event, or each did with a ``same_pod_group`` hint."""
        key = (plugins, event.resource, int(event.action_type), event.label)
        hit = self._unconcerned_memo.get(key)
        if hit is None:
            hit = (
                SCHEDULING_GATES in plugins
                or not any(self._plugin_interested(p, event) for p in plugins)
                or all(self._same_group_only_for(p, event) for p in plugins)
            )
            self._unconcerned_memo[key] = hit
        return hit

    def _same_group_only_for(self, plugin: str, event: ClusterEvent) -> bool:
        """Whether every registration of ``plugin`` (in any profile) matching ``event`` is ``same_pod_group``."""
        key = (plugin, event.resource, int(event.action_type), event.label)
        hit = self._same_group_only.get(key)
        if hit is None:
            regs = [
                reg
                for hints in self._hints.values()
                for reg in hints.get(plugin, ())
                if reg.event.match(event)
            ]
            hit = bool(regs) and all(reg.same_pod_group for reg in regs)
            self._same_group_only[key] = hit
        return hit

    def _worth_requeuing(self, q: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any) -> int:
        """kube's ``isPodWorthRequeuing``."""
        rejectors = q.unschedulable_plugins | q.pending_plugins
        if not rejectors:
            return _AFTER_BACKOFF
        if event.is_wildcard():
            return _IMMEDIATELY if event.label == FORCE_ACTIVATE.label else _AFTER_BACKOFF
        name = (q.pod.get("spec") or {}).get("schedulerName") or "default-scheduler"
        hints = self._hints.get(name)
        if hints is None:
            return _AFTER_BACKOFF
        strategy = _SKIP
        for plugin in rejectors:
            for reg in hints.get(plugin, ()):
                if not reg.event.match(event):
                    continue
                hint = QueueingHint.QUEUE
                if reg.hint_fn is not None:
                    try:
                        hint = reg.hint_fn(q.pod, old, new)
                    except Exception:
                        hint = QueueingHint.QUEUE
                if hint == QueueingHint.SKIP:
                    continue
                if plugin in q.pending_plugins:
                    return _IMMEDIATELY
                strategy = _AFTER_BACKOFF
                if not q.pending_plugins:
                    return strategy
        return strategy

    def move_all_to_active_or_backoff(
        self,
        event: ClusterEvent,
        old: Any = None,
        new: Any = None,
        pre_check: Callable[[QueuedPodInfo], bool] | None = None,
    ) -> int:
        """A cluster event happened: requeue every parked pod it may help. Returns how many moved."""
        moved = 0
        if not self._unschedulable:
            # nothing parked (every bound pod of a plane that keeps up): no pod to ask, and what
            # kube does with its empty list is all there is left to do
            self.move_request_cycle = self.scheduling_cycle
            self._record_event([event], old, new)
            return 0
        if not self._interested(event):
            # nobody registered this event: only pods without rejecting plugins can move
            pool = [
                q for q in self._unschedulable.values() if not (q.unschedulable_plugins or q.pending_plugins)
            ]
        else:
            # held gangs of other PodGroups than the event pod's are left out group by group
            pool = self._unschedulable.candidates(
                _event_pod_group(event, old, new), lambda plugins: self._unconcerned(plugins, event), event
            )
        for q in pool:
            if q.gated and (
                SCHEDULING_GATES in q.unschedulable_plugins  # only the pod's own update lifts them
                or not any(self._plugin_interested(p, event) for p in q.unschedulable_plugins)
            ):
                continue  # held at PreEnqueue by a plugin this event cannot concern
            if pre_check is not None and not pre_check(q):
                continue
            strategy = self._worth_requeuing(q, event, old, new)
            if strategy == _SKIP:
                continue
            del self._unschedulable[q.uid]
            if strategy == _IMMEDIATELY:
                where = ACTIVE if self._move_to_active(q) else UNSCHEDULABLE
            else:
                where = self._requeue(q, strategy, event.name)
            if where in (ACTIVE, BACKOFF):
                moved += 1
        self.move_request_cycle = self.scheduling_cycle
        self._record_event([event], old, new)
        return moved

    def assigned_pod_added(self, pod: Obj) -> int:
        """A pod got bound: pods waiting on (anti-)affinity or spreading may now fit."""
        return self.move_all_to_active_or_backoff(ASSIGNED_POD_ADD, None, pod)

    def assigned_pod_updated(self, old: Obj, new: Obj) -> int:
        moved = 0
        for ev in pod_update_events(old, new):
            moved += self.move_all_to_active_or_backoff(ev, old, new)
        return moved

    # -- periodic flushes -------------------------------------------------------------------

    def flush_backoff_completed(self) -> int:
        """Move pods whose backoff ended to activeQ (kube runs this every second)."""
        moved = 0
        now = self.clock.monotonic()
        for heap in (self._backoff, self._error_backoff):
            while True:
                q = heap.peek()
                if q is None or self.backoff_expiry(q) > now:
                    break
                heap.pop()
                if self._move_to_active(q):
                    moved += 1
        return moved

    def flush_unschedulable_leftover(self) -> int:
        """Requeue pods parked longer than ``max_in_unschedulable`` (kube checks every 30s)."""
        now = self.clock.monotonic()
        moved = 0
        for q in list(self._unschedulable.values()):
            if now - q.timestamp <= self.max_in_unschedulable:
                continue
            if q.gated and SCHEDULING_GATES in q.unschedulable_plugins:
                continue
            del self._unschedulable[q.uid]
            if self._requeue(q, _AFTER_BACKOFF, UNSCHEDULABLE_TIMEOUT.name) in (ACTIVE, BACKOFF):
                moved += 1
        return moved

    def next_backoff_expiry(self) -> float | None:
        """When the earliest backing-off pod becomes ready (for a loop that sleeps until then)."""
        times = [self.backoff_expiry(q) for h in (self._backoff, self._error_backoff) if (q := h.peek())]
        return min(times) if times else None

    # -- nominated pods ---------------------------------------------------------------------

    def _add_nominated_from_status(self, pi: PodInfo) -> None:
        node = ((pi.pod.get("status") or {}).get("nominatedNodeName")) or ""
        if node and not pi.node_name:
            self.add_nominated_pod(pi, node)

    def _update_nominated(self, pi: PodInfo) -> None:
        node = ((pi.pod.get("status") or {}).get("nominatedNodeName")) or ""
        current = self._nominated_node_of.get(pi.uid)
        if node and not pi.node_name:
            self.add_nominated_pod(pi, node)
        elif current is not None and not node:
            self._remove_nominated(pi.uid)
        elif current is not None:
            self.add_nominated_pod(pi, current)  # refresh the PodInfo

    def add_nominated_pod(self, pi: PodInfo, node_name: str) -> None:
        self._remove_nominated(pi.uid)
        self._nominated_node_of[pi.uid] = node_name
        self._nominated_by_node.setdefault(node_name, []).append(pi)

    def _remove_nominated(self, uid: str) -> None:
        node = self._nominated_node_of.pop(uid, None)
        if node is None:
            return
        lst = [p for p in self._nominated_by_node.get(node, []) if p.uid != uid]
        if lst:
            self._nominated_by_node[node] = lst
        else:
            self._nominated_by_node.pop(node, None)

    def delete_nominated_pod_if_exists(self, pod: Obj) -> None:
        if self._nominated_node_of:  # (nothing to look up while no pod is nominated: every assume asks)
            self._remove_nominated(pod_uid(pod))

    def has_nominated_pods(self) -> bool:
        """Whether any pod is nominated to any node (lets Filter skip the nominated-pods pass)."""
        return bool(self._nominated_by_node)

    def nominated_node_names(self) -> Collection[str]:
        """The nodes some pod is nominated to (Filter runs the two-pass check only there)."""
        return self._nominated_by_node.keys()

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return list(self._nominated_by_node.get(node_name, ()))

    def nominated_node_of(self, uid: str) -> str | None:
        return self._nominated_node_of.get(uid)

    # -- introspection ----------------------------------------------------------------------

    def pending_pods(self) -> dict[str, int]:
        """Counts for ``scheduler_pending_pods{queue=active|backoff|unschedulable|gated}``."""
        gated = sum(1 for q in self._unschedulable.values() if q.gated)
        return {
            ACTIVE: len(self._active),
            BACKOFF: len(self._backoff) + len(self._error_backoff),
            UNSCHEDULABLE: len(self._unschedulable) - gated,
            GATED: gated,
        }

    def where(self, pod: Obj | str) -> str | None:
        """Which sub-queue holds the pod (by object or UID), or ``None``."""
        uid = pod if isinstance(pod, str) else pod_uid(pod)
        if uid in self._active:
            return ACTIVE
        if uid in self._backoff or uid in self._error_backoff:
            return BACKOFF
        q = self._unschedulable.get(uid)
        if q is not None:
            return GATED if q.gated else UNSCHEDULABLE
        return None

    def get(self, uid: str) -> QueuedPodInfo | None:
        return (
            self._active.get(uid)
            or self._backoff.get(uid)
            or self._error_backoff.get(uid)
            or self._unschedulable.get(uid)
            or self._in_flight_pods.get(uid)
        )

    def pending_pod_infos(self) -> list[QueuedPodInfo]:
        return (
            self._active.values()
            + self._backoff.values()
            + self._error_backoff.values()
            + list(self._unschedulable.values())
        )


def _held_by_plugin(q: QueuedPodInfo) -> bool:
    """Whether a PreEnqueue plugin holds ``q`` (its scheduling gates aside: the API server lifts
    and reports those, and only the pod's own update releases it from them)."""
    return q.gated and SCHEDULING_GATES not in q.unschedulable_plugins


def _event_pod_group(event: ClusterEvent, old: Any, new: Any) -> str:
    """The PodGroup key of a pod event's pod (``""``: not a pod event, or a pod of no group)."""
    if event.resource not in (POD, ASSIGNED_POD, UNSCHEDULED_POD):
        return ""
    obj = new if new is not None else old
    return pod_group_key(obj) if isinstance(obj, dict) else ""


def _scheduling_relevant(pod: Obj) -> tuple[Any, Any, Any, Any]:
    """The parts of a pod whose change may change its scheduling result (not status or rv).

    ``status.resourceClaimStatuses`` counts: the claim controller writing it is what lets a pod
    with template claims past DynamicResources' PreFilter (kube's plugin hints on that change).
    """
    meta = dict(pod.get("metadata") or {})
    for k in ("resourceVersion", "generation", "managedFields"):
        meta.pop(k, None)
    status = pod.get("status") or {}
    return meta, pod.get("spec"), status.get("resize"), status.get("resourceClaimStatuses")

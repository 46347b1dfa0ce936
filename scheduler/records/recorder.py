"""The :class:`Recorder`: the scheduler's cycles report to it; it writes ``SchedulingRecord`` objects.

One attempt is open at a time (the scheduling loop runs one cycle at a time): the scheduler opens
it (:meth:`Recorder.begin_pod`, :meth:`Recorder.begin_pod_group`), the framework and the
preemption plugins add to it through the hooks on ``Handle.records`` (:meth:`pod_cycle`,
:meth:`scored`, :meth:`raw_scores`, :meth:`preemption`, :meth:`group_preemption`), and the
outcome closes it (:meth:`scheduled`, :meth:`failed`, :meth:`pod_group_result`). A binding that
fails later adds an attempt of its own.

Inside a PodGroup cycle the per-pod hooks are ignored (the placements carry each failing pod's
node-by-node rejections instead), so a 1,000-pod gang does not make 1,000 score tables.

Closed attempts are kept per subject (the newest :attr:`RecordLimits.attempts_per_subject`) and
written by a background task that coalesces: a pod retried ten times while a write is in flight
is written once more, with its latest attempts. A pod scheduled on its first attempt (the bulk of
a burst) is written once no pod waits in the active queue, or after :data:`MAX_DEFER` seconds if
the pods still waiting will not push it out of the window: an API write costs about as much as a
scheduling cycle, so the burst goes first; everything else (failures, retries, preemptions,
PodGroup cycles) is written at once.

The records are a window of the :attr:`RecordLimits.subjects` most recently attempted subjects:
beyond it the least recently attempted one is dropped, its record deleted if it was written and
never written if it was not yet, so the API writes of a burst are bounded by the window, not by
the number of pods (a burst of 5,000 first-try successes writes 256 records, not 5,000).

Capture is cheap by design: on the scheduling loop an attempt keeps only references to what the
cycle computed anyway (the per-node Filter statuses, the score columns and totals, the feasible
nodes, the placement results, the preemption candidates) wrapped in :class:`_Lazy` fields; the
summaries (best nodes, rejections per plugin and reason, the rest's range, the time stamp) are
made when the record is first written, by the writer task, and then replace the references. This
relies on the cycle not changing those objects after it ends: the framework builds its score
columns, totals and feasible list anew every cycle, Filter statuses are only written during
Filter, and attributes that could be reassigned (the absent-nodes status, the PreFilter message)
are captured by value.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from apiserver import errors
from apiserver.client.interface import Client
from apiserver.meta import Clock, rfc3339
from scheduler.diagnosis import Diagnosis
from scheduler.records.api import API_VERSION, KIND, SCHEDULINGRECORDS, record_name
from scheduler.records.summary import (
    RecordLimits,
    candidate_summary,
    filter_summary,
    rejections_summary,
    score_summary,
    victims_summary,
)

log = logging.getLogger("gangplane.scheduler.records")

#: seconds a first-try success's record may wait for the queue to empty before it is written anyway
MAX_DEFER = 5.0
#: how often the writer looks again whether the queue has emptied
DEFER_POLL = 0.1

Obj = dict[str, Any]
POD_GROUP_API_VERSION = "scheduling.k8s.io/v1beta1"

__all__ = ["RecordLimits", "Recorder"]


class _Lazy:
    """A field of an attempt computed when the record is written: ``fn(*args)`` (None: no field)."""

    __slots__ = ("args", "fn")

    def __init__(self, fn: Callable[..., Any], *args: Any) -> None:
        self.fn = fn
        self.args = args


def _resolved(entry: Obj) -> Obj:
    """Replace the attempt's :class:`_Lazy` fields by their values, in place (their keys keep
    their place, so the record's field order is the capture order); a None value drops its key.
    Done once: the references to the cycle's objects are let go."""
    for key, value in list(entry.items()):
        if type(value) is _Lazy:
            out = value.fn(*value.args)
            if out is None:
                del entry[key]
            else:
                entry[key] = out
    return entry


def _filter_field(
    nts: Any, absent: Any, pre_filter_msg: str, num_nodes: int, limits: RecordLimits
) -> list[Obj] | None:
    return rejections_summary(nts, absent, pre_filter_msg, num_nodes, limits) or None


@dataclass
class _Subject:
    kind: str
    namespace: str
    name: str
    uid: str
    attempts: deque[Obj]
    total: int = 0

    def to_object(self) -> Obj:
        api_version = "v1" if self.kind == "Pod" else POD_GROUP_API_VERSION
        return {
            "apiVersion": API_VERSION,
            "kind": KIND,
            "metadata": {
                "name": record_name(self.kind, self.name),
                "namespace": self.namespace,
                "labels": {"scheduling.gangplane.dev/subject-kind": self.kind},
                "ownerReferences": [
                    {"apiVersion": api_version, "kind": self.kind, "name": self.name, "uid": self.uid}
                ],
            },
            "subject": {"kind": self.kind, "name": self.name, "uid": self.uid},
            "totalAttempts": self.total,
            "attempts": [_resolved(a) for a in self.attempts],
        }


@dataclass
class Recorder:
    """See the module docstring. ``client`` writes the records; ``clock`` stamps the attempts."""

    client: Client
    clock: Clock
    limits: RecordLimits = field(default_factory=RecordLimits)

    def __post_init__(self) -> None:
        self._subjects: OrderedDict[tuple[str, str], _Subject] = OrderedDict()
        self._current: Obj | None = None
        self._current_uid = ""
        self._group: Obj | None = None
        self._group_name = ""
        self._raw: dict[str, Any] = {}
        #: the array columns reported raw this cycle: plugin -> (the plugin's array, our copy)
        self._views: dict[str, tuple[Any, Any]] = {}
        self._scores: _Lazy | None = None
        #: subjects to write at once (anything but a first-try success) and when the queue is idle
        self._urgent: dict[tuple[str, str], None] = {}
        self._deferred: dict[tuple[str, str], None] = {}
        self._deferred_since = 0.0
        self._deletes: set[tuple[str, str]] = set()
        #: how many pods wait to be scheduled (the active queue; set by the scheduler)
        self.busy: Callable[[], int] = lambda: 0
        self._created: set[tuple[str, str]] = set()
        self._wake: asyncio.Event | None = None
        #: the writer's pending look at the deferred records (None: it waits to be woken)
        self._poll: asyncio.TimerHandle | None = None
        self._lock: asyncio.Lock | None = None
        self._task: asyncio.Task[None] | None = None
        #: API writes made (creates, updates, deletes), for the overhead measurement
        self.writes = 0
        #: subjects dropped from the window (:attr:`RecordLimits.subjects`), written or not
        self.evicted = 0

    # -- opening an attempt ---------------------------------------------------------------

    def begin_pod(self, profile: str, pod: Obj, attempt: int) -> None:
        """A pod-by-pod cycle starts for ``pod``."""
        self._current = {
            "attempt": attempt,
            "time": _Lazy(rfc3339, self.clock.now()),
            "profile": profile,
            "cycle": "Pod",
        }
        self._current_uid = (pod.get("metadata") or {}).get("uid", "")
        self._group = None
        self._raw = {}
        self._views = {}
        self._scores = None

    def begin_pod_group(self, profile: str, namespace: str, name: str, pods: int) -> None:
        """A PodGroup cycle starts: per-pod hooks are ignored until it ends."""
        self._current = None
        self._group_name = name
        self._group = {
            "attempt": 0,
            "time": _Lazy(rfc3339, self.clock.now()),
            "profile": profile,
            "cycle": "PodGroup",
            "pods": pods,
        }

    # -- framework and plugin hooks (Handle.records) -----------------------------------------

    def keeps_scores(self) -> bool:
        """Whether the open attempt keeps the cycle's scores (a pod-by-pod cycle; not the per-pod
        cycles inside a PodGroup cycle): the framework then reports raw columns to :meth:`raw_scores`."""
        return self._current is not None

    def raw_scores(self, plugin: str, values: Any) -> None:
        """A Score plugin's raw column (before NormalizeScore and weight): a list, or from the
        array path an int64 numpy array or an ``int`` (every node alike)."""
        if self._current is not None:
            if type(values) is not list and type(values) is not int:
                # a numpy column may be a view of one the plugin keeps and updates: copied
                # (a memcpy of 8 bytes per node), as only lists are made anew every cycle
                copy = values.copy()
                self._views[plugin] = (values, copy)
                values = copy
            self._raw[plugin] = values

    def scored(
        self,
        pod_info: Any,
        nodes: Sequence[Any],
        columns: Mapping[str, Any],
        weights: Mapping[str, int],
        totals: Any,
    ) -> None:
        """``totals`` leave out the plugins that score every node alike (their ``int`` columns).

        Columns and totals are lists, or from the array path int64 numpy arrays (the totals are
        then a new array; a column may be a plugin's view, so it is taken as the copy
        :meth:`raw_scores` made of it, or copied); the summary reads either alike."""
        if self._current is not None:
            # references only: the framework makes these lists anew each cycle and changes them no more
            views = self._views
            if views:
                columns = {k: _own(c, views.get(k)) for k, c in columns.items()}
                self._views = {}
            self._scores = _Lazy(score_summary, nodes, columns, self._raw, weights, totals, self.limits)

    def pod_cycle(
        self, pod_info: Any, diagnosis: Diagnosis, num_nodes: int, feasible: int, host: str
    ) -> None:
        """The framework's Filter/Score verdict for the open pod attempt."""
        cur = self._current
        if cur is None or pod_info.uid != self._current_uid:
            return
        rejected = len(diagnosis.node_to_status)
        cur["nodes"] = {"total": num_nodes, "feasible": feasible, "rejected": rejected}
        if feasible and num_nodes > feasible + rejected:
            # enough nodes fit before them (numFeasibleNodesToFind), or a Filter plugin's hint had
            # already ruled them out (gangplane filters those only when nothing else fits)
            cur["nodes"]["notFiltered"] = num_nodes - feasible - rejected
        if rejected or not feasible:
            nts = diagnosis.node_to_status
            cur["filter"] = _Lazy(
                _filter_field, nts, nts.absent_status, diagnosis.pre_filter_msg, num_nodes, self.limits
            )
        if self._scores is not None and host:
            cur["score"] = self._scores
        if host:
            cur["selectedNode"] = host
        self._raw = {}
        self._views = {}
        self._scores = None

    def preemption(
        self, pod_info: Any, candidates: Sequence[Any], chosen: Any | None, message: str = ""
    ) -> None:
        """DefaultPreemption's decision: the candidates it found, the one it chose and its victims."""
        cur = self._current
        if cur is None or pod_info.uid != self._current_uid:
            return
        cur["preemption"] = _Lazy(self._preemption, list(candidates), chosen, pod_info.priority, message)

    def _preemption(self, candidates: Sequence[Any], chosen: Any | None, priority: int, message: str) -> Obj:
        entry: Obj = {"candidatesFound": len(candidates)}
        ranked = sorted(candidates, key=lambda c: (c.num_pdb_violations, -len(c.victims), c.name))
        entry["candidates"] = [candidate_summary(c) for c in ranked[: self.limits.candidates]]
        if chosen is not None:
            entry["chosen"] = chosen.name
            entry["why"] = (
                "fewest PodDisruptionBudget violations, then the lowest highest-victim priority, "
                "the lowest sum of priorities, the fewest victims, the latest start (kube's order)"
            )
            entry["victims"] = victims_summary(chosen, priority)
        if message:
            entry["message"] = message
        return entry

    def group_preemption(self, victims: Sequence[Any], priority: int, message: str = "") -> None:
        """WorkloadAwarePreemption's decision for the open PodGroup attempt."""
        if self._group is None:
            return
        self._group["preemption"] = _Lazy(self._group_preemption, list(victims), priority, message)

    def _group_preemption(self, victims: Sequence[Any], priority: int, message: str) -> Obj:
        listed = [
            {
                "pods": [p.key for p in v.pods],
                "priority": v.priority,
                "reason": f"priority {v.priority} < the PodGroup's {priority}"
                + (f"; PodGroup {v.group} goes whole (disruptionMode: all)" if v.group else ""),
            }
            for v in victims
        ]
        entry: Obj = {"victims": listed[: self.limits.placements], "victimUnits": len(listed)}
        if message:
            entry["message"] = message
        return entry

    # -- closing an attempt -------------------------------------------------------------------

    def scheduled(self, pod: Obj, profile: str, host: str, attempt: int, via_group: str = "") -> None:
        """The pod is assumed on ``host`` and goes to binding."""
        entry = self._take(pod, profile, attempt, via_group)
        entry["result"] = "Scheduled"
        entry["selectedNode"] = host
        self._store_pod(pod, entry)

    def failed(
        self,
        pod: Obj,
        profile: str,
        attempt: int,
        result: str,
        message: str,
        nominated: str | None = None,
        via_group: str = "",
    ) -> None:
        """The attempt ended Unschedulable or in an Error (or the binding failed afterwards)."""
        entry = self._take(pod, profile, attempt, via_group)
        entry["result"] = result
        entry["message"] = message
        if nominated is not None:
            entry["nominatedNode"] = nominated
        self._store_pod(pod, entry)

    def pod_group_result(
        self,
        pod_group: Obj,
        result: Any,
        nominations: Mapping[str, str],
        waiting_on_preemption: bool,
        attempt: int,
    ) -> None:
        """The PodGroup cycle's outcome: every placement considered and why it was dropped."""
        entry = self._group or {"time": _Lazy(rfc3339, self.clock.now()), "cycle": "PodGroup"}
        self._group = None
        entry["attempt"] = attempt
        winner = result.placement if result.success else None
        evaluated, skipped = list(result.evaluated), list(result.skipped)
        decided = list(getattr(result, "decided", ()))
        considered = len(evaluated) + len(skipped) + len(decided)
        entry["placements"] = _Lazy(self._placements, evaluated, skipped, winner, decided)
        entry["placementsConsidered"] = considered
        entry["placementsTotal"] = result.num_placements or considered
        if winner is not None:
            entry["result"] = "Scheduled"
            entry["selectedPlacement"] = winner.placement.name or "(cluster)"
            entry["assignments"] = _Lazy(_assignments, winner.assignments)
        else:
            entry["result"] = "WaitingOnPreemption" if waiting_on_preemption else "Unschedulable"
            entry["message"] = _Lazy(result.status.message) if result.status is not None else ""
        if nominations:
            entry["nominations"] = dict(nominations)
        meta = pod_group.get("metadata") or {}
        self._store("PodGroup", meta.get("namespace", ""), meta.get("name", ""), meta.get("uid", ""), entry)

    # -- internals ------------------------------------------------------------------------------

    def _placements(
        self, evaluated: Sequence[Any], skipped: Sequence[Any], winner: Any, decided: Sequence[Any] = ()
    ) -> list[Obj]:
        """The listed placements of a PodGroup attempt (made when the record is written)."""
        placements: list[Obj] = []
        for r in evaluated:
            placements.append(self._placement(r, winner))
        for d in decided:
            # feasible by capacity, scored from it, and no better than the chosen (placement_certain)
            placements.append(
                {
                    "name": d.placement.name or "(cluster)",
                    "nodes": len(d.placement.node_names) if d.placement.node_names is not None else None,
                    "podsFit": d.fit,
                    "score": d.score,
                    "outcome": "Dropped",
                    "why": f"score {d.score} (computed from the domain's free capacity; no Filter was run)"
                    f" not above the chosen placement's {winner.score if winner is not None else d.score}",
                }
            )
        for p in skipped:
            placements.append(
                {
                    "name": p.name or "(cluster)",
                    "nodes": len(p.node_names) if p.node_names is not None else None,
                    "outcome": "Skipped",
                    "why": "the domain's free capacity cannot hold the pods (no Filter was run)",
                }
            )
        return [{k: v for k, v in pl.items() if v is not None} for pl in placements[: self.limits.placements]]

    def _placement(self, r: Any, winner: Any) -> Obj:
        fitting = [a for a in r.assignments if a.node_name]
        out: Obj = {
            "name": r.placement.name or "(cluster)",
            "nodes": len(r.placement.node_names) if r.placement.node_names is not None else None,
            "podsFit": len(fitting),
            "podsTried": len(r.assignments),
        }
        if r.feasible:
            out["score"] = r.score
            if winner is not None and r is winner:
                out["outcome"] = "Chosen"
            elif winner is not None:
                out["outcome"] = "Dropped"
                out["why"] = f"score {r.score} below the chosen placement's {winner.score}"
            else:
                out["outcome"] = "Feasible"
        else:
            out["outcome"] = "Dropped"
            out["why"] = r.status.message() if r.status is not None else "infeasible"
            failing = [a for a in r.assignments if not a.node_name and a.diagnosis is not None]
            if failing:
                a = failing[0]
                num = len(r.placement.node_names) if r.placement.node_names is not None else None
                out["firstUnplacedPod"] = {
                    "pod": a.pod_info.key,
                    "message": a.message,
                    "filter": filter_summary(
                        a.diagnosis, num if num is not None else _count(a.diagnosis), self.limits
                    ),
                }
        return out

    def _take(self, pod: Obj, profile: str, attempt: int, via_group: str) -> Obj:
        uid = (pod.get("metadata") or {}).get("uid", "")
        if self._current is not None and uid == self._current_uid:
            entry = self._current
            self._current = None
            self._current_uid = ""
            return entry
        entry = {"attempt": attempt, "time": _Lazy(rfc3339, self.clock.now()), "profile": profile}
        if not via_group and self._group is not None:
            via_group = self._group_name
        entry["cycle"] = "PodGroup" if via_group else "Binding"
        if via_group:
            entry["podGroup"] = via_group
        return entry

    def _store_pod(self, pod: Obj, entry: Obj) -> None:
        meta = pod.get("metadata") or {}
        self._store("Pod", meta.get("namespace", ""), meta.get("name", ""), meta.get("uid", ""), entry)

    def _store(self, kind: str, namespace: str, name: str, uid: str, entry: Obj) -> None:
        key = (namespace, record_name(kind, name))
        subject = self._subjects.get(key)
        if subject is None or subject.uid != uid:
            subject = _Subject(kind, namespace, name, uid, deque(maxlen=self.limits.attempts_per_subject))
            self._subjects[key] = subject
        self._subjects.move_to_end(key)
        subject.total += 1
        subject.attempts.append(entry)
        self._deletes.discard(key)
        if (
            subject.total == 1
            and kind == "Pod"
            and entry.get("result") == "Scheduled"
            and key not in self._urgent
        ):
            # a first-try success: written once the scheduling burst is over (see _writer)
            if not self._deferred:
                self._deferred_since = self.clock.monotonic()
            self._deferred[key] = None
            # the writer looks again within DEFER_POLL anyway: waking it now, once per scheduled
            # pod of a burst, would cost the loop a task step per cycle for nothing
            wake = self._poll is None
        else:
            self._deferred.pop(key, None)
            self._urgent[key] = None
            wake = True
        while len(self._subjects) > self.limits.subjects:
            self._evict()
        if wake:
            self._kick()

    def _evict(self) -> None:
        """Drop the least recently attempted subject: a record that was written is deleted; one
        that never was (a deferred first-try success, the bulk of a burst) costs no API call at all,
        so a burst of any size writes about :attr:`RecordLimits.subjects` records per flush.

        This is the only way a subject leaves: not when its pod leaves the scheduler's view. The
        scheduler's informer reports a pod that finished (Succeeded/Failed) as deleted, with the
        last state it saw (as kube's watch cache does), and a finished pod keeps its record, which
        must count against the window for the window to bound the records kept. A deleted pod's or
        PodGroup's record is removed by the garbage collector; its entry costs at most one DELETE
        (answered NotFound) when it is pushed out. Memory is bounded by the window either way."""
        old_key, _ = self._subjects.popitem(last=False)
        self._urgent.pop(old_key, None)
        self._deferred.pop(old_key, None)
        if old_key in self._created:
            self._deletes.add(old_key)
        self.evicted += 1

    def _kick(self) -> None:
        if self._wake is None:
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                return  # no loop (a bare framework in a test): the records stay in memory
            self._wake = asyncio.Event()
            self._task = asyncio.create_task(self._writer(), name="scheduling-records-writer")
        self._wake.set()

    def record(self, namespace: str, kind: str, name: str) -> Obj | None:
        """The record as it will be (or was) written; None if the subject is unknown."""
        subject = self._subjects.get((namespace, record_name(kind, name)))
        return subject.to_object() if subject is not None else None

    async def _writer(self) -> None:
        """Write the urgent records at once; the deferred ones when no pod waits in the active
        queue (or, once the oldest has waited :data:`MAX_DEFER` seconds, those the pods still
        waiting will not push out of the window: :meth:`_due`), so that a burst of pods is
        scheduled first and recorded right after."""
        assert self._wake is not None
        loop = asyncio.get_running_loop()
        while True:
            await self._wake.wait()
            self._wake.clear()
            await self._write_keys(self._take_keys(self._urgent))
            if not self._deferred:
                await self._write_deletes()
                continue
            waiting = self.busy()
            keys = self._due(waiting)
            if keys:
                await self._write_keys(keys)
                await self._write_deletes()
            if self._deferred and waiting and self._poll is None:
                self._poll = loop.call_later(DEFER_POLL, self._polled)

    def _due(self, waiting: int) -> list[tuple[str, str]]:
        """The deferred records to write now (taken off the deferred set): all of them once no
        pod waits; while pods wait, none before :data:`MAX_DEFER`, and after it only those that
        will still be in the window when the pods waiting now have been attempted. Each of those
        pods may push the least recently attempted subject out, so the oldest ``waiting`` of the
        window would be written only to be deleted (a create and a delete for nothing): a burst
        larger than the window is recorded at its tail. Failures are written at once anyway."""
        if not waiting:
            return self._take_keys(self._deferred)
        if self.clock.monotonic() - self._deferred_since < MAX_DEFER:
            return []
        doomed = set(itertools.islice(self._subjects, waiting))
        keys = [k for k in self._deferred if k not in doomed]
        for k in keys:
            del self._deferred[k]
        return keys

    def _polled(self) -> None:
        self._poll = None
        if self._wake is not None:
            self._wake.set()

    @staticmethod
    def _take_keys(keys: dict[tuple[str, str], None]) -> list[tuple[str, str]]:
        out = list(keys)
        keys.clear()
        return out

    async def flush(self) -> None:
        """Write everything pending now, deferred records included (tests, benchmarks, stop),
        after the writer's batch in flight."""
        await self._write_keys([])
        while self._urgent or self._deferred or self._deletes:
            await self._write_keys(self._take_keys(self._urgent) + self._take_keys(self._deferred))
            await self._write_deletes()

    async def _write_deletes(self) -> None:
        deletes, self._deletes = self._deletes, set()
        for ns, name in deletes:
            self._created.discard((ns, name))
            with contextlib.suppress(errors.StatusError):
                self.writes += 1
                await self.client.delete(SCHEDULINGRECORDS, name, ns)

    async def _write_keys(self, keys: list[tuple[str, str]]) -> None:
        """Write these subjects' records; one batch at a time (``flush`` waits for the writer's)."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            await self._write_batch(keys)

    async def _write_batch(self, keys: list[tuple[str, str]]) -> None:
        for key in keys:
            subject = self._subjects.get(key)
            if subject is None:
                continue  # evicted meanwhile, before it was written: nothing to write or delete
            try:
                await self._write(key, subject.to_object())
            except errors.StatusError as e:
                log.debug("scheduling record %s/%s not written: %s", key[0], key[1], e.message)
            except Exception:  # a broken write must not stop the writer
                log.exception("scheduling record %s/%s not written", *key)
            if key in self._created and key not in self._subjects:
                # evicted while its write was in flight: it was not known to be written then
                self._deletes.add(key)

    async def _write(self, key: tuple[str, str], obj: Obj) -> None:
        ns = key[0]
        self.writes += 1
        if key in self._created:
            try:
                await self.client.update(SCHEDULINGRECORDS, obj, ns)
                return
            except errors.StatusError as e:
                if e.code != 404:
                    raise
        try:
            await self.client.create(SCHEDULINGRECORDS, obj, ns)
        except errors.StatusError as e:
            if e.code != 409:
                raise
            self.writes += 1
            await self.client.update(SCHEDULINGRECORDS, obj, ns)
        self._created.add(key)

    async def stop(self) -> None:
        """Write what is pending, then stop the writer."""
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.flush(), 5)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        self._task = None
        self._wake = None
        if self._poll is not None:
            self._poll.cancel()
            self._poll = None


def _own(column: Any, view: tuple[Any, Any] | None) -> Any:
    """A score column the record may keep past its cycle: a list or an ``int`` as it is; a numpy
    column as the copy made of the same array by :meth:`Recorder.raw_scores` (weight 1), or copied
    (a weighted column is a new array, but nothing promises that)."""
    if type(column) is list or type(column) is int:
        return column
    if view is not None and view[0] is column:
        return view[1]
    return column.copy()


def _assignments(assignments: Sequence[Any]) -> Obj:
    return {a.pod_info.key: a.node_name for a in assignments if a.node_name}


def _count(diagnosis: Diagnosis) -> int:
    return len(diagnosis.node_to_status)

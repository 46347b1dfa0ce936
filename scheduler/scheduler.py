"""The running kube-scheduler: informers, cache, queue and profiles wired into ``scheduleOne``.

:class:`Scheduler` is a control-plane component (``name = "scheduler"``). On :meth:`start` it
lists and watches pods (non-terminal only, as kube's pod informer does: a pod turning
Succeeded/Failed is seen as deleted), nodes, namespaces, PodDisruptionBudgets, Services,
ReplicaSets and StatefulSets, waits for the caches to sync, and then runs

* the **scheduling loop**: pop a pod, run one profile's framework over a fresh snapshot
  (PreFilter → Filter → PostFilter/preemption on failure → Score), assume the pod in the cache,
  Reserve and Permit, then hand it to a **binding task** (WaitOnPermit → PreBind → Bind →
  PostBind) and go on with the next pod while the bind is in flight, like kube's goroutine;
* the **failure handler** (kube's ``handleSchedulingFailure``): back to the queue with the
  rejecting plugins, nomination update, a ``FailedScheduling`` event and a
  ``PodScheduled=False`` condition patched only when it changes;
* the **periodic work**: backoff flush every second, unschedulable-leftover flush every 30
  seconds, the ``scheduler_pending_pods`` gauge, expiry of assumed pods.

Profiles are chosen by ``spec.schedulerName``; pods for any other scheduler are ignored (but
their bound pods still count on the nodes).

PodGroups (``GenericWorkload``): a PodGroup informer feeds the cache (and
``Handle.get_pod_group``), the cache tracks each group's members, and a popped member of a
gang - or of a basic group with a topology constraint - goes through
:meth:`~scheduler.schedule_one_podgroup.PodGroupCycle.schedule_one_podgroup` instead of the
pod-by-pod cycle. With the gate off PodGroups are not watched and every pod is scheduled on
its own (the KEP's degraded-but-safe skew case).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
import weakref
from collections.abc import Coroutine, Iterable
from typing import Any

from prometheus_client import CollectorRegistry

from apiserver import errors, loops
from apiserver.api.types import Obj
from apiserver.client.events import NORMAL, WARNING, EventRecorder, object_reference
from apiserver.client.informer import Informer, InformerFactory
from apiserver.client.interface import (
    DEVICECLASSES,
    NAMESPACES,
    NODES,
    PDBS,
    PODGROUPS,
    PODS,
    REPLICASETS,
    RESOURCECLAIMS,
    RESOURCESLICES,
    SERVICES,
    STATEFULSETS,
    Client,
)
from apiserver.meta import Clock, rfc3339
from featuregates import (
    GENERIC_WORKLOAD,
    POD_GROUP_RUNTIME_SATISFACTION,
    SCHEDULER_PRE_ENQUEUE_POD_STATUS,
    TOPOLOGY_AWARE_WORKLOAD_SCHEDULING,
    FeatureGate,
)
from scheduler import metrics as m
from scheduler import schedule_one
from scheduler.cache import Cache, CacheError, Snapshot
from scheduler.cycle_turns import CycleTurns
from scheduler.defaults import default_profile, default_registry
from scheduler.diagnosis import Diagnosis, FitError, NodeToStatus, NoNodesAvailableError
from scheduler.events import (
    ASSIGNED_POD_DELETE,
    DEVICECLASS,
    NODE_ADD,
    NODE_DELETE,
    RESOURCECLAIM,
    RESOURCESLICE,
    ActionType,
    ClusterEvent,
    node_update_events,
)
from scheduler.framework import (
    DEFAULT_SCHEDULER_NAME,
    NOMINATING_OVERRIDE,
    CycleState,
    Framework,
    Handle,
    PluginFactory,
    Profile,
)
from scheduler.interfaces import CLEAR_NOMINATION, Nominating
from scheduler.metrics import SchedulerMetrics
from scheduler.nodeinfo import PodInfo
from scheduler.plugins.pod_topology_spread_defaults import DefaultSelectors
from scheduler.podgroup_satisfaction import PodGroupSatisfaction
from scheduler.podgroups import group_key_of, min_count, pod_group_name
from scheduler.podstatus import (
    POD_SCHEDULED,
    REASON_SCHEDULER_ERROR,
    REASON_UNSCHEDULABLE,
    new_condition,
    patch_pod_status,
)
from scheduler.preenqueue_status import REASON_NOT_READY_FOR_SCHEDULING, HeldPodReports
from scheduler.prime import prime
from scheduler.queue import ACTIVE as ACTIVE_QUEUE
from scheduler.queue import (
    DEFAULT_POD_INITIAL_BACKOFF,
    DEFAULT_POD_MAX_BACKOFF,
    QueuedPodInfo,
    SchedulingQueue,
)
from scheduler.records import Recorder, RecordLimits
from scheduler.schedule_one import SchedulingError
from scheduler.schedule_one_podgroup import PodGroupCycle
from scheduler.status import Code, Status

log = logging.getLogger("gangplane.scheduler")

#: kube's pod informer field selector: terminal pods are not the scheduler's business.
NON_TERMINAL_PODS = "status.phase!=Succeeded,status.phase!=Failed"
#: ``source.component`` / ``reportingController`` of the scheduler's events.
EVENT_COMPONENT = DEFAULT_SCHEDULER_NAME
BACKOFF_FLUSH_PERIOD = 1.0
LEFTOVER_FLUSH_PERIOD = 30.0
#: How long :meth:`Scheduler.stop` lets in-flight bindings finish before cancelling them.
STOP_GRACE = 5.0

_METRICS: weakref.WeakKeyDictionary[CollectorRegistry, SchedulerMetrics] = weakref.WeakKeyDictionary()


def metrics_for(registry: CollectorRegistry) -> SchedulerMetrics:
    """The scheduler metrics registered on ``registry``, registered once (a restarted scheduler keeps counting)."""
    sm = _METRICS.get(registry)
    if sm is None:
        sm = SchedulerMetrics(registry)
        _METRICS[registry] = sm
    return sm


def assigned(pod: Obj) -> bool:
    return bool((pod.get("spec") or {}).get("nodeName"))


def scheduler_name_of(pod: Obj) -> str:
    return (pod.get("spec") or {}).get("schedulerName") or DEFAULT_SCHEDULER_NAME


def _rv(obj: Obj) -> str:
    return (obj.get("metadata") or {}).get("resourceVersion") or ""


class Scheduler:
    """kube-scheduler as a component; see the module docstring."""

    name = "scheduler"

    def __init__(
        self,
        client: Client,
        gates: FeatureGate | None = None,
        clock: Clock | None = None,
        metrics_registry: CollectorRegistry | None = None,
        profiles: Iterable[Profile] | None = None,
        *,
        registry: dict[str, PluginFactory] | None = None,
        seed: int | None = None,
        pod_groups_served: bool = True,
        pod_initial_backoff: float = DEFAULT_POD_INITIAL_BACKOFF,
        pod_max_backoff: float = DEFAULT_POD_MAX_BACKOFF,
        scheduling_records: bool | RecordLimits = False,
    ) -> None:
        """``registry`` adds (or overrides) plugin factories; ``seed`` fixes tie-breaking for tests;
        ``pod_initial_backoff`` / ``pod_max_backoff`` are the configuration's backoff seconds;
        ``scheduling_records`` (True, or the limits to use) keeps gangplane's scheduling records.

        ``pod_groups_served`` False (the API server does not serve PodGroups, e.g. its
        ``GenericWorkload`` is off in a skewed cluster) makes the scheduler ignore PodGroups
        as if its own gate were off, instead of waiting for an informer that can never sync.
        """
        self.client = client
        self.gates = gates if gates is not None else FeatureGate()
        self.clock = clock or Clock()
        self.metrics = metrics_for(metrics_registry if metrics_registry is not None else CollectorRegistry())
        self.informers = InformerFactory(client)
        self.pods: Informer = self.informers.informer(PODS, field_selector=NON_TERMINAL_PODS)
        self.nodes: Informer = self.informers.informer(NODES)
        self.namespaces: Informer = self.informers.informer(NAMESPACES)
        self.pdbs: Informer = self.informers.informer(PDBS)
        self.services: Informer = self.informers.informer(SERVICES)
        self.replicasets: Informer = self.informers.informer(REPLICASETS)
        self.statefulsets: Informer = self.informers.informer(STATEFULSETS)
        #: kube's default spreading selector per pod, kept per set until a Service/set changes
        self.default_selectors = DefaultSelectors(self.services, self.replicasets, self.statefulsets)
        self.pod_groups_enabled = self.gates.enabled(GENERIC_WORKLOAD) and pod_groups_served
        self.topology_enabled = self.gates.enabled(TOPOLOGY_AWARE_WORKLOAD_SCHEDULING)
        self.podgroups: Informer | None = (
            self.informers.informer(PODGROUPS) if self.pod_groups_enabled else None
        )
        # kube-scheduler records through client-go's tools/events, which has no aggregation or
        # spam filter (those are tools/record's): exact de-duplication only
        self.recorder = EventRecorder(client, EVENT_COMPONENT, clock=self.clock, correlate=False)
        #: KEP-6413's PodGroupSatisfied (gangplane's PodGroupRuntimeSatisfaction gate)
        self.satisfaction: PodGroupSatisfaction | None = None
        if self.podgroups is not None and self.gates.enabled(POD_GROUP_RUNTIME_SATISFACTION):
            self.satisfaction = PodGroupSatisfaction(client, self.pods, self.podgroups, self.clock)
        #: kube gives each profile its own event recorder: a pod's events name its scheduler
        self._profile_recorders: dict[str, EventRecorder] = {}
        self.cache = Cache(self.clock)
        self.snapshot = Snapshot()
        #: gangplane's scheduling records (None: off)
        self.records: Recorder | None = None
        if scheduling_records:
            limits = scheduling_records if isinstance(scheduling_records, RecordLimits) else RecordLimits()
            self.records = Recorder(client, self.clock, limits)

        plugin_registry = {**default_registry(), **(registry or {})}
        rng = random.Random(seed)
        self.frameworks: dict[str, Framework] = {}
        for profile in list(profiles) if profiles is not None else [default_profile()]:
            if profile.scheduler_name in self.frameworks:
                raise ValueError(f"duplicate profile for schedulerName {profile.scheduler_name!r}")
            handle = self._new_handle(profile.scheduler_name, random.Random(rng.random()))
            self.frameworks[profile.scheduler_name] = Framework(profile, handle, registry=plugin_registry)
        if not self.frameworks:
            raise ValueError("at least one scheduler profile is required")
        first = next(iter(self.frameworks.values()))
        self.queue = SchedulingQueue(
            first.queue_sort_less,
            self.clock,
            self.frameworks,
            initial_backoff=pod_initial_backoff,
            max_backoff=pod_max_backoff,
            sort_key=first.queue_sort_key(),
        )
        for fw in self.frameworks.values():
            fw.handle.nominator = self.queue
        if self.records is not None:
            # first-try successes are recorded once no pod waits to be scheduled
            self.records.busy = lambda: self.queue.pending_pods()[ACTIVE_QUEUE]

        self._loop_task: asyncio.Task[None] | None = None
        #: the loop the scheduler's cycles run on, kept by the first to start a binding task
        #: (:meth:`assume_and_start`)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._periodic_task: asyncio.Task[None] | None = None
        self._binding_tasks: set[asyncio.Task[None]] = set()
        self._stopping = False
        self.cycles = 0
        #: after how many cycles of one step the scheduling loop gives the event loop back
        #: (:mod:`scheduler.cycle_turns`; ``CycleTurns(1)``: after every cycle)
        self.cycle_turns = CycleTurns()
        #: when the current cycle began (``perf_counter``): after its pod was popped, so that a
        #: wait for a pod does not count as a long cycle
        self.cycle_began = 0.0
        #: KEP-5501: held pods whose wait is reported (None with the gate off)
        self.held_reports: HeldPodReports | None = (
            HeldPodReports() if self.gates.enabled(SCHEDULER_PRE_ENQUEUE_POD_STATUS) else None
        )
        self.pod_group_cycle = PodGroupCycle(self)

    # ------------------------------------------------------------------ wiring

    def _new_handle(self, scheduler_name: str, rng: random.Random) -> Handle:
        return Handle(
            scheduler_name=scheduler_name,
            client=self.client,
            clock=self.clock,
            rng=rng,
            metrics=self.metrics,
            gates=self.gates,
            namespace_labels=self._namespace_labels,
            list_pdbs=self.pdbs.list,
            default_spread_selector=self.default_selectors,
            get_pod_group=self.cache.get_pod_group if self.pod_groups_enabled else None,
            pod_group_state=self.cache.pod_group_state if self.pod_groups_enabled else None,
            record_event=self.record_event,
            informer_factory=self.informers,
            records=self.records,
        )

    def _namespace_labels(self, namespace: str) -> dict[str, str] | None:
        ns = self.namespaces.get_by_name("", namespace)
        if ns is None:
            return None
        return dict((ns.get("metadata") or {}).get("labels") or {})

    def record_event(
        self,
        regarding: Obj,
        etype: str,
        reason: str,
        action: str,
        note: str,
        related: Obj | None = None,
    ) -> None:
        """The framework's ``record_event`` (events.k8s.io shape) on top of the core/v1 recorder."""
        del action  # core/v1 Events have no action
        kind = regarding.get("kind") or "Pod"
        api_version = regarding.get("apiVersion") or "v1"
        rel = None
        if related:
            rel = object_reference(related, related.get("apiVersion") or "v1", related.get("kind") or "Pod")
        self._recorder_for(regarding).event_ref(
            object_reference(regarding, api_version, kind), etype, reason, note, rel
        )

    def _recorder_for(self, regarding: Obj) -> EventRecorder:
        """The recorder of the profile that schedules ``regarding`` (a pod naming one), else the default's."""
        name = scheduler_name_of(regarding) if (regarding.get("kind") or "Pod") == "Pod" else EVENT_COMPONENT
        if name == EVENT_COMPONENT or name not in self.frameworks:
            return self.recorder
        rec = self._profile_recorders.get(name)
        if rec is None:
            rec = self._profile_recorders[name] = EventRecorder(
                self.client, name, clock=self.clock, correlate=False
            )
        return rec

    def framework_for(self, pod: Obj) -> Framework | None:
        return self.frameworks.get(scheduler_name_of(pod))

    def responsible_for(self, pod: Obj) -> bool:
        return scheduler_name_of(pod) in self.frameworks

    # ------------------------------------------------------------------ informer handlers

    def _on_pod_add(self, pod: Obj) -> None:
        if assigned(pod):
            self.cache.add_pod(pod)
            self.queue.assigned_pod_added(pod)
        elif self.responsible_for(pod):
            self.cache.add_unscheduled_pod(pod)  # counted in its group before PreEnqueue runs
            self.queue.add(pod)

    def _on_pod_update(self, old: Obj, new: Obj) -> None:
        rv = _rv(old)
        if rv and rv == _rv(new):
            return  # a re-list delivering the same version
        was, now = assigned(old), assigned(new)
        if now and not was:
            if self.responsible_for(old):
                self.queue.delete(old)
            self.cache.add_pod(new)
            self.queue.assigned_pod_added(new)
        elif was and now:
            self.cache.update_pod(old, new)
            self.queue.assigned_pod_updated(old, new)
        elif not was and not now and self.responsible_for(new):
            if self.cache.is_assumed_pod(new):
                return  # being bound: the binding cycle owns it
            self.queue.update(old, new)
        elif was and not now:
            # cannot happen through the API (nodeName is immutable once set); be safe
            self.cache.remove_pod(old)
            if self.responsible_for(new):
                self.queue.add(new)

    def _on_pod_delete(self, pod: Obj) -> None:
        if assigned(pod):
            self.cache.remove_pod(pod)
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, pod, None)
            return
        if not self.responsible_for(pod):
            return
        self.cache.remove_unscheduled_pod(pod)
        self.queue.delete(pod)
        fw = self.framework_for(pod)
        uid = (pod.get("metadata") or {}).get("uid") or ""
        if fw is not None and uid and fw.reject_waiting_pod(uid, message="pod deleted"):
            # it was assumed and held at Permit: its resources are free again
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, pod, None)

    def _on_pod_group_add(self, pg: Obj) -> None:
        self.cache.add_pod_group(pg)
        self.queue.pod_group_changed(group_key_of(pg))
        self.pod_group_cycle.pod_group_added(pg)

    def _on_pod_group_update(self, old: Obj, new: Obj) -> None:
        self.cache.update_pod_group(new)
        # a lower minCount may let a held gang in, or make a failed one fit
        self.queue.pod_group_changed(group_key_of(new), requeue_rejected=min_count(new) < min_count(old))

    def _on_pod_group_delete(self, pg: Obj) -> None:
        self.cache.remove_pod_group(pg)

    def _on_node_add(self, node: Obj) -> None:
        self.cache.add_node(node)
        self.queue.move_all_to_active_or_backoff(NODE_ADD, None, node)

    def _on_node_update(self, old: Obj, new: Obj) -> None:
        self.cache.update_node(old, new)
        for ev in node_update_events(old, new):
            self.queue.move_all_to_active_or_backoff(ev, old, new)

    def _on_node_delete(self, node: Obj) -> None:
        self.cache.remove_node(node)
        self.queue.move_all_to_active_or_backoff(NODE_DELETE, node, None)

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Start the informers, wait for their caches, then start scheduling."""
        self._stopping = False
        self.pods.add_event_handler(self._on_pod_add, self._on_pod_update, self._on_pod_delete)
        self.nodes.add_event_handler(self._on_node_add, self._on_node_update, self._on_node_delete)
        if self.podgroups is not None:
            self.podgroups.add_event_handler(
                self._on_pod_group_add, self._on_pod_group_update, self._on_pod_group_delete
            )
        if self.satisfaction is not None:
            self.satisfaction.attach()
        self._requeue_on_plugin_informers()
        # Nodes and PodGroups first: pending pods then meet a full cluster and their groups,
        # instead of being held at PreEnqueue (and re-checked per node) while the caches fill.
        first = [self.nodes] + ([self.podgroups] if self.podgroups is not None else [])
        for inf in first:
            inf.start()
        await asyncio.gather(*(inf.wait_for_sync() for inf in first))
        self.informers.start()
        await self.informers.wait_for_sync()
        # the caches are whole now: a pod held while its siblings were still being listed (a
        # bound member later in name order) is judged again, not left to an event already past
        self.queue.reevaluate_held()
        # the first cycle's one-time work (snapshot copy, node table, numpy) done before any pod waits
        prime(self.cache, self.snapshot)
        self._loop_task = asyncio.create_task(self._run(), name="scheduler-loop")
        self._periodic_task = asyncio.create_task(self._periodic(), name="scheduler-periodic")
        if self.satisfaction is not None:
            self.satisfaction.start()

    def _requeue_on_plugin_informers(self) -> None:
        """Informers plugins opened (DynamicResources' claims, slices, classes) move parked pods on change."""
        resources = {RESOURCECLAIMS: RESOURCECLAIM, RESOURCESLICES: RESOURCESLICE, DEVICECLASSES: DEVICECLASS}
        move = self.queue.move_all_to_active_or_backoff
        for inf in self.informers.informers():
            res = resources.get(inf.gvr)
            if res is None:
                continue
            add, update, delete = (
                ClusterEvent(res, a) for a in (ActionType.ADD, ActionType.UPDATE_OTHER, ActionType.DELETE)
            )
            inf.add_event_handler(
                lambda obj, ev=add: move(ev, None, obj),
                lambda old, new, ev=update: move(ev, old, new),
                lambda obj, ev=delete: move(ev, obj, None),
            )

    async def stop(self) -> None:
        """Stop popping pods, let bindings in flight finish (briefly), stop the informers."""
        self._stopping = True
        self.queue.close()
        for task in (self._loop_task, self._periodic_task):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        self._loop_task = self._periodic_task = None
        if self.satisfaction is not None:
            await self.satisfaction.stop()
        for fw in self.frameworks.values():
            for uid in list(fw.waiting_pods):
                fw.reject_waiting_pod(uid, message="scheduler stopping")
        if self._binding_tasks:
            _, pending = await asyncio.wait(set(self._binding_tasks), timeout=STOP_GRACE)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)
            self._binding_tasks -= {t for t in self._binding_tasks if t.done()}  # cancelled before they ran
        await self._stop_informers()
        await self.recorder.stop()
        for rec in self._profile_recorders.values():
            await rec.stop()
        if self.records is not None:
            await self.records.stop()

    async def _stop_informers(self) -> None:
        """``InformerFactory.stop``, insisting: Python 3.11's ``asyncio.wait_for`` (used inside the
        watch) can swallow a cancel that races with an event, leaving an informer running."""
        stopping = asyncio.ensure_future(self.informers.stop())
        while True:
            done, _ = await asyncio.wait({stopping}, timeout=0.5)
            if done:
                return
            for inf in self.informers.informers():
                task = getattr(inf, "_task", None)
                if task is not None and not task.done():
                    task.cancel()

    async def wait_idle(self) -> None:
        """Wait until no binding is in flight (tests and benchmarks)."""
        while self._binding_tasks:
            tasks = set(self._binding_tasks)
            await asyncio.gather(*tasks, return_exceptions=True)
            self._binding_tasks -= {t for t in tasks if t.done()}  # cancelled before they ran

    async def _run(self) -> None:
        while not self._stopping:
            try:
                if not await self.schedule_one():
                    return
            except asyncio.CancelledError:
                raise
            except Exception:  # a bug in one cycle must not stop the scheduler
                log.exception("scheduling cycle failed")
            # let informers and binding tasks run between cycles: after the step's fourth
            # (scheduler.cycle_turns), or sooner if a cycle or the queue's wait gave the loop back,
            # and after a long cycle (a big gang's: its binding tasks run before the next search)
            if self.cycle_turns.due(time.perf_counter() - self.cycle_began):
                await asyncio.sleep(0)

    async def _periodic(self) -> None:
        ticks = 0
        leftover_every = max(1, round(LEFTOVER_FLUSH_PERIOD / BACKOFF_FLUSH_PERIOD))
        while not self._stopping:
            await asyncio.sleep(BACKOFF_FLUSH_PERIOD)
            ticks += 1
            try:
                self.queue.flush_backoff_completed()
                if ticks % leftover_every == 0:
                    self.queue.flush_unschedulable_leftover()
                self.cache.cleanup_assumed_pods()
                self._report_held_pods()
                self.metrics.set_pending(self.queue.pending_pods())
                if self.pod_groups_enabled:
                    self.metrics.set_pending_pod_groups(self.queue.pending_pod_groups())
            except Exception:
                log.exception("scheduler periodic work failed")

    def _report_held_pods(self) -> None:
        """KEP-5501: patch ``NotReadyForScheduling`` on pods held long enough, with an Event."""
        if self.held_reports is None:
            return
        held = [
            (q.uid, q.pod, q.gating_status.message())
            for q in self.queue.held_pods()
            if q.gating_status is not None
        ]
        for pod, message in self.held_reports.due(self.clock.monotonic(), held):
            self._spawn(self._report_held_pod(pod, message))

    async def _report_held_pod(self, pod: Obj, message: str) -> None:
        """One report that fell due. Written only if PreEnqueue still holds the pod with that
        message: many fall due at one tick (a big gang's members, created together), and by the
        time a task writes its report the gang may be complete and its members scheduled or
        rejected by a cycle; a late ``NotReadyForScheduling`` would then overwrite what the
        cycle wrote (KEP-5501: a pod released meanwhile reports nothing; kube's API dispatcher
        drops a queued patch the pod's next call supersedes)."""
        meta = pod.get("metadata") or {}
        if self.queue.held_message(meta.get("uid", "")) != message:
            return
        cached = self.pods.get_by_name(meta.get("namespace", ""), meta.get("name", ""))
        if cached is None or assigned(cached) or (cached.get("metadata") or {}).get("uid") != meta.get("uid"):
            return
        self.record_event(cached, NORMAL, REASON_NOT_READY_FOR_SCHEDULING, "Scheduling", message)
        gen = (cached.get("metadata") or {}).get("generation")
        cond = new_condition(
            POD_SCHEDULED, "False", REASON_NOT_READY_FOR_SCHEDULING, message, rfc3339(self.clock.now()), gen
        )
        try:
            await patch_pod_status(self.client, cached, cond)
        except errors.StatusError as e:
            if e.code != 404:
                log.warning(
                    "could not update pod %s/%s: %s", meta.get("namespace"), meta.get("name"), e.message
                )

    # ------------------------------------------------------------------ scheduleOne

    async def schedule_one(self) -> bool:
        """Schedule the next pod (waiting for one); False once the queue is closed.

        This is the dispatch point: a member of a gang (or of a topology-constrained basic
        group) goes to the PodGroup cycle, every other pod to :meth:`schedule_pod`.
        """
        qpi = await self.queue.pop()
        if qpi is None:
            return False
        self.cycle_began = time.perf_counter()
        self.cycles += 1
        pod = qpi.pod
        fw = self.framework_for(pod)
        if fw is None:
            self.queue.done(qpi.uid)
            return True
        if self.skip_pod_schedule(fw, qpi):
            self.queue.done(qpi.uid)
            return True
        pg = self.pod_group_cycle.wants_pod_group_cycle(pod) if pod_group_name(pod) else None
        if pg is None and self.pod_group_cycle.pod_group_gone(pod):
            # its PodGroup was deleted after PreEnqueue let it in: held again, silently
            self.queue.done(qpi.uid)
            self.queue.add(pod)
            return True
        # the cycle reads the snapshot until it says otherwise (Cache._confirm_in_place)
        self.cache.snapshot_in_use = True
        try:
            if pg is not None:
                await self.pod_group_cycle.schedule_one_podgroup(fw, qpi, pg)
            else:
                await self.schedule_pod(fw, qpi)
        finally:
            self.cache.snapshot_in_use = False
        return True

    def skip_pod_schedule(self, fw: Framework, qpi: QueuedPodInfo) -> bool:
        """kube's ``skipPodSchedule``: gone, being deleted, or already assumed."""
        pod = qpi.pod
        meta = pod.get("metadata") or {}
        current = self.pods.get_by_name(meta.get("namespace", ""), meta.get("name", ""))
        if current is None or (current.get("metadata") or {}).get("uid") != meta.get("uid"):
            return True
        if meta.get("deletionTimestamp"):
            self.record_event(
                pod,
                WARNING,
                "FailedScheduling",
                "Scheduling",
                f"skip schedule deleting pod: {meta.get('namespace', '')}/{meta.get('name', '')}",
            )
            return True
        return self.cache.is_assumed_pod(pod)

    async def schedule_pod(self, fw: Framework, qpi: QueuedPodInfo) -> None:
        """One pod's scheduling cycle; on success its binding cycle runs in a task of its own."""
        start = time.perf_counter()
        state = CycleState()
        pod_info = qpi.pod_info
        pod = qpi.pod
        self.cache.update_snapshot(self.snapshot)
        fw.handle.snapshot = self.snapshot
        if self.records is not None:
            self.records.begin_pod(fw.scheduler_name, pod, qpi.attempts)
        try:
            result = schedule_one.schedule_pod(fw, state, pod_info, self.snapshot)
        except FitError as e:
            nominating: Nominating | None = None
            if fw.post_filter_plugins:
                r, status = await fw.run_post_filter_plugins(state, pod_info, e.diagnosis.node_to_status)
                e.diagnosis.post_filter_msg = status.message()
                if status.code == Code.ERROR:
                    log.warning("PostFilter for pod %s failed: %s", pod_info.key, status.message())
                if r is not None:
                    nominating = Nominating(r.mode, r.nominated_node_name)
            await self.handle_failure(
                fw, qpi, Status(Code.UNSCHEDULABLE), e.message, nominating, start, e.diagnosis
            )
            return
        except NoNodesAvailableError as e:
            await self.handle_failure(
                fw, qpi, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE), str(e), CLEAR_NOMINATION, start
            )
            return
        except SchedulingError as e:
            log.warning("error selecting a node for pod %s: %s", pod_info.key, e)
            await self.handle_failure(fw, qpi, Status(Code.ERROR), str(e), CLEAR_NOMINATION, start)
            return
        if await self.assume_and_bind(fw, state, qpi, result.suggested_host, start):
            if self.records is not None:
                self.records.scheduled(pod, fw.scheduler_name, result.suggested_host, qpi.attempts)
            if pod_group_name(pod):
                await self.pod_group_cycle.pod_group_pod_bound(fw, pod)

    async def assume_and_bind(
        self,
        fw: Framework,
        state: CycleState,
        qpi: QueuedPodInfo,
        host: str,
        start: float | None = None,
        assumed: PodInfo | None = None,
    ) -> bool:
        """Assume the pod on ``host``, run Reserve and Permit, and start its binding cycle.

        Returns False when the pod went to the failure handler instead. Exposed for the
        PodGroup cycle, which places several pods at once (through :meth:`assume_and_start`).
        """
        failure = self.assume_and_start(fw, state, qpi, host, start, assumed)
        if failure is None:
            return True
        await failure
        return False

    def assume_and_start(
        self,
        fw: Framework,
        state: CycleState,
        qpi: QueuedPodInfo,
        host: str,
        start: float | None = None,
        assumed: PodInfo | None = None,
    ) -> Coroutine[Any, Any, None] | None:
        """:meth:`assume_and_bind` up to its first await: ``None`` once the binding task is
        started, else the pod's failure handling, for the caller to await at once (the same
        steps in the same order). Assume, Reserve and Permit never wait, so the PodGroup
        cycle's submit calls this for each of a gang's members without making a coroutine
        per member that would run to its end in one step. ``assumed``: see
        :meth:`~scheduler.cache.Cache.assume_pod`."""
        start = time.perf_counter() if start is None else start
        pod_info = qpi.pod_info
        pod = pod_info.pod
        try:
            assumed = self.cache.assume_pod(pod, host, pod_info, assumed)
        except CacheError as e:
            return self.handle_failure(fw, qpi, Status(Code.ERROR), str(e), CLEAR_NOMINATION, start)
        self.queue.delete_nominated_pod_if_exists(pod)
        s = fw.run_reserve_plugins_reserve(state, assumed, host)
        if s is not None and not s.is_success():
            fw.run_reserve_plugins_unreserve(state, assumed, host)
            self._forget(assumed)
            return self._cycle_rejection(fw, qpi, s, host, start)
        s = fw.run_permit_plugins(state, assumed, host)
        if s is not None and not s.is_success() and not s.is_wait():
            fw.run_reserve_plugins_unreserve(state, assumed, host)
            self._forget(assumed)
            return self._cycle_rejection(fw, qpi, s, host, start)
        # the binding cycle takes its task out of ``_binding_tasks`` itself, as its last step
        # (:meth:`_binding_cycle`): no done callback to schedule and run per bound pod
        # (the running loop's create_task: what asyncio.create_task calls, less its own frame;
        # the loop kept from the first cycle that got here, not asked for each time:
        # :mod:`apiserver.loops`)
        loop = self._loop = loops.running(self._loop)
        self._binding_tasks.add(
            loop.create_task(self._binding_cycle(fw, state, qpi, assumed, host, start, loop))
        )
        return None

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coro)
        self._binding_tasks.add(task)
        task.add_done_callback(self._binding_tasks.discard)

    def _forget(self, assumed: PodInfo) -> None:
        try:
            self.cache.forget_pod(assumed.pod)
        except CacheError as e:
            log.warning("scheduler cache ForgetPod failed: %s", e)

    async def _cycle_rejection(
        self, fw: Framework, qpi: QueuedPodInfo, s: Status, host: str, start: float
    ) -> None:
        """Reserve/Permit (or WaitOnPermit) said no: a one-node FitError, or an error."""
        if s.is_rejected():
            diag = Diagnosis(node_to_status=NodeToStatus({host: s}))
            diag.add_plugin_status(s)
            err = FitError(qpi.key, 1, diag)
            await self.handle_failure(fw, qpi, Status(s.code), err.message, CLEAR_NOMINATION, start, diag)
        else:
            await self.handle_failure(fw, qpi, Status(Code.ERROR), s.message(), CLEAR_NOMINATION, start)

    async def _binding_cycle(
        self,
        fw: Framework,
        state: CycleState,
        qpi: QueuedPodInfo,
        assumed: PodInfo,
        host: str,
        start: float,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        """The pod's binding cycle, run as its own task (kube's binding goroutine).

        The task leaves ``_binding_tasks`` when the cycle ends, however it ends (the
        ``finally``), rather than through a done callback: a 5,000-pod gang's bindings then
        schedule and run 5,000 callbacks fewer. A task cancelled before its first step never
        runs this; :meth:`wait_idle` and :meth:`stop` drop such a task themselves. ``loop``:
        the loop running the task (the caller had it), so that finding the task does not ask
        for the running loop again (in CPython 3.11 a ``getpid`` system call each time).

        A pod Permit did not park (no :class:`WaitingPod`: every plain pod, a gang's last
        member) skips WaitOnPermit's coroutine, which would answer None at once."""
        try:
            if assumed.uid in fw.waiting_pods:
                status = await fw.wait_on_permit(assumed)
                if status is not None and not status.is_success():
                    await self._binding_failure(fw, state, qpi, assumed, host, status, start)
                    return
            # past Permit the pod can no longer be "unschedulable": stop recording events for it
            self.queue.done(qpi.uid)
            # no PreBind plugin with work (a pod without claims): what the runner would answer
            status = (
                await fw.run_pre_bind_plugins(state, assumed, host) if fw.pre_bind_has_work(state) else None
            )
            if status is None or status.is_success():
                status = await fw.run_bind_plugins(state, assumed, host)
            self.cache.finish_binding(assumed.pod)
            if status is not None and not status.is_success():
                await self._binding_failure(fw, state, qpi, assumed, host, status, start)
                return
            self.record_event(
                assumed.pod,
                NORMAL,
                "Scheduled",
                "Binding",
                f"Successfully assigned {assumed.namespace}/{assumed.name} to {host}",
            )
            self.metrics.observe_attempt(m.SCHEDULED, fw.scheduler_name, time.perf_counter() - start)
            fw.run_post_bind_plugins(state, assumed, host)
        finally:
            self._binding_tasks.discard(asyncio.current_task(loop))  # type: ignore[arg-type]

    async def _binding_failure(
        self,
        fw: Framework,
        state: CycleState,
        qpi: QueuedPodInfo,
        assumed: PodInfo,
        host: str,
        status: Status,
        start: float,
    ) -> None:
        """kube's ``handleBindingCycleError``."""
        fw.run_reserve_plugins_unreserve(state, assumed, host)
        forgotten = True
        try:
            self.cache.forget_pod(assumed.pod)
        except CacheError as e:
            forgotten = False
            log.warning("scheduler cache ForgetPod failed: %s", e)
        if forgotten:
            if status.is_rejected():
                uid = assumed.uid
                self.queue.move_all_to_active_or_backoff(
                    ASSIGNED_POD_DELETE, assumed.pod, None, pre_check=lambda q: q.uid != uid
                )
            else:
                self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, assumed.pod, None)
        if not status.is_rejected():
            log.info("binding pod %s to %s failed: %s", assumed.key, host, status.message())
        await self._cycle_rejection(fw, qpi, status, host, start)

    # ------------------------------------------------------------------ failures

    async def handle_failure(
        self,
        fw: Framework,
        qpi: QueuedPodInfo,
        status: Status,
        message: str,
        nominating: Nominating | None,
        start: float,
        diagnosis: Diagnosis | None = None,
    ) -> None:
        """kube's ``handleSchedulingFailure``: requeue, nominate, record the event, patch the condition."""
        rejected = status.is_rejected()
        reason = REASON_UNSCHEDULABLE if rejected else REASON_SCHEDULER_ERROR
        self.metrics.observe_attempt(
            m.UNSCHEDULABLE if rejected else m.ERROR, fw.scheduler_name, time.perf_counter() - start
        )
        if diagnosis is not None:
            qpi.unschedulable_plugins = set(diagnosis.unschedulable_plugins)
            qpi.pending_plugins = set(diagnosis.pending_plugins)
        else:
            qpi.unschedulable_plugins = set()
            qpi.pending_plugins = set()
        qpi.last_error = not rejected
        pod = qpi.pod
        meta = pod.get("metadata") or {}
        cached = self.pods.get_by_name(meta.get("namespace", ""), meta.get("name", ""))
        if cached is not None and (cached.get("metadata") or {}).get("uid") != meta.get("uid"):
            cached = None  # a new pod of the same name
        if cached is None or assigned(cached):
            # gone, or bound behind our back: nothing to requeue
            self.queue.done(qpi.uid)
        else:
            qpi.pod_info = PodInfo(cached, qpi.pod_info)
            self.queue.add_unschedulable_if_not_present(qpi)
        self._nominate(qpi.pod_info, nominating, cached)
        if self.records is not None:
            nominated = None
            if nominating is not None and nominating.mode == NOMINATING_OVERRIDE:
                nominated = nominating.node_name
            self.records.failed(
                qpi.pod, fw.scheduler_name, qpi.attempts, reason if rejected else "Error", message, nominated
            )
        self.record_event(qpi.pod, WARNING, "FailedScheduling", "Scheduling", message)
        if cached is None:
            return
        gen = (cached.get("metadata") or {}).get("generation")
        cond = new_condition(POD_SCHEDULED, "False", reason, message, rfc3339(self.clock.now()), gen)
        kw: dict[str, Any] = {}
        if nominating is not None and nominating.mode == NOMINATING_OVERRIDE:
            kw["nominated_node_name"] = nominating.node_name or None
        try:
            await patch_pod_status(self.client, cached, cond, **kw)
        except errors.StatusError as e:
            if e.code != 404:
                log.warning(
                    "could not update pod %s/%s: %s", meta.get("namespace"), meta.get("name"), e.message
                )

    def _nominate(self, pod_info: PodInfo, nominating: Nominating | None, cached: Obj | None) -> None:
        """kube's ``AddNominatedPod``: Override names the node (``""`` clears), Noop keeps the pod's own."""
        self.queue.delete_nominated_pod_if_exists(pod_info.pod)
        if nominating is not None and nominating.mode == NOMINATING_OVERRIDE:
            node = nominating.node_name
        else:
            node = ((pod_info.pod.get("status") or {}).get("nominatedNodeName")) or ""
        if not node or cached is None or assigned(cached):
            return
        self.queue.add_nominated_pod(pod_info, node)

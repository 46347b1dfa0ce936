"""``schedule_one_podgroup``: the PodGroup scheduling cycle beside ``schedule_one`` (kube's
``schedule_one_podgroup.go``), composed into :class:`~scheduler.scheduler.Scheduler`.

When the queue pops a member of a gang, the cycle takes the group's other queued members out of
the queue too, orders them (priority, then first seen), takes **one snapshot**, and

1. validates the group as upstream does before anything else: every member (queued, assumed
   or bound) has the same ``schedulerName``, the PodGroup's priority and the same
   preemptionPolicy; otherwise every pod fails with the error and the PodGroup reads
   ``PodGroupInitiallyScheduled=False/SchedulerError``;
2. runs the :class:`~scheduler.podgroup_algorithm.PodGroupAlgorithm` (placements, per-pod
   Filter/Score into the snapshot only, PlacementFeasible, PlacementScore);
3. on failure runs the PodGroupPostFilter plugins once for the whole group (workload-aware
   preemption; PostFilter is never run per pod here);
4. submits the outcome. Success: every pod that fit is assumed in the cache, reserved and
   permitted (the gang's Permit opens once ``minCount`` are in) and bound in its own task;
   pods that did not fit go back to the queue with their own FitError; the PodGroup reads
   ``True/Scheduled`` (terminal). Failure: no pod is assumed or bound, each goes back to the
   queue (backoff, requeued by the events its rejecting plugins registered), a pod that fit by
   itself carries the group's message and one that did not its own FitError; the PodGroup reads
   ``False/Unschedulable`` with upstream's message, and a ``GangUnschedulable`` Warning event on
   the PodGroup says how far the best candidate got.

Basic groups keep pod-by-pod scheduling: each pod gets a cycle of its own, through this path only
when a topology constraint must keep it with the members already placed.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from apiserver.api.types import Obj
from apiserver.client.events import WARNING
from apiserver.meta import rfc3339
from scheduler import metrics as m
from scheduler.diagnosis import Diagnosis
from scheduler.framework import Framework
from scheduler.interfaces import (
    CLEAR_NOMINATION,
    NOMINATING_OVERRIDE,
    CycleState,
    Nominating,
    PodAssignment,
    PodGroupInfo,
    PodGroupPostFilterResult,
)
from scheduler.plugins.node_resources_fit import NAME as FIT_PLUGIN
from scheduler.podgroup_algorithm import PodGroupAlgorithm, PodGroupAlgorithmResult
from scheduler.podgroup_status import (
    REASON_SCHEDULED,
    REASON_SCHEDULER_ERROR,
    REASON_UNSCHEDULABLE,
    replacements_schedule_freely,
    update_pod_group_condition,
)
from scheduler.podgroups import PodGroupState, is_gang, min_count, pod_group_key, priority_of, topology_key
from scheduler.status import Code, Status

if TYPE_CHECKING:
    from scheduler.queue import QueuedPodInfo
    from scheduler.scheduler import Scheduler


log = logging.getLogger("gangplane.scheduler")

GANG_UNSCHEDULABLE = "GangUnschedulable"
POD_GROUP_API_VERSION = "scheduling.k8s.io/v1beta1"
DEFAULT_PREEMPTION_POLICY = "PreemptLowerPriority"
GANG_PLUGIN = "GangScheduling"


def _spec(pod: Obj) -> Obj:
    return pod.get("spec") or {}


def validate_group(group: PodGroupInfo, scheduled_pods: list[Obj]) -> str:
    """Upstream's ``validatePodGroup``: the error text, or ``""`` when the group is consistent."""
    pods = [pi.pod for pi in group.pods] + scheduled_pods
    if not pods:
        return ""
    first = pods[0]
    scheduler_name = _spec(first).get("schedulerName") or "default-scheduler"
    first_name = (first.get("metadata") or {}).get("name", "")
    policy = _spec(first).get("preemptionPolicy") or DEFAULT_PREEMPTION_POLICY
    root_priority = priority_of(group.pod_group)
    for pod in pods:
        name = (pod.get("metadata") or {}).get("name", "")
        sn = _spec(pod).get("schedulerName") or "default-scheduler"
        if sn != scheduler_name:
            return (
                "all pods in a pod group hierarchy should have the same .spec.schedulerName set, got: "
                f'"{sn}" ("{name}") and "{scheduler_name}" ("{first_name}")'
            )
        prio = int(_spec(pod).get("priority") or 0)
        if prio != root_priority:
            return (
                "all pods in a pod group hierarchy should have the same priority as the root pod group's "
                f'priority, got {prio} ("{name}") and {root_priority} ("{group.key}")'
            )
        pp = _spec(pod).get("preemptionPolicy") or DEFAULT_PREEMPTION_POLICY
        if pp != policy:
            return (
                "all pods in a pod group hierarchy should have the same preemption policy, got "
                f'{pp} ("{name}") and {policy} ("{first_name}")'
            )
    return ""


def gang_unschedulable_message(group: PodGroupInfo, result: PodGroupAlgorithmResult) -> str:
    """How far the best candidate got: ``best placement rack-2 fits 6 of 8; the other 2: …``."""
    best = result.best
    needed = min_count(group.pod_group) if is_gang(group.pod_group) else 1
    needed = max(needed, group.state.scheduled_count() + 1)
    if best is None:
        return result.status.message() if result.status else ""
    fits = group.state.scheduled_count() + len(best.fitting())
    reasons: list[str] = []
    for a in best.assignments:
        for r in a.reasons:
            if r not in reasons:
                reasons.append(r)
    if not reasons and result.status is not None:
        reasons = [result.status.message()]
    where = f"best placement {best.placement.name}" if result.topology else "the cluster"
    other = max(needed - fits, 0)
    return f"{where} fits {min(fits, needed)} of {needed}; the other {other}: {', '.join(reasons)}"


def _may_keep_winner(group: PodGroupInfo) -> bool:
    """Whether the search may leave the chosen placement's pods assumed in the snapshot
    (:meth:`PodGroupAlgorithm.run_async`'s ``keep_winner``): not for pods with resource claims,
    since DynamicResources reads which group members the snapshot holds while it reserves."""
    return not any(_spec(pi.pod).get("resourceClaims") for pi in group.pods)


class PodGroupCycle:
    """The PodGroup cycle of one :class:`~scheduler.scheduler.Scheduler` (see the module docstring).

    Composed into the scheduler rather than mixed in: it uses the scheduler's cache, snapshot,
    queue, metrics and client, and hands pods back to its ``assume_and_bind`` and
    ``handle_failure`` (the pod-by-pod cycle's own steps, which a placed gang shares).
    """

    def __init__(self, sched: Scheduler) -> None:
        self.sched = sched

    def _pod_group_state(self, namespace: str, name: str) -> PodGroupState:
        return self.sched.cache.pod_group_state(namespace, name) or PodGroupState(f"{namespace}/{name}")

    def wants_pod_group_cycle(self, pod: Obj) -> Obj | None:
        """The pod's PodGroup when the pod is scheduled through the PodGroup cycle, else ``None``.

        Gangs always are; basic groups only with a topology constraint (to stay co-located).
        """
        if not self.sched.pod_groups_enabled:
            return None
        key = pod_group_key(pod)
        if not key:
            return None
        ns, _, name = key.partition("/")
        pg = self.sched.cache.get_pod_group(ns, name)
        if pg is None:
            return None
        if is_gang(pg) or (topology_key(pg) and self.sched.topology_enabled):
            return pg
        return None

    def pod_group_added(self, pg: Obj) -> None:
        """Index the snapshot's nodes by the new PodGroup's topology key now, while its pods are
        still being created, rather than in its first cycle once it is complete (25 ms on 5,000
        nodes). The index is kept current from then on as every other is; a cycle under way
        reads indexes that are current either way."""
        if not self.sched.pod_groups_enabled or not self.sched.topology_enabled:
            return
        key = topology_key(pg)
        if key:
            self.sched.snapshot.domains(key)

    def pod_group_gone(self, pod: Obj) -> bool:
        """The pod names a PodGroup the cache does not hold (while PodGroups are honoured)."""
        key = pod_group_key(pod)
        if not key or not self.sched.pod_groups_enabled:
            return False
        ns, _, name = key.partition("/")
        return self.sched.cache.get_pod_group(ns, name) is None

    async def schedule_one_podgroup(self, fw: Framework, qpi: QueuedPodInfo, pg: Obj) -> None:
        start = time.perf_counter()
        meta = pg.get("metadata") or {}
        ns, name = meta.get("namespace", ""), meta.get("name", "")
        key = f"{ns}/{name}"
        members = [qpi]
        if is_gang(pg):
            members += self.sched.queue.pop_group_members(key, exclude=qpi.uid)
        queued: list[QueuedPodInfo] = []
        for q in members:
            if self.sched.skip_pod_schedule(fw, q):
                self.sched.queue.done(q.uid)
            else:
                queued.append(q)
        if not queued:
            return
        queued.sort(key=lambda q: (-q.priority, q.initial_attempt_timestamp or q.timestamp, q.key))
        self.sched.cache.update_snapshot(self.sched.snapshot)
        fw.handle.snapshot = self.sched.snapshot
        group = PodGroupInfo(ns, name, pg, [q.pod_info for q in queued], self._pod_group_state(ns, name))

        err = validate_group(group, self._scheduled_members(group.state))
        if err:
            for q in queued:
                await self.sched.handle_failure(fw, q, Status(Code.ERROR), err, CLEAR_NOMINATION, start)
            await self._set_pod_group_condition(pg, "False", REASON_SCHEDULER_ERROR, err)
            self.sched.metrics.observe_pod_group_attempt(
                m.ERROR, fw.scheduler_name, time.perf_counter() - start
            )
            return

        state = CycleState()
        if self.sched.records is not None:
            self.sched.records.begin_pod_group(fw.scheduler_name, ns, name, len(queued))
        algorithm = PodGroupAlgorithm(fw)
        result = await algorithm.run_async(
            state, group, self.sched.snapshot, keep_winner=_may_keep_winner(group)
        )
        self.sched.metrics.observe_pod_group_algorithm(fw.scheduler_name, time.perf_counter() - start)
        nominations: dict[str, str] = {}
        waiting_on_preemption = False
        if not result.success and result.status is not None and result.status.is_rejected():
            post, pstatus = await fw.run_pod_group_post_filter_plugins(
                state, group, lambda: self._dry_run(algorithm, group)
            )
            if pstatus.code == Code.ERROR:
                result.status = Status(Code.ERROR, pstatus.message())
            elif pstatus.is_success():
                waiting_on_preemption = True
                nominations = (post or PodGroupPostFilterResult()).nominated_node_names
            msg = pstatus.message()
            if msg and result.status is not None:
                result.status.reasons.append(msg)

        if result.success:
            await self._submit_success(fw, queued, group, result, start)
        else:
            await self._submit_failure(fw, queued, group, result, nominations, waiting_on_preemption, start)
        if self.sched.records is not None:
            self.sched.records.pod_group_result(pg, result, nominations, waiting_on_preemption, qpi.attempts)

    def _scheduled_members(self, state: PodGroupState) -> list[Obj]:
        out = []
        for pkey in list(state.assumed) + list(state.assigned):
            ns, _, name = pkey.partition("/")
            pod = self.sched.cache.get_pod({"metadata": {"namespace": ns, "name": name}})
            if pod is not None:
                out.append(pod)
        return out

    def _dry_run(
        self, algorithm: PodGroupAlgorithm, group: PodGroupInfo
    ) -> tuple[list[PodAssignment], Status | None]:
        """The PodGroupPostFilter's ``schedule`` callback: the algorithm on the snapshot as it is now."""
        result = algorithm.run(CycleState(), group, self.sched.snapshot)
        assignments = result.placement.assignments if result.placement is not None else []
        return assignments, result.status

    async def _submit_success(
        self,
        fw: Framework,
        queued: list[QueuedPodInfo],
        group: PodGroupInfo,
        result: PodGroupAlgorithmResult,
        start: float,
    ) -> None:
        assert result.placement is not None
        by_uid = {a.pod_info.uid: a for a in result.placement.assignments}
        # a kept placement's pods are in the snapshot as the cache is about to assume them:
        # the cache takes those PodInfos (``Cache.assume_pod``'s ``assumed``) for each member
        # the search placed from the very PodInfo the queue still holds
        kept = self.sched.snapshot.assumed_pods() if result.kept else {}
        assume_and_start = self.sched.assume_and_start
        records = self.sched.records
        bound = 0
        for q in queued:
            pi = q.pod_info
            a = by_uid.get(pi.uid)
            if a is not None and a.node_name:
                like = kept.get(pi.uid) if a.pod_info is pi else None
                failure = assume_and_start(fw, a.state or CycleState(), q, a.node_name, start, like)
                if failure is not None:
                    await failure
                    continue
                bound += 1
                if records is not None:
                    records.scheduled(q.pod, fw.scheduler_name, a.node_name, q.attempts)
                continue
            message = a.message if a is not None and a.message else "no pods were schedulable"
            diag = Diagnosis(unschedulable_plugins=set(a.unschedulable_plugins) if a is not None else set())
            await self.sched.handle_failure(
                fw, q, Status(Code.UNSCHEDULABLE), message, CLEAR_NOMINATION, start, diag
            )
        if result.kept:
            # the snapshot holds the placement's pods already: keep those nodes where the cache
            # now holds exactly the same (the next cycle copies only what changed since)
            fitting = result.placement.fitting()
            self.sched.cache.adopt_assumed(
                self.sched.snapshot, {a.node_name for a in fitting}, {a.pod_info.uid for a in fitting}
            )
        state = self._pod_group_state(group.namespace, group.name)
        if (
            is_gang(group.pod_group)
            and state.scheduled_count() < min_count(group.pod_group)
            and not replacements_schedule_freely(self.sched.gates, group.pod_group)
        ):
            # an assume/Reserve/Permit failure left the gang short: release the members held at Permit
            for uid in [
                u for u, wp in fw.waiting_pods.items() if pod_group_key(wp.pod_info.pod) == group.key
            ]:
                fw.reject_waiting_pod(uid, GANG_PLUGIN, "the gang could not be placed as a whole")
            await self._set_pod_group_condition(
                group.pod_group, "False", REASON_UNSCHEDULABLE, "the gang could not be placed as a whole"
            )
            self.sched.metrics.observe_pod_group_attempt(
                m.UNSCHEDULABLE, fw.scheduler_name, time.perf_counter() - start
            )
            return
        # the cycle is done with the snapshot: bound members confirmed while the condition write
        # waits for its turn may take their revisions in place (Cache._confirm_in_place)
        self.sched.cache.snapshot_in_use = False
        await self._set_pod_group_condition(group.pod_group, "True", REASON_SCHEDULED, "")
        self.sched.metrics.observe_pod_group_attempt(
            m.SCHEDULED, fw.scheduler_name, time.perf_counter() - start
        )
        log.debug("pod group %s scheduled: %d pods to binding", group.key, bound)

    async def _submit_failure(
        self,
        fw: Framework,
        queued: list[QueuedPodInfo],
        group: PodGroupInfo,
        result: PodGroupAlgorithmResult,
        nominations: dict[str, str],
        waiting_on_preemption: bool,
        start: float,
    ) -> None:
        status = result.status or Status(Code.UNSCHEDULABLE)
        message = status.message()
        error = status.code == Code.ERROR
        by_uid: dict[str, PodAssignment] = {}
        plugins: set[str] = {GANG_PLUGIN} if is_gang(group.pod_group) else set()
        for r in result.evaluated:
            for a in r.assignments:
                plugins |= a.unschedulable_plugins
        if result.skipped_for_capacity:
            plugins.add(FIT_PLUGIN)  # a placement short of capacity waits for room to free up
        if result.placement is not None:
            by_uid = {a.pod_info.uid: a for a in result.placement.assignments}
        for q in queued:
            a = by_uid.get(q.uid)
            own = a is not None and a.status is not None and not result.topology and not error
            pod_message = a.message if own and a is not None else message
            pod_plugins = set(a.unschedulable_plugins) if own and a is not None else set(plugins)
            nominating: Nominating | None = CLEAR_NOMINATION
            if q.key in nominations:
                nominating = Nominating(NOMINATING_OVERRIDE, nominations[q.key])
            code = Code.ERROR if error else Code.UNSCHEDULABLE
            diag = None if error else Diagnosis(unschedulable_plugins=pod_plugins)
            await self.sched.handle_failure(fw, q, Status(code), pod_message, nominating, start, diag)
        if error:
            await self._set_pod_group_condition(group.pod_group, "False", REASON_SCHEDULER_ERROR, message)
            self.sched.metrics.observe_pod_group_attempt(
                m.ERROR, fw.scheduler_name, time.perf_counter() - start
            )
            return
        await self._set_pod_group_condition(group.pod_group, "False", REASON_UNSCHEDULABLE, message)
        if not waiting_on_preemption:
            self.sched.record_event(
                {**group.pod_group, "apiVersion": POD_GROUP_API_VERSION, "kind": "PodGroup"},
                WARNING,
                GANG_UNSCHEDULABLE,
                "Scheduling",
                gang_unschedulable_message(group, result),
            )
        outcome = m.WAITING_ON_PREEMPTION if waiting_on_preemption else m.UNSCHEDULABLE
        self.sched.metrics.observe_pod_group_attempt(outcome, fw.scheduler_name, time.perf_counter() - start)

    async def _set_pod_group_condition(self, pg: Obj, status: str, reason: str, message: str) -> None:
        meta = pg.get("metadata") or {}
        latest = self.sched.cache.get_pod_group(meta.get("namespace", ""), meta.get("name", "")) or pg
        updated = await update_pod_group_condition(
            self.sched.client, latest, status, reason, message, rfc3339(self.sched.clock.now())
        )
        if updated is not None:
            self.sched.cache.update_pod_group(updated)

    async def pod_group_pod_bound(self, fw: Framework, pod: Obj) -> None:
        """A basic group's pod went to binding through the pod-by-pod cycle: the group is scheduled."""
        key = pod_group_key(pod)
        if not key or not self.sched.pod_groups_enabled:
            return
        ns, _, name = key.partition("/")
        pg = self.sched.cache.get_pod_group(ns, name)
        if pg is not None and not is_gang(pg):
            await self._set_pod_group_condition(pg, "True", REASON_SCHEDULED, "")

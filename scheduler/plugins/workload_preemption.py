"""WorkloadAwarePreemption: a whole PodGroup preempts lower-priority pods and groups (KEP-5710).

PodGroupPostFilter, run once when a PodGroup cycle found no placement (kube's
``PodGroupEvaluator``; part of ``GenericWorkload`` in 1.37):

1. **Eligibility.** The group's preemption policy is the PodGroup's ``preemptionPolicy`` with
   ``PodGroupPreemptionPolicy`` on (default ``PreemptLowerPriority``), else ``Never`` as soon as
   one member pod says ``Never``: such a group never preempts. A group whose member is nominated
   to a node where a lower-priority pod is still terminating because of preemption waits for it.
2. **Domain: the cluster.** The preemptor is the group (its PodGroup's priority), not a pod, so
   the search is not node by node: every placed pod of lower priority is a potential victim,
   grouped into units (:mod:`scheduler.victims`) — a ``disruptionMode: all`` PodGroup is one unit
   (all its members, everywhere), any other pod a unit alone, at its PodGroup's priority when it
   has one.
3. **Selection.** All potential units are removed from the cycle's snapshot and the group
   algorithm (the ``schedule`` callback: placements, Filter, minCount) is run once; if the group
   still does not fit, nothing is touched. Otherwise units are reprieved from the most important
   down — PDB-violating ones first — each kept when the group still fits with it back where it
   runs. The snapshot is restored afterwards: this plugin leaves no trace in it.
4. **Actuation** through the API: every victim pod gets ``DisruptionTarget=True``
   (``PreemptionByScheduler``, ``<scheduler>: preempting to accommodate a higher priority pod
   group``), is deleted gracefully and gets a ``Preempted`` event related to the preemptor's
   PodGroup; a PodGroup evicted as a whole gets ``DisruptionTarget`` too. Lower-priority pods
   nominated to the affected nodes lose their nomination.

The result nominates each member that fits to its node (``nominatedNodeName``); the PodGroup
cycle writes those and requeues the group, and the next cycle tries those nodes first. Messages
are upstream's, prefixed ``pod group preemption: `` (``found a placement for podgroup, preempting
N victims``; ``No preemption victims found for incoming preemptor``; ``not eligible due to
preemptionPolicy=Never.``); the cycle appends them to the PodGroup's condition message.
"""

from __future__ import annotations

import time
from typing import Any

from apiserver.api.types import Obj
from featuregates import GENERIC_WORKLOAD, POD_GROUP_PREEMPTION_POLICY
from scheduler.disruption import disrupt_pod, disrupt_pod_group, preemption_message, terminating_by_preemption
from scheduler.interfaces import (
    CycleState,
    Handle,
    PodAssignment,
    PodGroupInfo,
    PodGroupPostFilterResult,
    PodGroupSchedulingFunc,
)
from scheduler.nodeinfo import PodInfo
from scheduler.podstatus import patch_pod_status
from scheduler.status import Code, Status, is_success
from scheduler.victims import (
    Selection,
    Victim,
    build_victims,
    placed_members,
    pod_group_name,
    pod_group_priority,
    select_victims,
)

NAME = "WorkloadAwarePreemption"
PREFIX = "pod group preemption: "
NEVER = "Never"
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"


def resolve_preemption_policy(pod_group: Obj, pods: list[PodInfo], pod_group_policy: bool) -> str:
    """The group's policy (upstream's ``resolvePreemptionPolicy``).

    With ``PodGroupPreemptionPolicy`` the PodGroup decides (unset: ``PreemptLowerPriority``, as
    for a PodGroup created while the gate was off); without it any member with ``Never`` makes
    the whole group ``Never``.
    """
    if pod_group_policy:
        return str(((pod_group.get("spec") or {}).get("preemptionPolicy")) or PREEMPT_LOWER_PRIORITY)
    for p in pods:
        if (p.pod.get("spec") or {}).get("preemptionPolicy") == NEVER:
            return NEVER
    return PREEMPT_LOWER_PRIORITY


class WorkloadAwarePreemption:
    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        self.handle = handle or Handle()
        #: uid -> node of victim pods deleted by this plugin that the cache may still show
        self._deleted: dict[str, str] = {}

    # -- PodGroupPostFilter -----------------------------------------------------------------

    async def pod_group_post_filter(
        self, state: CycleState, group: PodGroupInfo, schedule: PodGroupSchedulingFunc
    ) -> tuple[PodGroupPostFilterResult | None, Status | None]:
        """Preempt for ``group``; a failure's message reads ``pod group preemption: <why>``."""
        result, status = await self.preempt(group, schedule)
        metrics = self.handle.metrics
        if metrics is not None:
            code = status.code_name() if status is not None else "Success"
            metrics.workload_preemption_attempts.labels(result=code).inc()
        if status is not None and status.message():
            return result, Status(status.code, PREFIX + status.message(), error=status.error)
        return result, status

    async def preempt(
        self, group: PodGroupInfo, schedule: PodGroupSchedulingFunc
    ) -> tuple[PodGroupPostFilterResult | None, Status | None]:
        gates = self.handle.gates
        if gates is not None and not gates.enabled(GENERIC_WORKLOAD):
            return None, Status(Code.UNSCHEDULABLE, "workload aware preemption is disabled")
        ok, msg = self.eligible(group)
        if not ok:
            return None, Status(Code.UNSCHEDULABLE, msg)
        snapshot = self.handle.snapshot
        if snapshot is None or snapshot.num_nodes() == 0:
            return None, Status(Code.ERROR, "no nodes available")
        priority = pod_group_priority(group.pod_group)
        mark = snapshot.backup()
        try:
            # Victims deleted by an earlier run are gone from the API but may still be in the
            # cache (their delete events not delivered yet): count them as gone, never again as
            # victims, and do not preempt anew while their room already makes the group fit.
            going = self._in_flight_victims()
            for p in going:
                snapshot.forget_pod(p, p.node_name)
            if going:
                assignments, st = schedule()
                if is_success(st):
                    waiting = "pod group is waiting for podgroup preemption to complete"
                    return PodGroupPostFilterResult(_nominations(assignments)), Status(Code.SUCCESS, waiting)
            skip = {p.uid for p in going}
            potential = [
                v
                for v in self.cluster_victims(group)
                if v.priority < priority and not any(p.uid in skip for p in v.pods)
            ]
            if not potential:
                return None, Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "No preemption victims found for incoming preemptor"
                )
            last: list[Status | None] = [None]

            def fits() -> bool:
                _, st = schedule()
                last[0] = st
                return is_success(st)

            selection = select_victims(
                potential,
                list(self.handle.list_pdbs()),
                fits,
                lambda v: self._forget(v),
                lambda v: self._assume(v),
            )
            if selection is None:
                st = last[0]
                if st is None or st.is_success():
                    st = Status(Code.UNSCHEDULABLE, "no pods were schedulable")
                return None, st
            assignments, st = schedule()
            if not is_success(st):
                return None, st
        finally:
            snapshot.restore(mark)
        nominations = _nominations(assignments)
        err = await self.prepare(group, selection, nominations)
        if err is not None:
            return None, err
        found = f"found a placement for podgroup, preempting {len(selection.pods)} victims"
        if self.handle.records is not None:  # --- scheduling-records hook (gangplane) ---
            self.handle.records.group_preemption(selection.victims, priority, found)
        return PodGroupPostFilterResult(nominations), Status(Code.SUCCESS, found)

    def _in_flight_victims(self) -> list[PodInfo]:
        """Pods this plugin deleted that the snapshot still holds; forgets the ones it no longer does."""
        if not self._deleted:
            return []
        snapshot = self.handle.snapshot
        assert snapshot is not None
        found: list[PodInfo] = []
        for node in set(self._deleted.values()):
            ni = snapshot.get(node)
            if ni is not None:
                found.extend(p for p in ni.pods if p.uid in self._deleted)
        present = {p.uid for p in found}
        for uid in [u for u in self._deleted if u not in present]:
            del self._deleted[uid]
        return found

    def eligible(self, group: PodGroupInfo) -> tuple[bool, str]:
        gates = self.handle.gates
        pg_policy = gates is not None and gates.enabled(POD_GROUP_PREEMPTION_POLICY)
        if resolve_preemption_policy(group.pod_group, group.pods, pg_policy) == NEVER:
            return False, "not eligible due to preemptionPolicy=Never."
        snapshot = self.handle.snapshot
        priority = pod_group_priority(group.pod_group)
        for p in group.pods:
            nominated = ((p.pod.get("status") or {}).get("nominatedNodeName")) or ""
            ni = snapshot.get(nominated) if nominated and snapshot is not None else None
            if ni is None:
                continue
            if any(v.priority < priority and terminating_by_preemption(v) for v in ni.pods):
                return False, "not eligible due to a terminating pod on the nominated node."
        return True, ""

    def cluster_victims(self, group: PodGroupInfo) -> list[Victim]:
        """Every placed pod of the cluster as preemption units, the preemptor's own members excluded."""
        snapshot = self.handle.snapshot
        assert snapshot is not None
        pods = (p for ni in snapshot.list() for p in ni.pods if not _member_of(p, group))
        return build_victims(pods, self.handle.get_pod_group, self._group_members)

    def _group_members(self, namespace: str, name: str) -> list[PodInfo]:
        getter = self.handle.pod_group_state
        snapshot = self.handle.snapshot
        if getter is None or snapshot is None:
            return []
        return placed_members(getter(namespace, name), snapshot.get)

    def _forget(self, v: Victim) -> None:
        snapshot = self.handle.snapshot
        assert snapshot is not None
        for p in v.pods:
            snapshot.forget_pod(p, p.node_name)

    def _assume(self, v: Victim) -> None:
        snapshot = self.handle.snapshot
        assert snapshot is not None
        for p in v.pods:
            snapshot.assume_pod(p, p.node_name)

    # -- actuation --------------------------------------------------------------------------

    async def prepare(
        self, group: PodGroupInfo, selection: Selection, nominations: dict[str, str]
    ) -> Status | None:
        client = self.handle.client
        if client is None:
            return Status(Code.ERROR, "WorkloadAwarePreemption has no API client")
        representative = group.pods[0].pod if group.pods else {}
        scheduler = (representative.get("spec") or {}).get("schedulerName") or self.handle.scheduler_name
        message = preemption_message(scheduler, group_preemptor=True)
        now = self._now()
        fw = self.handle.framework
        uid = ((group.pod_group.get("metadata") or {}).get("uid")) or group.key
        for v in selection.victims:
            for p in v.pods:
                if p.terminating:
                    continue  # graceful deletion already started
                wp = fw.get_waiting_pod(p.uid) if fw is not None else None
                try:
                    if wp is not None:
                        wp.preempt(NAME, "preempted")
                    else:
                        await disrupt_pod(client, p, message, now)
                        self._deleted[p.uid] = p.node_name
                except Exception as e:
                    return Status.as_status(e)
                await self.handle.event(
                    p.pod,
                    "Normal",
                    "Preempted",
                    "Preempting",
                    f"Preempted by podgroup {uid} on node {p.node_name}",
                    {**group.pod_group, "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup"},
                )
            if v.group:
                ns, _, name = v.group.partition("/")
                pg = self.handle.get_pod_group(ns, name) if self.handle.get_pod_group is not None else None
                if pg is not None:
                    try:
                        await disrupt_pod_group(client, pg, message, now)
                    except Exception as e:
                        return Status.as_status(e)
        metrics = self.handle.metrics
        if metrics is not None:
            metrics.workload_preemption_victims.observe(len(selection.pods))
        await self._clear_lower_priority_nominations(group, selection)
        return None

    async def _clear_lower_priority_nominations(self, group: PodGroupInfo, selection: Selection) -> None:
        nominator = self.handle.nominator
        client = self.handle.client
        if nominator is None or client is None:
            return
        priority = pod_group_priority(group.pod_group)
        nodes = sorted({p.node_name for p in selection.pods})
        for node in nodes:
            for p in nominator.nominated_pods_for_node(node):
                if p.priority < priority and not _member_of(p, group):
                    try:
                        await patch_pod_status(client, p.pod, nominated_node_name=None)
                    except Exception:  # not critical: the pod is retried anyway
                        continue

    def _now(self) -> float:
        clock = self.handle.clock
        return float(clock.now()) if clock is not None else time.time()


def _member_of(p: PodInfo, group: PodGroupInfo) -> bool:
    return p.namespace == group.namespace and pod_group_name(p) == group.name


def _nominations(assignments: list[PodAssignment]) -> dict[str, str]:
    return {a.pod_info.key: a.node_name for a in assignments if a.node_name}


def new(args: dict[str, Any], handle: Handle) -> WorkloadAwarePreemption:
    return WorkloadAwarePreemption(args, handle)

"""DefaultPreemption: when a pod fits nowhere, evict lower-priority pods from one node to make room.

PostFilter, following kube's ``preemption.Evaluator`` for single pods:

1. **Eligibility.** ``preemptionPolicy: Never`` pods never preempt; a pod already nominated to
   a node where a lower-priority pod is still terminating because of preemption waits.
2. **Candidates.** Only nodes whose Filter status was *Unschedulable* (not Unresolvable) are
   tried, starting at a random offset, until enough candidates are found (10% of them, at least
   100). On each node (a copy) every lower-priority victim is removed; if the pod then fits,
   victims are reprieved from the most important down, PDB-violating victims first, keeping
   every reprieve that still lets the pod fit (:func:`scheduler.victims.select_victims`). With
   ``GenericWorkload`` a victim is a preemption unit (1.37): a PodGroup member counts at its
   group's priority, and a member of a ``disruptionMode: all`` group brings the whole group, so
   such a group is reprieved or evicted entirely, members on other nodes included.
3. **Choice.** Fewest PDB violations, then the lowest highest-victim priority, then the smallest
   priority sum, then the fewest victims, then the latest start time of the most important
   victims, then the first candidate.
4. **Actuation** through the API: each victim gets ``DisruptionTarget=True``
   (``PreemptionByScheduler``, ``<scheduler>: preempting to accommodate a higher priority pod``)
   by a status patch, then a graceful delete, and a ``Preempted`` event (a PodGroup evicted as a
   whole also gets ``DisruptionTarget`` on its status); lower-priority pods
   nominated to the same node lose their nomination. The scheduler then sets the preemptor's
   ``status.nominatedNodeName`` from the returned result.

No candidate: ``preemption: 0/N nodes are available: ...`` with every node not examined counted
as ``Preemption is not helpful for scheduling``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from featuregates import GENERIC_WORKLOAD, TOPOLOGY_AWARE_WORKLOAD_SCHEDULING
from scheduler.diagnosis import NodeToStatus, preemption_not_helpful
from scheduler.disruption import disrupt_pod, disrupt_pod_group, preemption_message, terminating_by_preemption
from scheduler.framework import NOMINATING_OVERRIDE, CycleState, Framework, Handle, PostFilterResult
from scheduler.nodeinfo import NodeInfo, PodInfo
from scheduler.podstatus import (
    patch_pod_status,
)
from scheduler.status import Code, Status, is_success
from scheduler.victims import Victim, build_victims, placed_members, select_victims

NAME = "DefaultPreemption"
DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100
_MAX_INT32 = 2**31 - 1


@dataclass
class Candidate:
    """A node where the preemptor fits once ``victims`` (most important first) are gone."""

    name: str
    victims: list[PodInfo] = field(default_factory=list)
    num_pdb_violations: int = 0
    #: ``namespace/name`` of each ``disruptionMode: all`` PodGroup evicted as a whole
    groups: list[str] = field(default_factory=list)


def _start_time(p: PodInfo, now: float) -> float:
    return p.start_time if p.start_time is not None else now


def pick_one_node_for_preemption(candidates: list[Candidate], now: float) -> str:
    """kube's ``pickOneNodeForPreemption`` score functions, each applied only to break ties."""
    if not candidates:
        return ""

    def earliest_start_of_top(c: Candidate) -> float:
        top = max(p.priority for p in c.victims)
        return min(_start_time(p, now) for p in c.victims if p.priority == top)

    score_funcs = [
        lambda c: -c.num_pdb_violations,
        lambda c: -c.victims[0].priority,
        lambda c: -sum(p.priority + _MAX_INT32 + 1 for p in c.victims),
        lambda c: -len(c.victims),
        earliest_start_of_top,
    ]
    pool = list(candidates)
    for f in score_funcs:
        best = max(f(c) for c in pool)
        pool = [c for c in pool if f(c) == best]
        if len(pool) == 1:
            break
    return pool[0].name


class _StatusError(Exception):
    """A PreFilter extension or Filter error while dry-running preemption on a node copy."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message())
        self.status = status


def _raise_unless_success(status: Status | None) -> None:
    if not is_success(status):
        assert status is not None
        raise _StatusError(status)


class DefaultPreemption:
    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        args = args or {}
        self.handle = handle or Handle()
        self.min_candidate_nodes_percentage = int(
            args.get("minCandidateNodesPercentage", DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE)
        )
        self.min_candidate_nodes_absolute = int(
            args.get("minCandidateNodesAbsolute", DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE)
        )

    # -- helpers ----------------------------------------------------------------------------

    def _now(self) -> float:
        clock = self.handle.clock
        if clock is None:
            import time

            return time.time()
        return float(clock.now())

    @property
    def _framework(self) -> Framework:
        fw = self.handle.framework
        if fw is None:
            raise RuntimeError("DefaultPreemption needs handle.framework")
        return fw

    def calculate_num_candidates(self, num_nodes: int) -> int:
        n = num_nodes * self.min_candidate_nodes_percentage // 100
        n = max(n, self.min_candidate_nodes_absolute)
        return min(n, num_nodes)

    # -- PostFilter -------------------------------------------------------------------------

    async def post_filter(
        self, state: CycleState, pod_info: PodInfo, node_to_status: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        metrics = self.handle.metrics
        if metrics is not None:
            metrics.preemption_attempts.inc()
        group = self._pod_group_rejection(pod_info)
        if group is not None:
            return None, group
        result, status = await self.preempt(state, pod_info, node_to_status)
        msg = status.message()
        if msg:
            return result, Status(status.code, "preemption: " + msg, error=status.error)
        return result, status

    def _pod_group_rejection(self, pod_info: PodInfo) -> Status | None:
        """Pods of a PodGroup are preempted for as a group (workload-aware preemption), not one by one.

        Except a basic group without topology constraints: gangplane schedules its pods one by one
        (``scheduling: {}`` keeps today's behaviour), so they also preempt one by one.
        """
        group = ((pod_info.pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
        gates = self.handle.gates
        if not group or gates is None:
            return None
        getter = self.handle.get_pod_group
        known = getter(pod_info.namespace, group) if getter is not None else None
        if known is not None and gates.enabled(GENERIC_WORKLOAD):
            spec = known.get("spec") or {}
            if (spec.get("schedulingPolicy") or {}).get("gang") is None and not spec.get(
                "schedulingConstraints"
            ):
                return None
        if gates.enabled(TOPOLOGY_AWARE_WORKLOAD_SCHEDULING):
            getter = self.handle.get_pod_group
            pg = getter(pod_info.namespace, group) if getter is not None else None
            if pg is None:
                return Status(Code.UNSCHEDULABLE, "preemption: pod group for pod not found")
            if (pg.get("spec") or {}).get("schedulingConstraints"):
                return Status(
                    Code.UNSCHEDULABLE,
                    "preemption: not eligible due to placement-based pod group scheduling limitation",
                )
        if gates.enabled(GENERIC_WORKLOAD):
            return Status(
                Code.UNSCHEDULABLE, "preemption: not eligible due to workload aware preemption enabled"
            )
        return None

    def pod_eligible_to_preempt_others(
        self, pod_info: PodInfo, nominated_status: Status | None
    ) -> tuple[bool, str]:
        spec = pod_info.pod.get("spec") or {}
        if spec.get("preemptionPolicy") == "Never":
            return False, "not eligible due to preemptionPolicy=Never."
        nominated = ((pod_info.pod.get("status") or {}).get("nominatedNodeName")) or ""
        if nominated:
            if nominated_status is not None and nominated_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            snap = self.handle.snapshot
            ni = snap.get(nominated) if snap is not None else None
            if ni is not None:
                for p in ni.pods:
                    if p.priority < pod_info.priority and terminating_by_preemption(p):
                        return False, "not eligible due to a terminating pod on the nominated node."
        return True, ""

    async def preempt(
        self, state: CycleState, pod_info: PodInfo, node_to_status: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        nominated = ((pod_info.pod.get("status") or {}).get("nominatedNodeName")) or ""
        ok, msg = self.pod_eligible_to_preempt_others(
            pod_info, node_to_status.get(nominated) if nominated else None
        )
        if not ok:
            return None, Status(Code.UNSCHEDULABLE, msg)
        snapshot = self.handle.snapshot
        if snapshot is None or snapshot.num_nodes() == 0:
            return None, Status(Code.ERROR, "no nodes available")
        candidates, statuses, errors = self.find_candidates(state, pod_info, node_to_status)
        if errors and not candidates:
            return None, Status(Code.ERROR, "; ".join(errors))
        records = self.handle.records  # --- scheduling-records hook (gangplane) ---
        if not candidates:
            msg = preemption_not_helpful(snapshot.num_nodes(), statuses)
            if records is not None:
                records.preemption(pod_info, [], None, msg)
            return PostFilterResult("", NOMINATING_OVERRIDE), Status(Code.UNSCHEDULABLE, msg)
        best = self.select_candidate(candidates)
        if records is not None:
            records.preemption(pod_info, candidates, best)
        st = await self.prepare_candidate(best, pod_info)
        if not is_success(st):
            assert st is not None
            return None, st
        return PostFilterResult(best.name, NOMINATING_OVERRIDE, [v.pod for v in best.victims]), Status(
            Code.SUCCESS
        )

    def find_candidates(
        self, state: CycleState, pod_info: PodInfo, node_to_status: NodeToStatus
    ) -> tuple[list[Candidate], NodeToStatus, list[str]]:
        snapshot = self.handle.snapshot
        assert snapshot is not None
        potential = node_to_status.nodes_for_code(snapshot.node_names, Code.UNSCHEDULABLE)
        if not potential:
            return [], NodeToStatus(), []
        pdbs = list(self.handle.list_pdbs())
        offset = self.handle.rng.randrange(len(potential))
        return self.dry_run_preemption(
            state, pod_info, potential, pdbs, offset, self.calculate_num_candidates(len(potential))
        )

    def dry_run_preemption(
        self,
        state: CycleState,
        pod_info: PodInfo,
        potential: list[str],
        pdbs: list[dict[str, Any]],
        offset: int,
        num_candidates: int,
    ) -> tuple[list[Candidate], NodeToStatus, list[str]]:
        snapshot = self.handle.snapshot
        assert snapshot is not None
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        statuses = NodeToStatus()
        errors: list[str] = []
        n = len(potential)
        for i in range(n):
            name = potential[(offset + i) % n]
            ni = snapshot.get(name)
            if ni is None:
                continue
            units, num_violations, status = self._select_units_on_node(
                state.clone(), pod_info, ni.clone(), pdbs
            )
            victims = [p for v in units for p in v.pods]
            if is_success(status) and victims:
                c = Candidate(name, victims, num_violations, [v.group for v in units if v.group])
                (non_violating if num_violations == 0 else violating).append(c)
                if non_violating and len(non_violating) + len(violating) >= num_candidates:
                    break
                continue
            if is_success(status):
                status = Status(Code.ERROR, f"expected at least one victim pod on node {name!r}")
            assert status is not None
            if status.code == Code.ERROR:
                errors.append(status.message())
            statuses.set(name, status)
        return non_violating[:num_candidates] + violating[:num_candidates], statuses, errors

    def select_victims_on_node(
        self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo, pdbs: list[dict[str, Any]]
    ) -> tuple[list[PodInfo], int, Status | None]:
        """The minimal set of lower-priority pods to evict from this node copy (kube's ``SelectVictimsOnNode``).

        Victims are preemption units (:mod:`scheduler.victims`): with ``GenericWorkload`` a pod of
        a ``disruptionMode: all`` PodGroup brings its whole group (members on other nodes too),
        and a PodGroup member counts at its group's priority (1.37). Only this node's copy is
        changed; members elsewhere are taken out of the cycle state through the PreFilter
        extensions, since they do not decide whether the preemptor fits here.
        """
        victims, num_violating, status = self._select_units_on_node(state, pod_info, node_info, pdbs)
        return [p for v in victims for p in v.pods], num_violating, status

    def _select_units_on_node(
        self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo, pdbs: list[dict[str, Any]]
    ) -> tuple[list[Victim], int, Status | None]:
        fw = self._framework
        workload_aware = self._workload_aware()
        units = build_victims(
            node_info.pods,
            self.handle.get_pod_group if workload_aware else None,
            self._group_members if workload_aware else None,
        )
        potential = [v for v in units if v.priority < pod_info.priority]
        if not potential:
            return (
                [],
                0,
                Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "No preemption victims found for incoming pod"),
            )
        snapshot = self.handle.snapshot

        def extension_node(p: PodInfo) -> NodeInfo | None:
            if p.node_name == node_info.name:
                return node_info
            return snapshot.get(p.node_name) if snapshot is not None else None

        def remove(v: Victim) -> None:
            for p in v.pods:
                ni = extension_node(p)
                if ni is node_info:
                    node_info.remove_pod(p.key)
                if ni is not None:
                    _raise_unless_success(fw.run_pre_filter_extension_remove_pod(state, pod_info, p, ni))

        def add(v: Victim) -> None:
            for p in v.pods:
                ni = extension_node(p)
                if ni is node_info:
                    node_info.add_pod_info(p)
                if ni is not None:
                    _raise_unless_success(fw.run_pre_filter_extension_add_pod(state, pod_info, p, ni))

        last: list[Status | None] = [None]

        def fits() -> bool:
            last[0] = fw.run_filter_plugins_with_nominated_pods(state, pod_info, node_info)
            if last[0] is not None and last[0].code == Code.ERROR:
                raise _StatusError(last[0])
            return is_success(last[0])

        try:
            selection = select_victims(potential, pdbs, fits, remove, add, workload_aware)
        except _StatusError as e:
            return [], 0, e.status
        if selection is None:
            return [], 0, last[0]
        return selection.victims, selection.num_pdb_violations, Status(Code.SUCCESS)

    def _workload_aware(self) -> bool:
        gates = self.handle.gates
        return gates is not None and gates.enabled(GENERIC_WORKLOAD) and self.handle.get_pod_group is not None

    def _group_members(self, namespace: str, name: str) -> list[PodInfo]:
        getter = self.handle.pod_group_state
        snapshot = self.handle.snapshot
        if getter is None or snapshot is None:
            return []
        return placed_members(getter(namespace, name), snapshot.get)

    def select_candidate(self, candidates: list[Candidate]) -> Candidate:
        if len(candidates) == 1:
            return candidates[0]
        name = pick_one_node_for_preemption(candidates, self._now())
        return next((c for c in candidates if c.name == name), candidates[0])

    # -- actuation --------------------------------------------------------------------------

    async def prepare_candidate(self, c: Candidate, preemptor: PodInfo) -> Status | None:
        fw = self._framework
        for victim in c.victims:
            if victim.terminating:
                continue  # graceful deletion already started
            wp = fw.get_waiting_pod(victim.uid)
            if wp is not None:
                wp.preempt(NAME, "preempted")
            else:
                try:
                    await self.preempt_pod(c.name, preemptor, victim)
                except Exception as e:
                    return Status.as_status(e)
            await self.handle.event(
                victim.pod,
                "Normal",
                "Preempted",
                "Preempting",
                f"Preempted by pod {preemptor.uid} on node {c.name}",
                preemptor.pod,
            )
        for key in c.groups:
            ns, _, name = key.partition("/")
            pg = self.handle.get_pod_group(ns, name) if self.handle.get_pod_group is not None else None
            if pg is not None:
                try:
                    await disrupt_pod_group(self._client(), pg, self._message(preemptor), self._now())
                except Exception as e:
                    return Status.as_status(e)
        if self.handle.metrics is not None:
            self.handle.metrics.preemption_victims.observe(len(c.victims))
        await self._clear_lower_priority_nominations(c.name, preemptor)
        return None

    def _client(self) -> Any:
        if self.handle.client is None:
            raise RuntimeError("DefaultPreemption has no API client")
        return self.handle.client

    def _message(self, preemptor: PodInfo) -> str:
        name = (preemptor.pod.get("spec") or {}).get("schedulerName") or self.handle.scheduler_name
        return preemption_message(name, group_preemptor=False)

    async def preempt_pod(self, node_name: str, preemptor: PodInfo, victim: PodInfo) -> None:
        """Mark the victim ``DisruptionTarget`` and delete it gracefully (NotFound means already gone)."""
        await disrupt_pod(self._client(), victim, self._message(preemptor), self._now())

    async def _clear_lower_priority_nominations(self, node_name: str, preemptor: PodInfo) -> None:
        nominator = self.handle.nominator
        client = self.handle.client
        if nominator is None or client is None:
            return
        for p in nominator.nominated_pods_for_node(node_name):
            if p.priority < preemptor.priority and p.uid != preemptor.uid:
                try:
                    await patch_pod_status(client, p.pod, nominated_node_name=None)
                except Exception:  # not critical: the pod is retried anyway
                    continue


def new(args: dict[str, Any], handle: Handle) -> DefaultPreemption:
    return DefaultPreemption(args, handle)

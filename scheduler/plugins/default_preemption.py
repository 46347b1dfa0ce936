"""DefaultPreemption: when a pod fits nowhere, evict lower-priority pods from one node to make room.

PostFilter, following kube's ``preemption.Evaluator`` for single pods:

1. **Eligibility.** ``preemptionPolicy: Never`` pods never preempt; a pod already nominated to
   a node where a lower-priority pod is still terminating because of preemption waits.
2. **Candidates.** Only nodes whose Filter status was *Unschedulable* (not Unresolvable) are
   tried, starting at a random offset, until enough candidates are found (10% of them, at least
   100). On each node (a copy) every lower-priority pod is removed; if the pod then fits, victims
   are reprieved one by one from the most important down, PDB-violating victims first, keeping
   every reprieve that still lets the pod fit.
3. **Choice.** Fewest PDB violations, then the lowest highest-victim priority, then the smallest
   priority sum, then the fewest victims, then the latest start time of the most important
   victims, then the first candidate.
4. **Actuation** through the API: each victim gets ``DisruptionTarget=True``
   (``PreemptionByScheduler``, ``<scheduler>: preempting to accommodate a higher priority pod``)
   by a status patch, then a graceful delete, and a ``Preempted`` event; lower-priority pods
   nominated to the same node lose their nomination. The scheduler then sets the preemptor's
   ``status.nominatedNodeName`` from the returned result.

No candidate: ``preemption: 0/N nodes are available: ...`` with every node not examined counted
as ``Preemption is not helpful for scheduling``.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from apiserver.client.interface import PODS
from apiserver.errors import is_not_found
from apiserver.meta import rfc3339
from featuregates import GENERIC_WORKLOAD, TOPOLOGY_AWARE_WORKLOAD_SCHEDULING
from scheduler.diagnosis import NodeToStatus, preemption_not_helpful
from scheduler.framework import NOMINATING_OVERRIDE, CycleState, Framework, Handle, PostFilterResult
from scheduler.nodeinfo import NodeInfo, PodInfo, compile_selector
from scheduler.podstatus import (
    DISRUPTION_TARGET,
    REASON_PREEMPTION_BY_SCHEDULER,
    new_condition,
    patch_pod_status,
)
from scheduler.status import Code, Status, is_success

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


def _start_time(p: PodInfo, now: float) -> float:
    return p.start_time if p.start_time is not None else now


def more_important(a: PodInfo, b: PodInfo, now: float) -> bool:
    """``util.MoreImportantPod``: higher priority, then the pod that started earlier."""
    if a.priority != b.priority:
        return a.priority > b.priority
    return _start_time(a, now) < _start_time(b, now)


def sort_by_importance(pods: list[PodInfo], now: float) -> list[PodInfo]:
    return sorted(pods, key=lambda p: (-p.priority, _start_time(p, now)))


def terminating_by_preemption(p: PodInfo) -> bool:
    if not p.terminating:
        return False
    for c in (p.pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == DISRUPTION_TARGET:
            return c.get("status") == "True" and c.get("reason") == REASON_PREEMPTION_BY_SCHEDULER
    return False


def filter_pods_with_pdb_violation(
    pods: Iterable[PodInfo], pdbs: list[dict[str, Any]]
) -> tuple[list[PodInfo], list[PodInfo]]:
    """Split (stably) into pods whose eviction would exceed a PDB's ``disruptionsAllowed`` and the rest."""
    allowed = [int(((pdb.get("status") or {}).get("disruptionsAllowed")) or 0) for pdb in pdbs]
    selectors = []
    for pdb in pdbs:
        sel = (pdb.get("spec") or {}).get("selector")
        empty = sel is None or (not sel.get("matchLabels") and not sel.get("matchExpressions"))
        selectors.append(None if empty else compile_selector(sel))
    violating: list[PodInfo] = []
    ok: list[PodInfo] = []
    for p in pods:
        violated = False
        if p.labels:
            for i, pdb in enumerate(pdbs):
                meta = pdb.get("metadata") or {}
                sel = selectors[i]
                if meta.get("namespace") != p.namespace or sel is None or not sel.matches(p.labels):
                    continue
                if p.name in (((pdb.get("status") or {}).get("disruptedPods")) or {}):
                    continue  # already being disrupted through the eviction API
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else ok).append(p)
    return violating, ok


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
        """Pods of a PodGroup are preempted for as a group (workload-aware preemption), not one by one."""
        group = ((pod_info.pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
        gates = self.handle.gates
        if not group or gates is None:
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
        if not candidates:
            return PostFilterResult("", NOMINATING_OVERRIDE), Status(
                Code.UNSCHEDULABLE, preemption_not_helpful(snapshot.num_nodes(), statuses)
            )
        best = self.select_candidate(candidates)
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
            victims, num_violations, status = self.select_victims_on_node(
                state.clone(), pod_info, ni.clone(), pdbs
            )
            if is_success(status) and victims:
                c = Candidate(name, victims, num_violations)
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
        """The minimal set of lower-priority pods to evict from this node copy (kube's ``SelectVictimsOnNode``)."""
        fw = self._framework
        now = self._now()

        def remove(p: PodInfo) -> Status | None:
            node_info.remove_pod(p.key)
            return fw.run_pre_filter_extension_remove_pod(state, pod_info, p, node_info)

        def add(p: PodInfo) -> Status | None:
            node_info.add_pod_info(p)
            return fw.run_pre_filter_extension_add_pod(state, pod_info, p, node_info)

        potential = [p for p in node_info.pods if p.priority < pod_info.priority]
        for p in potential:
            s = remove(p)
            if not is_success(s):
                return [], 0, s
        if not potential:
            return (
                [],
                0,
                Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "No preemption victims found for incoming pod"),
            )
        s = fw.run_filter_plugins_with_nominated_pods(state, pod_info, node_info)
        if not is_success(s):
            return [], 0, s
        potential = sort_by_importance(potential, now)
        violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
        victims: list[PodInfo] = []
        num_violating = 0

        def reprieve(p: PodInfo) -> tuple[bool, Status | None]:
            s = add(p)
            if not is_success(s):
                return False, s
            fits = is_success(fw.run_filter_plugins_with_nominated_pods(state, pod_info, node_info))
            if not fits:
                s = remove(p)
                if not is_success(s):
                    return False, s
                victims.append(p)
            return fits, None

        for p in violating:
            fits, err = reprieve(p)
            if err is not None:
                return [], 0, err
            if not fits:
                num_violating += 1
        for p in non_violating:
            _, err = reprieve(p)
            if err is not None:
                return [], 0, err
        if violating and non_violating:
            victims = sort_by_importance(victims, now)
        return victims, num_violating, Status(Code.SUCCESS)

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
            await self._event(
                victim.pod,
                "Normal",
                "Preempted",
                "Preempting",
                f"Preempted by pod {preemptor.uid} on node {c.name}",
                preemptor.pod,
            )
        if self.handle.metrics is not None:
            self.handle.metrics.preemption_victims.observe(len(c.victims))
        await self._clear_lower_priority_nominations(c.name, preemptor)
        return None

    async def preempt_pod(self, node_name: str, preemptor: PodInfo, victim: PodInfo) -> None:
        """Mark the victim ``DisruptionTarget`` and delete it gracefully (NotFound means already gone)."""
        client = self.handle.client
        if client is None:
            raise RuntimeError("DefaultPreemption has no API client")
        scheduler_name = (preemptor.pod.get("spec") or {}).get("schedulerName") or self.handle.scheduler_name
        cond = new_condition(
            DISRUPTION_TARGET,
            "True",
            REASON_PREEMPTION_BY_SCHEDULER,
            f"{scheduler_name}: preempting to accommodate a higher priority pod",
            rfc3339(self._now()),
            ((victim.pod.get("metadata") or {}).get("generation")),
        )
        try:
            await patch_pod_status(client, victim.pod, condition=cond)
        except Exception as e:
            if is_not_found(e):
                return
            raise
        try:
            await client.delete(PODS, victim.name, victim.namespace)
        except Exception as e:
            if not is_not_found(e):
                raise

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

    async def _event(
        self, regarding: dict[str, Any], etype: str, reason: str, action: str, note: str, related: Any
    ) -> None:
        rec = self.handle.record_event
        if rec is None:
            return
        r = rec(regarding, etype, reason, action, note, related)
        if inspect.isawaitable(r):
            await r


def new(args: dict[str, Any], handle: Handle) -> DefaultPreemption:
    return DefaultPreemption(args, handle)

"""The PodGroup scheduling algorithm (kube's ``algorithm_podgroup.go``): a whole group, one snapshot.

Given a group's queued pods, :class:`PodGroupAlgorithm` asks the PlacementGenerate plugins for
candidate placements (none: the whole cluster is the one placement), and for each placement
runs the ordinary pod-by-pod algorithm (PreFilter/Filter/Score) restricted to its nodes,
assuming every pod that fits into the *snapshot only*. After each pod the PlacementFeasible
plugins say whether the group can still succeed there (gang: ``minCount``), so a hopeless
placement is abandoned early. Each placement is then rolled back from the snapshot's journal,
so trying many leaves no trace; feasible placements are scored by the PlacementScore plugins
and the best wins.

Large clusters: placements whose domain cannot hold the pods by its free capacity (totals, the
largest node, pod slots per node) are skipped without running a Filter
(:class:`~scheduler.placement_capacity.GroupDemand`), and, like nodes
per pod, only enough feasible placements are searched for - all on small clusters, down to 10%
at 5,000 nodes, never fewer than 5% (KEP-5732's ``PercentageOfPlacementsToScore``). A placement
holding a pod's ``nominatedNodeName`` is tried first.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

from scheduler.cache import Domain, Snapshot
from scheduler.cycle_memo import forget_cycle_scratch
from scheduler.diagnosis import FitError, NoNodesAvailableError
from scheduler.framework import Framework
from scheduler.interfaces import (
    CycleState,
    Placement,
    PlacementResult,
    PodAssignment,
    PodGroupInfo,
)
from scheduler.loop_share import LoopShare
from scheduler.nodeinfo import PodInfo
from scheduler.placement_capacity import GroupDemand
from scheduler.placement_certain import CertainPlacements, CertainResult
from scheduler.placement_run import (
    PlacementRun,
    WindowedRuns,
    materialize_states,
    run_keyers,
    run_signature,
)
from scheduler.podgroups import is_gang, min_count
from scheduler.schedule_one import CycleTrace, SchedulingError, num_feasible_nodes_to_find, schedule_pod
from scheduler.status import Code, Status

CLUSTER_PLACEMENT = ""
NO_PODS_SCHEDULABLE = "no pods were schedulable"
#: below this many nodes every placement is searched
MIN_NODES_FOR_PLACEMENT_PERCENTAGE = 100
MIN_PLACEMENT_PERCENTAGE = 5

Steps = Generator[None, None, "PodGroupAlgorithmResult"]


def placements_unavailable(num: int, first: str) -> str:
    """KEP-5732's failure message when no placement is feasible."""
    return f"0/{num} placements are available, first placement status: {first}"


def num_feasible_placements_to_find(num_placements: int, num_nodes: int) -> int:
    """All placements below 100 nodes; then 100% falling linearly to 10% at 5,000 nodes, floor 5%."""
    if num_nodes < MIN_NODES_FOR_PLACEMENT_PERCENTAGE:
        return num_placements
    pct = max(100 - (num_nodes - MIN_NODES_FOR_PLACEMENT_PERCENTAGE) * 90 // 4900, MIN_PLACEMENT_PERCENTAGE)
    return max(1, math.ceil(num_placements * pct / 100))


@dataclass
class PodGroupAlgorithmResult:
    """``status`` None: ``placement`` is the winner and its fitting pods go to binding.

    Otherwise ``placement`` is the first evaluated placement (whose status the message
    quotes) and ``best`` the one that placed the most pods (what the GangUnschedulable event
    reports).
    """

    status: Status | None
    placement: PlacementResult | None = None
    best: PlacementResult | None = None
    evaluated: list[PlacementResult] = field(default_factory=list)
    num_placements: int = 0
    topology: bool = False
    #: placements passed over without a Filter call: their domain's free capacity cannot hold the pods
    skipped: list[Placement] = field(default_factory=list)
    #: the winner's pods were left assumed in the snapshot (``keep_winner``), not rolled back
    kept: bool = False
    #: feasible placements decided by capacity without a pod cycle, none better than the winner
    #: (:mod:`scheduler.placement_certain`)
    decided: list[CertainResult] = field(default_factory=list)

    @property
    def skipped_for_capacity(self) -> bool:
        """Some placement was passed over for want of capacity (NodeResourcesFit would have rejected it)."""
        return bool(self.skipped)

    @property
    def success(self) -> bool:
        return self.status is None or self.status.is_success()


def _slot_copier() -> Any:
    """A function copying a PodInfo slot by slot, written out one assignment per slot (as
    :mod:`dataclasses` writes its methods): a fifth of the time of a ``getattr``/``setattr``
    loop over ``__slots__``, which every pod tried in every placement paid."""
    lines = ["def copy(pi):", "    out = new(PodInfo)"]
    lines += [f"    out.{slot} = pi.{slot}" for slot in PodInfo.__slots__]
    lines.append("    return out")
    namespace: dict[str, Any] = {"PodInfo": PodInfo, "new": PodInfo.__new__}
    exec("\n".join(lines), namespace)  # noqa: S102  (the text is made of PodInfo's own slot names)
    return namespace["copy"]


_copy_pod_info = _slot_copier()


def _assumed(pi: PodInfo, node_name: str) -> PodInfo:
    """The pod as assumed on ``node_name``: a copy of its PodInfo with ``spec.nodeName`` set.

    Everything PodInfo derives (requests, ports, affinity terms) comes from fields other than
    ``nodeName``, so the copy reuses them instead of deriving them again for every pod tried.
    """
    pod = pi.pod
    out = _copy_pod_info(pi)
    out.pod = {**pod, "spec": {**(pod.get("spec") or {}), "nodeName": node_name}}
    out.node_name = node_name
    return out


def _alike(signature: Any, following: Any) -> bool:
    """Whether the pod of ``following`` is of a run started by the pod of ``signature``."""
    return signature is not None and following is not None and signature == following


def _reasons(e: FitError) -> list[str]:
    """The distinct reasons of a FitError, most frequent first (what the user must change)."""
    d = e.diagnosis
    if d.pre_filter_msg:
        return [d.pre_filter_msg]
    counts: Counter[str] = Counter()
    for _, st in d.node_to_status.items():
        counts.update(st.reasons)
    if len(d.node_to_status) < e.num_all_nodes:
        for r in d.node_to_status.absent_status.reasons:
            counts[r] += e.num_all_nodes - len(d.node_to_status)
    return [r for r, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


class PodGroupAlgorithm:
    """Runs one group over a snapshot through a profile's framework (see the module docstring)."""

    def __init__(self, framework: Framework, carry_runs: bool = True, decide_certain: bool = True) -> None:
        self.fw = framework
        #: carry a pod's cycle on to the identical pods after it (:mod:`scheduler.placement_run`);
        #: off, every pod gets a full cycle (the differential tests compare the two)
        self.carry_runs = carry_runs
        #: count a placement that capacity shows feasible and not better than the best found
        #: without evaluating it (:mod:`scheduler.placement_certain`); off, every one is evaluated
        self.decide_certain = decide_certain
        #: makes the :class:`~scheduler.loop_share.LoopShare` of each :meth:`run_async` (tests
        #: pass one with a fake clock); None: the default slices
        self.loop_share: Callable[[], LoopShare] | None = None
        #: skip PlacementFeasible while the framework's bound says it would say Wait again
        #: (:meth:`~scheduler.framework.Framework.placement_feasible_waits_below`); off, it is
        #: asked after every pod (the differential tests compare the two)
        self.skip_waits = True

    def run(
        self, state: CycleState, group: PodGroupInfo, snapshot: Snapshot, *, keep_winner: bool = False
    ) -> PodGroupAlgorithmResult:
        """Evaluate the placements; the snapshot is left exactly as it was given (but for
        ``keep_winner``, see :meth:`run_async`)."""
        steps = self._steps(state, group, snapshot, keep_winner)
        while True:
            try:
                next(steps)
            except StopIteration as done:
                return done.value

    async def run_async(
        self, state: CycleState, group: PodGroupInfo, snapshot: Snapshot, *, keep_winner: bool = False
    ) -> PodGroupAlgorithmResult:
        """:meth:`run`, letting other tasks (informers, the API server) run between slices
        (:class:`~scheduler.loop_share.LoopShare`).

        ``keep_winner``: when the group has one placement (no topology: the whole cluster) and it
        is feasible, its pods stay assumed in the snapshot instead of being rolled back
        (``result.kept``): the caller assumes the same pods in the cache next and lets the
        snapshot keep those nodes (:meth:`~scheduler.cache.Cache.adopt_assumed`) rather than
        copy them again at the next cycle. With several placements every one is rolled back.

        Safe because the cycle works on its own snapshot: informer events change the cache,
        which the next cycle's snapshot picks up; an assume that conflicts with them fails then.

        Slices of time, not of pods: a yield lets every ready task take a step, and while a
        controller creates the pods of other sets those steps add up to far more than a few pods'
        cycles. Yielding every 32 pods (~15 ms) left a 5,000-pod gang a tenth of the loop: its
        search, 2-3 s of CPU, took 30 s of wall while 25,000 other pods were created. With 50 ms
        slices the others still ran at least 20 times a second, but a round of theirs could take
        200-500 ms while sets were being created, so the search still had a tenth to a fifth of
        the loop: the slices now last as long as the others' last round, up to 500 ms of the
        loop thread's CPU (:class:`~scheduler.loop_share.LoopShare`), which keeps it at least half.
        """
        steps = self._steps(state, group, snapshot, keep_winner)
        share = self.loop_share() if self.loop_share is not None else LoopShare()
        while True:
            try:
                next(steps)
            except StopIteration as done:
                return done.value
            if share.due():
                await share.pause()

    def _steps(
        self, state: CycleState, group: PodGroupInfo, snapshot: Snapshot, keep_winner: bool = False
    ) -> Steps:
        """The algorithm as a generator that yields after each pod tried."""
        placements, s = self.fw.run_placement_generate_plugins(state, group, snapshot)
        if s is not None and not s.is_success():
            return PodGroupAlgorithmResult(s, topology=True)
        topology = placements is not None
        if placements is None:
            placements = [Placement(CLUSTER_PLACEMENT)]
        if not placements:
            # members already placed outside any single domain leave nothing to choose from
            return PodGroupAlgorithmResult(
                Status(Code.UNSCHEDULABLE, "0/0 placements are available"), topology=True
            )
        placements = self._nominated_first(group, placements)
        keep = keep_winner and len(placements) == 1
        kept = False
        to_find = num_feasible_placements_to_find(len(placements), snapshot.num_nodes())
        demand = self._demand(group) if len(placements) > 1 else None
        evaluated: list[PlacementResult] = []
        feasible: list[PlacementResult] = []
        skipped: list[Placement] = []
        signatures: list[Any] = []  # filled when a placement first can carry a run
        certain: CertainPlacements | None = None
        certain_tried = False
        decided: list[CertainResult] = []
        for i, placement in enumerate(placements):
            domain = self._domain(snapshot, placement)
            if (
                i > 0
                and domain is not None
                and demand is not None
                and self._hopeless(demand, domain, evaluated)
            ):
                skipped.append(placement)  # cannot hold the pods by capacity alone: no Filter call needed
                continue
            if feasible and self.decide_certain:
                if not certain_tried:
                    certain_tried = True
                    if not signatures:
                        signatures.extend(_shared_signatures(self.fw, group.pods))
                    certain = CertainPlacements.of(self.fw, group, signatures)
                decision = certain.decide(placement, snapshot) if certain is not None else None
                if decision is not None and decision.score <= max(r.score for r in feasible):
                    # feasible, and an earlier placement scores at least as well: not chosen
                    decided.append(decision)
                    if len(feasible) + len(decided) >= to_find:
                        break
                    continue
            mark = snapshot.backup()
            snapshot.scope = domain
            try:
                result = yield from self._evaluate_steps(state, group, placement, snapshot, signatures)
                if result.status is not None and result.status.code == Code.ERROR:
                    return PodGroupAlgorithmResult(result.status, result, result, [*evaluated, result])
                if result.feasible and len(placements) > 1:
                    score, s = self.fw.run_placement_score_plugins(state, group, result, snapshot)
                    if s is not None:
                        return PodGroupAlgorithmResult(s, result, result, [*evaluated, result])
                    result.score = score
                kept = keep and result.feasible
            finally:
                if not kept:
                    snapshot.restore(mark)
                snapshot.scope = None  # after the rollback: the cluster-wide index catches up once
            evaluated.append(result)
            if result.feasible:
                feasible.append(result)
                if len(feasible) + len(decided) >= to_find:
                    break
        best_attempt = max(evaluated, key=lambda r: len(r.fitting()))
        if not feasible:
            first = evaluated[0]
            assert first.status is not None
            status = first.status
            if topology:
                status = Status(
                    Code.UNSCHEDULABLE,
                    placements_unavailable(len(placements), first.status.message()),
                    plugin=first.status.plugin,
                )
            return PodGroupAlgorithmResult(
                status, first, best_attempt, evaluated, len(placements), topology, skipped
            )
        winner = max(feasible, key=lambda r: r.score)  # max() keeps the first of equal scores
        materialize_states(self.fw, snapshot, winner)
        return PodGroupAlgorithmResult(
            None, winner, winner, evaluated, len(placements), topology, skipped, kept=kept, decided=decided
        )

    def evaluate(
        self, state: CycleState, group: PodGroupInfo, placement: Placement, snapshot: Snapshot
    ) -> PlacementResult:
        """Try every queued pod in ``placement``; fitting pods stay assumed in the snapshot."""
        steps = self._evaluate_steps(state, group, placement, snapshot)
        while True:
            try:
                next(steps)
            except StopIteration as done:
                materialize_states(self.fw, snapshot, done.value)
                return done.value

    def _evaluate_steps(
        self,
        state: CycleState,
        group: PodGroupInfo,
        placement: Placement,
        snapshot: Snapshot,
        signatures: list[Any] | None = None,
    ) -> Generator[None, None, PlacementResult]:
        """Each pod's cycle; a pod identical to the previous one continues its cycle
        (:class:`~scheduler.placement_run.PlacementRun`) rather than starting afresh.

        Every member's state lives until the group is bound, so a full cycle's scratch (its node
        lists, PreScore's results: :mod:`scheduler.cycle_memo`) is forgotten once the cycle is
        over; a run scores with the state of the pod it started from, which forgets it once the
        placement is evaluated (no run lives on)."""
        run_states: list[CycleState] = []
        try:
            return (yield from self._member_steps(state, group, placement, snapshot, signatures, run_states))
        finally:
            for st in run_states:
                forget_cycle_scratch(st)

    def _member_steps(
        self,
        state: CycleState,
        group: PodGroupInfo,
        placement: Placement,
        snapshot: Snapshot,
        signatures: list[Any] | None,
        run_states: list[CycleState],
    ) -> Generator[None, None, PlacementResult]:
        """:meth:`_evaluate_steps`' work; every state a run was started from goes to ``run_states``."""
        result = PlacementResult(placement)
        scheduled = group.state.scheduled_count()
        fit = 0
        last: Status | None = None
        #: placed counts under which PlacementFeasible is known to say Wait again while pods fit
        wait_below = 0
        total = len(group.pods)
        runs = self.carry_runs and PlacementRun.possible(self.fw, placement.node_names)
        # the whole cluster, wider than a cycle's window: one run per window (start index)
        windows = (
            WindowedRuns(self.fw)
            if self.carry_runs
            and not runs
            and placement.node_names is None
            and _windows_come_back(self.fw, snapshot.num_nodes(), total)
            else None
        )
        if signatures is None:
            signatures = []
        if (runs or windows is not None) and not signatures:
            signatures.extend(_shared_signatures(self.fw, group.pods))
        run: PlacementRun | None = None
        for i, pi in enumerate(group.pods):
            cs = CycleState()
            a = PodAssignment(pi, state=cs)
            result.assignments.append(a)
            host = None
            if windows is not None:
                host = windows.next(cs, pi, signatures[i], snapshot)
                if host is None:
                    cs = a.state = CycleState()
                else:
                    a.node_name = host
                    if windows.placed_by is not None and windows.placed_by.defer_pre_filter:
                        result.pending_pre_filter.append(a)
                    snapshot.assume_pod(_assumed(pi, host), host, defer_index=True)
                    fit += 1
                    windows.assumed(cs, pi, signatures[i], host)
            elif run is not None:
                host = run.next(cs, pi) if run.accepts(pi, signatures[i]) else None
                if host is None:
                    run = None
                    cs = a.state = CycleState()  # the full cycle starts from a fresh state
                else:
                    a.node_name = host
                    if run.defer_pre_filter:
                        result.pending_pre_filter.append(a)
                    # the run reads no index of the snapshot: each node taking pods is
                    # reindexed once, when an index is next read (or at the rollback)
                    snapshot.assume_pod(_assumed(pi, host), host, defer_index=True)
                    fit += 1
                    if not run.assumed(cs, pi, host):
                        run = None
            if host is None:
                trace = CycleTrace()
                start = windows.start_index(snapshot) if windows is not None else 0
                host = self._full_cycle(a, snapshot, placement, trace)
                if a.status is not None and a.status.code == Code.ERROR:
                    result.status = a.status
                    return result
                if host and windows is not None:
                    if i + 1 < total and _alike(signatures[i], signatures[i + 1]) and windows.wants(start):
                        run_states.append(cs)
                        wrun = PlacementRun.start(
                            self.fw, cs, pi, snapshot, None, trace, signatures[i], window=True
                        )
                        if wrun is not None:
                            windows.add(start, wrun, self.fw.next_start_node_index)
                    # indexed lazily, as below: by the next pod's cycle, or by the cache's assume
                    snapshot.assume_pod(_assumed(pi, host), host, defer_index=True)
                    fit += 1
                    windows.assumed(cs, pi, signatures[i], host)
                elif host:
                    if runs and i + 1 < total and _alike(signatures[i], signatures[i + 1]):
                        # identical pods follow: carry this cycle on to them (from the snapshot
                        # as this cycle saw it, before the assume)
                        run_states.append(cs)
                        run = PlacementRun.start(
                            self.fw, cs, pi, snapshot, placement.node_names, trace, signatures[i]
                        )
                    # indexed when the next pod's cycle first reads an index: never, for the
                    # group's last pod (the rollback and the cache's assume follow)
                    snapshot.assume_pod(_assumed(pi, host), host, defer_index=True)
                    fit += 1
                    if run is not None and not run.assumed(cs, pi, host):
                        run = None
                if not run_states or run_states[-1] is not cs:
                    forget_cycle_scratch(cs)  # no run reads this cycle's scratch
            yield
            if host and scheduled + fit < wait_below and i + 1 < total:
                continue  # PlacementFeasible would say Wait again (see the framework's bound)
            wait_below = 0
            st = self.fw.run_placement_feasible_plugins(state, group, scheduled + fit, total - i - 1)
            if st is not None and st.code == Code.ERROR:
                result.status = st
                return result
            if st is not None and st.is_rejected():
                result.status = st
                return result
            if st is not None and st.is_wait() and self.skip_waits:
                wait_below = self.fw.placement_feasible_waits_below(
                    state, group, scheduled + fit, total - i - 1
                )
            last = st
        if last is not None and last.is_wait():
            result.status = Status(Code.UNSCHEDULABLE, *last.reasons, plugin=last.plugin)
        elif fit == 0:
            result.status = Status(Code.UNSCHEDULABLE, NO_PODS_SCHEDULABLE)
        return result

    def _full_cycle(
        self, a: PodAssignment, snapshot: Snapshot, placement: Placement, trace: CycleTrace
    ) -> str | None:
        """kube's pod cycle for ``a``'s pod in the placement: the node it fits, or None with
        ``a`` carrying why (a plugin Error: ``a.status`` is an Error status)."""
        pi = a.pod_info
        assert a.state is not None
        try:
            r = schedule_pod(self.fw, a.state, pi, snapshot, placement.node_names, trace)
        except FitError as e:
            a.status = Status(Code.UNSCHEDULABLE, e.message)
            a.message = e.message
            a.diagnosis = e.diagnosis
            a.unschedulable_plugins = set(e.diagnosis.unschedulable_plugins)
            a.reasons = _reasons(e)
        except NoNodesAvailableError as e:
            a.status = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(e))
            a.message = str(e)
            a.reasons = [str(e)]
        except SchedulingError as e:
            a.status = Status(Code.ERROR, str(e))
            a.message = str(e)
        else:
            a.node_name = r.suggested_host
            return r.suggested_host
        return None

    # -- helpers ----------------------------------------------------------------------------

    @staticmethod
    def _domain(snapshot: Snapshot, placement: Placement) -> Domain | None:
        if not placement.key:
            return None
        return snapshot.domains(placement.key).domains.get(placement.value)

    @staticmethod
    def _hopeless(demand: GroupDemand, domain: Domain, evaluated: list[PlacementResult]) -> bool:
        """Skip ``domain``: it cannot be feasible, nor place more pods than a placement already tried.

        The second half keeps the failure report unchanged: the placement that placed the most
        pods (the first of equals) is then always one that was evaluated.
        """
        most = demand.most_pods(domain, demand.needed)
        if most >= demand.needed:
            return False
        return any(len(r.fitting()) >= most for r in evaluated)

    def _demand(self, group: PodGroupInfo) -> GroupDemand | None:
        """What a placement must hold to be feasible: ``minCount`` less the members already placed
        for a gang, one pod otherwise."""
        needed = 1
        if is_gang(group.pod_group):
            needed = max(1, min_count(group.pod_group) - group.state.scheduled_count())
        return GroupDemand.of(self.fw, group.pods, needed)

    @staticmethod
    def _nominated_first(group: PodGroupInfo, placements: list[Placement]) -> list[Placement]:
        """A placement holding a pod's nominatedNodeName (preemption made room there) goes first."""
        nominated = {
            n for pi in group.pods if (n := ((pi.pod.get("status") or {}).get("nominatedNodeName")) or "")
        }
        if not nominated:
            return placements
        first = [p for p in placements if p.node_names is not None and nominated & set(p.node_names)]
        if not first:
            return placements
        return first + [p for p in placements if p not in first]


def _shared_signatures(fw: Framework, pods: list[PodInfo]) -> list[Any]:
    """Each pod's :func:`~scheduler.placement_run.run_signature`, a signature equal to the
    previous pod's being that same object: the runs compare a pod's signature with theirs for
    every pod of every placement, and equal tuples whose items are the same objects compare by
    identity item by item instead of walking the spec's dicts (compared once per pod here)."""
    out: list[Any] = []
    prev: Any = None
    keyers = run_keyers(fw)
    for pi in pods:
        sig = run_signature(fw, pi, keyers)
        if sig is not None and prev is not None and sig == prev:
            sig = prev
        out.append(sig)
        prev = sig
    return out


def _windows_come_back(fw: Framework, num_nodes: int, pods: int) -> bool:
    """Whether a cycle's window (``numFeasibleNodesToFind`` nodes) tiles the node rotation and
    the group has more pods than there are windows, so start indices come back within the group
    and a :class:`WindowedRuns` can pay for itself (5,000 nodes: ten windows of 500, groups of
    more than ten pods). Elsewhere (1,000 nodes: windows of 420 and 50 start indices; a gang of
    3) the runs would cost every assumed pod a look and seldom place one."""
    window = num_feasible_nodes_to_find(fw, num_nodes)
    return 0 < window < num_nodes and num_nodes % window == 0 and pods > num_nodes // window

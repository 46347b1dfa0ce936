"""Placements whose evaluation could only confirm what their free capacity already says (gangplane).

The PodGroup algorithm evaluates a placement by running every pod of the group through it, one
cycle (or one step of a run) per pod, then scores the feasible ones and keeps the best, the first
of equal scores. On ``gangs-3x1000-rack`` that is 5 of the 50 racks, 1,000 pods each, though the
first rack evaluated already wins: the next four are as empty as it was (or emptier than the rack
a previous gang filled), so their PlacementScore can at best equal its score.

:class:`CertainPlacements` decides such a placement without a pod cycle when the outcome is
arithmetic, and the algorithm then counts it as a feasible placement it does not choose:

* **the pods are identical** (one run signature for all: the same spec but for the identity
  fields, with the same volumes too) and nothing is nominated anywhere, so no Filter sees a
  nominated pod;
* **only resources tell the nodes apart**: after the first pod's PreFilter over the placement's
  nodes (no rejection, no narrowing), every Filter that is not skipped is NodeResourcesFit or
  one that reads the node alone (:data:`NODE_ONLY_FILTERS`: its answer for a node does not change
  as the node takes pods); the latter are run once per node. The first pod's skips stand for
  every pod: the signature holds the spec (affinity terms, ports, claims) and PodTopologySpread's
  constraints; the one skip that reads the pod's labels, InterPodAffinity's against existing
  pods' required anti-affinity, is not relied on (no such pod may be in the snapshot);
* then every pod that is tried takes one more of a node's *units*,
  ``min(free pod slots, free_r // request_r)`` over the resources NodeResourcesFit checks, so
  the pods that fit are exactly the first ``min(pods, sum of units)``, wherever each lands;
  they must be all of them (a placement short of room is evaluated);
* **PlacementFeasible** is GangScheduling's (:data:`COUNT_ONLY_FEASIBLE`), whose answer depends
  only on the counts: its first and last calls give every call's answer;
* **PlacementScore**: every plugin gives the score the placement would get with those pods in
  it (``score_placement_with``; NodeResourcesFit's utilisation and PodGroupPodsCount's share
  depend on the pods' total requests, not on their nodes), weighted as the framework weighs.

A placement whose computed score does not exceed the best score found so far would not have been
chosen (an earlier one keeps a tie), so it is counted towards ``numFeasiblePlacementsToFind``
without a pod cycle; one that could win is evaluated as before. The chosen placement is the one
the full search chooses. What differs is the scheduler's random stream: the pods of a placement
not evaluated draw no tie-breaks, so later tie-breaks draw other numbers (kube's draws are not
seeded). The scheduling record lists such a placement with its score, "computed".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from scheduler.cache import Snapshot
from scheduler.framework import Framework
from scheduler.interfaces import MAX_NODE_SCORE, MIN_NODE_SCORE, CycleState, Placement, PodGroupInfo
from scheduler.nodeinfo import PODS, NodeInfo, PodInfo
from scheduler.plugins.node_resources_fit import NAME as FIT
from scheduler.plugins.node_resources_fit import is_extended_resource
from scheduler.status import is_success

#: Filter plugins whose answer for a node reads the node and the pod, never the node's pods
NODE_ONLY_FILTERS = frozenset({"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity"})
#: PlacementFeasible plugins whose answer depends only on ``scheduled`` and ``remaining``, and
#: rejects exactly when their sum is short (so the first call of a placement tells every call's)
COUNT_ONLY_FEASIBLE = frozenset({"GangScheduling"})
_NATIVE = ("cpu", "memory", "ephemeral-storage")


@dataclass
class CertainResult:
    """A placement decided by arithmetic: every pod fits; ``score`` is its PlacementScore total."""

    placement: Placement
    fit: int
    score: int


class CertainPlacements:
    """Decides placements of one group's identical pods by capacity (see the module docstring)."""

    def __init__(self, fw: Framework, group: PodGroupInfo, pod: PodInfo) -> None:
        self.fw = fw
        self.group = group
        self.pod = pod
        fit = next(pl for pl in fw.filter_plugins if pl.name == FIT)
        ignored: frozenset[str] = getattr(fit, "ignored", frozenset())
        ignored_groups: frozenset[str] = getattr(fit, "ignored_groups", frozenset())
        #: the requests NodeResourcesFit compares with a node's free amounts (pod slots apart)
        self.wants = {
            r: v
            for r, v in pod.requests.items()
            if v > 0
            and r != PODS
            and not (
                r not in _NATIVE
                and is_extended_resource(r)
                and (r in ignored or r.split("/", 1)[0] in ignored_groups)
            )
        }

    @classmethod
    def of(cls, fw: Framework, group: PodGroupInfo, signatures: Sequence[Any]) -> CertainPlacements | None:
        """For a group whose pods are identical, or None when its placements must be evaluated."""
        pods = group.pods
        if not pods or len(signatures) != len(pods):
            return None
        first = signatures[0]
        if first is None or any(s is not first for s in signatures):
            return None  # equal consecutive signatures are one object (``_shared_signatures``)
        volumes = (pods[0].pod.get("spec") or {}).get("volumes")
        if any((pi.pod.get("spec") or {}).get("volumes") != volumes for pi in pods):
            return None  # the signature leaves volumes out; a volume Filter may tell the pods apart
        if not any(pl.name == FIT for pl in fw.filter_plugins):
            return None
        if any(pl.name not in COUNT_ONLY_FEASIBLE for pl in fw.placement_feasible_plugins):
            return None
        if any(getattr(pl, "score_placement_with", None) is None for pl in fw.placement_score_plugins):
            return None
        if fw.any_nominated_pods():
            return None
        return cls(fw, group, pods[0])

    def decide(self, placement: Placement, snapshot: Snapshot) -> CertainResult | None:
        """The placement as its evaluation would find it, when every pod surely fits; else None."""
        names = placement.node_names
        if names is None:
            return None
        if snapshot.have_pods_with_required_anti_affinity_list():
            # InterPodAffinity's PreFilter skips or not by whether their terms match the pod's
            # labels, which the signature leaves out: the first pod would not speak for the rest
            return None
        infos = snapshot.node_info_map
        nodes = [infos[n] for n in names if n in infos]
        state = CycleState()
        pre, s, _ = self.fw.run_pre_filter_plugins(state, self.pod, nodes)
        if s is not None and not s.is_success():
            return None
        if pre is not None and not pre.all_nodes():
            return None
        active = [pl for pl in self.fw.filter_plugins if pl.name not in state.skip_filter_plugins]
        if any(pl.name != FIT and pl.name not in NODE_ONLY_FILTERS for pl in active):
            return None
        node_only = [pl for pl in active if pl.name != FIT]
        pods = self.group.pods
        room = 0
        for ni in nodes:
            if any(not is_success(pl.filter(state, self.pod, ni)) for pl in node_only):
                continue
            room += self._units(ni)
            if room >= len(pods):
                break
        if room < len(pods):
            return None
        scheduled = self.group.state.scheduled_count()
        total = len(pods)
        # what the per-pod calls answer: the first one rejects if any does (Wait goes on), the
        # last one decides between feasible and Wait (then Unschedulable)
        first = self.fw.run_placement_feasible_plugins(state, self.group, scheduled + 1, total - 1)
        if first is not None and not first.is_success() and not first.is_wait():
            return None
        last = self.fw.run_placement_feasible_plugins(state, self.group, scheduled + total, 0)
        if last is not None and not last.is_success():
            return None
        score = self._score(state, placement, snapshot)
        if score is None:
            return None
        return CertainResult(placement, total, score)

    def _units(self, ni: NodeInfo) -> int:
        """How many of the pods the node takes, by NodeResourcesFit's Filter."""
        alloc, used = ni.allocatable, ni.requested
        n = alloc.get(PODS, 0) - len(ni.pods)
        for r, want in self.wants.items():
            if n <= 0:
                return 0
            n = min(n, (alloc.get(r, 0) - used.get(r, 0)) // want)
        return max(n, 0)

    def _score(self, state: CycleState, placement: Placement, snapshot: Snapshot) -> int | None:
        """:meth:`Framework.run_placement_score_plugins`' total with every pod in the placement."""
        total = 0
        for pl in self.fw.placement_score_plugins:
            try:
                v, s = pl.score_placement_with(  # type: ignore[attr-defined]
                    state, self.group, placement, self.group.pods, snapshot
                )
            except Exception:  # the evaluation reports the plugin's error itself
                return None
            if v is None or not is_success(s) or v < MIN_NODE_SCORE or v > MAX_NODE_SCORE:
                return None
            total += v * self.fw.score_weights.get(pl.name, 1)
        return total
